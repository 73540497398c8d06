"""The inference from the card play (agents/search/play_inference.py).

What a seat's card play shows of its hand when it plays as the heuristic (§7) must hold of the real
deal whenever it does; the worlds drawn with it must be exactly the information set's deals that
satisfy it; a seat that did not play as the heuristic must not leave the search without worlds.
"""

from __future__ import annotations

import random
import zlib
from collections import Counter

import numpy as np
import pytest
from test_search_positions import position
from test_search_sampling import _hidden_locations, _sampled_key, consistent_worlds

from agents.heuristic import HeuristicAgent
from agents.search.pimc import PIMCAgent
from agents.search.play_inference import inferred_sampler, play_exclusions
from five_hundred_env import make_rules
from five_hundred_env.actions import ActionTable
from five_hundred_env.engine import Deal, Phase
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules
from five_hundred_env.sampling import InfoSet

INFERRED_PRESETS = ("australian", "italian_3p", "french_46", "two_handed", "six_handed")


def _act(agent: HeuristicAgent, deal: Deal, encoder: ObservationEncoder, table: ActionTable) -> int:
    mask = np.zeros(len(table), dtype=np.int8)
    for u in deal.legal_actions():
        mask[table.compact[u]] = 1
    return table.universal[agent.act({"observation": encoder.encode(deal, deal.to_act), "action_mask": mask})]


def heuristic_positions(rules: Rules, rng: random.Random, deals: int, tricks_left: int | None = None):
    """Deals played by the heuristic in every seat, at each card play (or only once ``tricks_left``
    tricks are left, at a trick's start)."""
    agent = HeuristicAgent(rules, 0)
    encoder, table = ObservationEncoder(rules), ActionTable(rules)
    for _ in range(deals):
        deal = Deal.new(rules, rng, rng.randrange(rules.num_players))
        while not deal.is_over:
            if deal.phase == Phase.PLAY and (tricks_left is None or rules.hand_size - len(deal.tricks) == tricks_left):
                yield deal
                if tricks_left is not None:
                    break
            deal.apply_action(_act(agent, deal, encoder, table))


@pytest.mark.parametrize("preset", INFERRED_PRESETS)
def test_what_the_heuristics_play_shows_holds_of_the_real_deal(preset: str) -> None:
    """At every card play of deals the heuristic plays in every seat, no seat holds a card the
    inference excludes, seen from every seat; and the inference excludes cards still hidden."""
    rules = make_rules(preset)
    rng = random.Random(preset)
    hidden_excluded = 0
    for deal in heuristic_positions(rules, rng, 12):
        for observer in range(rules.num_players):
            info = InfoSet.from_deal(deal, observer)
            others = [s for s in range(rules.num_players) if s != observer]
            for seat, excluded in play_exclusions(info, others).items():
                assert not excluded & deal.hands[seat], (seat, deal.contract)
                hidden = deal.rules.deck & ~deal.hands[observer] & ~sum(deal.played) & ~deal.exposed_cards()
                hidden_excluded += (excluded & hidden).bit_count()
    assert hidden_excluded > 100


def test_a_misere_and_the_five_handed_game_are_not_inferred_from() -> None:
    """§7, §10.5: the heuristic plays a misère by other rules, and five-handed partnerships are private."""
    rng = random.Random(3)
    for preset, kind in (("australian", "misere"), ("australian", "open_misere"), ("five_handed", "suit")):
        rules = make_rules(preset)
        for _ in range(3):
            deal = position(rules, rng, kind, tricks_left=3)
            for observer in range(rules.num_players):
                assert play_exclusions(InfoSet.from_deal(deal, observer), range(rules.num_players)) == {}


@pytest.mark.parametrize("preset", ["australian", "italian_3p"])
def test_the_inferred_worlds_are_exactly_the_consistent_deals_that_satisfy_it(preset: str) -> None:
    """The inferred sampler's support is every deal of the information set (enumerated and replayed
    by the engine) that gives no seat an excluded card, and each comes equally often."""
    rules = make_rules(preset)
    rng = random.Random(zlib.crc32(preset.encode()))
    tested = 0
    for deal in heuristic_positions(rules, rng, 40, tricks_left=2):
        seat = deal.contractor  # the contractor sees the discards: few hidden deals to enumerate
        info = InfoSet.from_deal(deal, seat)
        others = [s for s in range(rules.num_players) if s != seat]
        exclusions = play_exclusions(info, others)
        seats, _sizes, _hidden = _hidden_locations(deal, seat)
        worlds = {w for w in consistent_worlds(deal, seat)
                  if not any(m & exclusions.get(s, 0) for s, m in zip(seats, w, strict=True) if s >= 0)}
        sampler, kept = inferred_sampler(info, exclusions)
        if not exclusions or len(worlds) < 2:
            continue
        assert kept and sampler.count() == len(worlds)
        draws = 40 * len(worlds)
        counts = Counter(_sampled_key(sampler, deal, seat, rng) for _ in range(draws))
        assert set(counts) == worlds
        assert max(counts.values()) < 2 * min(counts.values()) + 30
        tested += 1
    assert tested >= 3


def test_a_seat_that_did_not_play_as_the_heuristic_leaves_the_worlds_uniform() -> None:
    """Exclusions that leave no deal (a seat played otherwise) fall back on the information set's worlds."""
    rules = make_rules("australian")
    rng = random.Random(8)
    deal = next(heuristic_positions(rules, rng, 1, tricks_left=3))
    info = InfoSet.from_deal(deal, deal.to_act)
    other = (deal.to_act + 1) % rules.num_players
    sampler, kept = inferred_sampler(info, {other: rules.deck})  # it could hold no card at all
    assert not kept
    assert sampler.count() == inferred_sampler(info, {})[0].count()


def test_pimc_with_play_inference_plays_legal_cards_and_infers() -> None:
    """§7: with ``play_inference`` the agent's worlds keep the inference at most card plays (its
    opponents are the heuristic), and every action is legal."""
    rules = make_rules("australian")
    rng = random.Random(4)
    encoder, table = ObservationEncoder(rules), ActionTable(rules)
    agent = PIMCAgent(rules, seed=1, worlds=4, bid_worlds=2, kitty_worlds=2, play_inference=True, search="play")
    heuristic = HeuristicAgent(rules, 0)
    for _ in range(4):
        deal = Deal.new(rules, rng, rng.randrange(4))
        while not deal.is_over:
            if deal.to_act % 2 == 0:
                mask = np.zeros(len(table), dtype=np.int8)
                for u in deal.legal_actions():
                    mask[table.compact[u]] = 1
                action = table.universal[agent.act({"observation": encoder.encode(deal, deal.to_act), "action_mask": mask})]
                assert action in deal.legal_actions()
            else:
                action = _act(heuristic, deal, encoder, table)
            deal.apply_action(action)
    kept, dropped = agent.play_inferred
    assert kept > 10 and dropped <= kept // 10
