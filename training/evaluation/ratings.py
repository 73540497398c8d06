"""Ratings from per-board results: a Bradley–Terry fit on the Elo scale, with bootstrap intervals.

Every board of a league's match is one result for each of the two agents: a win (its side's
duplicate difference above zero), a loss, or a draw (exactly zero), a draw counting half a win to
each. The model: agent ``i`` beats agent ``j`` on a board with probability
``1 / (1 + 10 ** (-(r_i - r_j) / 400))`` (the Elo scale: 200 points of rating are 76% of the
boards). The ratings maximise the likelihood of all the results (Newton's method on the counts of
each pair), with one anchor held at 0 (the heuristic in a league that has it; otherwise the mean
rating is 0), and :data:`PRIOR_DRAWS` virtual drawn boards added to every pair that met, which
keeps ratings finite when one agent wins every board (random against anyone).

Beside the rating, :func:`league_points` fits each agent's points per deal (the additive model
``mean difference of i against j ≈ s_i − s_j``, least squares weighted by the boards, the same
anchor): the scale of the pairwise duplicate means, which a rating on boards won can order
differently (an agent that wins fewer boards by more points).

The 95% intervals come from the bootstrap over boards: the league's boards are drawn again with
replacement (the same draw for every pair, since all pairs play the same boards), the ratings
refitted, and the 2.5% and 97.5% quantiles of each agent's rating taken.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

ELO = 400 / math.log(10)
"""Rating points per unit of log-odds."""
PRIOR_DRAWS = 1.0
"""Virtual drawn boards added to each pair that met (half a win to each)."""
BOOTSTRAP_REPS = 1000
"""Resamples of the boards for the intervals."""
_NEWTON_STEPS = 100
_TOLERANCE = 1e-9


def board_outcomes(board_diffs: Sequence[float]) -> np.ndarray:
    """A's result on each board from its difference A − B: 1 a win, 0.5 a draw, 0 a loss."""
    diffs = np.asarray(board_diffs, dtype=float)
    return np.where(diffs > 0, 1.0, np.where(diffs < 0, 0.0, 0.5))


def fit_ratings(wins: np.ndarray, boards: np.ndarray, anchor: int | None = None,
                prior_draws: float = PRIOR_DRAWS) -> np.ndarray:
    """The Bradley–Terry ratings (Elo scale) of ``K`` agents from ``wins[i, j]``, the boards ``i``
    won against ``j`` (draws as halves), and ``boards[i, j]``, the boards they played (symmetric):
    agent ``anchor`` at 0, or the mean at 0 without one. Agents that met nobody get 0 (the anchor's
    rating, or the mean). ``prior_draws`` virtual draws are added to each pair that met."""
    wins = np.asarray(wins, dtype=float)
    boards = np.asarray(boards, dtype=float)
    k = len(wins)
    met = boards > 0
    w = wins + 0.5 * prior_draws * met
    n = boards + prior_draws * met
    free = [i for i in range(k) if i != anchor] if anchor is not None else list(range(k))
    r = np.zeros(k)
    for _ in range(_NEWTON_STEPS):
        p = 1 / (1 + np.exp(r[None, :] - r[:, None]))  # p[i, j]: i beats j
        grad = (w - n * p).sum(axis=1)
        hess = -(n * p * (1 - p))
        hess[np.diag_indices(k)] = -hess.sum(axis=1)  # the information matrix (a graph Laplacian)
        sub = hess[np.ix_(free, free)]
        if anchor is None:  # the mean at 0: the Laplacian's null direction taken out
            step = np.linalg.lstsq(sub, grad[free], rcond=None)[0]
        else:
            step = np.linalg.solve(sub + 1e-12 * np.eye(len(free)), grad[free])
        r[free] += step
        if anchor is None:
            r -= r.mean()
        if np.max(np.abs(step)) < _TOLERANCE:
            break
    return r * ELO


def league_ratings(outcomes: dict[tuple[int, int], np.ndarray], k: int, anchor: int | None = None,
                   reps: int = BOOTSTRAP_REPS, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ratings of ``k`` agents and their 95% bootstrap intervals ``(ratings, lo, hi)``, from
    ``outcomes[(i, j)]``: ``i``'s result on each board against ``j`` (:func:`board_outcomes`).
    Pairs that played the same number of boards are resampled together, board by board."""
    wins, boards = np.zeros((k, k)), np.zeros((k, k))
    for (i, j), o in outcomes.items():
        wins[i, j] += o.sum()
        wins[j, i] += len(o) - o.sum()
        boards[i, j] += len(o)
        boards[j, i] += len(o)
    ratings = fit_ratings(wins, boards, anchor)
    if reps <= 0 or not outcomes:
        return ratings, np.full(k, np.nan), np.full(k, np.nan)
    rng = np.random.default_rng(seed)
    by_length: dict[int, list[tuple[int, int]]] = {}
    for pair, o in outcomes.items():
        by_length.setdefault(len(o), []).append(pair)
    samples = np.empty((reps, k))
    for rep in range(reps):
        wins[:] = 0.0
        for length, pairs in by_length.items():
            weight = np.bincount(rng.integers(0, length, length), minlength=length)  # one draw of the boards
            for i, j in pairs:
                won = float(outcomes[i, j] @ weight)
                wins[i, j] += won
                wins[j, i] += length - won
        samples[rep] = fit_ratings(wins, boards, anchor)
    lo, hi = np.quantile(samples, [0.025, 0.975], axis=0)
    return ratings, lo, hi


def fit_points(means: np.ndarray, boards: np.ndarray, anchor: int | None = None) -> np.ndarray:
    """Points per deal of ``K`` agents from the pairs' mean differences ``means[i, j]`` (``i``'s
    points per deal against ``j``, antisymmetric) over ``boards[i, j]`` boards: the additive model
    ``means[i, j] ≈ s_i − s_j``, fitted by least squares weighted by the boards, agent ``anchor``
    at 0 (or the mean at 0)."""
    means, boards = np.asarray(means, dtype=float), np.asarray(boards, dtype=float)
    k = len(means)
    laplacian = -boards.copy()
    laplacian[np.diag_indices(k)] = boards.sum(axis=1) - np.diag(boards)
    target = (boards * means).sum(axis=1)
    free = [i for i in range(k) if i != anchor]
    s = np.zeros(k)
    s[free] = np.linalg.lstsq(laplacian[np.ix_(free, free)], target[free], rcond=None)[0]
    return s if anchor is not None else s - s.mean()


def league_points(diffs: dict[tuple[int, int], np.ndarray], k: int, anchor: int | None = None,
                  reps: int = BOOTSTRAP_REPS, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`fit_points` from each pair's board differences ``diffs[(i, j)]`` (``i`` − ``j``,
    points per deal), with 95% bootstrap intervals over boards as :func:`league_ratings` draws them:
    ``(points, lo, hi)``."""
    means, boards = np.zeros((k, k)), np.zeros((k, k))

    def fill(weights: dict[int, np.ndarray] | None) -> None:
        for (i, j), d in diffs.items():
            mean = d.mean() if weights is None else float(d @ weights[len(d)]) / len(d)
            means[i, j], means[j, i] = mean, -mean
            boards[i, j] = boards[j, i] = len(d)

    fill(None)
    points = fit_points(means, boards, anchor)
    if reps <= 0 or not diffs:
        return points, np.full(k, np.nan), np.full(k, np.nan)
    rng = np.random.default_rng(seed)
    lengths = sorted({len(d) for d in diffs.values()})
    samples = np.empty((reps, k))
    for rep in range(reps):
        fill({n: np.bincount(rng.integers(0, n, n), minlength=n) for n in lengths})
        samples[rep] = fit_points(means, boards, anchor)
    lo, hi = np.quantile(samples, [0.025, 0.975], axis=0)
    return points, lo, hi


__all__ = ["BOOTSTRAP_REPS", "ELO", "PRIOR_DRAWS", "board_outcomes", "fit_points", "fit_ratings", "league_points",
           "league_ratings"]
