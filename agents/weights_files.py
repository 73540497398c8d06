"""Checkpoint and policy files on disk, whatever network they hold: their format tags, the sha256 of
their tensors (recorded on writing, checked on reading), their state dicts (names to finite
tensors), writing them whole or not at all, one line for why torch could not read one, and the
rules a file's network was trained for.

:mod:`agents.neural` reads and writes its checkpoints and policy files with these; :mod:`agents.dmc`
and DMC's trainer (``training.algorithms.dmc``) theirs.
"""

from __future__ import annotations

import hashlib
import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from five_hundred_env.files import write_atomic
from five_hundred_env.rules import Rules

CHECKPOINT_FORMAT = "five-hundred-ppo/1"
"""The ``format`` entry of every checkpoint; bump it when the layout changes."""

POLICY_FORMAT = "five-hundred-policy/1"
"""The ``format`` entry of a *policy file* (:func:`agents.policy_files.export_policy`): the actor only, for playing."""

DISTILL_FORMAT = "five-hundred-distill/1"
"""The ``format`` of a search distillation run's ``latest.pt`` (``training.algorithms.distill``): a
policy network (no critic) with its optimiser, read for play like a policy file."""


class CheckpointError(ValueError):
    """A checkpoint that cannot be used: corrupt, not ours, made for another preset, malformed
    (wrong types, an impossible network) or holding non-finite weights."""


TENSORS_DIGEST = "tensors_sha256"
"""The entry of a checkpoint or policy file that holds :func:`tensors_digest` of its contents, as
written; files written before it was recorded lack it (and are read unchecked)."""


def tensors_digest(data: Any) -> str:
    """The sha256 of every tensor in ``data`` (nested dicts, lists and tuples): each one's place,
    dtype, shape and bytes, in a fixed order (dict keys sorted), whatever the order of the dicts or
    the layout of torch's file. A flipped byte in any weight, optimiser moment or generator state
    changes it; hashing is about as fast as reading the file."""
    digest = hashlib.sha256()

    def add(value: Any, place: str) -> None:
        if isinstance(value, torch.Tensor):
            tensor = value.detach().cpu().contiguous()
            digest.update(f"{place}:{tensor.dtype}:{tuple(tensor.shape)};".encode())
            digest.update(tensor.reshape(-1).view(torch.uint8).numpy())
        elif isinstance(value, Mapping):
            for key in sorted(value, key=str):
                add(value[key], f"{place}/{key}")
        elif isinstance(value, list | tuple):
            for index, item in enumerate(value):
                add(item, f"{place}/{index}")

    add(data, "")
    return digest.hexdigest()


def check_tensors_digest(data: Mapping[str, Any], path: str | Path) -> None:
    """Refuse (:class:`CheckpointError`, one line naming ``path``) a loaded file whose tensors no
    longer hash to the :data:`TENSORS_DIGEST` recorded when it was written; a file without one
    (written before digests were recorded) passes."""
    recorded = data.get(TENSORS_DIGEST)
    if recorded is not None and recorded != tensors_digest(data):
        raise CheckpointError(f"{path}: its tensors do not match the sha256 recorded when it was written (the file "
                              "was damaged or edited since): restore it from a copy, or write it again")


def check_weights(state: Any, where: str) -> None:
    """Refuse a state dict that is not names to tensors, or holds a NaN or an infinity."""
    if not isinstance(state, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()):
        raise CheckpointError(f"{where} is not a state dict (names to tensors)")
    bad = [name for name, tensor in state.items() if tensor.is_floating_point() and not torch.isfinite(tensor).all()]
    if bad:
        raise CheckpointError(f"{where} holds non-finite weights (NaN or inf) in {', '.join(bad)}: "
                              "the training that wrote it diverged")


def write_weights_file(path: str | Path, data: dict[str, Any], tag: str | None = None) -> None:
    """Write a checkpoint or policy file (``data``, with its ``format``) whole or not at all
    (:func:`five_hundred_env.files.write_atomic`; ``tag`` names its temporary file), its
    :data:`TENSORS_DIGEST` recorded, so that a crash mid-write never leaves a truncated file behind
    and a byte changed later is caught on reading (:func:`check_tensors_digest`)."""
    stamped = {**data, TENSORS_DIGEST: tensors_digest(data)}
    write_atomic(path, lambda f: torch.save(stamped, f), tag)


def save_checkpoint(path: str | Path, payload: dict[str, Any], tag: str | None = None) -> None:
    """Write a checkpoint (``payload``; its ``format`` by default :data:`CHECKPOINT_FORMAT`) with
    :func:`write_weights_file`."""
    write_weights_file(path, {"format": CHECKPOINT_FORMAT, **payload}, tag)


def torch_load_failure(error: Exception) -> str:
    """One line for why ``torch.load(..., weights_only=True)`` failed: torch's weights-only refusal is
    a long text with terminal colours and advice to allowlist code; its own diagnosis is the line
    that names the culprit."""
    lines = re.sub(r"\x1b\[[0-9;]*m", "", str(error)).splitlines()
    why = next((ln.strip() for ln in lines if "WeightsUnpickler error" in ln), lines[0].strip() if lines else "")
    return f"{type(error).__name__}: {why.split(' Please use ')[0]}"  # not torch's advice to allowlist the culprit


def check_rules(path: Path, trained: Rules, wanted: Rules) -> None:
    """Refuse another preset; warn, naming them, about rule options other than the trained ones."""
    if trained.preset != wanted.preset:
        raise CheckpointError(f"{path} was trained for the {trained.preset!r} preset and cannot play {wanted.preset!r} "
                              "(the observation and action spaces differ)")
    differ = [f"{key}={value!r} (trained {getattr(trained, key)!r})" for key, value in wanted.to_dict().items()
              if value != getattr(trained, key)]
    if differ:
        warnings.warn(f"{path} was trained with other rule options than these: {', '.join(differ)}; "
                      "it will play, but was not trained for them", stacklevel=3)


def init_provenance(config: Any) -> dict[str, Any] | None:
    """What a run's ``network.init`` file was, from the run's config (a dict): its path and sha256,
    and a policy file's own ``provenance`` (recipe, budget, and its own ``init`` in turn);
    ``missing`` where it is gone. ``None`` for a run from a random start."""
    network = config.get("network") if isinstance(config, Mapping) else None
    init = network.get("init") if isinstance(network, Mapping) else None
    if not init:
        return None
    path = Path(init)
    if not path.is_file():
        return {"file": str(path), "missing": True}
    record: dict[str, Any] = {"file": str(path), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception:  # recorded by its hash alone
        return record
    if isinstance(data, dict) and isinstance(data.get("provenance"), dict):
        record["provenance"] = data["provenance"]
    return record
