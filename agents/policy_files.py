"""Policy files: the actor of a checkpoint alone, to ship and play (what ``agents/pretrained/`` holds).

:func:`export_policy` writes one from a checkpoint (``five-hundred export``), :func:`write_policy`
from a network in memory (the score tuning); :func:`agents.neural.read_checkpoint` and
:func:`agents.neural.load_agent` read them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch

from agents.neural import ActorCritic, advice_weights, model_from_checkpoint, read_checkpoint, set_advice_weights
from agents.weights_files import POLICY_FORMAT, init_provenance, write_weights_file
from five_hundred_env.files import check_output
from five_hundred_env.rules import Rules

POLICY_DTYPES = {"float16": torch.float16, "float32": torch.float32}
"""The precisions a policy file's weights may be stored in (they are always played in float32)."""


def export_policy(source: str | Path, out: str | Path, dtype: str = "float16", note: str = "",
                  advice_weight: float | Mapping[str, float] | None = None) -> dict[str, Any]:
    """Write ``out``, the *policy file* of a checkpoint (or of another policy file): its rules,
    its ``model_spec`` and the actor's weights only (the critic, never used to play, is left
    out), the parameters stored as ``dtype`` (:data:`POLICY_DTYPES`), and a ``provenance``
    dict (the source's file name and sha256, the export time, ``note``, and ``flushed_to_zero``:
    how many non-zero weights are too small for ``dtype`` and were stored as 0; for a policy file
    exported again, ``from``: the provenance it had, its recipe and budget; for a run started from
    another network (``network.init``), ``init``: :func:`~agents.weights_files.init_provenance`). ``advice_weight``
    replaces the network's own (a regression fit's threshold, in its units of 100 points: the
    greedy network leaves the advised action only where an estimated advantage beats it by more;
    one per decision kind for a network with a phase slice, :func:`~agents.neural.set_advice_weights`),
    kept in the provenance as ``advice_weight`` (``None`` there: the network's own). Written whole or
    not at all, never over ``source`` (:func:`five_hundred_env.files.check_output`);
    :func:`read_checkpoint` and :func:`load_agent` read it. A weight too large for ``dtype`` is a
    ``ValueError`` naming the largest (it would be stored as infinity). Returns the provenance."""
    source = Path(source)
    out = check_output(out, inputs=[source])
    data = read_checkpoint(source)
    model = model_from_checkpoint(data, source)
    origin: dict[str, Any] = {"source": source.name, "sha256": hashlib.sha256(source.read_bytes()).hexdigest()}
    if data.get("provenance"):  # a policy file exported again keeps its recipe (config, budget) under "from"
        origin["from"] = data["provenance"]
    # a checkpoint holds its run's config, a policy file written by a run (distill's final.pt) in its provenance
    if (init := init_provenance(data.get("config") or (data.get("provenance") or {}).get("config"))) is not None:
        origin["init"] = init  # where the network the run started from came from
    if advice_weight is not None:
        try:
            set_advice_weights(model, advice_weight)
        except ValueError as e:
            raise ValueError(f"{source}: {e}") from None
        origin["advice_weight"] = advice_weights(model)
    return write_policy(model, Rules.from_dict(data["rules"]), out, dtype, note, origin)


def write_policy(model: ActorCritic, rules: Rules, out: str | Path, dtype: str = "float16", note: str = "",
                 origin: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write ``out``, the policy file of ``model`` (the format of :func:`export_policy`): ``origin``
    (``source`` and ``sha256`` of what it was made from; empty for a network made in memory) goes
    into its provenance. A weight too large for ``dtype`` is a ``ValueError`` naming the largest.
    Returns the provenance."""
    if dtype not in POLICY_DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(POLICY_DTYPES)}, got {dtype!r}")
    parameters = dict(model.named_parameters())
    # Buffers (the input scale) stay float32: they are fixed by the spec, not learned, and small.
    weights = {name: tensor.detach().to(POLICY_DTYPES[dtype]) if name in parameters else tensor
               for name, tensor in model.state_dict().items() if not name.startswith("critic.")}
    stored = {name: weights[name] for name in parameters if name in weights}
    largest_name = max(stored, key=lambda name: float(parameters[name].detach().abs().max()))
    largest = float(parameters[largest_name].detach().abs().max())
    if largest > torch.finfo(POLICY_DTYPES[dtype]).max:
        what = (origin or {}).get("source") or "the network"
        raise ValueError(f"{what}: the largest weight, {largest:.6g} (in {largest_name}), does not fit {dtype} "
                         f"(at most {torch.finfo(POLICY_DTYPES[dtype]).max:.6g}): export with --dtype float32")
    flushed = sum(int(((parameters[name].detach() != 0) & (tensor == 0)).sum()) for name, tensor in stored.items())
    provenance = {"source": "", "sha256": "", "advice_weight": None, **(origin or {}),
                  "exported": datetime.now(timezone.utc).isoformat(timespec="seconds"), "dtype": dtype, "note": str(note),
                  "flushed_to_zero": flushed}
    payload = {"format": POLICY_FORMAT, "rules": rules.to_dict(), "model_spec": model.spec(), "model": weights,
               "provenance": provenance}
    write_weights_file(out, payload)
    return provenance
