"""sb3-contrib's MaskablePPO on the batched engine (five_hundred_env.integrations.sb3) against
opponents given as agent specs (agents.vector): the documented path, run as a user runs it."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")
pytest.importorskip("sb3_contrib")

from stable_baselines3.common.vec_env import VecMonitor

from agents import HeuristicAgent
from agents.split import DecisionSplitAgent
from agents.vector import vector_env, vector_opponent
from five_hundred_env.integrations.sb3 import SB3VecEnv
from five_hundred_env.vector import SingleAgentVectorEnv


def test_opponents_are_agent_specs():
    assert vector_opponent("random", "australian") == "random"  # the engine samples it itself
    from agents.heuristic.compiled import HeuristicPolicy

    assert isinstance(vector_opponent("heuristic", "australian", seed=1), HeuristicPolicy)  # compiled: a batch a call
    assert isinstance(vector_opponent("heuristic@play", "australian", seed=1), DecisionSplitAgent)
    agent = HeuristicAgent("australian")
    assert vector_opponent(agent, "australian") is agent
    with pytest.raises(ValueError, match="nobody"):
        vector_opponent("nobody", "australian")


def test_the_heuristic_opponent_plays_every_other_seat():
    env = vector_env("australian", num_envs=4, opponent="heuristic", seed=3)
    obs, info = env.reset(seed=3)
    assert np.all(env.engine.seat == 0) and obs.shape[0] == 4
    rng = np.random.default_rng(0)
    for _ in range(60):  # random legal learner actions; the heuristic answers in every game
        actions = [rng.choice(np.flatnonzero(mask)) for mask in env.action_masks()]
        obs, _rewards, _terminated, _truncated, info = env.step(actions)
        assert np.all(env.engine.seat == 0)
    assert info["action_mask"].shape == (4, env.engine.num_actions)


def test_the_vecenv_hands_sb3_masks_and_terminal_observations():
    env = SB3VecEnv(vector_env("australian", num_envs=3, opponent="random", seed=0))
    env.seed(5)
    obs = env.reset()
    assert obs.shape == (3, env.observation_space.shape[0])
    masks = np.stack(env.env_method("action_masks"))  # what sb3-contrib's get_action_masks does
    assert masks.dtype == np.bool_ and masks.shape == (3, env.action_space.n) and masks.any(axis=1).all()
    ended = 0
    for _ in range(200):
        actions = np.array([np.flatnonzero(m)[0] for m in env.action_masks()])
        env.step_async(actions)
        obs, _rewards, dones, infos = env.step_wait()
        for i in np.flatnonzero(dones):
            assert infos[i]["terminal_observation"].shape == obs[i].shape
            ended += 1
        assert all("terminal_observation" not in infos[i] for i in np.flatnonzero(~dones))
    assert ended > 0
    with pytest.raises(TypeError, match="SingleAgentVectorEnv"):
        SB3VecEnv(object())  # type: ignore[arg-type]


def test_maskable_ppo_trains_on_the_vector_env_against_the_heuristic():
    """A very short MaskablePPO run: every action it takes is legal (an illegal one raises in the
    engine) and whole deals end with finite returns."""
    from sb3_contrib import MaskablePPO

    env = VecMonitor(SB3VecEnv(vector_env("australian", num_envs=8, opponent="heuristic", seed=0)))
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [16]}, device="cpu")
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512
    returns = [e["r"] for e in model.ep_info_buffer]
    assert returns and all(np.isfinite(returns))
    assert isinstance(env.venv.env, SingleAgentVectorEnv)  # type: ignore[attr-defined]
