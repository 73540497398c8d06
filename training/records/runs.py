"""A training run's folder: what it holds, starting and resuming it, checkpoints, RNG states.

``<logging.dir>/<run_name>/`` holds ``config.yaml``, ``progress.csv``, ``tb/``, ``start.pt``, ``final.pt``,
``final_eval.json`` and, by default, ``checkpoints/`` (``checkpoint.dir`` may put those
elsewhere, even in a folder shared with other files). ``manifest.json`` lists every file the
run wrote, checkpoints included, *before* it writes them, so that

* a fresh run refuses a folder that holds any output of a run (unless ``overwrite``),
* ``overwrite`` deletes exactly the files the manifest lists — never a file the run did not
  write, such as ``precious_agent.pt`` in a shared checkpoint folder,
* a resume with another ``checkpoint.dir`` than the run's is caught, and
* the temporary files of writes a crash interrupted (``NAME.<run id>.tmp``) are the run's own
  and are cleaned up.

Checkpoints and final files are written to a temporary file, fsynced and moved into place with
``os.replace`` (created with the user's umask); a checkpoint with non-finite weights is never
written. :class:`TrainingState` is what a checkpoint holds and restores.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import random
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import torch

from agents.neural import ActorCritic, read_checkpoint
from agents.weights_files import CheckpointError, check_tensors_digest, save_checkpoint, torch_load_failure
from five_hundred_env.files import make_folder, write_atomic
from five_hundred_env.rules import Rules
from training.rollouts.selfplay import SnapshotPool
from training.settings.config import Config, ConfigError

MANIFEST_NAME = "manifest.json"
MANIFEST_FORMAT = "five-hundred-run/1"
RUN_OUTPUTS = ("progress.csv", "start.pt", "final.pt", "final_eval.json", "tb/events.out.tfevents.*")
"""Files a run writes in its folder (globs, relative to it)."""
CHECKPOINT_OUTPUTS = ("latest.pt", "step_*.pt")
"""Files a run writes in its checkpoint folder."""
TRAINING_KEYS = ("optimizer", "pool", "rng", "counters", "config")
"""What a checkpoint needs beyond the network to resume training (``final.pt`` lacks them)."""

OUTPUT, CACHE, CONFIG = "output", "cache", "config"
"""Roles of the manifest's files: outputs make a fresh run refuse the folder; the resolved
config is rewritten by every start; a cache (the rollouts' data) survives ``overwrite``."""


class RunFolderError(ValueError):
    """A run folder that cannot be started or resumed as asked (the message says why and what to do)."""


class TrainingFault(RuntimeError):
    """Training stopped on a fault; the last good checkpoint is kept."""


class DiskFullError(TrainingFault):
    """No space left while writing the run's logs or checkpoints."""


class NonFiniteError(TrainingFault):
    """The loss, the gradients or the weights became NaN or infinite."""


def run_dir_of(config: Config) -> Path:
    """The folder of the run a config describes."""
    return Path(config.logging.dir) / (config.logging.run_name or "run")


def checkpoint_dir_of(config: Config) -> Path:
    """Where the run's checkpoints go: ``checkpoint.dir``, by default ``<run dir>/checkpoints``."""
    return Path(config.checkpoint.dir) if config.checkpoint.dir else run_dir_of(config) / "checkpoints"


# -- writing files that survive crashes ----------------------------------------------------------

# -- the manifest --------------------------------------------------------------------------------

@dataclass
class Manifest:
    """``manifest.json``: the run's id (it names the run's temporary files), its checkpoint
    folder and every file it wrote (paths relative to the run folder) with its role."""

    path: Path
    run_id: str
    checkpoint_dir: str
    files: dict[str, str] = field(default_factory=dict)

    @property
    def run_dir(self) -> Path:
        return self.path.parent

    def key(self, path: Path) -> str:
        """How the manifest names ``path``: relative to the run folder."""
        return os.path.relpath(os.path.abspath(path), os.path.abspath(self.run_dir))

    def resolve(self, key: str) -> Path:
        return Path(os.path.normpath(self.run_dir / key))

    @classmethod
    def new(cls, run_dir: Path, checkpoint_dir: Path) -> Manifest:
        manifest = cls(run_dir / MANIFEST_NAME, uuid.uuid4().hex[:12], "")
        manifest.checkpoint_dir = manifest.key(checkpoint_dir)
        return manifest

    @classmethod
    def load(cls, run_dir: Path) -> Manifest | None:
        """The run folder's manifest; ``None`` if it has none; an error if it is not readable."""
        path = run_dir / MANIFEST_NAME
        if not path.exists():
            return None
        try:
            data = json.loads(path.read_text())
            if data.get("format") != MANIFEST_FORMAT:
                raise ValueError(f"format {data.get('format')!r}, expected {MANIFEST_FORMAT!r}")
            files = {str(k): str(v) for k, v in data["files"].items()}
            return cls(path, str(data["run_id"]), str(data["checkpoint_dir"]), files)
        except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError) as e:
            raise RunFolderError(f"{path} is not a readable run manifest ({type(e).__name__}: {e}); it lists "
                                 f"the files the run wrote: restore it, or delete the run folder to start "
                                 "again") from None

    def save(self) -> None:
        body = json.dumps({"format": MANIFEST_FORMAT, "run_id": self.run_id, "checkpoint_dir": self.checkpoint_dir,
                           "files": self.files}, indent=1, sort_keys=True).encode()
        write_atomic(self.path, lambda f: f.write(body), self.run_id)

    def add(self, path: Path, role: str = OUTPUT) -> None:
        """Record ``path`` (before it is written, so that a crash cannot leave an unlisted file)."""
        key = self.key(path)
        if self.files.get(key) != role:
            self.files[key] = role
            self.save()

    def remove(self, path: Path) -> None:
        """Delete a listed file and forget it."""
        path.unlink(missing_ok=True)
        if self.files.pop(self.key(path), None) is not None:
            self.save()

    def listed(self, *roles: str) -> list[Path]:
        return [self.resolve(k) for k, r in sorted(self.files.items()) if r in roles]

    def clean_temporaries(self, folders: list[Path]) -> list[Path]:
        """Delete this run's leftover ``*.<run id>.tmp`` files (writes a crash interrupted)."""
        stale = sorted({p for folder in folders for p in folder.glob(f"*.{self.run_id}.tmp")})
        for p in stale:
            p.unlink(missing_ok=True)
        return stale


# -- opening a run: fresh, overwritten or resumed ------------------------------------------------

@dataclass
class RunFolder:
    """An opened run: its folder, checkpoint folder and manifest, and the last good checkpoint."""

    run_dir: Path
    checkpoint_dir: Path
    manifest: Manifest
    last_checkpoint: str = "no checkpoint was written yet"

    @property
    def latest(self) -> Path:
        return self.checkpoint_dir / "latest.pt"

    def tmp_folders(self) -> list[Path]:
        return [self.run_dir, self.checkpoint_dir, self.run_dir / "tb"]


def _outputs_present(run_dir: Path, ckpt_dir: Path, manifest: Manifest | None) -> list[Path]:
    """Every run output in the folders: by name, and whatever the manifest lists as output."""
    found = {p for pattern in RUN_OUTPUTS for p in run_dir.glob(pattern)}
    found |= {p for pattern in CHECKPOINT_OUTPUTS for p in ckpt_dir.glob(pattern)}
    if manifest is not None:
        found |= {p for p in manifest.listed(OUTPUT) if p.exists()}
    return sorted(Path(os.path.normpath(p)) for p in found)


def _names(paths: list[Path], at_most: int = 3) -> str:
    shown = ", ".join(str(p) for p in paths[:at_most])
    return shown + (f" and {len(paths) - at_most} more" if len(paths) > at_most else "")


def open_run(config: Config, resume: bool, overwrite: bool, log: Callable[[str], None]) -> RunFolder:
    """Check the run folder against what is asked (a fresh run, ``overwrite`` or ``resume``),
    clean what an earlier session of this run left half-written, and return it opened."""
    run_dir, ckpt_dir = run_dir_of(config), checkpoint_dir_of(config)
    manifest = Manifest.load(run_dir)
    if resume:
        manifest = _check_resumable(run_dir, ckpt_dir, manifest)
    else:
        manifest = _start_fresh(run_dir, ckpt_dir, manifest, overwrite)
    run = RunFolder(run_dir, ckpt_dir, manifest)
    make_folder(run_dir.parent, "logging.dir")  # the one missing folder a command may create (five_hundred_env.files)
    make_folder(run_dir, "the run folder")
    manifest.save()
    for stale in manifest.clean_temporaries(run.tmp_folders()):
        log(f"removed {stale} (a write the last session did not finish)")
    return run


def _check_resumable(run_dir: Path, ckpt_dir: Path, manifest: Manifest | None) -> Manifest:
    if manifest is not None and manifest.resolve(manifest.checkpoint_dir) != Path(os.path.normpath(ckpt_dir)):
        raise RunFolderError(f"{run_dir} keeps its checkpoints in {manifest.resolve(manifest.checkpoint_dir)}, not "
                             f"{ckpt_dir}: resume it with checkpoint.dir={manifest.resolve(manifest.checkpoint_dir)}")
    latest = ckpt_dir / "latest.pt"
    if not latest.exists():
        raise FileNotFoundError(f"nothing to resume: {latest} does not exist")
    if manifest is None:  # a run from before manifests: it adopts the outputs it finds
        manifest = Manifest.new(run_dir, ckpt_dir)
        manifest.files = {manifest.key(p): OUTPUT for p in _outputs_present(run_dir, ckpt_dir, None)}
    return manifest


def _start_fresh(run_dir: Path, ckpt_dir: Path, old: Manifest | None, overwrite: bool) -> Manifest:
    present = _outputs_present(run_dir, ckpt_dir, old)
    if present and not overwrite:
        moved = ""
        if old is not None and old.resolve(old.checkpoint_dir) != Path(os.path.normpath(ckpt_dir)):
            moved = f" (with its checkpoints in {old.resolve(old.checkpoint_dir)}, not {ckpt_dir})"
        where = run_dir if any(run_dir in p.parents for p in present) else f"the checkpoint folder {ckpt_dir}"
        raise RunFolderError(f"{where} already holds a run{moved}: {_names(present)}; pass --resume to "
                             f"continue it, --overwrite to start again, or logging.run_name=NEW_NAME for a new run")
    manifest = Manifest.new(run_dir, ckpt_dir)
    if old is None:
        if present:
            raise RunFolderError(f"--overwrite deletes only files a run's manifest.json lists, and {run_dir} has no "
                                 f"manifest: delete {_names(present)} yourself, or choose another logging.run_name")
        return manifest
    foreign = [p for p in present if old.key(p) not in old.files]
    if foreign:
        raise RunFolderError(f"--overwrite deletes only files this run wrote, and {_names(foreign)} is not in "
                             f"{old.path}: move it away, or choose another logging.run_name or checkpoint.dir")
    for path in old.listed(OUTPUT, CONFIG):
        path.unlink(missing_ok=True)
    old.clean_temporaries([run_dir, ckpt_dir, run_dir / "tb", old.resolve(old.checkpoint_dir)])
    # The rollout cache is checked against the deals it was made for, so a new run may reuse it.
    manifest.files = {manifest.key(p): CACHE for p in old.listed(CACHE) if p.exists()}
    return manifest


# -- RNG states ----------------------------------------------------------------------------------

def rng_states(rng: np.random.Generator) -> dict[str, Any]:
    """Every generator training draws from: python's, numpy's (the trainer's and the global one), torch's."""
    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    return {"python": random.getstate(), "numpy": rng.bit_generator.state,
            "numpy_global": {"kind": kind, "keys": keys.tolist(), "pos": pos, "has_gauss": has_gauss, "gauss": gauss},
            "torch": torch.get_rng_state()}


def restore_rng_states(states: dict[str, Any], rng: np.random.Generator) -> None:
    """Put every generator back where :func:`rng_states` saw it."""
    random.setstate(_as_tuples(states["python"]))
    rng.bit_generator.state = states["numpy"]
    g = states["numpy_global"]
    np.random.set_state((g["kind"], np.array(g["keys"], dtype=np.uint32), g["pos"], g["has_gauss"], g["gauss"]))
    torch.set_rng_state(states["torch"])


def _as_tuples(x: Any) -> Any:
    return tuple(_as_tuples(v) for v in x) if isinstance(x, (list, tuple)) else x


@contextlib.contextmanager
def preserved_rng() -> Iterator[None]:
    """Evaluation must not move the training generators (a resumed run must match)."""
    py, npg, tg = random.getstate(), np.random.get_state(), torch.get_rng_state()
    try:
        yield
    finally:
        random.setstate(py)
        np.random.set_state(npg)
        torch.set_rng_state(tg)


# -- the training state and its checkpoints ------------------------------------------------------

@dataclass
class TrainingState:
    """Everything a checkpoint restores: the network, the optimiser, the snapshot pool, the
    trainer's generator (with the global ones) and the counters."""

    model: ActorCritic
    optimizer: torch.optim.Optimizer
    pool: SnapshotPool
    rng: np.random.Generator
    global_step: int = 0
    env_steps: int = 0
    deals: int = 0
    updates: int = 0
    time_before: float = 0.0
    """Training time of the run's earlier sessions."""
    warm_starts_done: list[str] = field(default_factory=list)

    def counters(self, time_s: float) -> dict[str, Any]:
        return {"global_step": self.global_step, "env_steps": self.env_steps, "deals": self.deals,
                "updates": self.updates, "time_s": time_s, "warm_starts_done": list(self.warm_starts_done)}

    def payload(self, rules: Rules, config: Config, time_s: float) -> dict[str, Any]:
        """The whole training state, as ``latest.pt`` and ``step_N.pt`` hold it."""
        return {"rules": rules.to_dict(), "model_spec": self.model.spec(), "model": self.model.state_dict(),
                "optimizer": self.optimizer.state_dict(), "pool": self.pool.states, "rng": rng_states(self.rng),
                "counters": self.counters(time_s), "config": config.to_dict()}

    def restore(self, data: dict[str, Any]) -> None:
        """Continue from a checkpoint read by :func:`read_training_checkpoint`."""
        self.model.load_state_dict(data["model"])
        self.optimizer.load_state_dict(data["optimizer"])
        for state in data["pool"]:
            self.pool.add(state)
        restore_rng_states(data["rng"], self.rng)
        c = data["counters"]
        self.global_step, self.env_steps, self.deals, self.updates = (
            c["global_step"], c["env_steps"], c["deals"], c["updates"])
        self.time_before = float(c.get("time_s", 0.0))
        # Checkpoints from before warm starts were tracked were written once they were all done.
        self.warm_starts_done = list(c.get("warm_starts_done", ["imitation", "rollouts", "warm_start_eval"]))


def read_resume_checkpoint(run: RunFolder, checkpoint_format: str, what: str, config: dict[str, Any],
                           sections: tuple[str, ...]) -> dict[str, Any]:
    """The run's ``latest.pt`` for ``--resume``: readable, of ``checkpoint_format`` with its optimiser
    (else "not ``what``"), its tensors matching their digest, and the config ``sections`` it was
    written under equal to ``config``'s (a :class:`ConfigError` naming the first that differs)."""
    try:
        data = torch.load(run.latest, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many types for a damaged file; an unsafe one, pages of text
        raise ConfigError(f"--resume: {run.latest} is not a readable checkpoint ({torch_load_failure(e)})") from None
    if not isinstance(data, dict) or data.get("format") != checkpoint_format or "optimizer" not in data:
        raise ConfigError(f"--resume: {run.latest} is not {what}")
    check_tensors_digest(data, run.latest)
    saved = data["config"]
    for section in sections:
        if saved.get(section) != config[section]:
            raise ConfigError(f"cannot resume {run.latest}: its {section} section differs from this config's "
                              f"({saved.get(section)} vs {config[section]})")
    return data


def non_finite_tensors(tensors: dict[str, torch.Tensor]) -> list[str]:
    """The names of the floating-point tensors holding a NaN or an infinity."""
    return [k for k, v in tensors.items() if v.is_floating_point() and not bool(torch.isfinite(v).all())]


def save_checkpoint_file(run: RunFolder, path: Path, payload: dict[str, Any]) -> None:
    """Write a checkpoint (listed in the manifest first); refuses non-finite weights."""
    bad = non_finite_tensors(payload["model"])
    if bad:
        raise NonFiniteError(f"not writing {path}: the weights {', '.join(bad[:3])} are not finite")
    run.manifest.add(path)
    save_checkpoint(path, payload, tag=run.manifest.run_id)


def stop_on_a_full_disk(error: OSError, run: RunFolder, step: int) -> NoReturn:
    """Raise the one-line :class:`DiskFullError` for a write that found no space (the disk or the
    user's quota full) at learner step ``step``, saying which checkpoint survives; any other
    ``OSError`` is raised again as it was. Called in the training loop's ``except OSError``."""
    if error.errno not in (errno.ENOSPC, errno.EDQUOT):
        raise error
    then = "--resume" if run.latest.exists() else "start again with --overwrite"
    raise DiskFullError(f"no space left on the device writing {error.filename or 'the run'} at step {step}: "
                        f"training stopped; {run.last_checkpoint}; free some space, then {then}") from None


def write_checkpoint(run: RunFolder, payload: dict[str, Any], keep: int, periodic: bool) -> None:
    """``latest.pt``, and with ``periodic`` a ``step_N.pt`` too (the last ``keep`` of them kept)."""
    step = payload["counters"]["global_step"]
    save_checkpoint_file(run, run.latest, payload)
    run.last_checkpoint = f"the last good checkpoint is {run.latest} (step {step})"
    if periodic:
        save_checkpoint_file(run, run.checkpoint_dir / f"step_{step:09d}.pt", payload)
        listed = set(run.manifest.listed(OUTPUT))
        ours = [p for p in sorted(run.checkpoint_dir.glob("step_*.pt")) if Path(os.path.normpath(p)) in listed]
        for old in ours[:-keep]:
            run.manifest.remove(old)


@dataclass
class Session:
    """This session of a run: the training state, its clocks and what it has done."""

    state: TrainingState
    start: float = field(default_factory=time.time)
    loop_start: float = field(default_factory=time.time)
    """When this session's PPO loop began (the warm starts are not training steps)."""
    steps: int = 0
    updates: int = 0

    def elapsed(self) -> float:
        """Training time of the run so far, earlier sessions included."""
        return self.state.time_before + time.time() - self.start

    def steps_per_s(self) -> float:
        """Learner steps per second of this session's PPO loop."""
        return self.steps / max(time.time() - self.loop_start, 1e-9)


def checkpoint(run: RunFolder, session: Session, rules: Rules, config: Config, periodic: bool = False) -> None:
    """The whole training state to ``latest.pt`` (and ``step_N.pt`` if ``periodic``)."""
    write_checkpoint(run, session.state.payload(rules, config, session.elapsed()), config.checkpoint.keep, periodic)


def read_training_checkpoint(run: RunFolder, rules: Rules) -> dict[str, Any]:
    """``latest.pt``, checked: a corrupt one names the newest intact ``step_N.pt`` to resume from
    instead; a checkpoint without the training state (``final.pt``) is refused."""
    try:
        data = read_checkpoint(run.latest, rules)
    except CheckpointError as e:
        raise CheckpointError(f"{e}; {_intact_step_hint(run, rules)}") from None
    missing = [k for k in TRAINING_KEYS if k not in data]
    if missing:
        raise CheckpointError(f"{run.latest} is not a training checkpoint (no {', '.join(missing)}: it holds a "
                              f"network alone, like final.pt); --resume needs the latest.pt a run writes; to "
                              f"start a new run from these weights, set pretrain.init_from={run.latest}")
    return data


def _intact_step_hint(run: RunFolder, rules: Rules) -> str:
    for path in sorted(run.checkpoint_dir.glob("step_*.pt"), reverse=True):
        try:
            data = read_checkpoint(path, rules)
        except (CheckpointError, FileNotFoundError):
            continue
        if all(k in data for k in TRAINING_KEYS):
            return (f"{path} (step {data['counters']['global_step']}) is intact: to resume from it, "
                    f"cp {path} {run.latest} and --resume again")
    return "no intact step_N.pt lies beside it: start again with --overwrite"
