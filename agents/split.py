"""Per-decision agents: one agent for some kinds of decision, the heuristic for the others.

A deal's decisions are of four kinds, by its phase: ``bid`` (the auction), ``discard`` (the
contractor's kitty exchange), ``nominate`` (the contractor naming the joker's suit, §7) and
``play`` (the card play). :class:`DecisionSplitAgent` hands each decision to its ``inner`` agent
when the decision's kind is one of its ``kinds``, and to the ``other`` agent (the heuristic by
default) otherwise: ``pretrained@play`` in a spec (:mod:`agents.registry`) is the network's card
play with the heuristic's bidding and kitty, which is how the card play alone is measured.

The kind comes from the acting seat's own observation (its ``phase`` slice,
:mod:`five_hundred_env.observation`): the contractor sees its nomination turn as such.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from agents.base import DECISION_KINDS, KIND_OF_PHASE, Agent
from agents.heuristic import HeuristicAgent
from five_hundred_env.engine import Phase
from five_hundred_env.observation import observation_layout
from five_hundred_env.rules import Rules


def decision_kind(observation: dict[str, Any], phase: slice) -> str:
    """The kind of the decision an observation asks for, read from its ``phase`` slice (``phase``:
    that slice's place in the vector, from :func:`~five_hundred_env.observation.observation_layout`)."""
    shown = Phase(int(np.argmax(np.asarray(observation["observation"])[phase])))
    if shown not in KIND_OF_PHASE:
        raise ValueError(f"no decision to make: the observation shows the phase {shown.name}")
    return KIND_OF_PHASE[shown]


class DecisionSplitAgent(Agent):
    """``inner`` makes the decisions of ``kinds`` (a subset of :data:`DECISION_KINDS`), ``other``
    (default: a :class:`~agents.heuristic.HeuristicAgent` with the same seed) all the others.
    Reseeding reseeds both with the same seed, so ``heuristic@play`` is the heuristic exactly."""

    name = "split"

    def __init__(self, rules: Rules | str = "australian", seed: int | None = None, *, inner: Agent,
                 kinds: Iterable[str], other: Agent | None = None) -> None:
        super().__init__(rules, seed)
        self.kinds = frozenset(kinds)
        if not self.kinds or not self.kinds <= set(DECISION_KINDS):
            raise ValueError(f"kinds must be a non-empty subset of {', '.join(DECISION_KINDS)}, got {sorted(self.kinds)}")
        self.inner = inner
        self.other = HeuristicAgent(self.rules, seed) if other is None else other
        offset, (width,) = observation_layout(self.rules)["phase"]
        self._phase = slice(offset, offset + width)
        self._last: Agent | None = None
        """The agent that made the latest decision (for :meth:`candidate_values`)."""

    def kind_of(self, observation: dict[str, Any]) -> str:
        """The kind of the decision this observation asks for (from its ``phase`` slice)."""
        return decision_kind(observation, self._phase)

    def act(self, observation: dict[str, Any]) -> int:
        agent = self.inner if self.kind_of(observation) in self.kinds else self.other
        self._last = agent
        return agent.act(observation)

    def candidate_values(self) -> dict[int, float] | None:
        """The candidate values of the agent that made the latest decision."""
        return None if self._last is None else self._last.candidate_values()

    def seed(self, seed: int | None) -> None:
        super().seed(seed)
        self.inner.seed(seed)
        self.other.seed(seed)
