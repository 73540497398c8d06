"""The exact solver (agents/search/solver.py) against brute-force minimax through the engine.

Random endgames with 2-4 tricks left of every preset and contract type (§7: trumps with bowers
and jokers, no trumps with a suitless or a nominated joker, misère with the partner sitting out,
open misère): the solver's best-play trick count, and its value of each legal action, must equal
a plain minimax that plays the moves with ``Deal.apply_action``.
"""

from __future__ import annotations

import random

import pytest
from test_search_positions import PRESET_NAMES, kinds_of, position

from agents.search.solver import action_values, side_scores, solve
from agents.search.values import play_candidates
from five_hundred_env import make_rules
from five_hundred_env.actions import MISERE, OPEN_MISERE, action_card, bid_action, card_action
from five_hundred_env.cards import card_to_str, cards_to_mask, parse_card
from five_hundred_env.engine import EFFECTIVE_SUIT, Deal, Phase
from five_hundred_env.rules import Rules
from five_hundred_env.sampling import InfoSet


def _contractor_tricks(deal: Deal) -> int:
    own = deal.rules.side_of(deal.contractor)
    return deal.side_tricks()[own]


def minimax(deal: Deal) -> int:
    """The contractor side's tricks with best play, by trying every legal move in the engine."""
    if deal.is_over:
        return _contractor_tricks(deal)
    rules = deal.rules
    misere = deal.contract in (MISERE, OPEN_MISERE)
    maximise = (rules.side_of(deal.to_act) == rules.side_of(deal.contractor)) != misere
    values = []
    for action in deal.legal_actions():
        child = deal.clone()
        child.apply_action(action)
        values.append(minimax(child))
    return max(values) if maximise else min(values)


VARIANTS = [make_rules(p) for p in PRESET_NAMES] + [
    make_rules("australian", joker_lead_suit="not_shown_void"), make_rules("italian_3p", joker_lead_suit="not_yet_led")]
CASES = [(rules, kind) for rules in VARIANTS for kind in kinds_of(rules)]


@pytest.mark.parametrize(("rules", "kind"), CASES, ids=lambda x: x.describe() if isinstance(x, Rules) else x)
def test_solver_equals_brute_force_minimax(rules: Rules, kind: str) -> None:
    """§6-§8: the same best-play value as minimax, from every position of a few random endgames."""
    rng = random.Random(f"{rules.describe()} {kind}")
    for _ in range(10):
        deal = position(rules, rng, kind, tricks_left=rng.choice((2, 3) if rules.num_players == 4 else (2, 3, 4)))
        assert solve(deal) == minimax(deal)
        values = action_values(deal)
        assert set(values) == set(deal.legal_actions())
        for action, value in values.items():
            child = deal.clone()
            child.apply_action(action)
            assert value == minimax(child)


COMPILED_VARIANTS = VARIANTS + [make_rules(p) for p in ("two_handed", "five_handed", "six_handed")]


@pytest.mark.parametrize("rules", COMPILED_VARIANTS, ids=lambda r: r.describe())
def test_the_compiled_solver_gives_the_solvers_values(rules: Rules) -> None:
    """agents/search/compiled_solver.py: the values of every legal action equal the Python solver's
    (itself held to minimax above), from random endgames of 1-5 tricks of every contract type,
    every preset (a dead hand, a called partner, teams of three) and both joker-lead rules (§7)."""
    compiled_solver = pytest.importorskip("agents.search.compiled_solver")
    rng = random.Random(f"compiled {rules.describe()}")
    for kind in kinds_of(rules):
        for _ in range(6):
            deal = position(rules, rng, kind, tricks_left=rng.choice((1, 2, 3, 4, 5) if rules.num_players < 5 else (1, 2, 3)))
            assert compiled_solver.action_values(deal) == action_values(deal)


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_side_scores_are_the_scores_of_the_deal_played_out(preset: str) -> None:
    """§8: the scores from the solver's trick count equal the engine's once the deal is played out
    (the contractor's side exactly, the opponents' total exactly)."""
    rules = make_rules(preset)
    rng = random.Random(4)
    for kind in kinds_of(rules):
        deal = position(rules, rng, kind, tricks_left=1, extra_cards=0)
        while not deal.is_over:
            deal.apply_action(rng.choice(deal.legal_actions()))
        own = rules.side_of(deal.contractor)
        scores = side_scores(deal, deal.side_tricks()[own])
        assert scores[own] == deal.score_change[own]
        assert sum(scores) == sum(deal.score_change)


def test_the_solver_refuses_a_deal_not_in_play() -> None:
    deal = Deal.new(make_rules("australian"), random.Random(0), 0)
    with pytest.raises(ValueError, match="play phase, not BIDDING"):
        solve(deal)


def _info(rules: Rules, hand: list[str], plays: list[tuple[int, str]], contract: int) -> InfoSet:
    """Seat 0's information set in the card play of seat 0's ``contract`` after ``plays``."""
    two = rules.two_jokers
    return InfoSet(rules=rules, seat=0, dealer=3, phase=Phase.PLAY, bids=((0, contract),),
                   hand=cards_to_mask(parse_card(c, two) for c in hand), contractor=0, contract=contract,
                   plays=tuple((s, card_action(parse_card(c, two))) for s, c in plays))


def _names(actions: list[int]) -> set[str]:
    return {card_to_str(action_card(a)).upper() for a in actions}


def test_play_candidates_keep_one_card_of_each_run_of_equal_cards() -> None:
    """§6 card order: K Q J of spades are equal in spades' order when hearts are trumps; a queen
    in the current trick parts the king from the jack, one in a finished trick does not; in
    trumps the right bower, the left bower and the ace are one run; the joker is never merged."""
    rules = make_rules("australian")
    hearts, spades = bid_action(6, 3), bid_action(6, 0)
    hand = ["KS", "QS", "JS", "9S", "JK", "AH"]
    legal = [card_action(parse_card(c)) for c in hand]
    kept = play_candidates(_info(rules, hand, [], hearts), legal, legal[0])
    assert _names(kept) == {"KS", "9S", "JK", "AH"}  # the 10 is in play: the 9 stays alone
    advised = card_action(parse_card("QS"))
    assert _names(play_candidates(_info(rules, hand, [], hearts), legal, advised)) == {"QS", "9S", "JK", "AH"}

    hand = ["KS", "JS", "9S", "JK", "AH"]
    legal = [card_action(parse_card(c)) for c in hand[:3]]
    current = _info(rules, hand, [(2, "QS"), (3, "AS")], hearts)  # the queen is in this trick
    assert _names(play_candidates(current, legal, legal[0])) == {"KS", "JS", "9S"}
    finished = [(0, "4D"), (1, "5D"), (2, "QS"), (3, "TS"), (1, "AS"), (2, "5S"), (3, "6S")]  # Q and 10 gone
    assert _names(play_candidates(_info(rules, hand, finished, hearts), legal, legal[0])) == {"KS"}

    hand = ["JS", "JC", "AS", "KS", "JK"]  # spades trumps: right bower, left bower, ace, king and the joker
    legal = [card_action(parse_card(c)) for c in hand]
    assert _names(play_candidates(_info(rules, hand, [], spades), legal, legal[0])) == {"JS", "JK"}


@pytest.mark.parametrize("rules", COMPILED_VARIANTS, ids=lambda r: r.describe())
def test_the_card_plays_left_out_are_worth_what_an_equal_kept_one_is(rules: Rules) -> None:
    """The solver's value (itself held to minimax above) of every legal card the search leaves out
    (``play_candidates``) equals that of a kept card of its effective suit (§6), and the advised
    card is always kept: from random endgames of every contract type and preset."""
    rng = random.Random(f"equal cards {rules.describe()}")
    merged = 0
    for kind in kinds_of(rules):
        for _ in range(12):
            deal = position(rules, rng, kind, tricks_left=rng.choice((2, 3, 4) if rules.num_players < 5 else (2, 3)))
            legal = deal.legal_actions()
            advised = rng.choice(legal)
            info = InfoSet.from_deal(deal, deal.to_act)
            kept = play_candidates(info, legal, advised)
            assert advised in kept and set(kept) <= set(legal)
            values = action_values(deal)
            suit = {a: EFFECTIVE_SUIT[deal.ctx][action_card(a)] for a in legal}
            for action in set(legal) - set(kept):
                assert any(suit[k] == suit[action] and values[k] == values[action] for k in kept), (deal, action)
                merged += 1
    assert merged > 0  # the positions did hold equal cards
