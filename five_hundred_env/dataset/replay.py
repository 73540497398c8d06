"""Deals played on the batched engine: a queue of deals through its games (:class:`DealSlots`,
for generation and replay), and the replay of records as batches of decisions."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from five_hundred_env.dataset.deal_records import DatasetError, DealRecords, ranges_of, starts_of
from five_hundred_env.rules import Rules

if TYPE_CHECKING:  # the engine needs numba, imported when deals are played
    from five_hundred_env.vector import BatchEngine


class DecisionBatch(NamedTuple):
    """Decisions of a dataset, one row each (every array has ``len(batch)`` rows).

    ``obs`` and ``mask`` are what the acting seat saw (``env.observe(agent)``'s ``observation``
    and ``action_mask``), ``action`` the compact action it took, ``values`` each candidate's value
    (points for the acting seat's side; NaN for actions that were no candidate and in rows whose
    decision was not searched; ``None`` for a dataset without values), ``returns`` the deal's
    result for the acting seat's side (its ``zero_sum`` reward in points: the environment's reward
    × ``reward_scale``), ``seat`` the acting seat, ``deal`` the deal's index in the dataset and
    ``turn`` the decision's place in the deal (0 for its first).
    """

    obs: np.ndarray  # [N, obs_size] int8
    mask: np.ndarray  # [N, num_actions] int8
    action: np.ndarray  # [N] int64
    values: np.ndarray | None  # [N, num_actions] float32
    returns: np.ndarray  # [N] float32
    seat: np.ndarray  # [N] int64
    deal: np.ndarray  # [N] int64
    turn: np.ndarray  # [N] int64

    def __len__(self) -> int:  # type: ignore[override]  # the rows, not the fields
        return len(self.action)


@dataclass(frozen=True)
class FinishedDeals:
    """The deals that ended in a step: their games, their places in the records, how many
    decisions each took and each side's score change."""

    games: np.ndarray
    rows: np.ndarray
    turns: np.ndarray
    score_change: np.ndarray


class DealSlots:
    """Plays deals on a :class:`~five_hundred_env.vector.BatchEngine`, one per game at a time:
    row ``order[0]`` of ``cards``, ``dealers`` and ``scores`` goes into game 0, and so on; as a
    game's deal ends, the next row of ``order`` is loaded into it (:meth:`BatchEngine.load_deals`).

    :attr:`active` are the games playing a deal, :attr:`row` the row of each game's deal (-1:
    none) and :attr:`turn` its decisions so far. :meth:`step` takes one action per active game.
    Dataset generation and :func:`replay_batches` both drive the engine through it."""

    def __init__(self, engine: BatchEngine, cards: np.ndarray, dealers: np.ndarray, scores: np.ndarray,
                 order: np.ndarray) -> None:
        self.engine = engine
        self.cards, self.dealers, self.scores, self.order = cards, dealers, scores, order
        self.queued = 0
        self.row = np.full(engine.num_games, -1, dtype=np.int64)
        self.turn = np.zeros(engine.num_games, dtype=np.int64)
        self._step = np.full(engine.num_games, -1, dtype=np.int64)
        self._load(np.arange(engine.num_games))

    def _load(self, games: np.ndarray) -> None:
        games = games[:len(self.order) - self.queued]
        rows = self.order[self.queued:self.queued + len(games)]
        self.queued += len(games)
        if len(games):
            self.engine.load_deals(games, self.cards[rows], self.dealers[rows], self.scores[rows])
            self.row[games] = rows
            self.turn[games] = 0
        self.active = np.flatnonzero(self.row >= 0)

    def step(self, actions: np.ndarray) -> FinishedDeals:
        """Apply ``actions[i]`` (compact id) in game ``active[i]``; deals that end are replaced by
        the next ones of the queue. Returns the deals that ended."""
        engine, active = self.engine, self.active
        self._step[active] = actions
        engine.step(self._step)
        self._step[active] = -1
        self.turn[active] += 1
        ended = active[engine.deal_done[active]]
        finished = FinishedDeals(ended, self.row[ended], self.turn[ended],
                                 engine.score_change[ended, :engine.rules.num_sides].copy())
        self.row[ended] = -1
        self._load(ended)
        return finished


def replay_batches(rules: Rules, records: DealRecords, batch_size: int = 1024, *, order: np.ndarray | None = None,
                   games: int = 1024) -> Iterator[DecisionBatch]:
    """Replay ``records`` (deals of ``rules``, in ``order``: positions in the records) on a
    batched engine of ``games`` games and yield their decisions, ``batch_size`` to a batch (the
    last may hold fewer). Every recorded action is checked legal, every deal to end with its last
    action and with its recorded score change: a record that does not replay raises
    :class:`DatasetError` naming its deal."""
    from five_hundred_env.vector import BatchEngine

    if not isinstance(batch_size, int) or batch_size < 1 or not isinstance(games, int) or games < 1:
        raise ValueError(f"batch_size and games must be whole numbers >= 1, got {batch_size!r} and {games!r}")
    order = np.arange(len(records)) if order is None else np.asarray(order, dtype=np.int64)
    if not len(order):
        return
    engine = BatchEngine(rules, min(games, len(order)), seed=0)
    slots = DealSlots(engine, records.cards, records.dealer, records.scores.astype(np.int64), order)
    starts, results = records.action_starts(), records.zero_sum()
    side_of_seat = np.array([rules.side_of(s) for s in range(rules.num_players)])
    value_starts = starts_of(records.candidate_counts) if records.candidate_counts is not None else None
    batch = _BatchBuffer(engine, batch_size, records.has_values)
    while len(slots.active):
        active = slots.active
        rows, turns = slots.row[active], slots.turn[active]
        early = turns >= records.action_counts[rows]
        if early.any():
            raise DatasetError(f"deal {records.deal[rows[np.argmax(early)]]} of the dataset does not replay: its "
                               f"{records.action_counts[rows[np.argmax(early)]]} actions end before the deal does")
        decision = starts[rows] + turns
        actions = records.actions[decision].astype(np.int64)
        legal = (actions < engine.num_actions) & (engine.masks[active, np.minimum(actions, engine.num_actions - 1)] > 0)
        if not legal.all():
            i = int(np.argmin(legal))
            raise DatasetError(f"deal {records.deal[rows[i]]} of the dataset does not replay: its action {turns[i]} "
                               f"(compact id {actions[i]}) is not legal there")
        seats = engine.seat[active]
        values = None if value_starts is None else (value_starts[decision], records.candidate_counts[decision])
        yield from batch.add(active, actions, results[rows, side_of_seat[seats]], seats, records.deal[rows], turns,
                             values, records)
        finished = slots.step(actions)
        expected = records.action_counts[finished.rows]
        wrong = (finished.turns != expected) | (finished.score_change != records.score_change[finished.rows]).any(axis=1)
        if wrong.any():
            i = int(np.argmax(wrong))
            raise DatasetError(f"deal {records.deal[finished.rows[i]]} of the dataset does not replay: it ends after "
                               f"{finished.turns[i]} of its {expected[i]} actions with score change "
                               f"{finished.score_change[i].tolist()}, recorded "
                               f"{records.score_change[finished.rows[i]].tolist()}")
    yield from batch.flush()


class _BatchBuffer:
    """Fills :class:`DecisionBatch` es of ``size`` rows from the engine's current decisions."""

    def __init__(self, engine: BatchEngine, size: int, with_values: bool) -> None:
        self.engine, self.size, self.with_values = engine, size, with_values
        self._new()

    def _new(self) -> None:
        e, n = self.engine, self.size
        self.fill = 0
        self.batch = DecisionBatch(np.empty((n, e.obs_size), np.int8), np.empty((n, e.num_actions), np.int8),
                                   np.empty(n, np.int64),
                                   np.full((n, e.num_actions), np.nan, np.float32) if self.with_values else None,
                                   np.empty(n, np.float32), np.empty(n, np.int64), np.empty(n, np.int64),
                                   np.empty(n, np.int64))

    def add(self, games: np.ndarray, actions: np.ndarray, returns: np.ndarray, seats: np.ndarray, deals: np.ndarray,
            turns: np.ndarray, values: tuple[np.ndarray, np.ndarray] | None,
            records: DealRecords) -> Iterator[DecisionBatch]:
        """Copy the decisions of ``games`` in; yield each batch as it fills."""
        done = 0
        while done < len(games):
            take = min(self.size - self.fill, len(games) - done)
            part, into = slice(done, done + take), slice(self.fill, self.fill + take)
            b = self.batch
            np.take(self.engine.obs, games[part], axis=0, out=b.obs[into], mode="clip")  # valid rows: no buffering
            np.take(self.engine.masks, games[part], axis=0, out=b.mask[into], mode="clip")
            b.action[into], b.returns[into], b.seat[into] = actions[part], returns[part], seats[part]
            b.deal[into], b.turn[into] = deals[part], turns[part]
            if values is not None:
                assert b.values is not None and records.candidates is not None and records.values is not None
                firsts, counts = values[0][part], values[1][part]
                at = ranges_of(firsts, counts)
                b.values[np.repeat(np.arange(self.fill, self.fill + take), counts), records.candidates[at]] = \
                    records.values[at]
            self.fill += take
            done += take
            if self.fill == self.size:
                yield self.batch
                self._new()

    def flush(self) -> Iterator[DecisionBatch]:
        """The last, partly filled batch, if any."""
        if self.fill:
            yield DecisionBatch(*(None if field is None else field[:self.fill] for field in self.batch))
