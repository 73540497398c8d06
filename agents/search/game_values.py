"""The chance to win the game from a pair of scores, for a search that values deals by the game.

A deal's points are not the game's reward: 100 points are worth much to a side at 420 and little
to one at −300, and a 500-point open misère ends the game either way (§9). :class:`GameValues` is a
table of one side's chance to win a two-side game to 500 from each pair of scores (its own, the
other side's), fitted by value iteration to the outcomes of played deals as one side saw them
(:func:`training.evaluation.matches.match_outcomes`), each deal drawing one of them whatever the
scores: an approximation (a side's bids may depend on the scores), stated rather than hidden. A search then values a deal by
the change it makes to that chance (``scale`` points for the whole game), not by its points:
``pimc:game_values=PATH``.

The game's end is the engine's (:func:`~five_hundred_env.engine.contract_winners`, §9): a side
wins by making a contract that takes it to the target, or when the other sinks to the losing
score. Scores are kept on a grid of 10 points from just above the losing score to ``top``
(scores above it, reached by defence points alone, are read as ``top``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from five_hundred_env.engine import contract_winners
from five_hundred_env.rules import Rules

STEP = 10
"""Every australian score is a multiple of ten (tricks, bids and defence points, §8)."""

DEFAULT_SCALE = 1000.0
"""Points a whole game is worth: a deal that takes the chance to win from 50% to 60% is worth 100."""


class GameValues:
    """``win[i, j]``: the chance that a side at score ``low + STEP·i`` wins the game against a side at
    ``low + STEP·j``, both playing on as in the outcomes the table was fitted to."""

    def __init__(self, rules: Rules, win: np.ndarray, top: int, scale: float = DEFAULT_SCALE) -> None:
        if rules.num_sides != 2:
            raise ValueError(f"game values need a game of two sides, {rules.preset} has {rules.num_sides}")
        self.rules = rules
        self.low = rules.losing_score + STEP
        self.top = top
        size = (top - self.low) // STEP + 1
        if win.shape != (size, size):
            raise ValueError(f"a game-value table from {self.low} to {top} is {size}x{size}, got {win.shape}")
        self.win = win
        self.scale = float(scale)

    @classmethod
    def fit(cls, rules: Rules, outcomes: Iterable[tuple[int, int, int, bool]], top: int = 1000,
            scale: float = DEFAULT_SCALE, tolerance: float = 1e-7, max_sweeps: int = 10_000) -> GameValues:
        """Value iteration over the grid: each deal draws one of ``outcomes`` — ``(own change, other's
        change, contractor, made)`` with the contractor ``0`` (this side), ``1`` (the other) or ``-1``
        (thrown in) — uniformly, until the table moves by less than ``tolerance``."""
        counts = Counter((int(a), int(b), int(c), bool(m)) for a, b, c, m in outcomes)
        if not counts:
            raise ValueError("no outcomes to fit the game values to")
        low = rules.losing_score + STEP
        grid = np.arange(low, top + 1, STEP)
        own, other = np.meshgrid(grid, grid, indexing="ij")
        # §9 tabulated once per kind of deal end over every pair of scores a deal can leave
        changes = [change for a, b, _, _ in counts for change in (a, b)]
        reach = np.arange(low + min(0, *changes), top + max(0, *changes) + 1, STEP)
        pairs = np.meshgrid(reach, reach, indexing="ij")
        ends = {end: _game_end(rules, *pairs, *end) for end in {(c, m) for _, _, c, m in counts}}
        total = sum(counts.values())
        steps = []
        for (a, b, contractor, made), n in counts.items():
            after_own, after_other = (own + a - reach[0]) // STEP, (other + b - reach[0]) // STEP
            ended, won = (table[after_own, after_other] for table in ends[contractor, made])
            i = np.clip((own + a - low) // STEP, 0, len(grid) - 1)
            j = np.clip((other + b - low) // STEP, 0, len(grid) - 1)
            steps.append((n / total, ended, won, i, j))
        win = np.full(own.shape, 0.5)
        for _ in range(max_sweeps):
            new = np.zeros_like(win)
            for weight, ended, won, i, j in steps:
                new += weight * np.where(ended, won, win[i, j])
            moved = float(np.abs(new - win).max())
            win = new
            if moved < tolerance:
                break
        return cls(rules, win, top, scale)

    def chance(self, own: int, other: int) -> float:
        """The chance to win from these scores (the game not over)."""
        i = min(max((own - self.low) // STEP, 0), self.win.shape[0] - 1)
        j = min(max((other - self.low) // STEP, 0), self.win.shape[0] - 1)
        return float(self.win[i, j])

    def value(self, scores: Sequence[int], change: Sequence[int], team: Sequence[int], made: bool, side: int) -> float:
        """``side``'s worth of a deal that changed ``scores`` by ``change`` (per side), contracted by the
        sides ``team`` (none: thrown in): ``scale`` times the change in its chance to win."""
        after = [s + c for s, c in zip(scores, change, strict=True)]
        winners = contract_winners(self.rules, after, team, made)
        now = 1.0 if side in winners else 0.0 if winners else self.chance(after[side], after[1 - side])
        return self.scale * (now - self.chance(scores[side], scores[1 - side]))

    def save(self, path: str | Path) -> None:
        """Write the table as ``.npz`` (the preset's name, the grid's top, the scale)."""
        np.savez_compressed(path, win=self.win, top=self.top, scale=self.scale, preset=self.rules.preset)

    @classmethod
    def load(cls, path: str | Path, rules: Rules) -> GameValues:
        """A table :meth:`save` wrote, for ``rules`` (whose preset it must name)."""
        try:
            with np.load(path) as data:
                preset, win, top, scale = str(data["preset"]), data["win"], int(data["top"]), float(data["scale"])
        except (OSError, KeyError, ValueError) as e:
            raise ValueError(f"{path}: not a game-value table ({e})") from None
        if preset != rules.preset:
            raise ValueError(f"{path}: a game-value table of {preset}, not of {rules.preset}")
        return cls(rules, win, top, scale)


def _game_end(rules: Rules, own: np.ndarray, other: np.ndarray, contractor: int, made: bool) -> tuple[np.ndarray, np.ndarray]:
    """Over arrays of the scores a deal leaves: whether it ends the game and whether this side (side
    0 here) wins it — the engine's :func:`contract_winners` (§9), asked once per distinct pair."""
    team = [] if contractor < 0 else [contractor]
    own_values, own_at = np.unique(own, return_inverse=True)
    other_values, other_at = np.unique(other, return_inverse=True)
    winners = [[contract_winners(rules, [a, b], team, made) for b in other_values.tolist()] for a in own_values.tolist()]
    ended = np.array([[bool(w) for w in row] for row in winners])
    won = np.array([[0 in w for w in row] for row in winners], dtype=float)
    own_at, other_at = own_at.reshape(own.shape), other_at.reshape(other.shape)
    return ended[own_at, other_at], won[own_at, other_at]


__all__ = ["DEFAULT_SCALE", "STEP", "GameValues"]
