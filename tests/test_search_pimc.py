"""The PIMC agent (agents/search/pimc.py) and the tracker that rebuilds its information set.

Every card play of every preset and contract type (§7) must be legal; the tracker's information
set, built from the observations alone, must be the engine's own (in the observer's relative
seats); a budget in seconds must bound the search.
"""

from __future__ import annotations

import random
import time
from dataclasses import replace

import numpy as np
import pytest
from test_search_positions import PRESET_NAMES, kinds_of, position

from agents.heuristic import HeuristicAgent
from agents.search.pimc import PIMCAgent
from agents.search.tracking import ObservationTracker
from agents.search.values import play_candidates
from five_hundred_env import make_rules
from five_hundred_env.actions import ActionTable
from five_hundred_env.engine import Deal
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules
from five_hundred_env.sampling import InfoSet


def _observe(deal: Deal, encoder: ObservationEncoder, table: ActionTable) -> dict[str, np.ndarray]:
    mask = np.zeros(len(table), dtype=np.int8)
    for u in deal.legal_actions():
        mask[table.compact[u]] = 1
    return {"observation": encoder.encode(deal, deal.to_act), "action_mask": mask}


def _relative(info: InfoSet) -> InfoSet:
    """The same information set with seats counted from the observer (the observation's seats)."""
    n = info.rules.num_players

    def rel(seat: int) -> int:
        return (seat - info.seat) % n if seat >= 0 else seat

    return replace(info, seat=0, dealer=rel(info.dealer), contractor=rel(info.contractor),
                   bids=tuple((rel(s), a) for s, a in info.bids), plays=tuple((rel(s), a) for s, a in info.plays))


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_pimc_plays_only_legal_cards_in_every_contract(preset: str) -> None:
    """§7: in every seat and contract type, from the first lead to the last trick, with rollouts
    and with the solver, the agent's plays are legal (the engine raises otherwise)."""
    rules = make_rules(preset)
    rng = random.Random(preset)
    agent = PIMCAgent(rules, seed=3, worlds=2, solver_tricks=3)
    encoder, table = ObservationEncoder(rules), ActionTable(rules)
    for kind in kinds_of(rules):
        for _ in range(2):
            deal = position(rules, rng, kind, tricks_left=rules.hand_size, extra_cards=0)
            while not deal.is_over:
                obs = _observe(deal, encoder, table)
                action = table.universal[agent.act(obs)]
                assert action in deal.legal_actions()
                deal.apply_action(action)
    assert agent.fallbacks == 0 and agent.searches > 0


def test_the_default_base_is_the_shipped_network_where_it_can_play(monkeypatch: pytest.MonkeyPatch) -> None:
    """The base agent defaults to the preset's ``pretrained`` network when one ships, torch is
    installed and the rules are the preset's own; else to the heuristic (its bids are the
    network's, its card play then the network's too: the heuristic's in the shipped files)."""
    pytest.importorskip("torch")
    agent = PIMCAgent(make_rules("australian"), seed=0)
    assert agent.base_spec == "pretrained" and type(agent._base.get()).__name__ == "NeuralAgent"
    assert PIMCAgent(make_rules("australian", slam_bonus=False), seed=0).base_spec == "heuristic"
    assert PIMCAgent(make_rules("five_handed"), seed=0).base_spec == "pretrained"
    assert PIMCAgent(make_rules("australian"), seed=0, base="heuristic").base_spec == "heuristic"
    assert PIMCAgent(make_rules("australian"), seed=0, base=None).base_spec == "heuristic"
    with monkeypatch.context() as patched:
        patched.setattr("agents.pretrained.available_presets", lambda: ["two_handed"])  # as if none shipped for australian
        assert PIMCAgent(make_rules("australian"), seed=0).base_spec == "heuristic"
    monkeypatch.setattr("agents.pretrained.find_spec", lambda name: None)  # as without torch
    assert PIMCAgent(make_rules("australian"), seed=0).base_spec == "heuristic"


@pytest.mark.parametrize("misere_play", [True, False])
def test_misere_play_false_leaves_a_closed_miseres_card_play_to_the_base_agent(misere_play: bool) -> None:
    """§7: with ``misere_play=False`` every card of a closed misère, the declarer's and the
    defenders', is the heuristic's and none is searched; an open misère's and a trick contract's
    play is still searched. With the default the misère's play is searched too."""
    rules = make_rules("australian")
    rng = random.Random(5)
    encoder, table = ObservationEncoder(rules), ActionTable(rules)
    heuristic = HeuristicAgent(rules, seed=0)
    for kind in ("misere", "open_misere", "suit"):
        # the heuristic as the base, so "left to the base" reads as "the heuristic's card"
        agent = PIMCAgent(rules, seed=3, worlds=2, misere_play=misere_play, base="heuristic")
        same = plays = 0
        deal = position(rules, rng, kind, tricks_left=rules.hand_size, extra_cards=0)
        while not deal.is_over:
            obs = _observe(deal, encoder, table)
            action = agent.act(obs)
            same += action == heuristic.act(obs)
            plays += 1
            deal.apply_action(table.universal[action])
        searched = agent.stats["play"].searches
        if kind == "misere" and not misere_play:
            assert searched == 0 and same == plays
        else:
            assert searched > 0
    with pytest.raises(ValueError, match="misere_play"):
        PIMCAgent(rules, misere_play="no")


@pytest.mark.parametrize("equal_cards", [True, False])
def test_equal_cards_search_one_card_of_each_run_and_skip_a_choice_among_equals(equal_cards: bool) -> None:
    """§6 card order: with ``equal_cards`` (the default) a card play whose legal cards are all equal
    is the heuristic's and is not searched, and a searched one scores one card of each run
    (:func:`~agents.search.values.play_candidates`); off, every legal card is scored."""
    rules = make_rules("australian")
    rng = random.Random(11)
    encoder, table = ObservationEncoder(rules), ActionTable(rules)
    heuristic = HeuristicAgent(rules, seed=0)
    # the heuristic as the base: a run's representative is the base's card, compared with the heuristic's below
    agent = PIMCAgent(rules, seed=3, worlds=2, equal_cards=equal_cards, search="play", solver_tricks=0, base="heuristic")
    skipped = fewer = 0
    for _ in range(6):
        deal = position(rules, rng, "suit", tricks_left=rules.hand_size, extra_cards=0)
        while not deal.is_over:
            obs = _observe(deal, encoder, table)
            legal = deal.legal_actions()
            kept = play_candidates(InfoSet.from_deal(deal, deal.to_act), legal, table.universal[heuristic.act(obs)])
            searches = agent.stats["play"].searches
            action = agent.act(obs)
            searched = agent.stats["play"].searches > searches
            if equal_cards and len(kept) == 1:
                assert not searched and action == heuristic.act(obs)
                skipped += len(legal) > 1
            elif searched:
                assert set(agent.last_search.means) == set(kept if equal_cards else legal)
                fewer += len(kept) < len(legal)
            deal.apply_action(table.universal[action])
    assert fewer > 0 and (skipped > 0) == equal_cards
    with pytest.raises(ValueError, match="equal_cards"):
        PIMCAgent(rules, equal_cards="no")


RULE_VARIANTS = [make_rules(p) for p in PRESET_NAMES] + [
    make_rules("australian", joker_lead_suit="not_shown_void"),
    make_rules("italian_3p", open_misere_exposure="after_first_trick"),
]


@pytest.mark.parametrize("rules", RULE_VARIANTS, ids=lambda r: r.describe())
def test_the_tracker_rebuilds_the_engines_information_set(rules: Rules) -> None:
    """At every turn of the play the tracker, from observations only, knows what the engine says
    the seat knows: the auction, every play in order, the kitty and discards if it took them."""
    rng = random.Random(rules.describe())
    encoder, table = ObservationEncoder(rules), ActionTable(rules)
    tracker = ObservationTracker(rules)
    for kind in kinds_of(rules):
        for _ in range(3):
            deal = position(rules, rng, kind, tricks_left=rules.hand_size, extra_cards=0)
            while not deal.is_over:
                obs = _observe(deal, encoder, table)
                info = tracker.info_set(obs["observation"])
                assert info == _relative(InfoSet.from_deal(deal, deal.to_act))
                action = rng.choice(deal.legal_actions())
                tracker.record_own_play(obs["observation"], info, action)
                deal.apply_action(action)


def test_the_tracker_starts_afresh_when_a_deal_is_played_again() -> None:
    """A duplicate board plays the same cards again: the old record must not be taken for this one."""
    rules = make_rules("australian")
    encoder, table = ObservationEncoder(rules), ActionTable(rules)
    agent = PIMCAgent(rules, seed=0, worlds=2)
    start = position(rules, random.Random(6), "suit", tricks_left=10, extra_cards=0)
    for _ in range(2):
        deal = start.clone()
        while not deal.is_over:
            deal.apply_action(table.universal[agent.act(_observe(deal, encoder, table))])
    assert agent.fallbacks == 0 and agent.searches > 0


def test_a_tracker_that_missed_a_trick_says_so() -> None:
    """An agent joining after the first trick cannot know the order of play: no guess is made."""
    rules = make_rules("australian")
    deal = position(rules, random.Random(1), "suit", tricks_left=7, extra_cards=0)
    vector = ObservationEncoder(rules).encode(deal, deal.to_act)
    assert ObservationTracker(rules).info_set(vector) is None
    agent = PIMCAgent(rules, seed=0, worlds=2)
    obs = _observe(deal, ObservationEncoder(rules), ActionTable(rules))
    assert ActionTable(rules).universal[agent.act(obs)] in deal.legal_actions() and agent.fallbacks == 1


def test_the_seconds_budget_bounds_a_decision() -> None:
    """A budget of 0.2 s stops a search of 10,000 worlds after a few of them."""
    rules = make_rules("french_46")
    deal = position(rules, random.Random(2), "suit", tricks_left=10, extra_cards=0)
    agent = PIMCAgent(rules, seed=0, worlds=10_000, seconds=0.2)
    obs = _observe(deal, ObservationEncoder(rules), ActionTable(rules))
    start = time.perf_counter()
    agent.act(obs)
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize(("option", "value", "message"), [
    ("worlds", 0, "worlds must be"), ("seconds", -1, "seconds must be"), ("solver_tricks", 11, "solver_tricks must be")])
def test_bad_budgets_are_refused(option: str, value: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        PIMCAgent("australian", **{option: value})
