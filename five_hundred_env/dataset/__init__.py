"""Datasets of played deals: compact columnar records, a manifest with checksums, and a loader
that replays them on the batched engine (docs/datasets.md).

A dataset is a folder: ``manifest.json`` and Parquet files of one row per deal::

    deal          int64                 the deal's index in the dataset (0 … deals-1)
    dealer        uint8                 the dealer's seat
    cards         fixed_size_list<uint8> the universal card ids of the hands, seat by seat
                                        (hand_size each, ascending), then the kitty
    scores        fixed_size_list<int32> each side's game score when the deal starts
    score_change  fixed_size_list<int32> each side's score change in the deal (its result)
    actions       large_list<uint8>     the compact action ids (the rules' ActionTable), in order
    candidates    large_list<large_list<uint8>>  search agents only: per decision, the candidates searched
    values        large_list<large_list<float32>>  … and each one's value, points for the acting seat's side

The observations are not stored: :meth:`Dataset.batches` replays the deals on a
:class:`~five_hundred_env.vector.BatchEngine` (byte for byte the AEC environment's observations
and masks) and yields :class:`DecisionBatch` es of (observation, mask, action, candidate values,
return). Reading needs pyarrow (the ``data`` extra); replaying needs numba (``vector``).

Modules: :mod:`.deal_records` (the records as arrays and Arrow tables), :mod:`.replay` (deals
played through a batched engine's games, the loader), :mod:`.folders` (writing and reading a
dataset folder, its manifest and checksums).
"""

from __future__ import annotations

from five_hundred_env.dataset.deal_records import (
    DATASET_FORMAT,
    DatasetError,
    DealRecords,
    action_names,
    card_columns,
    ranges_of,
    starts_of,
)
from five_hundred_env.dataset.folders import (
    MANIFEST,
    Dataset,
    check_dataset_folder,
    file_sha256,
    open_dataset,
    write_dataset,
)
from five_hundred_env.dataset.replay import DealSlots, DecisionBatch, FinishedDeals, replay_batches

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
    "ranges_of",
    "replay_batches",
    "starts_of",
    "write_dataset",
]
