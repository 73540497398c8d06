"""A dataset folder's decisions as a torch ``IterableDataset`` (docs/datasets.md)::

    from torch.utils.data import DataLoader
    from training.rollouts.decision_dataset import DecisionDataset

    data = DecisionDataset("heuristic-deals", batch_size=1024, shuffle=True, seed=0)
    for epoch in range(3):
        data.set_epoch(epoch)                                 # another order of the deals
        for batch in DataLoader(data, batch_size=None, num_workers=2):
            logits = model(batch["obs"].float()).masked_fill(~batch["mask"], -1e9)
            loss = torch.nn.functional.cross_entropy(logits, batch["action"])

Each item is already a batch (hence ``batch_size=None``): a dict of tensors ``obs`` (int8),
``mask`` (bool), ``action`` (int64), ``returns`` (float32, points), ``seat``, ``deal``, ``turn``
(int64) and, for a dataset with a search's values, ``values`` (float32, NaN where no value) —
the fields of :class:`five_hundred_env.dataset.DecisionBatch`. Every ``DataLoader`` worker
replays its own share of the deals (every ``num_workers``-th of the epoch's order) on its own
batched engine.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np
import torch
from torch.utils.data import IterableDataset, get_worker_info

from five_hundred_env.dataset import open_dataset, replay_batches


class DecisionDataset(IterableDataset):
    """The decisions of the dataset in folder ``path``, ``batch_size`` to an item (see the module
    docstring). ``shuffle`` draws the deals' order from ``seed`` and the epoch (:meth:`set_epoch`);
    ``games`` is the batched engine's size; ``verify`` checks the files' sha256 first (once, here)."""

    def __init__(self, path: str | os.PathLike[str], batch_size: int = 1024, *, shuffle: bool = True, seed: int = 0,
                 games: int = 1024, verify: bool = True) -> None:
        super().__init__()
        dataset = open_dataset(path, verify)
        self.rules, self.agent, self.has_values = dataset.rules, dataset.agent, dataset.has_values
        self.records = dataset.records()
        self.batch_size, self.shuffle, self.seed, self.games = batch_size, shuffle, seed, games
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose order of the deals the next iteration replays (with ``shuffle``)."""
        self.epoch = epoch

    def __iter__(self) -> Iterator[dict[str, torch.Tensor]]:
        order = np.arange(len(self.records))
        if self.shuffle:
            order = np.random.default_rng([self.seed, self.epoch]).permutation(order)
        worker = get_worker_info()
        if worker is not None:
            order = order[worker.id::worker.num_workers]
        for batch in replay_batches(self.rules, self.records, self.batch_size, order=order, games=self.games):
            item = {name: torch.from_numpy(value) for name, value in batch._asdict().items() if value is not None}
            item["mask"] = item["mask"].bool()
            yield item


__all__ = ["DecisionDataset"]
