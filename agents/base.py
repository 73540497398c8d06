"""The common agent interface: an observation and its action mask in, a legal action id out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from five_hundred_env.rules import Rules, make_rules


class Agent(ABC):
    """A policy for any seat of any preset.

    ``act`` receives the environment's observation dict (``{"observation": int8 vector,
    "action_mask": int8 vector}``, as ``env.last()`` or ``env.observe(agent)`` return it) and
    returns a legal action id of that environment's action space. Agents are seeded for
    reproducibility and must only use what the observation shows.
    """

    name = "agent"

    def __init__(self, rules: Rules | str = "australian", seed: int | None = None) -> None:
        self.rules = make_rules(rules) if isinstance(rules, str) else rules
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: int | None) -> None:
        """Reseed the agent's random generator."""
        self.rng = np.random.default_rng(seed)

    @abstractmethod
    def act(self, observation: dict[str, Any]) -> int:
        """A legal action id for this observation."""

    def __call__(self, observation: dict[str, Any]) -> int:
        return self.act(observation)


class RandomAgent(Agent):
    """Uniform over the legal actions."""

    name = "random"

    def act(self, observation: dict[str, Any]) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if len(legal) == 0:
            raise ValueError("no legal action in the mask: is it this agent's turn?")
        return int(legal[self.rng.integers(len(legal))])
