"""The fit of one expert-iteration step: the actor to the improved targets, the critic to the results.

:func:`fit` is what ``training.algorithms.expert_iteration`` runs after each iteration's data
(and what the PPO warm start ``pretrain.rollouts`` runs over the heuristic's). The objectives
(``fit.objective``):

* ``all_action`` maximises ``Σ_a π(a|o)·A(o, a)``, the all-action policy gradient;
* ``cross_entropy`` imitates the best-scoring candidate;
* ``regression`` fits the actor's own logits (before the heuristic's advice) to the candidates'
  advantages, a least-squares estimate of ``A(o, a)``; the greedy network then leaves the
  advised action only where an estimate beats it by more than the advice weight, which the fit
  chooses among ``fit.thresholds`` on the held-out decisions. A network without advice
  (``network.advice: none``) plays the action of the highest estimate: it makes every decision
  itself, with no heuristic at play time. Noisy targets average out in a
  regression, and the threshold keeps the deviations the held-out data can tell from noise. A
  network with one advice weight per phase (``network.advice_per_kind``) gets one threshold per
  fitted kind, each chosen on that kind's held-out decisions, and never leaves the advice at the
  kinds not fitted (:data:`NEVER`).

Every epoch is measured on the held-out chunks (the greedy policy's mean advantage over the
data's policy) and the best, less ``fit.selection_z`` standard errors, is kept.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from agents.base import DECISION_KINDS
from agents.neural import NEVER, ActorCritic, set_advice_weights
from five_hundred_env.rules import Rules
from training.rollouts.exit_data import RESULT_SCALE, anchor_rows, targets_of_kinds
from training.settings.improvement_config import FitConfig

Log = Callable[[str], None]


def _held_out_mask(chunks: np.ndarray, fraction: float) -> np.ndarray:
    """Rows of the last ``fraction`` of the chunks (at least one chunk, never all if there are two)."""
    ids = list(dict.fromkeys(chunks.tolist()))
    held = ids[len(ids) - max(1, round(len(ids) * fraction)):] if len(ids) > 1 else []
    if not held:  # a single chunk: its last rows
        mask = np.zeros(len(chunks), dtype=bool)
        mask[len(chunks) - max(1, int(len(chunks) * fraction)):] = True
        return mask
    return np.isin(chunks, held)


def _targets(data: dict[str, np.ndarray], penalty: float, base_bonus: dict[str, float] | None = None) -> np.ndarray:
    """Advantages of the scored candidates; legal actions not scored (jump bids) get ``-penalty``; the
    data's own action gets its kind's ``base_bonus`` more (:class:`FitConfig`)."""
    targets = np.where(data["candidates"].astype(bool), data["advantages"], np.float32(-penalty)).astype(np.float32)
    if base_bonus:
        bonus = np.array([base_bonus.get(kind, 0.0) for kind in DECISION_KINDS], dtype=np.float32)[data["kind"]]
        targets[np.arange(len(targets)), data["action"]] += bonus
    return targets


def fit(model: ActorCritic, data: dict[str, np.ndarray], cfg: FitConfig, seed: int, device: torch.device, rules: Rules,
        log: Log = print, on_epoch: Callable[[dict[str, float]], None] | None = None) -> list[dict[str, float]]:
    """Fit the actor to the improved targets and the critic to the results; keep the epoch whose
    greedy policy gains most on the held-out chunks, less ``cfg.selection_z`` standard errors (the
    last of the best; the starting weights if every epoch does worse). Returns
    one metrics dict per epoch, epoch 0 (the starting weights: no training losses) first:
    ``gain`` (points per decision over the data's policy, held out, with ``gain_se``),
    ``agreement`` (with the best-scoring candidate), ``deviation`` (from the data's policy),
    ``policy_loss``, ``value_loss``, ``held_value_loss`` and ``kept`` (held out: how often the
    decisions of the kinds not fitted keep the starting network's choice). Only the targets of
    ``cfg.kinds`` are used; at the critic's samples of the other kinds a cross-entropy
    (``cfg.anchor_coef``) keeps the starting network's choice."""
    anchors = anchor_rows(data, cfg.kinds, rules)
    data = targets_of_kinds(data, cfg.kinds)
    held = _held_out_mask(data["chunk"], cfg.held_out)
    held_v = _held_out_mask(data["value_chunk"], cfg.held_out)
    t = {k: torch.from_numpy(data[k]).to(device)
         for k in ("x", "mask", "action", "value_x", "value_mask", "returns", "value_extra")}
    anchor = torch.from_numpy(anchors)  # the critic's rows (no copy of their inputs: they are gigabytes)
    anchor_action = _greedy(model, t["value_x"], t["value_mask"], anchor)  # the choices the anchored decisions keep
    anchor_train, anchor_held = np.flatnonzero(~held_v[anchors]), np.flatnonzero(held_v[anchors])
    targets = _targets(data, cfg.non_candidate_penalty)
    target = torch.from_numpy(targets).to(device)
    # What the actor is fitted to: the targets, the data's own action raised by its kind's base_bonus (the
    # held-out metrics read the targets themselves).
    fitted = torch.from_numpy(_targets(data, cfg.non_candidate_penalty, cfg.base_bonus)).to(device) if cfg.base_bonus \
        else target
    scores = np.where(data["mask"].astype(bool), targets, np.float32(-np.inf))
    scores[np.arange(len(scores)), data["action"]] += 1e-6  # on a tie the policy's own choice is the best
    best_choice = torch.from_numpy(scores.argmax(axis=1)).to(device)
    del scores
    train_rows, train_v = np.flatnonzero(~held), np.flatnonzero(~held_v)
    gen = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate)
    steps = max(1, math.ceil(len(train_rows) / cfg.batch_size))
    value_batch = max(1, math.ceil(len(train_v) / steps))
    anchor_batch = max(1, math.ceil(len(anchor_train) / steps))
    extra = model.critic_extra > 0

    def held_metrics_at_weight() -> dict[str, float]:
        rows = torch.from_numpy(anchor_held)
        kept = _greedy(model, t["value_x"], t["value_mask"], anchor[rows]) == anchor_action[rows]
        return {**_held_metrics(model, t, target, best_choice, held, held_v),
                "kept": float(kept.float().mean()) if len(rows) else 1.0}

    held_kind = data["kind"][held]

    def held_metrics() -> dict[str, float]:
        if cfg.objective != "regression" or model.advice == "none":  # no advice: no threshold to choose
            return held_metrics_at_weight()
        if model.phase_slice is None:
            return _choose_threshold(model, cfg, held_metrics_at_weight)
        return _choose_thresholds_per_kind(model, cfg, held_metrics_at_weight,
                                           lambda: _held_gains(model, t, target, held)[1].numpy(), held_kind)

    start = {"epoch": 0.0, "policy_loss": math.nan, "value_loss": math.nan, **held_metrics()}
    best = (selection_bound(start, cfg), {k: v.detach().clone() for k, v in model.state_dict().items()})
    history = [start]
    for epoch in range(cfg.epochs):
        order = torch.from_numpy(train_rows)[torch.randperm(len(train_rows), generator=gen)]
        v_order = torch.from_numpy(train_v)[torch.randperm(len(train_v), generator=gen)]
        a_order = torch.from_numpy(anchor_train)[torch.randperm(len(anchor_train), generator=gen)]
        sums = {"policy_loss": 0.0, "value_loss": 0.0}
        for k in range(steps):
            mb = order[k * cfg.batch_size:(k + 1) * cfg.batch_size].to(device)
            vb = v_order[k * value_batch:(k + 1) * value_batch].to(device)
            policy_loss = _policy_loss(model, t, fitted, best_choice, mb, cfg.objective)
            value = model.value(t["value_x"][vb], t["value_extra"][vb] if extra else None)
            value_loss = 0.5 * ((value - t["returns"][vb]) ** 2).mean() if len(vb) else torch.zeros(())
            ab = a_order[k * anchor_batch:(k + 1) * anchor_batch].to(device)
            anchor_loss = nn.functional.cross_entropy(
                model.masked_logits(t["value_x"][anchor[ab]], t["value_mask"][anchor[ab]]), anchor_action[ab]) \
                if len(ab) and cfg.anchor_coef else torch.zeros(())
            optimizer.zero_grad()
            (policy_loss + cfg.value_coef * value_loss + cfg.anchor_coef * anchor_loss).backward()
            nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
            optimizer.step()
            sums["policy_loss"] += policy_loss.item() / steps
            sums["value_loss"] += value_loss.item() / steps
        metrics = {"epoch": float(epoch + 1), **sums, **held_metrics()}
        for name in metrics:  # a diverged fit must not reach a checkpoint
            if not math.isfinite(metrics[name]):
                raise FloatingPointError(f"the fit diverged: {name} is {metrics[name]} at epoch {epoch + 1}")
        history.append(metrics)
        if on_epoch:
            on_epoch(metrics)
        log(f"  fit epoch {epoch + 1}/{cfg.epochs}: held out: gain {RESULT_SCALE * metrics['gain']:+.2f} points per "
            f"decision (±{RESULT_SCALE * metrics['gain_se']:.2f})"
            + _threshold_text(metrics)
            + f", agrees with the best candidate "
            f"{metrics['agreement']:.1%}, deviates {metrics['deviation']:.1%}; value loss {metrics['held_value_loss']:.3f}"
            + (f"; other decisions kept {metrics['kept']:.1%}" if len(anchors) else ""))
        if selection_bound(metrics, cfg) >= best[0]:  # on a tie the later epoch: the same choices, a better critic
            best = (selection_bound(metrics, cfg), {k: v.detach().clone() for k, v in model.state_dict().items()})
    model.load_state_dict(best[1])
    return history


def selection_bound(metrics: dict[str, float], cfg: FitConfig) -> float:
    """What chooses the epoch: the held-out gain less ``selection_z`` standard errors, so that an
    epoch is not kept for a gain its held-out decisions cannot tell from noise."""
    return metrics["gain"] - cfg.selection_z * metrics["gain_se"]


def _choose_threshold(model: ActorCritic, cfg: FitConfig, measure: Callable[[], dict[str, float]]) -> dict[str, float]:
    """The held-out metrics at the best of ``cfg.thresholds`` as the advice weight (which the model
    keeps): the greedy network leaves the advised action where an estimated advantage beats it by
    more than the threshold. On a tie the higher threshold, the fewer deviations."""
    best: tuple[float, float, dict[str, float]] | None = None
    for threshold in sorted(cfg.thresholds, reverse=True):
        model.advice_weight.data.fill_(threshold)
        metrics = {**measure(), "threshold": threshold}
        if best is None or selection_bound(metrics, cfg) > best[0]:
            best = (selection_bound(metrics, cfg), threshold, metrics)
    assert best is not None  # FitConfig: at least one threshold
    model.advice_weight.data.fill_(best[1])
    return best[2]


def _choose_thresholds_per_kind(model: ActorCritic, cfg: FitConfig, measure: Callable[[], dict[str, float]],
                                gains_at: Callable[[], np.ndarray], held_kind: np.ndarray) -> dict[str, float]:
    """:func:`_choose_threshold` for a network with one advice weight per phase: each fitted kind's
    threshold is the best of ``cfg.thresholds`` on that kind's held-out decisions alone (a
    decision's greedy choice depends on its own kind's weight only), the kinds not fitted get
    :data:`NEVER`. The metrics hold ``threshold_<kind>`` for each fitted kind."""
    best: dict[str, tuple[float, float]] = {}
    for threshold in sorted(cfg.thresholds, reverse=True):
        set_advice_weights(model, threshold)
        gains = gains_at()
        for kind in cfg.kinds:
            mine = gains[held_kind == DECISION_KINDS.index(kind)]
            bound = float(mine.mean() - cfg.selection_z * mine.std() / math.sqrt(len(mine))) if len(mine) > 1 else 0.0
            if kind not in best or bound > best[kind][0]:
                best[kind] = (bound, threshold)
    set_advice_weights(model, {kind: best[kind][1] if kind in best else NEVER for kind in DECISION_KINDS})
    return {**measure(), **{f"threshold_{kind}": best[kind][1] for kind in cfg.kinds}}


def _threshold_text(metrics: dict[str, float]) -> str:
    """The chosen threshold(s) of a regression fit, for the epoch's log line (empty for the other objectives)."""
    if "threshold" in metrics:
        return f" at threshold {RESULT_SCALE * metrics['threshold']:.0f} points"
    kinds = [(name.removeprefix("threshold_"), value) for name, value in metrics.items() if name.startswith("threshold_")]
    return (" at thresholds " + ", ".join(f"{kind} {RESULT_SCALE * value:.0f}" for kind, value in kinds) + " points"
            if kinds else "")


def _policy_loss(model: ActorCritic, t: dict[str, torch.Tensor], target: torch.Tensor, best_choice: torch.Tensor,
                 mb: torch.Tensor, objective: str) -> torch.Tensor:
    if not len(mb):
        return torch.zeros(())
    if objective == "regression":  # least squares over the legal actions (the non-candidates at -penalty)
        legal = t["mask"][mb].float()
        error = (model.residual_logits(t["x"][mb]) - target[mb]) ** 2
        return (error * legal).sum() / legal.sum()
    logits = model.masked_logits(t["x"][mb], t["mask"][mb])
    if objective == "cross_entropy":
        return nn.functional.cross_entropy(logits, best_choice[mb])
    return -(torch.softmax(logits, dim=-1) * target[mb]).sum(-1).mean()  # illegal actions have probability 0


EVAL_SLICE = 65_536
"""Rows evaluated per forward pass outside the training steps (the fit of 160,000 deals' data ran
out of memory evaluating its 650,000 held-out decisions at once, 320,000 deals' its 750,000
anchored decisions: the float inputs of such a set need gigabytes)."""


def _greedy(model: ActorCritic, x: torch.Tensor, mask: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """The network's greedy (masked argmax) action at these rows of ``x``, in slices of :data:`EVAL_SLICE`."""
    with torch.no_grad():
        return torch.cat([model.masked_logits(x[part], mask[part]).argmax(-1)
                          for part in rows.split(EVAL_SLICE)]) if len(rows) else rows


def _held_gains(model: ActorCritic, t: dict[str, torch.Tensor], target: torch.Tensor,
                held: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """The greedy choice at each held-out decision and its advantage over the data's policy."""
    rows = torch.from_numpy(np.flatnonzero(held))
    greedy = _greedy(model, t["x"], t["mask"], rows)
    return greedy, target[rows].gather(1, greedy[:, None]).squeeze(1)


def _held_metrics(model: ActorCritic, t: dict[str, torch.Tensor], target: torch.Tensor, best_choice: torch.Tensor,
                  held: np.ndarray, held_v: np.ndarray) -> dict[str, float]:
    rows, v_rows = torch.from_numpy(np.flatnonzero(held)), torch.from_numpy(np.flatnonzero(held_v))
    greedy, gain = _held_gains(model, t, target, held)
    with torch.no_grad():  # in slices: the float inputs of a whole held-out set need gigabytes
        value = torch.cat([model.value(t["value_x"][part], t["value_extra"][part] if model.critic_extra else None)
                           for part in v_rows.split(EVAL_SLICE)]) if len(v_rows) else v_rows.float()
    n = len(rows)
    return {
        "gain": float(gain.mean()) if n else 0.0,
        "gain_se": float(gain.std() / math.sqrt(n)) if n > 1 else 0.0,
        "agreement": float((greedy == best_choice[rows]).float().mean()) if n else 0.0,
        "deviation": float((greedy != t["action"][rows]).float().mean()) if n else 0.0,
        "held_value_loss": float(0.5 * ((value - t["returns"][v_rows]) ** 2).mean()) if len(v_rows) else 0.0,
    }
