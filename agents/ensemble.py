"""Ensembles: several trained actors as one network whose logits are the mean of theirs.

A regression fit's logits are estimates of each action's advantage (docs/expert_iteration.md,
"Fit"); fits of the same kind of data differ by their noise, and the mean of a few of them is a
better estimate than any one (the deviations a threshold lets through are less often noise). The
mean of K multilayer perceptrons of the same depth is itself one: the first layers side by side
(each reads the whole input), the hidden layers block-diagonal (each member's units see only its
own), and the output layer the members' side by side, divided by K. So an ensemble is an ordinary
:class:`~agents.neural.ActorCritic` (no critic: it is for playing), written as an ordinary policy
file (:func:`agents.policy_files.write_policy`) that every command loads as it loads one
network; it plays decision for decision as the mean of its members' logits would.

:func:`ensemble_policy` is ``five-hundred export A.pt B.pt ... OUT.pt --threshold ...``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from agents.neural import NEVER, ActorCritic, advice_weights, model_from_checkpoint, read_checkpoint, set_advice_weights
from agents.policy_files import write_policy
from five_hundred_env.files import check_output
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules

_SAME = ("obs_size", "num_actions", "activation", "num_sides", "advice", "scores_at", "card_features")
"""What every member's spec must share: the input (with its card-order inputs or none), the actions,
the non-linearity and the advice."""


def ensemble_network(models: Sequence[ActorCritic], rules: Rules) -> ActorCritic:
    """One actor whose logits are the mean of ``models``' (same input, actions, activation,
    advice and depth; the widths may differ). With advice it has one advice weight per decision
    kind (the phases of ``rules``' observation), all at :data:`NEVER` until set."""
    if len(models) < 2:
        raise ValueError(f"an ensemble needs at least two networks, got {len(models)}")
    specs = [m.spec() for m in models]
    for i, spec in enumerate(specs[1:], 1):
        differ = [key for key in _SAME if spec.get(key) != specs[0].get(key)]
        if len(spec["hidden_sizes"]) != len(specs[0]["hidden_sizes"]):
            differ.append("the number of hidden layers")
        if differ:
            raise ValueError(f"network {i + 1} of the ensemble differs from the first in {', '.join(differ)}: "
                             "an ensemble's members must share their input, actions and depth")
    first = specs[0]
    widths = [sum(column) for column in zip(*(s["hidden_sizes"] for s in specs), strict=True)]
    advised = first["advice"] != "none"
    merged = ActorCritic(first["obs_size"], first["num_actions"], widths, first["activation"],
                         num_sides=first["num_sides"], advice=first["advice"], advice_weight=NEVER,
                         scores_at=first["scores_at"], card_features=first.get("card_features"),
                         phase_slice=ObservationEncoder(rules).phase_slice() if advised else None, policy_only=True)
    layers = [[layer for layer in m.actor if isinstance(layer, torch.nn.Linear)] for m in models]
    out = [layer for layer in merged.actor if isinstance(layer, torch.nn.Linear)]
    with torch.no_grad():
        for depth, target in enumerate(out):
            weights = [member[depth].weight for member in layers]
            biases = [member[depth].bias for member in layers]
            if depth == 0:  # every member reads the whole input: their units side by side
                target.weight.copy_(torch.cat(weights, 0))
                target.bias.copy_(torch.cat(biases))
            elif depth < len(out) - 1:  # each member's units read only its own
                target.weight.copy_(torch.block_diag(*weights))
                target.bias.copy_(torch.cat(biases))
            else:  # the logits: the mean of the members'
                target.weight.copy_(torch.cat(weights, 1) / len(models))
                target.bias.copy_(torch.stack(biases).mean(0))
    return merged


def ensemble_policy(sources: Sequence[str | Path], out: str | Path,
                    advice_weight: float | Mapping[str, float] | None = None, dtype: str = "float16",
                    note: str = "") -> dict[str, Any]:
    """Write ``out``, the policy file of the ensemble of ``sources`` (checkpoints or policy files
    of one preset). Members that take advice need ``advice_weight`` (one number, or one per
    decision kind: the kinds not named keep :data:`NEVER`, the advised action), as their own were
    chosen for each alone; members that take none (plain PPO networks) refuse one. The provenance
    names each member and its sha256. Returns the provenance."""
    paths = [Path(s) for s in sources]
    out = check_output(out, inputs=paths)
    data = [read_checkpoint(p) for p in paths]
    rules = Rules.from_dict(data[0]["rules"])
    for path, d in zip(paths[1:], data[1:], strict=True):
        other = Rules.from_dict(d["rules"])
        if other != rules:
            raise ValueError(f"{path} was trained for other rules than {paths[0]} ({other.preset} / {rules.preset}): "
                             "an ensemble plays one game")
    try:
        model = ensemble_network([model_from_checkpoint(d, p) for d, p in zip(data, paths, strict=True)], rules)
        if advice_weight is not None:
            set_advice_weights(model, advice_weight)
        elif model.advice != "none":
            raise ValueError("its networks take advice, and each one's threshold was chosen for it alone: give the "
                             "ensemble's own (export's --threshold POINTS or KIND=POINTS,...)")
    except ValueError as e:
        raise ValueError(f"ensemble of {', '.join(map(str, paths))}: {e}") from None
    members = [{"source": p.name, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()} for p in paths]
    origin = {"source": " + ".join(m["source"] for m in members),
              "sha256": hashlib.sha256("".join(m["sha256"] for m in members).encode()).hexdigest(),
              "members": members, "advice_weight": advice_weights(model) if model.advice != "none" else None}
    return write_policy(model, rules, out, dtype, note, origin)
