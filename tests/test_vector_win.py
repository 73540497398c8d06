"""The game-level reward (``reward="win"``, ``"game"`` episodes) of the batched engine and
``SingleAgentVectorEnv``: the AEC environment's rewards byte for byte, and a game's rewards sum to
its outcome for every seat (docs/rules.md §9: the game is won at the target, lost at the losing score)."""

from __future__ import annotations

import numpy as np
import pytest

import five_hundred_env
from five_hundred_env.rules import make_rules

pytest.importorskip("numba")
from vector_helpers import play_differential

from five_hundred_env.vector import BatchEngine, SingleAgentVectorEnv
from five_hundred_env.vector.batch import VECTOR_PRESETS


@pytest.mark.parametrize("win_shaping", [0.0, 0.25])
@pytest.mark.parametrize("preset", VECTOR_PRESETS)
def test_win_rewards_are_the_aec_envs_byte_for_byte(preset: str, win_shaping: float) -> None:
    """§9 with low targets so that games end within the test (also checked: their winners)."""
    rules = make_rules(preset, target=150, losing_score=-150)
    deals = play_differential(rules, "game", num_games=4, steps=250, seed=3, reward="win", win_shaping=win_shaping)
    assert deals >= 8


def outcome(winner_sides: np.ndarray, side_of_seat: np.ndarray) -> np.ndarray:
    """+1 for each seat whose side is in the bit set ``winner_sides``, -1 for the others."""
    return np.where((winner_sides[:, None] >> side_of_seat) & 1, 1.0, -1.0)


@pytest.mark.parametrize("win_shaping", [0.0, 0.5])
@pytest.mark.parametrize("preset", VECTOR_PRESETS)
def test_a_games_win_rewards_sum_to_its_outcome_for_every_seat(preset: str, win_shaping: float) -> None:
    """Summed over a whole game: ±1 by the winners, plus win_shaping × the deals' zero-sum rewards."""
    rules = make_rules(preset, target=200, losing_score=-200)
    engine = BatchEngine(rules, 16, episode="game", reward="win", win_shaping=win_shaping, seed=7)
    zero_sum = BatchEngine(rules, 16, episode="game", seed=7)  # the same games, credited "zero_sum"
    side_of_seat = np.array([rules.side_of(s) for s in range(rules.num_players)])
    totals = np.zeros((16, rules.num_players))
    shaping = np.zeros((16, rules.num_players))
    games = 0
    for _ in range(3000):
        actions = engine.sample_actions()
        zero_sum.sample_actions()  # keeps its random stream in step with the engine's
        step = engine.step(actions)
        reference = zero_sum.step(actions)
        totals += step.rewards
        shaping += win_shaping * reference.rewards
        over = np.flatnonzero(step.episode_done)
        if over.size:
            expected = outcome(engine.last_deal[over, 3], side_of_seat) + shaping[over]
            np.testing.assert_allclose(totals[over], expected, atol=1e-4)
            totals[over] = shaping[over] = 0
            games += over.size
    assert games >= 16


def test_aec_env_win_rewards_sum_to_the_outcome() -> None:
    env = five_hundred_env.env(episode="game", reward="win", target=150, losing_score=-150)
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        totals[agent] += reward
        env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert env.unwrapped.winners
    assert totals == {a: 1.0 if a in env.unwrapped.winners else -1.0 for a in env.possible_agents}


def test_single_agent_vector_env_gives_the_learners_game_outcome() -> None:
    env = SingleAgentVectorEnv("australian", 8, episode="game", reward="win", seed=2, target=150, losing_score=-150)
    env.reset(seed=2)
    totals = np.zeros(8)
    ended = 0
    for _ in range(2000):
        masks = env.action_masks()
        actions = np.array([np.flatnonzero(m)[0] for m in masks])
        _, rewards, terminated, _, _ = env.step(actions)
        totals += rewards
        done = np.flatnonzero(terminated)
        if done.size:
            learner_won = (env.engine.last_deal[done, 3] >> 0) & 1  # seat 0 plays side 0
            np.testing.assert_array_equal(totals[done], np.where(learner_won, 1.0, -1.0))
            totals[done] = 0
            ended += done.size
    assert ended >= 8


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"episode": "deal", "reward": "win"}, "needs episode='game'"),
    ({"episode": "game", "reward": "zero_sum", "win_shaping": 0.5}, "win_shaping"),
    ({"episode": "game", "reward": "win", "win_shaping": float("nan")}, "win_shaping"),
])
def test_bad_win_settings_are_refused_as_by_the_aec_env(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        BatchEngine("australian", 2, **kwargs)
    with pytest.raises(ValueError, match=message):
        five_hundred_env.env(**kwargs)


def test_end_game_deals_refuses_a_deal_in_progress_and_changes_nothing():
    # §9 is applied only to a finished deal: a deal still in its auction is refused, its state kept.
    engine = BatchEngine("australian", 2, seed=3)
    before = engine.kernel_arrays().state.copy()
    with pytest.raises(ValueError, match="not over"):
        engine.end_game_deals(np.array([0, 1]))
    assert np.array_equal(engine.kernel_arrays().state, before)
