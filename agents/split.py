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

from agents.base import Agent
from agents.heuristic import HeuristicAgent
from five_hundred_env.engine import Phase
from five_hundred_env.observation import observation_layout
from five_hundred_env.rules import Rules

DECISION_KINDS = ("bid", "discard", "nominate", "play")
"""The kinds of decision, by the deal's phase (the order of ``training.exit_data.DECISION_KINDS``)."""

_KIND_OF_PHASE = {Phase.BIDDING: "bid", Phase.DISCARD: "discard", Phase.NOMINATE: "nominate", Phase.PLAY: "play"}


def parse_kinds(text: str) -> frozenset[str]:
    """The decision kinds of a ``+``-joined list such as ``"bid+play"`` (one line naming the
    accepted kinds for anything else)."""
    words = [word.strip().lower() for word in text.split("+")]
    unknown = [word for word in words if word not in DECISION_KINDS]
    if unknown or not words:
        raise ValueError(f"unknown decision kind(s) {', '.join(map(repr, unknown))} in {text!r}: "
                         f"expected a +-joined list of {', '.join(DECISION_KINDS)}")
    if len(set(words)) != len(words):
        raise ValueError(f"a decision kind is given twice in {text!r}")
    return frozenset(words)


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

    def kind_of(self, observation: dict[str, Any]) -> str:
        """The kind of the decision this observation asks for (from its ``phase`` slice)."""
        phase = Phase(int(np.argmax(np.asarray(observation["observation"])[self._phase])))
        if phase not in _KIND_OF_PHASE:
            raise ValueError(f"no decision to make: the observation shows the phase {phase.name}")
        return _KIND_OF_PHASE[phase]

    def act(self, observation: dict[str, Any]) -> int:
        agent = self.inner if self.kind_of(observation) in self.kinds else self.other
        return agent.act(observation)

    def seed(self, seed: int | None) -> None:
        super().seed(seed)
        self.inner.seed(seed)
        self.other.seed(seed)
