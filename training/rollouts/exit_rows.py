"""What the two engines of the expert-iteration data share: the job, a finished deal's worth, the
rows gathered and their arrays.

The scalar engine (:mod:`.exit_data`, a deal at a time) and the batched one (:mod:`.exit_batch`,
every deal of a chunk at once on :class:`five_hundred_env.vector.BatchEngine`) play the same
deals (``deal_rng``) and sample the same decisions (``decision_rng``, one stream per deal), so
they make the same rows; ``tests/test_exit_batch.py`` holds them equal.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from agents.base import DECISION_KINDS, KIND_OF_PHASE
from agents.search.values import GameStakes, Result, bid_candidates
from five_hundred_env.actions import ActionTable
from five_hundred_env.engine import Deal
from five_hundred_env.rules import Rules

KIND_INDEX = {phase: DECISION_KINDS.index(kind) for phase, kind in KIND_OF_PHASE.items()}
"""``kind`` in the data: the index of the decision's kind in ``DECISION_KINDS``, by the deal's phase."""

RESULT_SCALE = 100.0
"""Advantages and returns are in hundreds of points (the zero-sum reward's scale)."""


@dataclass(frozen=True)
class ChunkJob:
    """One unit of work: ``deals`` deals from ``seed``, played by the network ``weights`` describe."""

    rules: Rules
    seed: int
    deals: int
    model_spec: dict[str, Any]
    weights: dict[str, np.ndarray]
    rates: tuple[float, float, float, float]
    """Probability that a decision of each kind (``DECISION_KINDS``) gets improved targets."""
    value_rate: float
    """Probability that a decision is kept as a sample for the critic."""
    worlds: int
    solver_tricks: int
    base: str = "policy"
    """``policy``: the network plays the deals and the playouts; ``heuristic``: the heuristic does
    (one improvement step over the heuristic)."""
    play_targets: str = "pimc"
    """``pimc``: card-play targets over sampled worlds; ``rollout``: one playout per legal card on
    the real deal."""
    starting_scores: str = "zero"
    """``zero``, or ``uniform``: each deal's game scores drawn by ``draw_starting_scores``."""
    win_bonus: float = 0.0
    """Points a result gains when the deal wins the game (:func:`game_result`)."""


def deal_rng(seed: int) -> random.Random:
    """The stream a chunk's deals and dealers are drawn from, in order (``Deal.new``)."""
    return random.Random(seed)


def decision_rng(seed: int, deal: int) -> random.Random:
    """The stream of deal ``deal`` of a chunk: which of its decisions are sampled, and its PIMC
    worlds. One per deal, so the batched engine, which plays a chunk's deals side by side, draws
    what the scalar one draws."""
    return random.Random(int(np.random.SeedSequence([seed, deal]).generate_state(1, dtype=np.uint64)[0]))


class Draw(NamedTuple):
    """What is drawn at one decision (:func:`draw_decision`)."""

    critic: bool
    """Whether the decision is a sample for the critic."""
    kind: int
    """Its kind (an index of ``DECISION_KINDS``)."""
    candidates: list[int]
    """The candidates to score (universal ids; empty: no improved targets here)."""
    pimc: bool
    """Whether they are scored by PIMC over sampled worlds (card plays with ``play_targets="pimc"``)."""


def draw_decision(job: ChunkJob, rng: random.Random, deal: Deal, action: int) -> Draw:
    """The draws at the decision of ``deal`` where the policy plays ``action``, in the one order both
    engines keep: whether it is a sample for the critic, then (a decision with a choice only)
    whether it gets improved targets; the candidates: for a bid those of ``bid_candidates``, else
    every legal action."""
    critic = rng.random() < job.value_rate
    kind = KIND_INDEX[deal.phase]
    legal = deal.legal_actions()
    if len(legal) < 2 or rng.random() >= job.rates[kind]:
        return Draw(critic, kind, [], False)
    name = DECISION_KINDS[kind]
    return Draw(critic, kind, bid_candidates(legal, action) if name == "bid" else list(legal),
                name == "play" and job.play_targets == "pimc")


def game_result(rules: Rules, scores: Sequence[int], win_bonus: float) -> Result:
    """A finished deal's worth to a side when it started from the side ``scores``: its zero-sum
    result, plus, if it ends the game (§9), its share of ``win_bonus`` — the search's
    :class:`~agents.search.values.GameStakes`, one home for both."""
    return GameStakes(tuple(scores), win_bonus).result


def deal_value(deal: Deal, side: int, result: Result | None) -> float:
    """A finished deal's worth to ``side``: its zero-sum result, or ``result``'s (:func:`game_result`)."""
    return deal.zero_sum_result(side) if result is None else result(deal, side)


class DataRows:
    """The rows of one chunk: improved targets and the critic's samples, each tagged with its
    deal's index in the chunk (:meth:`arrays` orders them deal by deal, each deal's in the order
    of its decisions, whatever order the deals were played in)."""

    def __init__(self, rules: Rules, seed: int, width: int, extra: int) -> None:
        self.table = ActionTable(rules)
        self.seed, self.width, self.extra = seed, width, extra
        self.targets: dict[str, list[Any]] = {k: [] for k in ("x", "mask", "candidates", "advantages", "kind", "action",
                                                              "deal")}
        self.values: dict[str, list[Any]] = {k: [] for k in ("x", "mask", "extra", "returns", "deal")}

    def add_value(self, deal: int, x: np.ndarray, mask: np.ndarray, extra: np.ndarray) -> int:
        """A sample for the critic; its return (:meth:`set_return`) once its deal is over. Its row."""
        for key, value in zip(("x", "mask", "extra", "returns", "deal"), (x, mask, extra, 0.0, deal), strict=True):
            self.values[key].append(value)
        return len(self.values["returns"]) - 1

    def set_return(self, row: int, value: float) -> None:
        """The return of the critic's sample ``row``: its side's result, in points."""
        self.values["returns"][row] = value / RESULT_SCALE

    def add_target(self, deal: int, x: np.ndarray, mask: np.ndarray, kind: int, action: int,
                   values: dict[int, float]) -> None:
        """The candidates' values (universal ids, points) at one decision, kept as advantages over
        the policy's ``action``."""
        n, compact = len(self.table), self.table.compact
        cand = np.zeros(n, dtype=np.int8)
        adv = np.zeros(n, dtype=np.float32)
        for a, value in values.items():
            cand[compact[a]] = 1
            adv[compact[a]] = (value - values[action]) / RESULT_SCALE
        for key, value in zip(("x", "mask", "candidates", "advantages", "kind", "action", "deal"),
                              (x, mask, cand, adv, kind, compact[action], deal), strict=True):
            self.targets[key].append(value)

    def arrays(self) -> dict[str, np.ndarray]:
        """The chunk's data (the keys of ``training.rollouts.exit_data``), deal by deal."""
        width, n = self.width, len(self.table)
        t = np.argsort(np.asarray(self.targets["deal"], dtype=np.int64), kind="stable")
        v = np.argsort(np.asarray(self.values["deal"], dtype=np.int64), kind="stable")
        out = {
            "x": _stack(self.targets["x"], t, (width,), np.int8), "mask": _stack(self.targets["mask"], t, (n,), np.int8),
            "candidates": _stack(self.targets["candidates"], t, (n,), np.int8),
            "advantages": _stack(self.targets["advantages"], t, (n,), np.float32),
            "kind": np.asarray(self.targets["kind"], dtype=np.int8)[t],
            "action": np.asarray(self.targets["action"], dtype=np.int64)[t],
            "value_x": _stack(self.values["x"], v, (width,), np.int8),
            "value_mask": _stack(self.values["mask"], v, (n,), np.int8),
            "value_extra": _stack(self.values["extra"], v, (self.extra,), np.int8),
            "returns": np.asarray(self.values["returns"], dtype=np.float32)[v],
        }
        out["chunk"] = np.full(len(out["kind"]), self.seed, dtype=np.int64)
        out["value_chunk"] = np.full(len(out["returns"]), self.seed, dtype=np.int64)
        return out


def _stack(rows: list[np.ndarray], order: np.ndarray, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    if not rows:
        return np.zeros((0, *shape), dtype=dtype)
    return np.stack(rows).astype(dtype, copy=False)[order]
