"""Inference from the auction: worlds drawn uniformly among those where every other seat bid as the heuristic would.

:class:`~five_hundred_env.sampling.WorldSampler` draws the hidden cards uniformly among the deals
consistent with what the observer saw, ignoring what the bids say. :class:`AuctionInference`
keeps, of those uniform draws, the worlds in which every other seat whose hand is hidden made, at
each of its bidding turns, exactly the bid (or pass) the heuristic makes with that world's hand
from that seat's own observation (its encoded view of the auction so far and of the game scores).
This is rejection sampling: the candidates are independent and uniform, so the accepted ones are
exactly the consistent worlds, each equally likely.

The test runs turn by turn over a batch of candidates: the auction is replayed on every candidate
from its dealt hands, and at each turn of an inferred seat the seat's observation is encoded for
the candidates still alive and the heuristic's choice compared with the actual bid; the first turn
usually rejects most of them, so few observations are built. The compiled heuristic
(:class:`~agents.heuristic.compiled.HeuristicPolicy`, numba, presets of
:data:`~agents.heuristic.compiled.COMPILED_PRESETS`) decides a turn's whole batch in one call;
other presets (or no numba) ask :class:`~agents.heuristic.HeuristicAgent` row by row.

Each decision has a ``budget`` of candidates; a world asked for after the budget is spent without
a consistent candidate left is drawn uniformly instead, and counted (:attr:`AuctionInference.uniform_worlds`).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

import numpy as np

from agents.heuristic import batch_heuristic
from five_hundred_env.actions import ActionTable
from five_hundred_env.engine import Deal, IllegalActionError
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules
from five_hundred_env.sampling import InfoSet, WorldSampler

DEFAULT_BUDGET = 2000
"""Candidate worlds tested per decision before the uniform fallback."""
ROUND = 64
"""Candidates tested together (one heuristic batch per inferred turn)."""


class AuctionInference:
    """Draws worlds consistent with the auction for ``rules`` (see the module docstring) and counts
    what it did: :attr:`candidates` tested, :attr:`accepted`, :attr:`uniform_worlds` (drawn
    uniformly because the budget ran out), :attr:`uniform_decisions` (decisions that needed any)."""

    def __init__(self, rules: Rules, budget: int = DEFAULT_BUDGET) -> None:
        if not isinstance(budget, int) or isinstance(budget, bool) or budget < 1:
            raise ValueError(f"the inference budget must be a whole number of candidate worlds >= 1, got {budget!r}")
        self.rules = rules
        self.budget = budget
        self.table = ActionTable(rules)
        self.encoder = ObservationEncoder(rules)
        self._policy = batch_heuristic(rules)
        self.candidates = 0
        self.accepted = 0
        self.uniform_worlds = 0
        self.uniform_decisions = 0

    @property
    def compiled(self) -> bool:
        """Whether the compiled heuristic decides (else HeuristicAgent, row by row)."""
        return self._policy.compiled

    def sampler(self, info: InfoSet, scores: Sequence[int] | None = None) -> ConsistentSampler:
        """A sampler of one decision's worlds; ``scores`` are the game scores per side (``None``: zero)."""
        return ConsistentSampler(self, info, scores)

    def heuristic_bids(self, deals: list[Deal], scores: Sequence[int] | None) -> np.ndarray:
        """The compact action the heuristic chooses at the current turn of each deal, as its seat sees it."""
        turns = [self.encoder.encode_turn(deal, self.table, scores) for deal in deals]
        return self._policy.act_batch(np.stack([t["observation"] for t in turns]),
                                      np.stack([t["action_mask"] for t in turns]))

    def consistent(self, worlds: list[Deal], info: InfoSet, scores: Sequence[int] | None = None) -> list[bool]:
        """For each world (a deal at ``info``'s decision point), whether every inferred seat's bids
        in ``info.bids`` are the heuristic's with that world's hand."""
        return self.consistent_cards([(w.dealt, w.kitty) for w in worlds], info, scores)

    def consistent_cards(self, worlds: Sequence[tuple[Sequence[int], int]], info: InfoSet,
                         scores: Sequence[int] | None = None) -> list[bool]:
        """:meth:`consistent` for worlds given as their dealt hands and kitty (no deal built)."""
        starts = [Deal(self.rules, dealt, kitty, info.dealer) for dealt, kitty in worlds]
        alive = list(range(len(worlds)))
        for action in inferred_turns(starts, info, alive):
            chosen = self.heuristic_bids([starts[i] for i in alive], scores)
            wanted = self.table.compact[action]
            alive[:] = [i for i, c in zip(alive, chosen.tolist(), strict=True) if c == wanted]
        keep = set(alive)
        return [i in keep for i in range(len(worlds))]

    @staticmethod
    def inferred_seats(info: InfoSet) -> frozenset[int]:
        """The seats whose bids are tested: every other seat whose hand the observer does not see."""
        exposed = info.contractor if info.exposed_hand is not None else -1
        return frozenset(s for s, _a in info.bids if s not in (info.seat, exposed))


def inferred_turns(deals: list[Deal], info: InfoSet, alive: list[int]) -> Iterator[int]:
    """Replay ``info.bids`` on the deals ``alive`` names (indices into ``deals``, each at the
    auction's start), in place; before each bid of an inferred seat (:meth:`AuctionInference.inferred_seats`),
    yield that bid's action with those deals at its turn. The caller may shrink ``alive`` (in place)
    between turns, and the deals it drops are no longer replayed; a deal in which a bid is illegal
    (``both_jokers_min_bid``) leaves ``alive``."""
    inferred = AuctionInference.inferred_seats(info)
    for seat, action in info.bids:
        if seat in inferred and alive:
            yield action
        legal = []
        for i in alive:
            try:
                deals[i].apply_action(action)
                legal.append(i)
            except IllegalActionError:
                pass
        alive[:] = legal


class ConsistentSampler:
    """One decision's worlds (:meth:`sample`, one at a time), drawn by :class:`AuctionInference`."""

    def __init__(self, inference: AuctionInference, info: InfoSet, scores: Sequence[int] | None) -> None:
        self.inference = inference
        self.info = info
        self.scores = None if scores is None else list(scores)
        self.uniform = WorldSampler(info)
        self.tested = 0
        self._ready: list[Deal] = []
        self._needs_test = bool(inference.inferred_seats(info))
        self._counted_fallback = False

    def sample(self, rng: random.Random) -> Deal:
        """A world consistent with the auction, or a uniform one once the budget is spent (counted)."""
        if not self._needs_test:
            return self.uniform.sample(rng)
        inference = self.inference
        while not self._ready and self.tested < inference.budget:
            size = min(ROUND, inference.budget - self.tested)
            uniform = self.uniform
            cards = [uniform.dealt_cards(*uniform.sample_hidden(rng), rng) for _ in range(size)]
            self.tested += size
            inference.candidates += size
            tests = inference.consistent_cards([(dealt, kitty) for dealt, kitty, _extra in cards], self.info, self.scores)
            # only the accepted candidates are built into deals (replayed to the decision point)
            built = [uniform.replay(*c) for c, ok in zip(cards, tests, strict=True) if ok]
            self._ready = [world for world in built if world is not None]
            inference.accepted += len(self._ready)
        if self._ready:
            return self._ready.pop(0)
        inference.uniform_worlds += 1
        if not self._counted_fallback:
            inference.uniform_decisions += 1
            self._counted_fallback = True
        return self.uniform.sample(rng)


__all__ = ["DEFAULT_BUDGET", "AuctionInference", "ConsistentSampler", "inferred_turns"]
