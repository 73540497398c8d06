"""The PIMC agent searching every kind of decision: bids (§4), discards (§5), the joker's
nomination (§7) and the card play (§7).

Every action must be legal; a searched bid is one of the rolled-out candidates; with a huge
``min_gain`` the agent is exactly its base agent; base and rollout agents may be given as spec
strings; the ``seconds`` budget bounds an auction or kitty decision; the tracker rebuilds the
auction's and the kitty phase's information sets exactly as the engine's ``InfoSet.from_deal``.
"""

from __future__ import annotations

import random
import time

import numpy as np
import pytest
from test_search_pimc import _observe, _relative
from test_search_positions import PRESET_NAMES, _wanted_bid, position

from agents.base import DECISION_KINDS as KINDS
from agents.base import Agent, RandomAgent, parse_kinds
from agents.heuristic import HeuristicAgent
from agents.search import tracking
from agents.search.pimc import DEFAULT_MIN_GAIN, PIMCAgent, parse_min_gain
from agents.search.tracking import ObservationTracker
from agents.search.values import bid_candidates
from five_hundred_env import make_rules
from five_hundred_env.actions import ActionTable
from five_hundred_env.engine import Deal, Phase
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules
from five_hundred_env.sampling import InfoSet


def _play_deals(rules: Rules, agent: Agent, deals: int, seed: int, other: Agent | None = None) -> list[int]:
    """Whole deals with ``agent`` in every seat; every action checked legal by the engine's list;
    ``other`` (if given) sees the same observations and must choose the same actions."""
    rng = random.Random(seed)
    encoder, table = ObservationEncoder(rules), ActionTable(rules)
    actions = []
    for _ in range(deals):
        deal = Deal.new(rules, rng, rng.randrange(rules.num_players))
        while not deal.is_over:
            obs = _observe(deal, encoder, table)
            action = table.universal[agent.act(obs)]
            assert action in deal.legal_actions()
            if other is not None:
                assert table.universal[other.act(obs)] == action
            actions.append(action)
            deal.apply_action(action)
    return actions


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_every_kind_searched_plays_only_legal_actions(preset: str) -> None:
    """§4-§7: whole deals, the agent in every seat searching bids, discards, nominations and plays."""
    rules = make_rules(preset)
    agent = PIMCAgent(rules, seed=1, worlds=2, solver_tricks=2, min_gain=0)
    _play_deals(rules, agent, deals=3, seed=len(preset))
    assert agent.fallbacks == 0
    assert agent.stats["bid"].searches > 0 and agent.stats["discard"].searches > 0 and agent.stats["play"].searches > 0
    assert agent.stats["bid"].deviations > 0  # the search does leave the heuristic's choice


def test_a_searched_bid_is_always_a_candidate() -> None:
    """§4: the bid chosen is PASS, the base agent's bid, a cheapest bid of a strain or a misère."""
    rules = make_rules("australian")
    agent = PIMCAgent(rules, seed=2, worlds=2, search="bid", min_gain=0)
    reference = HeuristicAgent(rules, seed=2)
    encoder, table = ObservationEncoder(rules), ActionTable(rules)
    rng = random.Random(4)
    for _ in range(6):
        deal = Deal.new(rules, rng, rng.randrange(rules.num_players))
        while deal.phase == Phase.BIDDING:
            obs = _observe(deal, encoder, table)
            action = table.universal[agent.act(obs)]
            assert action in bid_candidates(deal.legal_actions(), table.universal[reference.act(obs)])
            deal.apply_action(action)
    assert agent.stats["bid"].searches > 10 and agent.stats["play"].searches == 0


def test_the_nomination_is_searched() -> None:
    """§7: a no-trumps contractor holding the joker nominates its suit by search."""
    rules = make_rules("australian")
    agent = PIMCAgent(rules, seed=3, worlds=2, search="nominate")
    encoder, table = ObservationEncoder(rules), ActionTable(rules)
    rng = random.Random(5)
    while agent.stats["nominate"].searches < 2:
        deal = Deal.new(rules, rng, rng.randrange(rules.num_players))
        while deal.phase in (Phase.BIDDING, Phase.DISCARD):
            deal.apply_action(_wanted_bid(deal, "no_trumps", rng) if deal.phase == Phase.BIDDING
                              else rng.choice(deal.legal_actions()))
        if deal.phase == Phase.NOMINATE:
            assert table.universal[agent.act(_observe(deal, encoder, table))] in deal.legal_actions()
    assert agent.fallbacks == 0


def test_a_huge_min_gain_plays_exactly_as_the_base_agent() -> None:
    """Every kind is searched, but no candidate beats the base agent's choice by 10^9 points."""
    rules = make_rules("australian")
    agent = PIMCAgent(rules, seed=7, worlds=2, base="random", rollout="heuristic", min_gain=1e9)
    _play_deals(rules, agent, deals=2, seed=8, other=RandomAgent(rules, seed=7))
    assert agent.searches > 0 and sum(s.deviations for s in agent.stats.values()) == 0


@pytest.mark.parametrize("min_gain", [0.0, 30.0])
def test_only_a_gain_leaves_the_base_choice_and_a_tie_keeps_it(min_gain: float) -> None:
    """At every searched decision the agent takes the best mean only where it beats the base
    choice's by more than 0 and by ``min_gain``: a tie keeps the base choice (not the lowest id)."""
    rules = make_rules("australian")
    rng = random.Random(12)
    encoder, table = ObservationEncoder(rules), ActionTable(rules)
    agent = PIMCAgent(rules, seed=3, worlds=6, bid_worlds=4, kitty_worlds=4, min_gain=min_gain)
    records = []
    for _ in range(2):
        deal = Deal.new(rules, rng, rng.randrange(rules.num_players))
        while not deal.is_over:
            before = agent.last_search
            action = table.universal[agent.act(_observe(deal, encoder, table))]
            if agent.last_search is not before:
                records.append(agent.last_search)
                assert action == agent.last_search.chosen
            deal.apply_action(action)
    assert len(records) > 20
    for r in records:
        assert r.chosen == (r.best if r.gain > 0 and r.gain >= min_gain else r.base_action)
    ties = [r for r in records if r.gain == 0 and r.best != r.base_action]
    assert ties and all(r.chosen == r.base_action for r in ties)  # ties with a lower id than the base's
    assert any(r.chosen != r.base_action for r in records)


def test_agents_given_as_spec_strings() -> None:
    """``base`` and ``rollout`` take registry specs; the base is built on first use, with the seed."""
    rules = make_rules("italian_3p")
    agent = PIMCAgent(rules, seed=5, worlds=2, base="heuristic", rollout="random")
    assert isinstance(agent.base, HeuristicAgent) and isinstance(agent.rollout, RandomAgent)
    _play_deals(rules, agent, deals=1, seed=9)
    assert agent.searches > 0 and agent.fallbacks == 0
    agent.seed(11)
    assert agent.rollout.rng.integers(1 << 30) == np.random.default_rng(11).integers(1 << 30)


@pytest.mark.parametrize(("option", "value", "message"), [
    ("base", "no-such-agent", "unknown agent 'no-such-agent'"), ("rollout", 3, "rollout must be an Agent"),
    ("search", "bid+bluff", r"unknown decision kind\(s\) 'bluff'"),
    ("min_gain", -1, "min_gain must be"), ("min_gain", {"bluff": 3}, "min_gain takes kinds"),
    ("play_inference", 1, "play_inference must be"),
    ("bid_worlds", 0, "bid_worlds must be"), ("kitty_worlds", 1.5, "kitty_worlds must be")])
def test_bad_options_are_refused(option: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        PIMCAgent("australian", **{option: value})


def test_search_kinds_and_min_gains_are_parsed() -> None:
    assert parse_kinds("bid+play") == parse_kinds(("play", "bid")) == {"bid", "play"}
    assert parse_kinds("") == frozenset() and parse_kinds(KINDS) == set(KINDS)
    assert parse_min_gain(7) == dict.fromkeys(KINDS, 7.0)
    assert parse_min_gain({"bid": 5}) == {**DEFAULT_MIN_GAIN, "bid": 5.0}


def _kitty_deal(rules: Rules, rng: random.Random) -> Deal:
    """A deal stopped at its first discard (a contract was bid: retried until one is)."""
    while True:
        deal = Deal.new(rules, rng, rng.randrange(rules.num_players))
        while deal.phase == Phase.BIDDING:
            deal.apply_action(_wanted_bid(deal, "suit", rng))
        if deal.phase == Phase.DISCARD:
            return deal


@pytest.mark.parametrize("kind", ["bid", "discard"])
def test_the_seconds_budget_bounds_an_auction_or_kitty_decision(kind: str) -> None:
    """A budget of 0.2 s stops a search of 10,000 worlds after a few of them."""
    rules = make_rules("australian")
    rng = random.Random(3)
    deal = Deal.new(rules, rng, 0) if kind == "bid" else _kitty_deal(rules, rng)
    agent = PIMCAgent(rules, seed=0, worlds=10_000, seconds=0.2)
    start = time.perf_counter()
    agent.act(_observe(deal, ObservationEncoder(rules), ActionTable(rules)))
    assert time.perf_counter() - start < 2.0
    assert agent.last_search is not None and agent.last_search.kind == kind and agent.last_search.worlds < 10_000


@pytest.mark.parametrize("rules", [make_rules(p) for p in PRESET_NAMES] + [make_rules("french_46", both_jokers_min_bid=8)],
                         ids=lambda r: r.describe())
def test_the_tracker_rebuilds_the_auction_and_kitty_information_sets(rules: Rules) -> None:
    """§4, §5, §7: at every bid, discard and nomination the tracker's information set, from the
    observation alone, is the engine's (the contractor knows the joker is its own at its nomination)."""
    rng = random.Random(rules.describe())
    encoder, table = ObservationEncoder(rules), ActionTable(rules)
    tracker = ObservationTracker(rules)
    seen = {Phase.BIDDING: 0, Phase.DISCARD: 0, Phase.NOMINATE: 0}
    for i in range(60):
        deal = Deal.new(rules, rng, rng.randrange(rules.num_players))
        while deal.phase in seen:
            info = tracker.info_set(_observe(deal, encoder, table)["observation"])
            assert info == _relative(InfoSet.from_deal(deal, deal.to_act))
            seen[deal.phase] += 1
            steer = deal.phase == Phase.BIDDING and i % 2
            deal.apply_action(_wanted_bid(deal, "no_trumps", rng) if steer else rng.choice(deal.legal_actions()))
    assert seen[Phase.BIDDING] and seen[Phase.DISCARD]
    assert (seen[Phase.NOMINATE] > 0) == (rules.joker_nomination != "none")  # §2: a preset without nominations


def test_the_tracker_keeps_the_deals_in_progress_when_it_drops_old_records(monkeypatch: pytest.MonkeyPatch) -> None:
    """One tracker for every seat over more deals than it keeps records of: the least recently
    played record goes, never one of the deal in progress (every play's information set is rebuilt)."""
    monkeypatch.setattr(tracking, "MAX_TRACKED", 6)
    rules = make_rules("australian")
    rng = random.Random(12)
    encoder, table = ObservationEncoder(rules), ActionTable(rules)
    tracker = ObservationTracker(rules)
    for _ in range(4):
        deal = position(rules, rng, "suit", tricks_left=rules.hand_size, extra_cards=0)
        while not deal.is_over:
            vector = _observe(deal, encoder, table)["observation"]
            info = tracker.info_set(vector)
            assert info == _relative(InfoSet.from_deal(deal, deal.to_act))
            action = rng.choice(deal.legal_actions())
            tracker.record_own_play(vector, info, action)
            deal.apply_action(action)
