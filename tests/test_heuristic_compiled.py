"""The compiled heuristic (agents/heuristic/compiled.py) against ``HeuristicAgent``, decision by decision.

Positions come from the batched engine (whose observations and masks are the AEC environment's,
byte for byte: tests/test_vector_diff.py), in games of random play and of heuristic play, for
every preset with rule options mixed, from starting scores spread over the game (§9: the bidding
reads the score). At every position with a choice, ``HeuristicPolicy.act_batch`` must return the
action ``HeuristicAgent.act`` returns. The default run compares a sample; ``pytest -m full``
compares at least 100,000 decisions per preset.

Playouts: a position of the scalar engine (a deal after any actions, or a world the search
samples) loaded into a ``BatchEngine`` game and played out there by the compiled heuristic ends
with the same score changes as the same position played out on the scalar engine by
``HeuristicAgent``.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from agents import HeuristicAgent
from agents.base import Agent
from agents.heuristic.compiled import HeuristicPolicy, play_out, policy_tables
from agents.search.pimc import PIMCAgent
from agents.search.values import BatchPlayOut, policy_play_out, world_action_values
from five_hundred_env.actions import NO_NOMINATION, PASS, ActionTable
from five_hundred_env.engine import Deal, Phase
from five_hundred_env.env import raw_env
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules, make_rules
from five_hundred_env.sampling import InfoSet, WorldSampler
from five_hundred_env.vector import BatchEngine

PRESETS = ("australian", "italian_3p", "french_46")
ALL_PRESETS = (*PRESETS, "two_handed", "five_handed", "six_handed")  # playouts (decisions: test_heuristic_compiled_presets)
OPTION_MIXES: dict[str, list[dict]] = {
    "australian": [
        {},
        {"misere": "any_time", "open_misere": "highest", "open_misere_exposure": "before_first_lead",
         "joker_nomination": "misere_only", "joker_lead_suit": "not_shown_void", "defence_tricks": "only_when_lost",
         "misere_defence": "10_per_declarer_trick", "slam_bonus": False, "bidding": "single_round", "misere_value": 200},
        {"rebid_after_pass": True, "misere": "none", "open_misere": "none", "joker_nomination": "none",
         "defence_tricks": "none", "win_needs_contract": False, "target": 250, "losing_score": -250},
    ],
    "italian_3p": [
        {},
        {"misere": "after_seven", "open_misere": "between_10D_10H", "open_misere_exposure": "after_first_trick",
         "joker_nomination": "nt_and_misere", "joker_lead_suit": "not_yet_led", "bidding": "until_passed",
         "misere_defence": "nothing", "slam_bonus": True},
        {"rebid_after_pass": True, "misere": "none", "open_misere": "none", "defence_tricks": "only_when_lost",
         "target": 300, "losing_score": -300},
    ],
    "french_46": [
        {},
        {"misere": "any_time", "open_misere": "highest", "both_jokers_min_bid": 8, "bidding": "single_round",
         "defence_tricks": "none", "slam_bonus": True},
        {"misere": "after_seven", "open_misere": "between_10D_10H", "rebid_after_pass": True, "both_jokers_min_bid": 6,
         "misere_defence": "10_per_declarer_trick", "win_needs_contract": True},
    ],
}
FULL_DECISIONS = 100_000


def spread_scores(engine: BatchEngine, rng: np.random.Generator) -> None:
    """Give every game a starting score per side, anywhere strictly between losing and winning."""
    rules = engine.rules
    for game in range(engine.num_games):
        scores = rng.integers(rules.losing_score // 10 + 1, rules.target // 10, size=rules.num_sides) * 10
        engine.set_scores(game, scores.tolist())


def compare_decisions(rules: Rules, num_games: int, steps: int, seed: int, play: str) -> int:
    """Play ``steps`` batched steps (random or heuristic play; games to the target), comparing the
    two forms at every decision with a choice; returns how many were compared."""
    rng = np.random.default_rng(seed)
    engine = BatchEngine(rules, num_games, episode="game", seed=seed)
    spread_scores(engine, rng)
    policy = HeuristicPolicy(rules)
    agent = HeuristicAgent(rules, seed=0)
    compared, mismatches = 0, []
    for step in range(steps):
        chosen = policy.act_engine(engine).copy()
        for game in np.flatnonzero(engine.masks.sum(axis=1) > 1):
            expected = agent.act({"observation": engine.obs[game], "action_mask": engine.masks[game]})
            compared += 1
            if chosen[game] != expected:
                mismatches.append(f"step {step} game {game}: compiled {engine.actions.to_str(int(chosen[game]))}, "
                                  f"HeuristicAgent {engine.actions.to_str(expected)}")
        assert not mismatches, f"{rules.describe()}, {play} play: " + "; ".join(mismatches[:10])
        engine.step(engine.sample_actions() if play == "random" else chosen)
    return compared


@pytest.mark.parametrize("play", ["random", "heuristic"])
@pytest.mark.parametrize("preset", PRESETS)
def test_compiled_heuristic_decides_as_the_agent(preset, play):
    """A sample of every option mix: the same action at every decision with a choice (§4-§9)."""
    for number, options in enumerate(OPTION_MIXES[preset]):
        compared = compare_decisions(make_rules(preset, **options), 24, 45, seed=100 + number, play=play)
        assert compared > 500


@pytest.mark.full
@pytest.mark.parametrize("preset", PRESETS)
def test_compiled_heuristic_decides_as_the_agent_full(preset):
    """At least 100,000 decisions per preset, random and heuristic games, every option mix."""
    compared, round_ = 0, 0
    while compared < FULL_DECISIONS:
        for number, options in enumerate(OPTION_MIXES[preset]):
            for play in ("random", "heuristic"):
                compared += compare_decisions(make_rules(preset, **options), 256, 60,
                                              seed=1000 * round_ + 10 * number + (play == "heuristic"), play=play)
        round_ += 1
    print(f"{preset}: {compared} decisions compared, all equal")


def test_act_batch_rejects_bad_shapes():
    policy = HeuristicPolicy("australian")
    with pytest.raises(ValueError, match="obs must be"):
        policy.act_batch(np.zeros((2, 5), np.int8), np.zeros((2, len(policy.actions)), np.int8))
    with pytest.raises(ValueError, match="mask must be"):
        policy.act_batch(np.zeros((2, policy.encoder.size), np.int8), np.zeros((3, 4), np.int8))
    with pytest.raises(ValueError, match="rules"):
        policy.act_engine(BatchEngine("italian_3p", 2, seed=0))


# -- positions and playouts ------------------------------------------------------------------------------
def scalar_play_out(deal: Deal, agent: HeuristicAgent, scores: list[int]) -> list[int]:
    """The deal played to its end on the scalar engine, every seat ``agent``: each side's score change."""
    encoder, table = ObservationEncoder(deal.rules), ActionTable(deal.rules)
    while not deal.is_over:
        deal.apply_action(table.universal[agent.act(encoder.encode_turn(deal, table, scores))])
    return list(deal.score_change)


def positions(rules: Rules, count: int, seed: int) -> list[Deal]:
    """Deals stopped anywhere (bidding, kitty, nomination, play; after random or heuristic actions),
    and worlds the search samples from one seat's view of such a deal."""
    rng = random.Random(seed)
    agent = HeuristicAgent(rules, seed=0)
    encoder, table = ObservationEncoder(rules), ActionTable(rules)
    out = []
    while len(out) < count:
        deal = Deal.new(rules, rng, rng.randrange(rules.num_players))
        for _ in range(rng.randrange(60)):
            if deal.is_over:
                break
            if rng.random() < 0.5:
                deal.apply_action(rng.choice(deal.legal_actions()))
            else:
                deal.apply_action(table.universal[agent.act(encoder.encode_turn(deal, table))])
        if deal.is_over:
            continue
        if rng.random() < 0.3:
            deal = WorldSampler(InfoSet.from_deal(deal, deal.to_act)).sample(rng)
        out.append(deal)
    return out


@pytest.mark.parametrize("preset", ALL_PRESETS)
def test_playouts_equal_the_scalar_engine(preset):
    """Loaded positions show the scalar engine's observation; played out by the compiled heuristic
    they end with the scores the scalar engine's HeuristicAgent playout gives (§8)."""
    rules = make_rules(preset)
    deals = positions(rules, 64, seed=7)
    engine = BatchEngine(rules, len(deals), seed=0)
    encoder = ObservationEncoder(rules)
    rng = np.random.default_rng(3)
    scores = [(rng.integers(rules.losing_score // 10 + 1, rules.target // 10, size=rules.num_sides) * 10).tolist()
              for _ in deals]
    for game, deal in enumerate(deals):
        engine.load_position(game, deal, scores=scores[game])
        assert engine.seat[game] == deal.to_act
        np.testing.assert_array_equal(engine.obs[game], encoder.encode(deal, deal.to_act, scores[game]),
                                      err_msg=f"position {game}")
    results = play_out(engine, "heuristic")
    agent = HeuristicAgent(rules, seed=0)
    for game, deal in enumerate(deals):
        assert results[game].tolist() == scalar_play_out(deal.clone(), agent, scores[game]), f"position {game}"
    assert (engine.seat == -1).all()  # every deal played to its end


@pytest.mark.parametrize("preset", ["australian", "five_handed"])
def test_load_branches_equals_loading_each_branch(preset):
    """Worlds of a position loaded once each with one action per game are, game by game, the
    world with that action applied and loaded alone (the same state, so the same playout); an
    illegal action is refused."""
    rules = make_rules(preset)
    scores = [40] * rules.num_sides
    rng = random.Random(5)
    for deal in positions(rules, 12, seed=5):
        sampler = WorldSampler(InfoSet.from_deal(deal, deal.to_act))
        worlds = [deal, *(sampler.sample(rng) for _ in range(2))]
        legal = deal.legal_actions()
        games = len(worlds) * len(legal)
        branched, alone = BatchEngine(rules, games + 1, seed=0), BatchEngine(rules, games + 1, seed=0)
        branched.load_branches(worlds, legal, scores)
        for w, world in enumerate(worlds):
            for i, action in enumerate(legal):
                branch = world.clone()
                branch.apply_action(action)
                alone.load_position(w * len(legal) + i, branch, scores)
        np.testing.assert_array_equal(branched.kernel_arrays().state, alone.kernel_arrays().state)
        np.testing.assert_array_equal(branched.masks, alone.masks)
        np.testing.assert_array_equal(play_out(branched), play_out(alone))
    illegal = next(a for a in ActionTable(rules).universal if a not in legal)
    with pytest.raises(ValueError, match="not legal"):
        branched.load_branches([deal], [illegal])
    with pytest.raises(ValueError, match="at most"):
        branched.load_branches([deal] * (games + 2), legal)


def test_random_playouts_end_every_deal_and_follow_the_seed():
    rules = make_rules("australian")
    deals = positions(rules, 16, seed=11)
    results = []
    for _ in range(2):
        engine = BatchEngine(rules, len(deals), seed=5)
        for game, deal in enumerate(deals):
            engine.load_position(game, deal)
        results.append(play_out(engine, "random"))
        assert (engine.seat == -1).all() and not engine.masks.any()
    np.testing.assert_array_equal(results[0], results[1])
    assert results[0].any()


def test_load_position_refuses_foreign_or_illegal_deals_and_changes_nothing():
    rules = make_rules("australian")
    engine = BatchEngine(rules, 2, seed=0)
    before = engine.obs.copy()
    with pytest.raises(ValueError, match="rules"):
        engine.load_position(0, Deal.new(make_rules("italian_3p"), random.Random(0), 0))
    deal = positions(rules, 1, seed=3)[0]
    deal.history.append(PASS if deal.phase == Phase.NOMINATE else NO_NOMINATION)  # not legal now
    with pytest.raises(ValueError, match="not legal"):
        engine.load_position(1, deal)
    np.testing.assert_array_equal(engine.obs, before)
    deal.history[-1] = 999
    with pytest.raises(ValueError, match="no actions"):
        engine.load_position(1, deal)
    with pytest.raises(ValueError, match="games must be"):
        engine.refresh(np.array([5]))
    np.testing.assert_array_equal(engine.obs, before)
    with pytest.raises(ValueError, match="policy"):
        play_out(engine, "greedy")
    with pytest.raises(ValueError, match="other rules"):
        play_out(engine, tables=policy_tables(make_rules("australian", slam_bonus=False)))


# -- PIMC's playouts in a batch ----------------------------------------------------------------------------
class _ScalarHeuristic(Agent):
    """The heuristic as any other rollout agent: PIMC plays it out deal by deal on the scalar engine."""

    name = "scalar-heuristic"

    def __init__(self, rules: Rules, seed: int | None = None) -> None:
        super().__init__(rules, seed)
        self.heuristic = HeuristicAgent(rules, seed)

    def act(self, observation: dict) -> int:
        return self.heuristic.act(observation)


@pytest.mark.parametrize("preset", ALL_PRESETS)
def test_batched_world_values_equal_the_scalar_playouts(preset):
    """Every candidate of a world scored by one batch of compiled playouts equals its scalar playout."""
    rules = make_rules(preset)
    batch = BatchPlayOut(rules)
    scalar = policy_play_out(rules, HeuristicAgent(rules, seed=0).act)
    for number, deal in enumerate(positions(rules, 24, seed=21)):
        legal = deal.legal_actions()
        side = rules.side_of(deal.to_act)
        assert world_action_values(deal, legal, side, batch) == world_action_values(deal, legal, side, scalar), number


@pytest.mark.parametrize("seconds", [None, 1e6])
def test_pimc_searches_with_batched_playouts_as_before(seconds):
    """PIMC with the heuristic rollout (batched: every world in one batch, or world by world under
    a time bound) records the same means and choices as with the same heuristic played out deal
    by deal."""
    rules = make_rules("australian")
    batched = PIMCAgent(rules, seed=4, worlds=4, seconds=seconds)
    scalar = PIMCAgent(rules, seed=4, worlds=4, seconds=seconds, rollout=_ScalarHeuristic(rules))
    env = raw_env(rules=rules)
    env.reset(seed=8)
    searched = 0
    for agent in env.agent_iter():
        obs, _reward, term, trunc, _info = env.last()
        if term or trunc:
            env.step(None)
            continue
        if agent == env.possible_agents[0]:
            action = batched.act(obs)
            assert scalar.act(obs) == action
            if batched.last_search is not None:
                assert batched.last_search == scalar.last_search
            env.step(action)
        else:
            env.step(int(HeuristicAgent(rules, seed=0).act(obs)))
    searched = batched.searches
    assert searched >= 5 and isinstance(batched._play_out, BatchPlayOut)
