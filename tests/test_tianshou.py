"""Tianshou over the AEC environment: its PettingZooEnv takes the environment as it is (observation,
mask, every agent's reward when the deal ends), and the masked DQN example
(docs/examples/tianshou_dqn.py) trains for a few hundred steps and tests greedily with illegal
actions raising."""

from __future__ import annotations

import math
import runpy
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tianshou")
pytest.importorskip("torch")

import torch
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv

import five_hundred_env

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"


def _ppo_example_data(**collect: int) -> tuple[PettingZooEnv, object, object]:
    """From the PPO example: an env, its (untrained) algorithm, and a buffer that algorithm filled
    playing in one environment (``collect``: ``n_episode`` or ``n_step``)."""
    example = runpy.run_path(str(EXAMPLES / "tianshou_ppo.py"))
    torch.manual_seed(0)
    env = example["make_env"]()
    algorithm = example["build_algorithm"](env, hidden=(16,))
    collector = Collector[CollectStats](algorithm, DummyVectorEnv([example["make_env"]]), VectorReplayBuffer(1000, 1))
    collector.reset(reset_buffer=True)
    collector.collect(**collect)
    return env, algorithm, collector.buffer


@pytest.mark.parametrize("preset", ["australian", "italian_3p"])
def test_pettingzoo_env_wraps_the_environment_as_it_is(preset: str) -> None:
    """Tianshou's view of a random legal deal: the acting agent, its observation and mask, and at
    the end each seat's side's zero-sum result (environment.md, rewards) in the reward vector."""
    env = PettingZooEnv(five_hundred_env.env(rules=preset))
    aec = env.env
    rng = np.random.default_rng(0)
    observation, _ = env.reset(seed=5)
    terminated = truncated = False
    while not (terminated or truncated):
        assert observation["agent_id"] == aec.agent_selection
        expected = aec.observe(aec.agent_selection)
        assert np.array_equal(observation["obs"], expected["observation"])
        assert np.array_equal(observation["mask"], expected["action_mask"] == 1)
        observation, rewards, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(observation["mask"]))))
    assert terminated and not truncated
    rules, deal = aec.rules, aec.deal
    assert rewards == pytest.approx([deal.zero_sum_result(rules.side_of(seat)) / 100 for seat in range(rules.num_players)])


def test_dqn_example_trains_and_tests_with_legal_actions() -> None:
    """300 training steps, then greedy test deals in environments that raise on an illegal action:
    the Q-network was updated, and it only ever picked legal actions."""
    example = runpy.run_path(str(EXAMPLES / "tianshou_dqn.py"))
    torch.manual_seed(0)
    initial = example["build_algorithm"](example["make_env"]())
    stats, trained, trained_return = example["train"](epochs=1, epoch_steps=300, num_envs=2, test_deals=4, batch_size=32,
                                                      seed=0)
    assert stats.update_step > 0 and stats.test_episode >= 4
    assert math.isfinite(stats.best_reward) and math.isfinite(trained_return)
    learner, untrained = trained.get_algorithm("player_0"), initial.get_algorithm("player_0")
    assert trained.get_algorithm("player_2") is learner
    changed = [not torch.equal(a, b) for a, b in zip(learner.policy.model.parameters(),
                                                     untrained.policy.model.parameters(), strict=True)]
    assert any(changed)


def test_ppo_example_credits_every_seat_from_its_own_turns() -> None:
    """The PPO example's per-seat rewrite, through Tianshou's own multi-agent dispatch: each seat's
    transition runs to its own next turn, and its last one of a deal ends with the deal's result
    (environment.md, rewards) even when another seat played the last card."""
    env, algorithm, buffer = _ppo_example_data(n_episode=3)
    indices = buffer.sample_indices(0)
    raw = buffer[indices]
    episode_of = np.concatenate([[0], np.cumsum(raw.done)[:-1]])
    deal_results = {episode: raw.rew[step] for step, episode in enumerate(episode_of) if raw.done[step]}
    processed = algorithm._preprocess_batch(raw, buffer, indices)
    fixed_something = False
    for seat in ("player_0", "player_2"):
        column = env.agent_idx[seat]
        steps = np.flatnonzero(raw.obs.agent_id == seat)
        last_of_deal = np.array([episode_of[s] != episode_of[t] for s, t in zip(steps, [*steps[1:], -1], strict=True)])
        last_of_deal[-1] = True
        seat_batch = processed[seat]
        assert np.array_equal(seat_batch.terminated, last_of_deal)
        expected = [deal_results[episode_of[s]][column] if last else 0.0 for s, last in zip(steps, last_of_deal, strict=True)]
        assert np.allclose(seat_batch.rew, expected)
        assert all(seat_batch.obs_next.agent_id[~last_of_deal] == seat)
        assert torch.isfinite(seat_batch.adv).all()
        # GAE stops at the seat's last turn: its return there is the deal's result, no bootstrap.
        assert np.allclose(seat_batch.returns.numpy()[last_of_deal], np.array(expected)[last_of_deal], atol=1e-5)
        fixed_something |= any(not raw.done[s] for s in steps[last_of_deal])
    assert fixed_something  # some deal's last card was another seat's: Tianshou alone would lose that result


def test_ppo_example_refuses_a_partial_episode() -> None:
    """Per-seat returns need each episode whole: a buffer that ends mid-deal is a clear error."""
    _, algorithm, buffer = _ppo_example_data(n_step=20)  # a deal takes about 45 steps
    indices = buffer.sample_indices(0)
    with pytest.raises(ValueError, match="whole episodes"):
        algorithm._preprocess_batch(buffer[indices], buffer, indices)


def test_ppo_example_trains() -> None:
    """A few hundred steps of per-seat PPO, tested greedily in environments that raise on an illegal action."""
    example = runpy.run_path(str(EXAMPLES / "tianshou_ppo.py"))
    stats, _, trained_return = example["train"](epochs=1, epoch_steps=200, deals_per_update=2, num_envs=2, test_deals=2,
                                                batch_size=64)
    assert stats.update_step > 0 and stats.test_episode >= 2
    assert math.isfinite(stats.best_reward) and math.isfinite(trained_return)
