"""The run's log: each row goes to ``progress.csv`` and to TensorBoard, through one :class:`RunLog`.

``progress.csv`` is only ever appended to. On resume, the rows a stopped session wrote after its
last checkpoint (and the final evaluation's) are dropped by writing a new file and moving it into
place (``os.replace``), never by rewriting the file in place; a last row torn by a crash is
dropped with a warning; a damaged row elsewhere is an error naming its line.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from five_hundred_env.files import write_atomic
from training.records.runs import RunFolder, RunFolderError
from training.settings.config import LoggingConfig

CSV_COLUMNS = (
    "kind", "global_step", "update", "env_steps", "deals", "time_s", "steps_per_s", "learning_rate",
    "policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "explained_variance", "batch_size",
    "return_vs_snapshot", "return_vs_heuristic", "return_vs_random", "return_learner",
    "bid_won_rate", "contract_made_rate", "suit_share", "nt_share", "misere_share", "thrown_in_rate",
    "contract_value", "imitation_agreement", "imitation_bid_agreement",
    "rollout_gain", "rollout_gain_se", "rollout_deviation",
    "eval_random_mean", "eval_random_lo", "eval_random_hi",
    "eval_heuristic_mean", "eval_heuristic_lo", "eval_heuristic_hi",
    "eval_start_mean", "eval_start_lo", "eval_start_hi",
    "eval_random_bid", "eval_random_made", "eval_heuristic_bid", "eval_heuristic_made", "cpu_s",
)
"""The columns of ``progress.csv``: an ``imitation`` row per epoch of the optional warm start,
a ``rollouts`` row per epoch of the optional rollout improvement over the heuristic (gains in
points per scored decision, held out), an ``eval`` row (the warm-started policy evaluated), one ``update``
row per PPO update (the ``eval_*`` columns filled when an evaluation ran), then a ``final_eval``
row per opponent."""


class RunLog:
    """Writes each row of the run to ``progress.csv`` (``logging.csv``) and TensorBoard
    (``logging.tensorboard``); ``resume_step`` continues a stopped run's log, without the rows
    past that step and those of ``drop_kinds`` (what the resumed session writes again)."""

    def __init__(self, run: RunFolder, cfg: LoggingConfig, resume_step: int | None,
                 log: Callable[[str], None] = print, drop_kinds: frozenset[str] = frozenset({"final_eval"})) -> None:
        self.run = run
        self.csv_path = run.run_dir / "progress.csv"
        self._csv: io.TextIOWrapper | None = None
        self._tb: Any = None
        if cfg.csv:
            run.manifest.add(self.csv_path)
            if resume_step is not None and self.csv_path.exists():
                _keep_rows_up_to(self.csv_path, resume_step, drop_kinds, run.manifest.run_id, log)
            else:
                header = _csv_line(list(CSV_COLUMNS)).encode()
                write_atomic(self.csv_path, lambda f: f.write(header), run.manifest.run_id)
            self._csv = self.csv_path.open("a", newline="")
        if cfg.tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            tb = run.run_dir / "tb"
            # purge_step drops events a stopped run wrote after its last checkpoint.
            self._tb = SummaryWriter(str(tb), purge_step=resume_step)
            for events in tb.glob("events.out.tfevents.*"):
                run.manifest.add(events)

    def write(self, row: dict[str, Any], tb_step: int | None = None) -> None:
        """One row: to the CSV (unknown keys are not columns and go to TensorBoard only) and
        every finite number but the kind to TensorBoard at ``tb_step`` (default: the row's global step)."""
        if self._csv is not None:
            try:
                self._csv.write(_csv_line([_fmt(row.get(k)) for k in CSV_COLUMNS]))
                self._csv.flush()
                os.fsync(self._csv.fileno())  # a checkpoint never claims rows the disk does not hold
            except OSError as e:
                raise OSError(e.errno, e.strerror, str(self.csv_path)) from None
        if self._tb is not None:
            step = int(row["global_step"]) if tb_step is None else tb_step
            for key, value in row.items():
                if key != "kind" and isinstance(value, (int, float)) and math.isfinite(value):
                    self._tb.add_scalar(_tb_tag(row["kind"], key), value, step)

    def close(self) -> None:
        if self._csv is not None:
            self._csv.close()
            self._csv = None
        if self._tb is not None:
            self._tb.close()
            self._tb = None


def _csv_line(values: list[Any]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(values)
    return out.getvalue()


def _fmt(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return v


def _tb_tag(kind: str, key: str) -> str:
    if kind not in ("update", "eval"):
        return f"{kind}/{key}"
    if key.startswith("eval_"):
        return "eval/" + key[5:]
    if key.startswith(("return_", "bid_", "contract_", "suit_", "nt_", "misere_", "thrown_")):
        return "play/" + key
    if key in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "explained_variance"):
        return "losses/" + key
    return "charts/" + key


def read_rows(path: Path, log: Callable[[str], None]) -> tuple[list[str], list[dict[str, str]], bool]:
    """The header and rows of a ``progress.csv``, and whether its last line was torn (a crash
    mid-write): that line is dropped with a warning through ``log``; any other damaged line is
    an error naming it."""
    try:
        with path.open(newline="") as f:
            text = f.read()
    except UnicodeDecodeError as e:
        raise RunFolderError(f"{path} is not a progress.csv (not text: {e.reason} at byte {e.start})") from None
    if not text:  # created, then the crash came before its header
        return list(CSV_COLUMNS), [], True
    lines = text.split("\n")
    torn = lines.pop()  # what follows the last newline: '' unless the last write was cut short
    header = next(csv.reader([lines[0]]), []) if lines else []
    if not {"kind", "global_step"} <= set(header):
        raise RunFolderError(f"{path} is not a progress.csv (its first line is not a header with kind and "
                             f"global_step): move it away to resume without it")
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        values = next(csv.reader([line]), [])
        row = dict(zip(header, values, strict=False))
        if len(values) != len(header) or not row["global_step"].isdigit():
            if number == len(lines) and not torn:  # the last line, cut short by the file system
                torn = line
                break
            raise RunFolderError(f"{path}, line {number}: not a row of {len(header)} columns with a step "
                                 f"({line[:40]!r}); repair or remove that line to resume")
        rows.append(row)
    if torn:
        log(f"warning: {path}: dropped a torn last row ({torn[:40]!r}...), the crash cut it short")
    return header, rows, bool(torn)


def _keep_rows_up_to(path: Path, step: int, drop_kinds: frozenset[str], tag: str, log: Callable[[str], None]) -> None:
    """Drop the rows past ``step`` and those of ``drop_kinds``: if any, by writing a new file and
    moving it into place (the old one stays whole until then)."""
    header, rows, torn = read_rows(path, log)
    keep = [r for r in rows if r["kind"] not in drop_kinds and int(r["global_step"]) <= step]
    if header == list(CSV_COLUMNS) and len(keep) == len(rows) and not torn:
        return  # nothing to drop: the log is appended to as it is
    body = _csv_line(list(CSV_COLUMNS)) + "".join(_csv_line([r.get(k, "") for k in CSV_COLUMNS]) for r in keep)
    write_atomic(path, lambda f: f.write(body.encode()), tag)
