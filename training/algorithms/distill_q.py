"""The Q-network form of a search distillation (``network.form: q``, docs/scratch.md): a Deep
Monte-Carlo network's Q-values refitted to the search's values of every candidate.

DMC (:mod:`training.algorithms.dmc`) fits Q(o, a) to one sampled return of the action taken; a
search over that same network (``pimc:base=NET,rollout=NET``) values every candidate of a decision
by many playouts of it, a better estimate of the same quantity. A round of search over the
network fits, at each searched decision, the network's Q-values less their mean over the searched
candidates to the search's values less theirs, in the network's own units (``fit.value_scale``
points each: its DMC run's ``env.reward_scale``), squared error averaged over the candidates.
Centred, because a DMC network trained with a central baseline holds Q less a value of the hidden
state, which the search's values do not carry: the differences between candidates decide its
play, and only they are fitted. The network stays a DMC network in its units, so a DMC run can go
on from the result (``network.init``).

``final.pt`` is a DMC checkpoint (``five-hundred export`` writes its policy file, every command
plays it through :class:`agents.dmc.DMCAgent`); its ``config`` is the distillation's, so the
export's provenance names this recipe and, under ``init``, the network it started from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from agents.dmc import DMC_FORMAT, QNetwork, read_dmc_checkpoint
from five_hundred_env.rules import Rules
from training.records.runs import RunFolder, save_checkpoint_file
from training.settings.distill_config import DistillConfig


def build_q_network(config: DistillConfig, rules: Rules) -> QNetwork:
    """The DMC network of ``network.init`` (its sizes are the file's), for these rules."""
    path = config.network.init
    assert path, "network.form q needs network.init (the config's validation says so)"
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many types for a damaged file
        raise ValueError(f"network.init {path} is not a readable DMC network ({type(e).__name__})") from None
    if not isinstance(data, dict) or data.get("format") != DMC_FORMAT:
        raise ValueError(f"network.init {path}: network.form q needs a DMC network (a DMC run's checkpoint or "
                         "its exported policy file)")
    model, _ = read_dmc_checkpoint(data, path, rules)
    return model.float()


def q_loss(model: QNetwork, batch: dict[str, torch.Tensor], weight: torch.Tensor,
           value_scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The weighted mean over the rows of the centred squared error (the module docstring) and each
    row's greedy action. Rows with fewer than two searched candidates weigh nothing."""
    q = model.legal_q(batch["obs"], batch["mask"])
    values = batch.get("values")
    if values is None:
        raise ValueError("network.form q fits the search's values: every search dataset must hold them")
    searched = ~torch.isnan(values) & batch["mask"]
    count = searched.sum(1)
    weight = weight * (count > 1).float()
    n = count.clamp_min(1)[:, None]
    target = torch.nan_to_num(values / value_scale).masked_fill(~searched, 0)
    fitted = q.masked_fill(~searched, 0)
    error = (fitted - fitted.sum(1, keepdim=True) / n) - (target - target.sum(1, keepdim=True) / n)
    per_row = (error.square() * searched).sum(1) / n[:, 0]
    return (per_row * weight).sum() / weight.sum().clamp_min(1), q.argmax(1)


def write_q_network(model: QNetwork, rules: Rules, config: DistillConfig, run: RunFolder, out: Path,
                    budget: dict[str, Any]) -> None:
    """``out``: a DMC checkpoint of the network to play, with the run's config and ``budget``
    (``decisions`` fitted, ``time_s``, ``data_cpu_s``) as its counters (``global_step``: the decisions)."""
    save_checkpoint_file(run, out, {"format": DMC_FORMAT, "kind": "dmc", "rules": rules.to_dict(),
                                    "model_spec": model.spec(), "model": model.state_dict(), "config": config.to_dict(),
                                    "counters": {"global_step": budget["decisions"], **budget}})


__all__ = ["build_q_network", "q_loss", "write_q_network"]
