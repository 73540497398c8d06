"""Positions for the search tests: random deals steered to a contract type and played to an endgame.

The helpers are imported by the other ``test_search_*`` files; the tests here check that the
positions are what they claim to be (the contract type of docs/rules.md §4 and the tricks left of §7).
"""

from __future__ import annotations

import random

import pytest

from five_hundred_env import make_rules
from five_hundred_env.actions import MISERE, NO_NOMINATION, NT, OPEN_MISERE, PASS, bid_action
from five_hundred_env.engine import Deal, Phase
from five_hundred_env.rules import Rules

PRESET_NAMES = ("australian", "italian_3p", "french_46")
KINDS = ("suit", "no_trumps", "misere", "open_misere")


def kinds_of(rules: Rules) -> tuple[str, ...]:
    """The contract types a preset allows (§2: no misère in french_46)."""
    return tuple(k for k in KINDS if not (k == "misere" and rules.misere == "none")
                 and not (k == "open_misere" and rules.open_misere == "none"))


def _wanted_bid(deal: Deal, kind: str, rng: random.Random) -> int:
    """The first bidder bids the contract; everyone else passes (a 7 bid first for misère after_seven, §4)."""
    legal = deal.legal_actions()
    pass_ = PASS if PASS in legal else legal[0]
    if kind == "misere":
        opening = deal.rules.misere == "after_seven" and deal.high_bid < 0
        target = bid_action(7, rng.randrange(4)) if opening else MISERE
    elif deal.high_bid < 0:
        target = {"suit": bid_action(rng.choice((6, 7)), rng.randrange(4)), "no_trumps": bid_action(6, NT),
                  "open_misere": OPEN_MISERE}[kind]
    else:
        return pass_
    return target if target in legal else pass_


def position(rules: Rules, rng: random.Random, kind: str, tricks_left: int, extra_cards: int | None = None) -> Deal:
    """A random deal with a contract of ``kind``, discards and nomination at random, played at
    random until ``tricks_left`` tricks remain (and ``extra_cards`` cards of the next trick, random
    if ``None``). Retries deals whose auction does not end in that contract type."""
    while True:
        deal = Deal.new(rules, rng, rng.randrange(rules.num_players))
        while deal.phase == Phase.BIDDING:
            deal.apply_action(_wanted_bid(deal, kind, rng))
        if deal.is_over or _kind_of(deal) != kind:
            continue
        while deal.phase in (Phase.DISCARD, Phase.NOMINATE):
            legal = deal.legal_actions()
            if deal.phase == Phase.NOMINATE:
                legal = [a for a in legal if a != NO_NOMINATION] if rng.random() < 0.7 else [NO_NOMINATION]
            deal.apply_action(rng.choice(legal))
        while len(deal.tricks) < rules.hand_size - tricks_left:
            deal.apply_action(rng.choice(deal.legal_actions()))
        size = rules.num_players - len(deal.sitting_out_seats)
        for _ in range(rng.randrange(size) if extra_cards is None else extra_cards):
            deal.apply_action(rng.choice(deal.legal_actions()))
        return deal


def _kind_of(deal: Deal) -> str:
    if deal.contract == MISERE:
        return "misere"
    if deal.contract == OPEN_MISERE:
        return "open_misere"
    return "no_trumps" if (deal.contract - 1) % 5 == NT else "suit"


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_positions_have_the_contract_type_and_tricks_left(preset: str) -> None:
    rules = make_rules(preset)
    rng = random.Random(7)
    for kind in kinds_of(rules):
        deal = position(rules, rng, kind, tricks_left=3, extra_cards=1)
        assert _kind_of(deal) == kind
        assert deal.phase == Phase.PLAY and len(deal.tricks) == rules.hand_size - 3 and len(deal.trick) == 1
        assert bool(deal.sitting_out_seats) == (kind in ("misere", "open_misere") and rules.num_players == 4)  # §7


def test_positions_nominate_the_joker_sometimes() -> None:
    rules = make_rules("australian")
    rng = random.Random(3)
    nominated = {position(rules, rng, "no_trumps", 2).nominated >= 0 for _ in range(30)}
    assert nominated == {True, False}  # §7: both nominated and suitless jokers occur
