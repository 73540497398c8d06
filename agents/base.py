"""The common agent interface: an observation and its action mask in, a legal action id out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

import numpy as np

from five_hundred_env.engine import Phase
from five_hundred_env.rules import Rules, make_rules

DECISION_KINDS = ("bid", "discard", "nominate", "play")
"""The kinds of decision, in the order of a deal: the auction (§4), the kitty (§5), the joker's
nomination (§7) and the card play (§7). The search agent, the per-decision agents and the
expert-iteration data all use these names."""

KIND_OF_PHASE = {Phase.BIDDING: "bid", Phase.DISCARD: "discard", Phase.CALL: "discard", Phase.NOMINATE: "nominate",
                 Phase.PLAY: "play"}
"""The kind of the decision a deal in this phase asks for. The five-handed partner call (§10.5)
is a ``discard`` decision: like the discards, it is the contractor's choice after seeing the kitty."""


def parse_kinds(kinds: str | Iterable[str]) -> frozenset[str]:
    """The decision kinds of a ``+``-joined string (``"bid+play"``; empty: none) or an iterable of
    :data:`DECISION_KINDS`; anything else is a ``ValueError`` naming the accepted kinds."""
    words = ([w.strip().lower() for w in kinds.split("+")] if kinds.strip() else []) if isinstance(kinds, str) \
        else list(kinds)
    unknown = [w for w in words if w not in DECISION_KINDS]
    if unknown:
        raise ValueError(f"unknown decision kind(s) {', '.join(map(repr, unknown))} in {kinds!r}: "
                         f"expected a +-joined list of {', '.join(DECISION_KINDS)}")
    if len(set(words)) != len(words):
        raise ValueError(f"a decision kind is given twice in {kinds!r}")
    return frozenset(words)


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

    def notify(self, event: dict[str, Any]) -> None:
        """What the table tells a seat besides its decisions (:func:`agents.play.play_episode`):
        ``{"type": "deal_start" | "deal_end" | "game_end", "seat": ..., ...}``. Most agents need
        nothing of it and leave this as it is: the play loop then tells them nothing (and costs
        nothing); an agent that overrides it (the ``cmd:`` bots, :mod:`agents.command`) hears of
        every deal's start and end."""
        return None

    def __call__(self, observation: dict[str, Any]) -> int:
        return self.act(observation)

    def candidate_values(self) -> dict[int, float] | None:
        """What the latest :meth:`act` found each candidate action worth, where it searched that
        decision: compact action id → points for the acting seat's side; ``None`` where it did not
        search (and for every agent that never does). Datasets record them (docs/datasets.md)."""
        return None


class RandomAgent(Agent):
    """Uniform over the legal actions."""

    name = "random"

    def act(self, observation: dict[str, Any]) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if len(legal) == 0:
            raise ValueError("no legal action in the mask: is it this agent's turn?")
        return int(legal[self.rng.integers(len(legal))])
