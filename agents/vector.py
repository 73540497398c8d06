"""Opponents given as agent specs for the batched engine's vector environment.

:class:`five_hundred_env.vector.SingleAgentVectorEnv` plays its opponents with ``"random"`` (the
engine's own sampler) or any object with ``act_batch(obs, masks)`` or ``act(observation)``; the
environment package knows no agents, so the specs every command takes (``heuristic``,
``pretrained``, a checkpoint, ``pimc:worlds=4@play`` …) are turned into such objects here::

    from agents.vector import vector_env
    env = vector_env("australian", num_envs=64, opponent="heuristic", seed=0)

An agent with ``act_batch`` (a batched or compiled player) is called once for every game waiting
on an opponent; any other agent once per game. Needs numba (the ``vector`` extra).
"""

from __future__ import annotations

from typing import Any

from agents.base import Agent
from agents.registry import make_agent
from five_hundred_env.rules import Rules, make_rules
from five_hundred_env.vector import SingleAgentVectorEnv

ENGINE_RANDOM = "random"
"""The spec the engine plays itself (uniform over the legal actions, inside the compiled step)."""


def vector_opponent(opponent: str | Agent | Any, rules: Rules | str, seed: int | None = None) -> Any:
    """What :class:`SingleAgentVectorEnv` takes for ``opponent``: ``"random"`` as it is (the
    engine samples it); ``"heuristic"`` as the compiled heuristic
    (:class:`agents.heuristic.compiled.HeuristicPolicy`: ``HeuristicAgent``'s decisions, a batch in one
    call, several times faster); any other spec built by :func:`agents.registry.make_agent` for these
    rules and seed; and an agent or object with ``act_batch``/``act`` as it is."""
    if not isinstance(opponent, str) or opponent == ENGINE_RANDOM:
        return opponent
    rules = make_rules(rules) if isinstance(rules, str) else rules
    if opponent == "heuristic":
        from agents.heuristic.compiled import HeuristicPolicy  # compiles on first use: imported only when asked

        return HeuristicPolicy(rules)
    return make_agent(opponent, rules, seed)


def vector_env(rules: Rules | str = "australian", num_envs: int = 64, *, opponent: str | Agent | Any = "heuristic",
               seed: int | None = None, **kwargs: Any) -> SingleAgentVectorEnv:
    """A :class:`SingleAgentVectorEnv` of ``num_envs`` games against ``opponent`` (an agent spec,
    default the heuristic; see :func:`vector_opponent`); ``kwargs`` are the environment's
    (``learner_seats``, ``episode``, ``reward``, ``reward_scale``, rule options)."""
    rules = make_rules(rules) if isinstance(rules, str) else rules
    return SingleAgentVectorEnv(rules, num_envs, opponent=vector_opponent(opponent, rules, seed), seed=seed, **kwargs)


__all__ = ["ENGINE_RANDOM", "vector_env", "vector_opponent"]
