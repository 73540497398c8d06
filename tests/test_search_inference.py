"""Auction inference (agents/search/inference.py): the accepted worlds are exactly the consistent ones, uniform among them.

Positions are heuristic deals stopped late in the play, seen by the contractor (who knows the
kitty and discards), so the uniform information set is small enough to enumerate: its worlds are
collected by drawing until :meth:`WorldSampler.count` distinct ones are seen. The oracle of
consistency replays each world's auction with the Python :class:`HeuristicAgent` in every other
seat and compares its choice with each actual bid, one decision at a time.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from agents.heuristic import HeuristicAgent, RowByRowHeuristic
from agents.registry import make_agent
from agents.search import inference as inference_module
from agents.search.inference import AuctionInference
from agents.search.pimc import PIMCAgent
from five_hundred_env import make_rules
from five_hundred_env.actions import ActionTable
from five_hundred_env.engine import Deal, Phase
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.sampling import InfoSet, WorldSampler

POSITIONS = [("australian", 4, 7), ("australian", 0, 7), ("five_handed", 7, 8)]
"""(preset, seed, tricks played): positions whose consistent worlds are a proper, non-empty subset."""


def _position(preset: str, seed: int, tricks: int) -> Deal:
    """A deal the heuristic plays in every seat, stopped at a lead after ``tricks`` tricks."""
    rules = make_rules(preset)
    table, encoder, agent = ActionTable(rules), ObservationEncoder(rules), HeuristicAgent(rules)
    deal = Deal.new(rules, random.Random(seed), 0)
    while not deal.is_over and (deal.phase != Phase.PLAY or len(deal.tricks) < tricks or deal.trick):
        deal.apply_action(table.universal[agent.act(encoder.encode_turn(deal, table))])
    assert not deal.is_over
    return deal


def _all_worlds(info: InfoSet) -> list[Deal]:
    """Every world of the (uniform) information set, one deal each."""
    sampler = WorldSampler(info)
    total = sampler.count()
    rng = random.Random(0)
    worlds: dict[tuple[int, ...], Deal] = {}
    for _ in range(60 * total):
        world = sampler.sample(rng)
        worlds[world.dealt] = world
        if len(worlds) == total:
            return list(worlds.values())
    raise AssertionError(f"only {len(worlds)} of {total} worlds seen")


def _oracle(world: Deal, info: InfoSet) -> bool:
    """Whether every other seat's bids are HeuristicAgent's with the world's hands (one by one)."""
    rules = info.rules
    table, encoder, agent = ActionTable(rules), ObservationEncoder(rules), HeuristicAgent(rules)
    replay = Deal(rules, world.dealt, world.kitty, world.dealer)
    for seat, action in info.bids:
        if seat != info.seat and table.universal[agent.act(encoder.encode_turn(replay, table))] != action:
            return False
        replay.apply_action(action)
    return True


@pytest.mark.parametrize(("preset", "seed", "tricks"), POSITIONS)
def test_accepted_worlds_are_exactly_the_consistent_ones(preset: str, seed: int, tricks: int, monkeypatch) -> None:
    deal = _position(preset, seed, tricks)
    info = InfoSet.from_deal(deal, deal.contractor)
    worlds = _all_worlds(info)
    inference = AuctionInference(info.rules)
    assert inference.compiled
    expected = [_oracle(w, info) for w in worlds]
    assert 0 < sum(expected) < len(worlds)  # the auction does tell something here
    assert inference.consistent(worlds, info) == expected
    monkeypatch.setattr(inference_module, "batch_heuristic", RowByRowHeuristic)  # as without numba
    row_by_row = AuctionInference(info.rules)
    assert not row_by_row.compiled and row_by_row.consistent(worlds, info) == expected
    assert any(w.dealt == deal.dealt for w, ok in zip(worlds, expected, strict=True) if ok)  # the real deal


def test_sampled_worlds_are_uniform_among_the_consistent_ones() -> None:
    deal = _position("australian", 4, 7)
    info = InfoSet.from_deal(deal, deal.contractor)
    consistent = {w.dealt for w in _all_worlds(info) if _oracle(w, info)}
    inference = AuctionInference(info.rules, budget=10**6)
    sampler = inference.sampler(info)
    rng = random.Random(11)
    draws = 600 * len(consistent)
    counts = Counter(sampler.sample(rng).dealt for _ in range(draws))
    assert set(counts) == consistent
    assert inference.uniform_worlds == 0 and inference.accepted >= draws
    expected = draws / len(consistent)
    chi2 = sum((counts[w] - expected) ** 2 / expected for w in consistent)
    df = len(consistent) - 1
    z = ((chi2 / df) ** (1 / 3) - (1 - 2 / (9 * df))) / (2 / (9 * df)) ** 0.5  # Wilson–Hilferty
    assert abs(z) < 4.5, (chi2, df)


def test_budget_spent_falls_back_to_uniform_worlds_and_counts_them() -> None:
    deal = _position("australian", 4, 7)
    info = InfoSet.from_deal(deal, deal.contractor)
    inference = AuctionInference(info.rules, budget=5)
    sampler = inference.sampler(info)
    rng = random.Random(3)
    worlds = [sampler.sample(rng) for _ in range(40)]
    assert inference.candidates == 5
    assert inference.uniform_worlds == 40 - inference.accepted > 0
    assert inference.uniform_decisions == 1
    assert all(w.hands[info.seat] == deal.hands[info.seat] and w.bids == deal.bids and w.tricks == deal.tricks for w in worlds)
    with pytest.raises(ValueError, match="budget"):
        AuctionInference(info.rules, budget=0)


def test_pimc_inference_option_draws_consistent_worlds_in_a_deal() -> None:
    rules = make_rules("australian")
    agent = make_agent("pimc:worlds=2,inference=true,inference_budget=200", rules, 1)
    assert isinstance(agent, PIMCAgent) and agent.inference is not None
    table, encoder, heuristic = ActionTable(rules), ObservationEncoder(rules), HeuristicAgent(rules)
    deal = Deal.new(rules, random.Random(5), 3)
    while not deal.is_over:
        turn = encoder.encode_turn(deal, table)
        deal.apply_action(table.universal[(agent if deal.to_act == 0 else heuristic).act(turn)])
    assert agent.searches > 0 and agent.inference.candidates > 0 and agent.inference.accepted > 0
    assert PIMCAgent(rules, seed=1).inference is None
    with pytest.raises(ValueError, match="inference"):
        PIMCAgent(rules, inference="yes")  # type: ignore[arg-type]
