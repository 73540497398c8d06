"""The RLlib adapter (five_hundred_env.integrations.rllib): RLlib's own environment check, one
observation per turn, every agent's reward when a deal ends (environment.md, rewards), illegal
actions, bad input, and two iterations of the PPO example (docs/examples/rllib_ppo.py)."""

from __future__ import annotations

import math
import runpy
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib")
pytest.importorskip("torch")

from gymnasium import spaces
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
from ray.rllib.utils.pre_checks.env import check_multiagent_environments

from five_hundred_env import IllegalActionError
from five_hundred_env.integrations.rllib import FiveHundredMultiAgentEnv

PRESETS = ["australian", "italian_3p", "french_46"]
EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "examples" / "rllib_ppo.py"


def _random_legal(observation: dict[str, np.ndarray], rng: np.random.Generator) -> int:
    return int(rng.choice(np.flatnonzero(observation["action_mask"])))


def _play(env: FiveHundredMultiAgentEnv, seed: int) -> tuple[dict[str, float], list[tuple], int]:
    """Random legal play of one episode: each agent's total reward, the record (the reset's
    observations, then each step's action dict and results), and the number of steps before the
    last one in which any agent got a reward."""
    rng = np.random.default_rng(seed)
    observations, _ = env.reset(seed=seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    record, rewarded_mid_episode = [observations], 0
    while True:
        assert list(observations) == [env.aec.agent_selection]
        (agent, observation), = observations.items()
        assert env.observation_spaces[agent].contains(observation)
        actions = {agent: _random_legal(observation, rng)}
        result = env.step(actions)
        observations, rewards, terminateds, truncateds, _ = result
        record.append((actions, *result))
        for a, r in rewards.items():
            totals[a] += r
        if terminateds["__all__"] or truncateds["__all__"]:
            return totals, record, rewarded_mid_episode
        rewarded_mid_episode += any(rewards.values())


@pytest.mark.parametrize("preset", PRESETS)
def test_rllib_environment_check_passes(preset: str) -> None:
    """RLlib's pre-check steps an unmasked random action: with the adapter's default it passes."""
    check_multiagent_environments(FiveHundredMultiAgentEnv({"rules": preset}))


def test_rllib_check_fails_when_illegal_actions_raise() -> None:
    """Why the adapter defaults to illegal_action="terminate": "raise" fails RLlib's check
    whenever its random action is illegal (seed 42's first action is, for this preset)."""
    env = FiveHundredMultiAgentEnv({"illegal_action": "raise"})
    with pytest.raises(ValueError, match="step"):
        check_multiagent_environments(env)


@pytest.mark.parametrize("preset", PRESETS)
def test_deal_rewards_reach_every_agent_at_the_end(preset: str) -> None:
    """One observation per turn; at the end every agent gets its final observation, its side's
    zero-sum result (environment.md, rewards) and its flags, with "__all__"."""
    env = FiveHundredMultiAgentEnv({"rules": preset})
    for seed in range(3):
        totals, record, rewarded_mid_episode = _play(env, seed)
        _, observations, _, terminateds, truncateds, _ = record[-1]
        assert sorted(observations) == sorted(env.possible_agents)
        assert all(not o["action_mask"].any() for o in observations.values())
        assert terminateds == {**dict.fromkeys(env.possible_agents, True), "__all__": True}
        assert not any(truncateds.values())
        assert rewarded_mid_episode == 0
        rules, deal = env.aec.rules, env.aec.deal
        for seat, agent in enumerate(env.possible_agents):
            assert totals[agent] == pytest.approx(deal.zero_sum_result(rules.side_of(seat)) / 100)


def test_game_episode_credits_each_deal_to_every_agent() -> None:
    """A "game" episode: each deal's result reaches every agent when that deal ends, and the
    episode is truncated after max_deals with every agent's last observation (targets out of reach,
    §2 target / losing_score, so that no side wins or loses first)."""
    env = FiveHundredMultiAgentEnv({"episode": "game", "reward": "score", "max_deals": 3,
                                    "target": 10_000, "losing_score": -10_000})
    totals, record, rewarded_mid_episode = _play(env, 1)
    _, observations, _, terminateds, truncateds, _ = record[-1]
    assert rewarded_mid_episode >= 1
    assert sorted(observations) == sorted(env.possible_agents)
    assert truncateds == {**dict.fromkeys(env.possible_agents, True), "__all__": True}
    assert not any(terminateds.values())
    for agent, score in env.aec.scores.items():
        assert totals[agent] == pytest.approx(score / 100)
    # RLlib's own episode bookkeeping credits each agent with exactly its rewards.
    episode = MultiAgentEpisode(observation_space=spaces.Dict(env.observation_spaces),
                                action_space=spaces.Dict(env.action_spaces))
    episode.add_env_reset(observations=record[0])
    for actions, observations, rewards, terminateds, truncateds, infos in record[1:]:
        episode.add_env_step(observations, actions, rewards, infos, terminateds=terminateds, truncateds=truncateds)
    assert episode.is_done and sorted(episode.agent_episodes) == env.possible_agents
    for agent, agent_episode in episode.agent_episodes.items():
        assert agent_episode.get_return() == pytest.approx(totals[agent])


def test_illegal_action_ends_the_episode_with_the_penalty() -> None:
    env = FiveHundredMultiAgentEnv({"illegal_reward": -3.0})
    observations, _ = env.reset(seed=0)
    (agent, observation), = observations.items()
    illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
    _, rewards, terminateds, _, infos = env.step({agent: illegal})
    assert terminateds["__all__"]
    assert rewards == {a: (-3.0 if a == agent else 0.0) for a in env.possible_agents}
    assert infos == {agent: {"illegal_action": illegal}}


def test_illegal_action_raises_when_asked() -> None:
    env = FiveHundredMultiAgentEnv({"illegal_action": "raise"})
    observations, _ = env.reset(seed=0)
    (agent, observation), = observations.items()
    with pytest.raises(IllegalActionError, match="not legal"):
        env.step({agent: int(np.flatnonzero(observation["action_mask"] == 0)[0])})


def test_bad_input_is_refused_and_leaves_the_episode_valid() -> None:
    with pytest.raises(ValueError, match="env_config must be a mapping"):
        FiveHundredMultiAgentEnv(["australian"])
    env = FiveHundredMultiAgentEnv()
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"player_0": 0})
    observations, _ = env.reset(seed=3)
    (agent, observation), = observations.items()
    other = next(a for a in env.possible_agents if a != agent)
    for bad in ({other: 0}, {agent: 0, other: 0}, {}, [0]):
        with pytest.raises(ValueError, match=f"for {agent}"):
            env.step(bad)
    _, _, terminateds, _, _ = env.step({agent: _random_legal(observation, np.random.default_rng(0))})
    assert not terminateds["__all__"]


def test_step_after_the_episode_asks_for_reset() -> None:
    env = FiveHundredMultiAgentEnv()
    _play(env, 0)
    with pytest.raises(RuntimeError, match="reset"):
        env.step({env.aec.agent_selection: 0})


@pytest.fixture(scope="module")
def local_ray():
    import ray

    ray.init(num_cpus=1, include_dashboard=False, configure_logging=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ppo_example_trains_with_masked_actions(local_ray) -> None:
    """Two PPO iterations of the example with a tiny network: whole deals are played (an unmasked
    policy would end nearly every episode at its first, illegal, action) and returns are finite."""
    example = runpy.run_path(str(EXAMPLE))
    config = example["build_config"](batch_size=300, minibatch_size=100, epochs=1, hidden=(16,))
    metrics = example["train"](config, 2)
    assert len(metrics) == 2
    for iteration in metrics:
        assert iteration["num_episodes"] >= 1
        assert iteration["episode_len_mean"] >= 20
        assert math.isfinite(iteration["episode_return_mean"])
