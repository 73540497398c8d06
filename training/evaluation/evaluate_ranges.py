"""A duplicate match split into ranges of boards and games, each range played by a worker.

The ranges' results come back in order and are tallied by :func:`training.evaluation.evaluate.duplicate_match`
as one process would tally them, so its report is exactly the same whatever the split, the number
of workers and the backend (:mod:`training.workers.distributed`): every board and game has its own seed,
and every play reseeds its agents. Each worker builds its own agents from the match's specs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from five_hundred_env.rules import Rules
from training.evaluation.bench import load_bench
from training.evaluation.matches import AgentLike, GameResult, PlayResult, board_results, game_results
from training.workers.distributed import Backend, run_jobs

BOARDS_PER_JOB = 50
"""Boards per unit of work (the report does not depend on it)."""
GAMES_PER_JOB = 4
"""Games to 500 per unit of work (a game is some twenty deals)."""
JOB_TIMEOUT_S = 3600.0
"""Seconds a worker may spend on one unit of work before the match stops with an error."""


@dataclass(frozen=True)
class RangeJob:
    """A unit of work: boards (or games) ``start`` to ``stop`` (excluded) of the match of ``seed``
    (on the boards of the benchmark set ``bench``, :mod:`training.evaluation.bench`, when given)."""

    rules: Rules
    agent_a: AgentLike
    agent_b: AgentLike
    seed: int
    kind: Literal["boards", "games"]
    start: int
    stop: int
    bench: str | None = None
    on_bot_error: str = "raise"


def split(rules: Rules, agent_a: AgentLike, agent_b: AgentLike, seed: int, deals: int, games: int,
          bench: str | None = None, on_bot_error: str = "raise") -> list[RangeJob]:
    """The match's boards in ranges of :data:`BOARDS_PER_JOB`, then its games in ranges of :data:`GAMES_PER_JOB`."""
    return [RangeJob(rules, agent_a, agent_b, seed, kind, lo, min(lo + size, total), bench, on_bot_error)
            for kind, total, size in (("boards", deals, BOARDS_PER_JOB), ("games", games, GAMES_PER_JOB))
            for lo in range(0, total, size)]


def play_range(job: RangeJob) -> list[Any]:
    """Play one range (in a worker): its boards' plays, or its games' results, in order."""
    if job.kind == "games":
        return list(game_results(job.rules, job.agent_a, job.agent_b, job.seed, job.start, job.stop,
                                 on_bot_error=job.on_bot_error))
    boards = load_bench(job.bench, job.rules).boards if job.bench else None
    return list(board_results(job.rules, job.agent_a, job.agent_b, job.seed, job.start, job.stop, boards=boards,
                              on_bot_error=job.on_bot_error))


def play_in_ranges(rules: Rules, agent_a: AgentLike, agent_b: AgentLike, seed: int, deals: int, games: int,
                   workers: int, backend: Backend, on_progress: Callable[[int], None] | None = None,
                   bench: str | None = None, on_bot_error: str = "raise",
                   ) -> tuple[list[list[PlayResult]], list[GameResult]]:
    """The plays of the match's ``deals`` boards (one list per board) and the results of its
    ``games`` games, in order, played in ranges on ``backend`` (``workers`` local processes, or
    Ray tasks); ``on_progress(n)`` is called as a range of ``n`` boards or games finishes. The
    agents must be picklable (a spec string, a class or a module-level factory, or an instance)."""
    jobs = split(rules, agent_a, agent_b, seed, deals, games, bench, on_bot_error)
    parts = run_jobs(play_range, jobs, workers, JOB_TIMEOUT_S, backend=backend,
                     on_done=(lambda i: on_progress(jobs[i].stop - jobs[i].start)) if on_progress else None)
    ranges = list(zip(jobs, parts, strict=True))
    return ([board for job, part in ranges if job.kind == "boards" for board in part],
            [game for job, part in ranges if job.kind == "games" for game in part])
