"""A perfect-information Monte Carlo (PIMC) search agent for the card play.

At each card-play decision :class:`PIMCAgent` rebuilds its information set from its observations
(:class:`~agents.search.tracking.ObservationTracker`: nothing but what the vectors showed), draws
``worlds`` deals uniformly among those consistent with it (:class:`~agents.search.sampling.WorldSampler`),
and scores every legal action in every world with common random numbers: the world is played out
after the action by the rollout policy (the heuristic by default, acting on each seat's own
encoded observation), or, with ``solver_tricks`` tricks or fewer left, solved exactly
(:func:`~agents.search.solver.action_values`). The action with the best mean zero-sum result
for the agent's side wins. The auction, the discards and the nomination are the heuristic's, as is
any play the tracker cannot reconstruct (the agent joined a deal after its first trick).
"""

from __future__ import annotations

import random
import time
from typing import Any

import numpy as np

from agents.base import Agent
from agents.heuristic import HeuristicAgent
from agents.search.sampling import InfoSet, WorldSampler
from agents.search.tracking import ObservationTracker
from agents.search.values import policy_play_out, world_action_values
from five_hundred_env.actions import ActionTable
from five_hundred_env.engine import Phase
from five_hundred_env.rules import Rules


class PIMCAgent(Agent):
    """Samples ``worlds`` consistent deals per card play (at most ``seconds`` of search, if set) and
    plays the action whose playouts score best; see the module docstring.

    ``rollout`` is the policy that plays the worlds out (any stateless :class:`Agent`; the
    heuristic if ``None``); ``solver_tricks`` is how many tricks left the exact solver takes over at.
    """

    name = "pimc"

    def __init__(self, rules: Rules | str = "australian", seed: int | None = None, worlds: int = 16,
                 seconds: float | None = None, rollout: Agent | None = None, solver_tricks: int = 4) -> None:
        super().__init__(rules, seed)
        if not isinstance(worlds, int) or isinstance(worlds, bool) or worlds < 1:
            raise ValueError(f"worlds must be a whole number >= 1, got {worlds!r}")
        if seconds is not None and not (isinstance(seconds, int | float) and seconds > 0):
            raise ValueError(f"seconds must be a positive number of seconds or None, got {seconds!r}")
        if not isinstance(solver_tricks, int) or not 0 <= solver_tricks <= self.rules.hand_size:
            raise ValueError(f"solver_tricks must be 0..{self.rules.hand_size}, got {solver_tricks!r}")
        self.worlds = worlds
        self.seconds = seconds
        self.solver_tricks = solver_tricks
        self.heuristic = HeuristicAgent(self.rules, seed)
        self.rollout = rollout if rollout is not None else self.heuristic
        self.table = ActionTable(self.rules)
        self.tracker = ObservationTracker(self.rules)
        self._play_out = policy_play_out(self.rules, self.rollout.act)
        self._random = random.Random(seed)
        self.searches = 0
        """Card plays decided by search."""
        self.fallbacks = 0
        """Decisions left to the heuristic because the information set could not be rebuilt (or a
        world disagreed with the mask): none in a deal the agent saw from its start."""
        self.search_seconds = 0.0
        """Time spent in searches, in all."""

    def seed(self, seed: int | None) -> None:
        super().seed(seed)
        self._random = random.Random(seed)
        self.heuristic.seed(seed)

    def act(self, observation: dict[str, Any]) -> int:
        """The compact id of the chosen legal action."""
        legal_compact = np.flatnonzero(np.asarray(observation["action_mask"]))
        if len(legal_compact) == 0:
            raise ValueError("no legal action in the mask: is it this agent's turn?")
        vector = observation["observation"]
        info = self.tracker.info_set(vector)
        if info is None or info.phase != Phase.PLAY:
            if info is None:
                self.fallbacks += 1
            return self.heuristic.act(observation)
        legal = [self.table.universal[int(a)] for a in legal_compact]
        action = legal[0] if len(legal) == 1 else self._search(info, legal, observation)
        self.tracker.record_own_play(vector, info, action)
        return self.table.compact[action]

    def _search(self, info: InfoSet, legal: list[int], observation: dict[str, Any]) -> int:
        start = time.perf_counter()
        sampler = WorldSampler(info)
        totals = dict.fromkeys(legal, 0.0)
        side = self.rules.side_of(info.seat)
        for i in range(self.worlds):
            if i and self.seconds is not None and time.perf_counter() - start > self.seconds:
                break
            world = sampler.sample(self._random)
            if sorted(world.legal_actions()) != sorted(legal):  # a safety net: never trust a bad world
                self.fallbacks += 1
                return self.table.universal[self.heuristic.act(observation)]
            for action, value in world_action_values(world, legal, side, self._play_out, self.solver_tricks).items():
                totals[action] += value
        self.searches += 1
        self.search_seconds += time.perf_counter() - start
        return max(legal, key=lambda a: totals[a])
