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
from tianshou.env import PettingZooEnv

import five_hundred_env

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"


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
    stats, trained = example["train"](epochs=1, epoch_steps=300, num_envs=2, test_deals=4, batch_size=32, seed=0)
    assert stats.update_step > 0 and stats.test_episode >= 4
    assert math.isfinite(stats.best_reward)
    learner, untrained = trained.get_algorithm("player_0"), initial.get_algorithm("player_0")
    assert trained.get_algorithm("player_2") is learner
    changed = [not torch.equal(a, b) for a, b in zip(learner.policy.model.parameters(),
                                                     untrained.policy.model.parameters(), strict=True)]
    assert any(changed)
