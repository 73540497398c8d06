"""Datasets of played deals: compact columnar records, a manifest with checksums, and a loader
that replays them on the batched engine (docs/datasets.md).

A dataset is a folder: ``manifest.json`` and Parquet files of one row per deal::

    deal          int64                 the deal's index in the dataset (0 … deals-1)
    dealer        uint8                 the dealer's seat
    cards         fixed_size_list<uint8> the universal card ids of the hands, seat by seat
                                        (hand_size each, ascending), then the kitty
    scores        fixed_size_list<int32> each side's game score when the deal starts
    score_change  fixed_size_list<int32> each side's score change in the deal (its result)
    actions       list<uint8>           the compact action ids (the rules' ActionTable), in order
    candidates    list<list<uint8>>     search agents only: per decision, the candidates searched
    values        list<list<float32>>   … and each one's value, points for the acting seat's side

The observations are not stored: :meth:`Dataset.batches` replays the deals on a
:class:`~five_hundred_env.vector.BatchEngine` (byte for byte the AEC environment's observations
and masks) and yields :class:`DecisionBatch` es of (observation, mask, action, candidate values,
return). Reading needs pyarrow (the ``data`` extra); replaying needs numba (``vector``).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from five_hundred_env.actions import ActionTable
from five_hundred_env.files import OutputPathError, check_output, fsync_dir
from five_hundred_env.rules import Rules

if TYPE_CHECKING:  # the engine needs numba, imported when deals are played
    from five_hundred_env.vector import BatchEngine

DATASET_FORMAT = "five-hundred-dataset/1"
MANIFEST = "manifest.json"
PART_DEALS = 100_000
"""Deals per Parquet file (the last holds the rest)."""
ROW_GROUP_DEALS = 16_384
"""Deals per Parquet row group."""
COMPRESSION = "zstd"


class DatasetError(ValueError):
    """A dataset that cannot be read as one: a missing or malformed manifest, a file that is
    missing or whose checksum differs, records that do not replay. The message names the file
    or the deal."""


def _pyarrow() -> tuple[ModuleType, ModuleType]:
    """pyarrow and pyarrow.parquet, or an ImportError naming the extra."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise ImportError("datasets need pyarrow: pip install 'five-hundred-env[data]' (or pip install pyarrow)") from e
    return pa, pq


def card_columns(rules: Rules) -> int:
    """How many card ids a record's ``cards`` holds: every hand, then the kitty."""
    return rules.num_players * rules.hand_size + rules.kitty_size


@dataclass
class DealRecords:
    """Records of deals as flat arrays (what a Parquet file holds, and what generation makes).

    ``action_counts[i]`` actions of deal ``i`` follow each other in ``actions``; with search values,
    decision ``j`` (over all deals, in order) has ``candidate_counts[j]`` entries in ``candidates``
    and ``values`` (0 where the decision was not searched).
    """

    deal: np.ndarray  # [N] int64
    dealer: np.ndarray  # [N] uint8
    cards: np.ndarray  # [N, cards] uint8
    scores: np.ndarray  # [N, sides] int32
    score_change: np.ndarray  # [N, sides] int32
    action_counts: np.ndarray  # [N] int64
    actions: np.ndarray  # [D] uint8
    candidate_counts: np.ndarray | None = None  # [D] int64
    candidates: np.ndarray | None = None  # [V] uint8
    values: np.ndarray | None = None  # [V] float32

    def __len__(self) -> int:
        return len(self.deal)

    @property
    def has_values(self) -> bool:
        """Whether the records carry a search's candidate values."""
        return self.candidate_counts is not None

    @property
    def decisions(self) -> int:
        """The number of decisions (actions) of every deal."""
        return len(self.actions)

    def action_starts(self) -> np.ndarray:
        """Where each deal's actions start in :attr:`actions`."""
        return starts_of(self.action_counts)

    def zero_sum(self) -> np.ndarray:
        """``[N, sides]`` each side's result: its score change less the others' mean
        (``Deal.zero_sum_result``: the environment's ``zero_sum`` reward before scaling)."""
        change = self.score_change.astype(np.float64)
        k = change.shape[1]
        return (change - (change.sum(axis=1, keepdims=True) - change) / (k - 1)).astype(np.float32)

    def check(self, rules: Rules, where: str) -> None:
        """Raise :class:`DatasetError` (naming ``where``) unless the arrays fit together and the rules."""
        n = len(self)
        shapes = {"dealer": (n,), "cards": (n, card_columns(rules)), "scores": (n, rules.num_sides),
                  "score_change": (n, rules.num_sides), "action_counts": (n,)}
        for name, shape in shapes.items():
            if getattr(self, name).shape != shape:
                raise DatasetError(f"{where}: {name} has shape {getattr(self, name).shape}, expected {shape} "
                                   f"for {rules.preset}")
        if int(self.action_counts.sum()) != len(self.actions):
            raise DatasetError(f"{where}: the deals count {int(self.action_counts.sum())} actions, the file holds "
                               f"{len(self.actions)}")
        if self.has_values:
            assert self.candidate_counts is not None and self.candidates is not None and self.values is not None
            if len(self.candidate_counts) != len(self.actions) or int(self.candidate_counts.sum()) != len(self.values) \
                    or len(self.candidates) != len(self.values):
                raise DatasetError(f"{where}: the candidate values do not line up with the decisions")

    def take(self, rows: np.ndarray) -> DealRecords:
        """The records of deals ``rows`` (positions in these records), in that order."""
        starts, counts = self.action_starts(), self.action_counts
        picked = _ranges(starts[rows], counts[rows])
        parts: dict[str, Any] = {}
        if self.has_values:
            assert self.candidate_counts is not None
            value_starts = starts_of(self.candidate_counts)
            chosen = _ranges(value_starts[picked], self.candidate_counts[picked])
            parts = {"candidate_counts": self.candidate_counts[picked], "candidates": self.candidates[chosen],
                     "values": self.values[chosen]}
        return DealRecords(self.deal[rows], self.dealer[rows], self.cards[rows], self.scores[rows],
                           self.score_change[rows], counts[rows], self.actions[picked], **parts)

    @classmethod
    def concat(cls, parts: Sequence[DealRecords]) -> DealRecords:
        """The records of ``parts``, one after the other."""
        if not parts:
            raise ValueError("no records to join")
        with_values = parts[0].has_values
        if any(p.has_values != with_values for p in parts):
            raise ValueError("records with and without candidate values cannot be joined")
        names = ["deal", "dealer", "cards", "scores", "score_change", "action_counts", "actions"]
        if with_values:
            names += ["candidate_counts", "candidates", "values"]
        return cls(**{name: np.concatenate([getattr(p, name) for p in parts]) for name in names})

    # -- Arrow ----------------------------------------------------------------------------------------
    def to_table(self) -> Any:
        """The records as a ``pyarrow.Table`` of the module docstring's schema."""
        pa, _ = _pyarrow()

        def fixed(values: np.ndarray, kind: Any) -> Any:
            return pa.FixedSizeListArray.from_arrays(pa.array(values.ravel(), kind), values.shape[1])

        action_offsets = pa.array(np.concatenate([[0], np.cumsum(self.action_counts)]), pa.int64())
        columns = {
            "deal": pa.array(self.deal, pa.int64()),
            "dealer": pa.array(self.dealer, pa.uint8()),
            "cards": fixed(self.cards, pa.uint8()),
            "scores": fixed(self.scores, pa.int32()),
            "score_change": fixed(self.score_change, pa.int32()),
            "actions": pa.LargeListArray.from_arrays(action_offsets, pa.array(self.actions, pa.uint8())),
        }
        if self.has_values:
            assert self.candidate_counts is not None
            value_offsets = pa.array(np.concatenate([[0], np.cumsum(self.candidate_counts)]), pa.int64())
            for name, values, kind in (("candidates", self.candidates, pa.uint8()), ("values", self.values, pa.float32())):
                per_decision = pa.LargeListArray.from_arrays(value_offsets, pa.array(values, kind))
                columns[name] = pa.LargeListArray.from_arrays(action_offsets, per_decision)
        return pa.table(columns)

    @classmethod
    def from_table(cls, table: Any, where: str) -> DealRecords:
        """Records from a ``pyarrow.Table`` of the module docstring's schema (``where`` names it in errors)."""
        needed = ["deal", "dealer", "cards", "scores", "score_change", "actions"]
        missing = [name for name in needed if name not in table.column_names]
        if missing:
            raise DatasetError(f"{where}: no column {', '.join(missing)}: not a {DATASET_FORMAT} file")
        try:
            column = {name: table.column(name).combine_chunks() for name in table.column_names}

            def fixed(name: str, kind: type) -> np.ndarray:
                array = column[name]
                return array.flatten().to_numpy(zero_copy_only=False).astype(kind).reshape(len(array), -1)

            actions = column["actions"]
            parts: dict[str, Any] = {}
            if "values" in column:
                per_decision = column["values"].flatten()
                parts = {"candidate_counts": per_decision.value_lengths().to_numpy(zero_copy_only=False).astype(np.int64),
                         "candidates": column["candidates"].flatten().flatten().to_numpy(zero_copy_only=False)
                         .astype(np.uint8),
                         "values": per_decision.flatten().to_numpy(zero_copy_only=False).astype(np.float32)}
            return cls(column["deal"].to_numpy(zero_copy_only=False).astype(np.int64),
                       column["dealer"].to_numpy(zero_copy_only=False).astype(np.uint8),
                       fixed("cards", np.uint8), fixed("scores", np.int32), fixed("score_change", np.int32),
                       actions.value_lengths().to_numpy(zero_copy_only=False).astype(np.int64),
                       actions.flatten().to_numpy(zero_copy_only=False).astype(np.uint8), **parts)
        except (AttributeError, TypeError, ValueError) as e:  # a column of another type
            raise DatasetError(f"{where}: a column is not of the {DATASET_FORMAT} schema ({e})") from None


def starts_of(counts: np.ndarray) -> np.ndarray:
    """Where each of consecutive runs of ``counts`` items starts (``int64``)."""
    return (np.cumsum(counts) - counts).astype(np.int64)


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The indices ``starts[i] … starts[i] + counts[i] - 1`` of every ``i``, in order."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    firsts = np.repeat(starts - starts_of(counts), counts)
    return firsts + np.arange(total)


# -- writing ------------------------------------------------------------------------------------------
def write_dataset(out: str | os.PathLike[str], rules: Rules, agent: str, records: Iterable[DealRecords],
                  **about: Any) -> dict[str, Any]:
    """Write a dataset folder: ``records`` (in deal order) as Parquet files of :data:`PART_DEALS`
    deals, then ``manifest.json`` (the rules, the agent, the counts, the format, each file's
    sha256, and ``about``'s keys). Whole or not at all: the files are written into a temporary
    folder beside ``out``, which is renamed to ``out`` at the end; ``out`` must be missing (its
    folder existing) or an empty folder. Returns the manifest."""
    target = check_dataset_folder(out)
    work = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    work.mkdir()
    try:
        manifest = _write_parts(work, rules, agent, records, about)
        if target.is_dir():
            target.rmdir()  # empty (checked above): the rename puts the dataset in its place
        os.replace(work, target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)  # only what this call wrote
        raise
    fsync_dir(target.parent)
    return manifest


def check_dataset_folder(out: str | os.PathLike[str]) -> Path:
    """``out`` as a :class:`Path` once it is known that a dataset may be written there: a missing
    folder whose parent exists (or may be made: the one-missing-folder rule of
    :mod:`five_hundred_env.files`), or an empty folder; anything else is an :class:`OutputPathError`.
    Check it before the games are played, so that no work is lost to a bad path."""
    target = Path(out).expanduser()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        what = "is not a folder" if not target.is_dir() else "the folder is not empty"
        raise OutputPathError(f"--out {target}: {what}; give a new or empty folder")
    if not target.exists():
        check_output(target / MANIFEST, "--out")  # the folder above it exists, or is the one to make
    return target


def _write_parts(folder: Path, rules: Rules, agent: str, records: Iterable[DealRecords],
                 about: dict[str, Any]) -> dict[str, Any]:
    _, pq = _pyarrow()
    files: list[dict[str, Any]] = []
    digests: dict[str, str] = {}
    with_values: bool | None = None
    pending: list[DealRecords] = []

    def flush(batch: list[DealRecords]) -> None:
        joined = DealRecords.concat(batch)
        name = f"part-{len(files):05d}.parquet"
        path = folder / name
        pq.write_table(joined.to_table(), path, compression=COMPRESSION, row_group_size=ROW_GROUP_DEALS)
        with open(path, "rb+") as f:
            os.fsync(f.fileno())
        digests[name] = file_sha256(path)
        files.append({"name": name, "deals": len(joined), "decisions": joined.decisions})

    held = 0
    for part in records:
        part.check(rules, "the records to write")
        if with_values is None:
            with_values = part.has_values
        pending.append(part)
        held += len(part)
        while held >= PART_DEALS:
            joined = DealRecords.concat(pending)
            flush([joined.take(np.arange(PART_DEALS))])
            rest = joined.take(np.arange(PART_DEALS, len(joined)))
            pending, held = ([rest] if len(rest) else []), len(rest)
    if pending:
        flush(pending)
    if not files:
        raise ValueError("a dataset needs at least one deal")
    manifest = {"format": DATASET_FORMAT, "rules": rules.to_dict(), "agent": agent,
                "deals": sum(f["deals"] for f in files), "decisions": sum(f["decisions"] for f in files),
                "values": bool(with_values), "files": files, "sha256": digests, **about}
    text = json.dumps(manifest, indent=1) + "\n"
    with open(folder / MANIFEST, "wb") as f:
        f.write(text.encode())
        f.flush()
        os.fsync(f.fileno())
    fsync_dir(folder)
    return manifest


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# -- reading ------------------------------------------------------------------------------------------
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


class Dataset:
    """A dataset folder (see the module docstring), its manifest read and checked; with
    ``verify`` (the default) every data file's sha256 is checked against the manifest first.

    :meth:`batches` yields the decisions; :meth:`records` gives the raw records."""

    def __init__(self, path: str | os.PathLike[str], verify: bool = True) -> None:
        self.path = Path(path).expanduser()
        manifest_path = self.path / MANIFEST
        if not manifest_path.is_file():
            raise DatasetError(f"{self.path}: no {MANIFEST}: not a dataset folder (five-hundred dataset writes one)")
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise DatasetError(f"{manifest_path}: not valid JSON ({e})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != DATASET_FORMAT:
            found = manifest.get("format") if isinstance(manifest, dict) else None
            raise DatasetError(f"{manifest_path}: format {found!r}, expected {DATASET_FORMAT!r}")
        missing = [key for key in ("rules", "agent", "deals", "decisions", "values", "files", "sha256") if key not in manifest]
        if missing:
            raise DatasetError(f"{manifest_path}: no {', '.join(missing)}")
        self.manifest: dict[str, Any] = manifest
        try:
            self.rules = Rules.from_dict(manifest["rules"])
        except (TypeError, ValueError) as e:
            raise DatasetError(f"{manifest_path}: its rules are not valid ({e})") from None
        self.agent: str = manifest["agent"]
        self.deals: int = manifest["deals"]
        self.decisions: int = manifest["decisions"]
        self.has_values: bool = manifest["values"]
        entries, digests = manifest["files"], manifest["sha256"]
        if not isinstance(entries, list) or not isinstance(digests, dict) or not all(
                isinstance(e, dict) and isinstance(e.get("name"), str) and {"deals", "decisions"} <= set(e) for e in entries):
            raise DatasetError(f"{manifest_path}: 'files' must list {{name, deals, decisions}} and 'sha256' map names to digests")
        self.files = [self.path / entry["name"] for entry in entries]
        for entry, file in zip(entries, self.files, strict=True):
            if Path(entry["name"]).name != entry["name"] or entry["name"] not in digests:
                raise DatasetError(f"{manifest_path}: file {entry['name']!r} is no file of this folder with a sha256")
            if not file.is_file():
                raise DatasetError(f"{file}: missing (the manifest lists it)")
        if verify:
            self.verify()

    def verify(self) -> None:
        """Check every data file's sha256 against the manifest's: :class:`DatasetError` names the
        first file that differs (damaged, truncated or changed since it was written)."""
        for file in self.files:
            expected = self.manifest["sha256"][file.name]
            found = file_sha256(file)
            if found != expected:
                raise DatasetError(f"{file}: sha256 {found[:16]}… is not the manifest's {expected[:16]}…: "
                                   "the file is damaged or was changed since it was written")

    def records(self) -> DealRecords:
        """Every deal's record, in deal order."""
        _, pq = _pyarrow()
        parts = []
        for file, entry in zip(self.files, self.manifest["files"], strict=True):
            try:
                table = pq.read_table(file)
            except Exception as e:  # pyarrow raises its own types for a damaged file
                raise DatasetError(f"{file}: not a readable Parquet file ({type(e).__name__}: {e})") from None
            part = DealRecords.from_table(table, str(file))
            part.check(self.rules, str(file))
            if len(part) != entry["deals"] or part.decisions != entry["decisions"] or part.has_values != self.has_values:
                raise DatasetError(f"{file}: holds {len(part)} deals and {part.decisions} decisions, the manifest says "
                                   f"{entry['deals']} and {entry['decisions']}")
            parts.append(part)
        return DealRecords.concat(parts)

    def batches(self, batch_size: int = 1024, *, shuffle: bool = False, seed: int = 0,
                deals: np.ndarray | None = None, games: int = 1024) -> Iterator[DecisionBatch]:
        """The decisions of the dataset's deals (or of ``deals``, indices into it), ``batch_size``
        to a batch (the last may hold fewer), by replaying them on a batched engine of ``games``
        games (:func:`replay_batches`). ``shuffle`` draws the deals' order from ``seed``."""
        records = self.records()
        order = np.arange(len(records)) if deals is None else _check_deals(deals, len(records))
        if shuffle:
            order = np.random.default_rng(seed).permutation(order)
        return replay_batches(self.rules, records, batch_size, order=order, games=games)


def open_dataset(path: str | os.PathLike[str], verify: bool = True) -> Dataset:
    """The dataset in folder ``path`` (:class:`Dataset`)."""
    return Dataset(path, verify)


def _check_deals(deals: Any, count: int) -> np.ndarray:
    deals = np.asarray(deals)
    if deals.ndim != 1 or not np.issubdtype(deals.dtype, np.integer) or ((deals < 0) | (deals >= count)).any():
        raise ValueError(f"deals must be deal indices 0..{count - 1}")
    return deals.astype(np.int64)


# -- playing deals on the batched engine ----------------------------------------------------------------
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
                at = _ranges(firsts, counts)
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


def action_names(rules: Rules, actions: Iterable[int]) -> list[str]:
    """The notation (docs/rules.md §1) of compact action ids: to read a record's ``actions``."""
    table = ActionTable(rules)
    return [table.to_str(int(a)) for a in actions]


__all__ = [
    "DATASET_FORMAT",
    "MANIFEST",
    "Dataset",
    "DatasetError",
    "DealRecords",
    "DealSlots",
    "DecisionBatch",
    "FinishedDeals",
    "action_names",
    "card_columns",
    "check_dataset_folder",
    "file_sha256",
    "open_dataset",
    "replay_batches",
    "starts_of",
    "write_dataset",
]
