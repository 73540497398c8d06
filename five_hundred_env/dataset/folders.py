"""Dataset folders: the Parquet files and the manifest written whole or not at all, and read
back with every file's checksum checked."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from five_hundred_env.dataset.deal_records import DATASET_FORMAT, DatasetError, DealRecords, pyarrow_modules
from five_hundred_env.dataset.replay import DecisionBatch, replay_batches
from five_hundred_env.files import OutputPathError, fsync_dir
from five_hundred_env.rules import Rules

MANIFEST = "manifest.json"
PART_DEALS = 100_000
"""Deals per Parquet file (the last holds the rest)."""
ROW_GROUP_DEALS = 16_384
"""Deals per Parquet row group."""
COMPRESSION = "zstd"
NAME_BYTES = 255
"""The longest file name most file systems hold (ext4, xfs, btrfs, APFS, NTFS in characters)."""


def write_dataset(out: str | os.PathLike[str], rules: Rules, agent: str, records: Iterable[DealRecords],
                  **about: Any) -> dict[str, Any]:
    """Write a dataset folder: ``records`` (in deal order) as Parquet files of :data:`PART_DEALS`
    deals, then ``manifest.json`` (the rules, the agent, the counts, the format, each file's
    sha256, and ``about``'s keys). Whole or not at all: the files are written into a temporary
    folder beside ``out``, which is renamed to ``out`` at the end; ``out`` must be missing (its
    folder existing) or an empty folder. Returns the manifest."""
    target = check_dataset_folder(out)
    work = target.with_name(f".{target.name[:NAME_BYTES // 2]}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
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
    folder in a writable folder that exists, or an empty folder; anything else is an
    :class:`OutputPathError`.
    Check it before the games are played, so that no work is lost to a bad path."""
    target = Path(out).expanduser()
    if len(os.fsencode(target.name)) > NAME_BYTES:
        raise OutputPathError(f"--out {target}: the folder's name is {len(os.fsencode(target.name))} bytes long; "
                              f"a file name holds at most {NAME_BYTES}")
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        what = "is not a folder" if not target.is_dir() else "the folder is not empty"
        raise OutputPathError(f"--out {target}: {what}; give a new or empty folder")
    if not target.parent.is_dir():
        raise OutputPathError(f"--out {target}: the folder {target.parent} does not exist (only the dataset's own "
                              "folder is made)")
    if not os.access(target.parent, os.W_OK):
        raise OutputPathError(f"--out {target}: the folder {target.parent} is not writable")
    return target


def _write_parts(folder: Path, rules: Rules, agent: str, records: Iterable[DealRecords],
                 about: dict[str, Any]) -> dict[str, Any]:
    _, pq = pyarrow_modules()
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
        _, pq = pyarrow_modules()
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
