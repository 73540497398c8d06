"""Datasets of an agent's games: every seat played by one agent spec, written as records
(:mod:`five_hundred_env.dataset`; the command ``five-hundred dataset``, docs/datasets.md).

The deals of a dataset depend only on its seed and their index: deal ``i`` is drawn in block
``i // DEAL_BLOCK`` from ``numpy.random.default_rng([seed, block])`` (a uniform shuffle of the
pack, then the dealer; with ``starting_scores="uniform"`` each side's starting score after
them). Two agents' datasets of one seed therefore hold the same deals, and no dataset depends on
how many workers made it: the jobs are fixed blocks of deals.

Every deal is played on the batched engine (:class:`~five_hundred_env.dataset.DealSlots`):

* ``heuristic`` by the compiled heuristic (:class:`~agents.heuristic.compiled.HeuristicPolicy`,
  ``HeuristicAgent``'s decisions exactly), every game of a job in one call per step;
* ``random`` by the engine's own uniform legal actions (each game's seeded stream);
* an agent with ``act_batch(obs, masks)`` (a batched player, such as a DMC network: one call per
  step for every game) built once per job, seeded with the dataset's seed;
* any other spec by its agents, one per seat, one deal at a time, reseeded for every deal from
  the seed, the deal and the seat; where an agent searched a decision (``pimc``, ``pimc@play``),
  its :meth:`~agents.base.Agent.candidate_values` are recorded too.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.registry import agent_factory
from five_hundred_env.cards import mask_to_cards
from five_hundred_env.dataset import DealRecords, DealSlots, card_columns, check_dataset_folder, write_dataset
from five_hundred_env.rules import Rules
from five_hundred_env.vector import BatchEngine
from training.workers.distributed import LOCAL, Backend, run_jobs

DEAL_BLOCK = 256
"""Deals drawn from one generator (the unit of a dataset's deals, see the module docstring)."""
ENGINE_POLICIES = ("heuristic", "random")
"""The specs played by compiled code inside the batched engine."""
BLOCKS_PER_JOB = {True: 16, False: 1}
"""Blocks of deals per job: 4,096 deals for a batched player, 256 for agents deciding one at a time."""
GAMES_IN_FLIGHT = 1024
"""Games of a batched policy's engine (the deals of a job pass through them)."""
STARTING_SCORES = ("zero", "uniform")
JOB_TIMEOUT_S = 24 * 3600.0


@dataclass(frozen=True)
class DatasetJob:
    """Deals ``first … first + count - 1`` of a dataset, played by ``spec``."""

    rules: Rules
    spec: str
    seed: int
    first: int
    count: int
    starting_scores: str
    batched: bool
    """Whether every game of the job is decided at once (an engine policy, or an agent's ``act_batch``)."""


@dataclass(frozen=True)
class JobResult:
    records: DealRecords
    cpu_seconds: float


def draw_deals(rules: Rules, seed: int, first: int, count: int, starting_scores: str = "zero"
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Deals ``first … first + count - 1`` of the dataset of ``seed``: their cards (``[count,
    cards]``: each hand ascending, then the kitty), dealers and starting scores per side."""
    if starting_scores not in STARTING_SCORES:
        raise ValueError(f"starting_scores must be one of {', '.join(STARTING_SCORES)}, got {starting_scores!r}")
    pack = np.array(mask_to_cards(rules.deck), dtype=np.uint8)
    n, size, kitty = rules.num_players, rules.hand_size, rules.kitty_size
    parts = []
    for block in range(first // DEAL_BLOCK, (first + count - 1) // DEAL_BLOCK + 1):
        rng = np.random.default_rng([seed, block])
        shuffled = pack[np.argsort(rng.random((DEAL_BLOCK, len(pack))), axis=1)]
        hands = np.sort(shuffled[:, :n * size].reshape(DEAL_BLOCK, n, size), axis=2).reshape(DEAL_BLOCK, n * size)
        cards = np.concatenate([hands, np.sort(shuffled[:, n * size:n * size + kitty], axis=1)], axis=1)
        dealers = rng.integers(n, size=DEAL_BLOCK).astype(np.uint8)
        scores = np.zeros((DEAL_BLOCK, rules.num_sides), dtype=np.int32)
        if starting_scores == "uniform":
            from training.rollouts.selfplay import draw_starting_scores  # imports torch: only when asked

            scores[:] = [draw_starting_scores(rules, rng) for _ in range(DEAL_BLOCK)]
        parts.append((cards, dealers, scores))
    skip = first - (first // DEAL_BLOCK) * DEAL_BLOCK
    return tuple(np.concatenate(column)[skip:skip + count] for column in zip(*parts, strict=True))  # type: ignore[return-value]


def play_job(job: DatasetJob) -> JobResult:
    """The records of one job's deals (a module-level function: workers run it)."""
    start = time.process_time()
    cards, dealers, scores = draw_deals(job.rules, job.seed, job.first, job.count, job.starting_scores)
    play = _play_batched if job.batched else _play_agents
    records = play(job, cards, dealers, scores)
    return JobResult(records, time.process_time() - start)


class _Recorder:
    """Collects the actions (and candidate values) of the deals a :class:`DealSlots` plays."""

    def __init__(self, count: int, num_sides: int, with_values: bool) -> None:
        self.steps: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (rows, turns, actions) per step
        self.score_change = np.zeros((count, num_sides), dtype=np.int32)
        self.values: dict[tuple[int, int], dict[int, float]] | None = {} if with_values else None

    def play(self, slots: DealSlots, choose: Callable[[DealSlots], np.ndarray]) -> None:
        """Step every deal of ``slots`` to its end, ``choose(slots)`` giving the active games' actions."""
        while len(slots.active):
            actions = choose(slots)
            self.steps.append((slots.row[slots.active].copy(), slots.turn[slots.active].copy(), actions.astype(np.uint8)))
            finished = slots.step(actions)
            self.score_change[finished.rows] = finished.score_change

    def records(self, job: DatasetJob, cards: np.ndarray, dealers: np.ndarray, scores: np.ndarray) -> DealRecords:
        rows, turns, actions = (np.concatenate(column) for column in zip(*self.steps, strict=True))
        order = np.lexsort((turns, rows))
        counts = np.bincount(rows, minlength=len(cards)).astype(np.int64)
        parts: dict[str, Any] = {}
        if self.values is not None:
            per_decision = [self.values.get((int(r), int(t)), {}) for r, t in zip(rows[order], turns[order], strict=True)]
            parts = {"candidate_counts": np.array([len(v) for v in per_decision], dtype=np.int64),
                     "candidates": np.array([a for v in per_decision for a in v], dtype=np.uint8),
                     "values": np.array([x for v in per_decision for x in v.values()], dtype=np.float32)}
        return DealRecords(np.arange(job.first, job.first + job.count, dtype=np.int64), dealers, cards, scores,
                           self.score_change, counts, actions[order], **parts)


def _play_batched(job: DatasetJob, cards: np.ndarray, dealers: np.ndarray, scores: np.ndarray) -> DealRecords:
    """The compiled heuristic, the engine's random play or an agent's ``act_batch``, in every game at once."""
    engine = BatchEngine(job.rules, min(GAMES_IN_FLIGHT, job.count), seed=job.seed * 1_000_003 + job.first,
                         observations=job.spec != "random")
    slots = DealSlots(engine, cards, dealers, scores, np.arange(job.count))
    recorder = _Recorder(job.count, job.rules.num_sides, with_values=False)
    if job.spec == "random":
        recorder.play(slots, lambda s: s.engine.sample_actions()[s.active])
    elif job.spec == "heuristic":
        from agents.heuristic.compiled import HeuristicPolicy

        policy = HeuristicPolicy(job.rules)
        recorder.play(slots, lambda s: policy.act_engine(s.engine)[s.active])
    else:
        agent = agent_factory(job.spec)(job.rules, job.seed)
        recorder.play(slots, lambda s: np.asarray(agent.act_batch(s.engine.obs[s.active], s.engine.masks[s.active])))
    return recorder.records(job, cards, dealers, scores)


def _play_agents(job: DatasetJob, cards: np.ndarray, dealers: np.ndarray, scores: np.ndarray) -> DealRecords:
    """The spec's agents, one per seat, a deal at a time (their candidate values recorded)."""
    rules = job.rules
    factory = agent_factory(job.spec)
    seats = [factory(rules, job.seed) for _ in range(rules.num_players)]
    engine = BatchEngine(rules, 1, seed=job.seed)
    slots = DealSlots(engine, cards, dealers, scores, np.arange(job.count))
    recorder = _Recorder(job.count, rules.num_sides, with_values=True)
    assert recorder.values is not None

    def choose(s: DealSlots) -> np.ndarray:
        row, turn, seat = int(s.row[0]), int(s.turn[0]), int(s.engine.seat[0])
        if turn == 0:  # a new deal: every seat's agent reseeded from the seed, the deal and the seat
            for i, agent in enumerate(seats):
                agent.seed(int(np.random.SeedSequence([job.seed, job.first + row, i]).generate_state(1)[0]))
        agent = seats[seat]
        action = agent.act({"observation": s.engine.obs[0].copy(), "action_mask": s.engine.masks[0].copy()})
        values = agent.candidate_values()
        if values:
            recorder.values[row, turn] = values  # type: ignore[index]
        return np.array([action])

    recorder.play(slots, choose)
    return recorder.records(job, cards, dealers, scores)


def dataset_jobs(rules: Rules, spec: str, deals: int, seed: int, starting_scores: str, batched: bool) -> list[DatasetJob]:
    """The jobs of a dataset: fixed runs of :data:`DEAL_BLOCK` blocks (see :data:`BLOCKS_PER_JOB`)."""
    size = DEAL_BLOCK * BLOCKS_PER_JOB[batched]
    return [DatasetJob(rules, spec, seed, first, min(size, deals - first), starting_scores, batched)
            for first in range(0, deals, size)]


def generate_dataset(spec: str, rules: Rules, deals: int, out: str | os.PathLike[str], *, seed: int = 0,
                     workers: int = 1, starting_scores: str = "zero", backend: Backend = LOCAL,
                     on_done: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Play ``deals`` deals with ``spec`` in every seat and write them as a dataset to ``out``
    (:func:`five_hundred_env.dataset.write_dataset`), on ``workers`` processes (or Ray tasks);
    ``on_done(deals_done, deals)`` reports progress. Returns the manifest, which also holds the
    seed, the starting scores and the CPU-seconds the games took (every worker's)."""
    if not isinstance(deals, int) or isinstance(deals, bool) or deals < 1:
        raise ValueError(f"deals must be a whole number >= 1, got {deals!r}")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0, got {seed!r}")
    check_dataset_folder(out)
    spec = spec.strip()
    label = agent_factory(spec).label  # an unknown spec is refused before anything is played
    if label in ENGINE_POLICIES:
        spec, batched = label, True
    else:  # built now: a checkpoint of other rules is refused here, not in a worker
        batched = callable(getattr(agent_factory(spec)(rules, seed), "act_batch", None))
    jobs = dataset_jobs(rules, spec, deals, seed, starting_scores, batched)
    done = [0]

    def count(i: int) -> None:
        done[0] += jobs[i].count
        if on_done is not None:
            on_done(done[0], deals)

    start = time.perf_counter()
    results: list[JobResult] = run_jobs(play_job, jobs, workers, JOB_TIMEOUT_S, on_done=count, backend=backend)
    records = [r.records for r in results]
    if not any(r.has_values and r.candidate_counts.any() for r in records):  # type: ignore[union-attr]
        for r in records:  # an agent that never searched: no value columns
            r.candidate_counts = r.candidates = r.values = None
    about = {"seed": seed, "starting_scores": starting_scores, "card_columns": card_columns(rules),
             "cpu_seconds": round(sum(r.cpu_seconds for r in results), 3),
             "wall_seconds": round(time.perf_counter() - start, 3)}
    return write_dataset(out, rules, label, records, **about)


def dataset_summary(manifest: dict[str, Any], out: str | os.PathLike[str]) -> str:
    """The line ``five-hundred dataset`` ends with: what was written to ``out``, its size, and how fast."""
    size = sum((Path(out).expanduser() / entry["name"]).stat().st_size for entry in manifest["files"])
    values = ", with the search's candidate values" if manifest["values"] else ""
    cpu = manifest["cpu_seconds"]
    speed = f"{manifest['deals'] / cpu:,.0f} deals per CPU-second" if cpu > 0 else "no CPU time measured"
    preset = manifest["rules"]["preset"]
    return (f"wrote {out}: {manifest['deals']:,} deals of {manifest['agent']} ({preset}), {manifest['decisions']:,} "
            f"decisions{values}; {size:,} bytes in {len(manifest['files'])} file(s); {speed} ({cpu:.1f} CPU-s, "
            f"{manifest['wall_seconds']:.1f} s)")


__all__ = ["DEAL_BLOCK", "ENGINE_POLICIES", "STARTING_SCORES", "DatasetJob", "dataset_summary", "draw_deals",
           "generate_dataset", "play_job"]
