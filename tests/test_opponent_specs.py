"""Opponents given as agent specs, as every entry point takes them: Gymnasium's ``FiveHundred-v1``
(``SingleAgentEnv``) builds them through the agents package, and the vector environment plays
``"heuristic"`` with the compiled heuristic (the same decisions as ``HeuristicAgent``, in one call
per batch)."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import agents  # noqa: F401 - importing the agents package lets the environment build specs
from agents import HeuristicAgent, RandomAgent
from five_hundred_env import SingleAgentEnv, wrappers


def first_legal_trajectory(env: gymnasium.Env, seed: int, steps: int = 40) -> list[np.ndarray]:
    """The learner always plays its first legal action; the observations it sees."""
    obs, _info = env.reset(seed=seed)
    seen = [obs]
    for _ in range(steps):
        action = int(np.flatnonzero(env.unwrapped.action_masks())[0])
        obs, _reward, terminated, truncated, _info = env.step(action)
        seen.append(obs)
        if terminated or truncated:
            obs, _info = env.reset()
    return seen


def test_gymnasium_make_takes_an_agent_spec_as_the_agent_it_names():
    by_spec = gymnasium.make("FiveHundred-v1", team=0, rules="australian", opponents="heuristic")
    by_agent = SingleAgentEnv(team=0, rules="australian", opponents=HeuristicAgent("australian", seed=0))
    for a, b in zip(first_legal_trajectory(by_spec, 3), first_legal_trajectory(by_agent, 3), strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_mapping_may_name_specs_and_agents_seat_by_seat():
    env = SingleAgentEnv(seat=0, rules="italian_3p", opponents={1: "heuristic", 2: RandomAgent("italian_3p", seed=1)})
    assert isinstance(env._policies["player_1"], HeuristicAgent)
    first_legal_trajectory(env, 5, steps=10)
    with pytest.raises(ValueError, match="no_such_agent"):
        SingleAgentEnv(seat=0, rules="italian_3p", opponents="no_such_agent")


def test_without_the_agents_package_a_spec_says_what_to_import(monkeypatch):
    monkeypatch.setattr(wrappers, "_spec_builder", None)
    with pytest.raises(ValueError, match=r"`import agents` first.*agents\.make_agent\('heuristic', rules\)"):
        SingleAgentEnv(team=0, rules="australian", opponents="heuristic")


def test_the_vector_env_plays_heuristic_with_the_compiled_heuristic():
    pytest.importorskip("numba")
    from agents.heuristic.compiled import HeuristicPolicy
    from agents.vector import vector_env, vector_opponent

    assert isinstance(vector_opponent("heuristic", "australian"), HeuristicPolicy)
    compiled = vector_env("australian", num_envs=8, seed=4)  # the default opponent
    python = vector_env("australian", num_envs=8, seed=4, opponent=HeuristicAgent("australian", seed=0))
    a_obs, _ = compiled.reset(seed=4)
    b_obs, _ = python.reset(seed=4)
    for _ in range(60):
        np.testing.assert_array_equal(a_obs, b_obs)
        actions = np.array([np.flatnonzero(m)[0] for m in compiled.action_masks()])
        a_obs, a_reward, *_ = compiled.step(actions)
        b_obs, b_reward, *_ = python.step(actions)
        np.testing.assert_array_equal(a_reward, b_reward)


class _Returns:
    """An opponent that answers with what it is given, whatever it was asked."""

    def __init__(self, answer, batched: bool) -> None:
        self.answer = answer
        if batched:
            self.act_batch = lambda obs, masks: self.answer
        else:
            self.act = lambda observation: self.answer


@pytest.mark.parametrize(("answer", "batched", "words"), [
    (np.zeros(3, dtype=np.int64), True, r"act_batch returned \(3,\) for \d+ games waiting on it"),
    (None, True, "act_batch returned None"),
    (None, False, "act returned None"),
])
def test_an_opponent_answering_wrongly_is_named(answer, batched, words):
    pytest.importorskip("numba")
    from five_hundred_env.vector import SingleAgentVectorEnv

    env = SingleAgentVectorEnv("australian", 8, opponent=_Returns(answer, batched), learner_seats=(0,), seed=1)
    with pytest.raises(ValueError, match=words):
        env.reset(seed=1)
        for _ in range(8):
            env.step(np.array([np.flatnonzero(m)[0] for m in env.action_masks()]))
