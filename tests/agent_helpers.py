"""Agents the tests seat by name: a first-legal-action player (the example bots' in-process twin,
and a cheap middle agent for leagues: it passes whenever it may)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from agents.base import Agent
from agents.registry import register_agent, unregister_agent


class FirstLegal(Agent):
    """Plays the lowest legal action id: passes whenever it may, else its first card."""

    name = "first_legal"

    def act(self, observation: dict[str, Any]) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])


@contextmanager
def registered(name: str, factory: Any) -> Iterator[None]:
    """``name`` seated by spec for the duration."""
    register_agent(name, factory, replace=True)
    try:
        yield
    finally:
        unregister_agent(name)
