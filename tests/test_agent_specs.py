"""Agent specs with options (``NAME:key=value,...``) and per-decision agents (``SPEC@KINDS``):
agents/registry.py and agents/split.py."""

from __future__ import annotations

import numpy as np
import pytest

import five_hundred_env
from agents import Agent, HeuristicAgent, agent_factory, make_agent, register_agent
from agents.base import DECISION_KINDS, KIND_OF_PHASE, parse_kinds
from agents.play import play_deal
from agents.registry import parse_options, parse_value, unregister_agent
from agents.search import PIMCAgent
from agents.split import DecisionSplitAgent
from five_hundred_env.rules import make_rules
from training.evaluation.evaluate import duplicate_match


class Recording(Agent):
    """The highest legal action (a bid, when it bids); remembers its options and every observation
    it was asked about."""

    name = "recording"

    def __init__(self, rules="australian", seed=None, *, depth: int = 1, style: str = "plain", scale=None) -> None:
        super().__init__(rules, seed)
        self.options = {"depth": depth, "style": style, "scale": scale}
        self.seen: list[dict] = []

    def act(self, observation):
        self.seen.append(observation)
        return int(np.flatnonzero(observation["action_mask"])[-1])


@pytest.fixture
def recording():
    register_agent("recording", Recording)
    yield
    unregister_agent("recording")


@pytest.mark.parametrize(("text", "value"), [
    ("8", 8), ("-3", -3), ("0.05", 0.05), ("1e3", 1000.0), ("true", True), ("False", False), ("none", None),
    ("None", None), ("heuristic", "heuristic"), ("pimc:worlds", "pimc:worlds"),
])
def test_option_values_are_read_as_numbers_booleans_none_or_text(text, value):
    parsed = parse_value(text)
    assert parsed == value and type(parsed) is type(value)


def test_options_reach_the_factory_and_the_label_is_the_spec_as_written(recording):
    agent = make_agent("recording:depth=3,style=Deep,scale=none", "italian_3p", seed=1)
    assert isinstance(agent, Recording) and agent.rules == make_rules("italian_3p")
    assert agent.options == {"depth": 3, "style": "Deep", "scale": None}  # a string's case is kept
    assert agent_factory(" Recording:depth=2 ").label == "Recording:depth=2"
    report = duplicate_match("australian", "recording:depth=2", "heuristic@play", deals=1, seed=0)
    assert (report.agent_a, report.agent_b) == ("recording:depth=2", "heuristic@play")
    pimc = make_agent("pimc:worlds=3,seconds=0.5", "australian")
    assert isinstance(pimc, PIMCAgent) and (pimc.worlds, pimc.seconds) == (3, 0.5)


@pytest.mark.parametrize(("spec", "words"), [
    ("pimc:wrlds=8", r"'pimc' has no option 'wrlds' \(it takes worlds, seconds, rollout, solver_tricks, search, base, "
                     r"min_gain, bid_worlds, kitty_worlds, inference, inference_budget, win_bonus, misere_play, equal_cards, "
                     r"play_inference, bid_weights, game_values\)"),
    ("heuristic:depth=2", r"'heuristic' has no option 'depth' \(it takes none\)"),
    ("pretrained:greedy=false", r"'pretrained' has no option 'greedy' \(it takes none\)"),
    ("pimc:worlds", r"expected NAME:key=value,key=value, got 'worlds'"),
    ("pimc:worlds=", r"expected NAME:key=value,key=value, got 'worlds='"),
    ("pimc:", r"expected NAME:key=value,key=value, got ''"),
    ("pimc:worlds=2,,seconds=1", r"expected NAME:key=value,key=value, got ''"),
    ("pimc:2x=1", r"got '2x=1'"),
    ("pimc:worlds=2,worlds=3", r"option 'worlds' is given twice"),
    ("grandmaster:worlds=2", r"unknown agent 'grandmaster:worlds=2': expected one of heuristic, pimc"),
])
def test_malformed_options_are_refused_naming_the_problem(spec, words):
    with pytest.raises(ValueError, match=words) as info:
        agent_factory(spec)
    assert "\n" not in str(info.value)


def test_a_value_the_agent_refuses_is_its_own_error():
    with pytest.raises(ValueError, match="worlds must be a whole number >= 1, got 0"):
        make_agent("pimc:worlds=0", "australian")


def test_a_registered_name_holding_a_colon_still_takes_options():
    register_agent("team:b", Recording)
    try:
        assert isinstance(make_agent("team:b", "australian"), Recording)
        assert make_agent("team:b:depth=4", "australian").options["depth"] == 4
    finally:
        unregister_agent("team:b")


def test_parse_options_reads_every_pair():
    assert parse_options("worlds=8, seconds=0.05", "pimc:...") == {"worlds": 8, "seconds": 0.05}


@pytest.mark.parametrize(("text", "words"), [
    ("plays", r"unknown decision kind\(s\) 'plays' in 'plays': expected a \+-joined list of bid, discard, nominate, play"),
    ("bid+", r"unknown decision kind\(s\) ''"),
    ("play+play", r"a decision kind is given twice in 'play\+play'"),
])
def test_bad_kinds_are_refused(text, words):
    """Not a +-list of bid, discard, nominate, play: refused, and so is the spec that holds it."""
    with pytest.raises(ValueError, match=words):
        parse_kinds(text)
    with pytest.raises(ValueError, match="agent spec 'heuristic@"):
        agent_factory(f"heuristic@{text}")


def test_an_empty_list_of_kinds_is_none_and_a_spec_needs_one():
    assert parse_kinds("") == frozenset() and parse_kinds(("play", "bid")) == {"bid", "play"}
    with pytest.raises(ValueError, match="no decision kind after the @"):
        agent_factory("heuristic@")


@pytest.mark.parametrize(("spec", "words"), [
    ("@play", "expected SPEC@KINDS, one agent spec and one @"),
    ("heuristic@bid@play", "expected SPEC@KINDS, one agent spec and one @"),
    ("grandmaster@play", "unknown agent 'grandmaster'"),
    ("pimc:depth=2@play", "'pimc' has no option 'depth'"),
])
def test_bad_split_specs_are_refused(spec, words):
    with pytest.raises(ValueError, match=words):
        agent_factory(spec)


def test_specs_combine_options_and_kinds():
    agent = make_agent("PIMC:worlds=4@Play+bid", "australian", seed=2)
    assert isinstance(agent, DecisionSplitAgent) and agent.kinds == {"play", "bid"}
    assert isinstance(agent.inner, PIMCAgent) and agent.inner.worlds == 4
    assert isinstance(agent.other, HeuristicAgent)
    assert agent_factory("PIMC:worlds=4@Play+bid").label == "PIMC:worlds=4@Play+bid"


@pytest.mark.parametrize(("preset", "kinds"), [
    ("australian", "play"), ("australian", "bid+discard"), ("australian", "nominate"), ("italian_3p", "discard+play"),
    ("french_46", "bid"),
])
def test_the_inner_agent_makes_exactly_the_decisions_of_its_kinds(recording, preset, kinds):
    """Every turn of deals goes to the recording agent exactly when its engine phase is one of the
    kinds, and to the heuristic otherwise; deals are played until each kind came up (a nomination,
    §7, only where the contractor holds the joker at no trumps or misère)."""
    rules = make_rules(preset)
    env = five_hundred_env.env(rules=rules, episode="deal")
    seats = [make_agent(f"recording@{kinds}", rules, seed=s) for s in range(rules.num_players)]
    wanted = set(kinds.split("+"))
    counted = dict.fromkeys(DECISION_KINDS, 0)
    asked = [0] * rules.num_players

    def check(turn):
        now = len(seats[turn.seat].inner.seen)
        assert now - asked[turn.seat] == (KIND_OF_PHASE[turn.phase] in wanted), turn.phase
        asked[turn.seat] = now
        counted[KIND_OF_PHASE[turn.phase]] += 1

    for seed in range(60):
        play_deal(env, seats, seed=seed, on_turn=check)
        if seed >= 2 and all(counted[kind] for kind in wanted):
            break
    assert all(counted[kind] for kind in wanted), counted  # each kind of the spec did come up


@pytest.mark.parametrize("preset", ["australian", "italian_3p", "french_46"])
def test_the_heuristic_at_play_plays_exactly_as_the_heuristic(preset):
    rules = make_rules(preset)
    env = five_hundred_env.env(rules=rules, episode="deal")
    for seed in range(3):
        split = play_deal(env, [make_agent("heuristic@play", rules, seed=s) for s in range(rules.num_players)], seed=seed)
        plain = play_deal(env, [HeuristicAgent(rules, seed=s) for s in range(rules.num_players)], seed=seed)
        assert split.history == plain.history


def test_reseeding_reaches_both_agents():
    agent = make_agent("random@play", "australian", seed=0)
    agent.seed(5)
    again = make_agent("random", "australian", seed=5)
    assert agent.inner.rng.integers(1 << 30) == again.rng.integers(1 << 30)
    assert agent.other.rng.integers(1 << 30) == HeuristicAgent("australian", seed=5).rng.integers(1 << 30)


def test_an_observation_after_the_deal_asks_for_no_decision():
    agent = make_agent("random@play", "australian")
    env = five_hundred_env.env(rules="australian", episode="deal")
    play_deal(env, [HeuristicAgent("australian")] * 4, seed=0)
    with pytest.raises(ValueError, match="no decision to make: the observation shows the phase DEAL_OVER"):
        agent.kind_of(env.observe("player_0"))
