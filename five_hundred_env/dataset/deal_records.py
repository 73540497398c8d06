"""Deal records as flat arrays and as Arrow tables: what a dataset's Parquet files hold (the
schema: the package docstring)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from five_hundred_env.actions import ActionTable
from five_hundred_env.rules import Rules

DATASET_FORMAT = "five-hundred-dataset/1"


class DatasetError(ValueError):
    """A dataset that cannot be read as one: a missing or malformed manifest, a file that is
    missing or whose checksum differs, records that do not replay. The message names the file
    or the deal."""


def pyarrow_modules() -> tuple[ModuleType, ModuleType]:
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
        picked = ranges_of(starts[rows], counts[rows])
        parts: dict[str, Any] = {}
        if self.has_values:
            assert self.candidate_counts is not None
            value_starts = starts_of(self.candidate_counts)
            chosen = ranges_of(value_starts[picked], self.candidate_counts[picked])
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
        pa, _ = pyarrow_modules()

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


def ranges_of(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The indices ``starts[i] … starts[i] + counts[i] - 1`` of every ``i``, in order."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    firsts = np.repeat(starts - starts_of(counts), counts)
    return firsts + np.arange(total)


def action_names(rules: Rules, actions: Iterable[int]) -> list[str]:
    """The notation (docs/rules.md §1) of compact action ids: to read a record's ``actions``."""
    table = ActionTable(rules)
    return [table.to_str(int(a)) for a in actions]
