"""PPO self-play for Five Hundred, in the CleanRL style: GAE, the update, the training loop.

``five-hundred train CONFIG.yaml [key.sub=value ...] [--resume]`` runs :func:`train`. Every
hyper-parameter comes from the config (:mod:`training.settings.config`). The rollouts come from
:class:`training.rollouts.selfplay.SelfPlayCollector` (whole deals, the games of one batched engine, an
opponent pool); the run's folder, checkpoints and resume from :mod:`training.records.runs`; its log rows from
:class:`training.records.runlog.RunLog`.

Rewards and advantages per seat
    GAE runs over each seat's *own* successive decisions: the next value of a decision is the
    value at the same seat's next decision, never at another player's turn (the bug of the
    PettingZoo SB3 tutorial, which bootstraps from whoever moves next).

The update
    The clipped PPO objective (CleanRL), with the same action masks re-applied when
    log-probabilities are recomputed; value clipping, advantage normalisation, entropy bonus,
    gradient clipping, optional KL early stop and linear learning-rate annealing. The critic may
    be *centralised* (``network.critic: central``): it also sees the hidden cards, from
    ``env.state()``, which is only used in training. A non-finite loss, gradient or weight stops
    training (:class:`training.records.runs.NonFiniteError`) before anything non-finite is written.

Warm starts (optional, :mod:`training.algorithms.warmstart`)
    Earlier weights, imitation of the heuristic, rollout improvement of the bidding; each one
    finished is checkpointed, so a resume never repeats it. ``train.total_steps: 0`` stops there.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.central import central_size
from agents.neural import ActorCritic
from agents.registry import make_agent
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules
from training.algorithms.warmstart import (
    START,
    WARM_START_KINDS,
    evaluate_policy,
    final_evaluation,
    run_warm_starts,
    score_ci,
    start_path,
)
from training.records.runlog import RunLog
from training.records.runs import (
    NonFiniteError,
    RunFolder,
    RunFolderError,
    Session,
    TrainingState,
    checkpoint,
    non_finite_tensors,
    open_run,
    read_training_checkpoint,
    save_checkpoint_file,
    stop_on_a_full_disk,
)
from training.rollouts.selfplay import Rollout, SnapshotPool, collect_shard, make_collector
from training.settings.config import Config, TrainConfig, save_config
from training.workers.distributed import Backend, connected
from training.workers.threads import limit_threads


@dataclass
class TrainResult:
    """What :func:`train` returns: where the run lies, how far it got, how strong it ended."""

    run_dir: Path
    global_step: int
    updates: int
    final_checkpoint: Path | None
    evaluations: dict[str, Any] = field(default_factory=dict)
    wall_s: float = 0.0
    steps_per_s: float = 0.0


def tqdm_write(message: str) -> None:
    """Print a message above the progress bars instead of through them."""
    from tqdm import tqdm

    tqdm.write(message)


# -- the update's inputs -----------------------------------------------------------------------

def compute_gae(rewards: np.ndarray, values: np.ndarray, done: np.ndarray, next_index: np.ndarray,
                gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """GAE over each seat's own chain of decisions: ``next_index`` links a decision to the same
    seat's next one. Returns ``(advantages, returns)``."""
    n = len(rewards)
    adv = np.zeros(n, dtype=np.float32)
    # A seat's next decision always comes later in the buffer, so one backward pass suffices.
    for i in range(n - 1, -1, -1):
        if done[i]:
            next_value, next_adv = 0.0, 0.0
        else:
            j = next_index[i]
            if j < 0:
                raise AssertionError("a non-terminal decision without a successor: rollouts must hold whole deals")
            next_value, next_adv = values[j], adv[j]
        delta = rewards[i] + gamma * next_value - values[i]
        adv[i] = delta + gamma * lam * next_adv
    return adv, adv + values


# -- the PPO update ----------------------------------------------------------------------------

def _minibatch_loss(model: ActorCritic, b: dict[str, torch.Tensor], mb: torch.Tensor,
                    tc: TrainConfig) -> tuple[torch.Tensor, dict[str, torch.Tensor | float]]:
    """The clipped PPO loss of one minibatch, and its parts."""
    # The stored masks again: illegal actions keep probability 0 in the recomputed policy.
    new_logp, entropy, new_value = model.evaluate_actions(
        b["obs"][mb], b["mask"][mb], b["actions"][mb], b["extra"][mb] if "extra" in b else None)
    logratio = new_logp - b["logprobs"][mb]
    ratio = logratio.exp()
    with torch.no_grad():
        approx_kl = ((ratio - 1) - logratio).mean()  # the k3 estimator, as CleanRL
        clipfrac = ((ratio - 1.0).abs() > tc.clip_coef).float().mean().item()
    mb_adv = b["adv"][mb]
    if tc.norm_adv and len(mb) > 1:
        mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
    pg_loss = torch.max(-mb_adv * ratio, -mb_adv * torch.clamp(ratio, 1 - tc.clip_coef, 1 + tc.clip_coef)).mean()
    returns, old_values = b["returns"][mb], b["values"][mb]
    if tc.clip_vloss:
        v_clipped = old_values + torch.clamp(new_value - old_values, -tc.clip_coef, tc.clip_coef)
        v_loss = 0.5 * torch.max((new_value - returns) ** 2, (v_clipped - returns) ** 2).mean()
    else:
        v_loss = 0.5 * ((new_value - returns) ** 2).mean()
    entropy_loss = entropy.mean()
    loss = pg_loss - tc.ent_coef * entropy_loss + tc.vf_coef * v_loss
    return loss, {"pg_loss": pg_loss, "v_loss": v_loss, "entropy": entropy_loss, "approx_kl": approx_kl,
                  "clipfrac": clipfrac}


def ppo_update(model: ActorCritic, optimizer: torch.optim.Optimizer, ro: Rollout, tc: TrainConfig,
               rng: np.random.Generator, device: torch.device) -> dict[str, float]:
    """CleanRL's clipped PPO update on one rollout (advantages by per-seat GAE). Raises
    :class:`NonFiniteError` as soon as the loss or the gradients are not finite (before the
    step that would spoil the weights), or the weights are not finite after the update."""
    rewards = np.asarray(ro.rewards, dtype=np.float32)
    values = np.concatenate(ro.values)
    advantages, returns = compute_gae(rewards, values, np.asarray(ro.done), np.asarray(ro.next_index),
                                      tc.gamma, tc.gae_lambda)
    arrays = {"obs": np.concatenate(ro.obs), "mask": np.concatenate(ro.masks), "actions": np.concatenate(ro.actions),
              "logprobs": np.concatenate(ro.logprobs), "adv": advantages, "returns": returns, "values": values}
    if model.critic_extra > 0:
        arrays["extra"] = np.concatenate(ro.extras)
    b = {k: torch.from_numpy(v).to(device) for k, v in arrays.items()}
    batch = len(ro)
    mb_size = math.ceil(batch / tc.num_minibatches)
    clipfracs: list[float] = []
    parts: dict[str, Any] = {k: torch.zeros(()) for k in ("pg_loss", "v_loss", "entropy", "approx_kl")}
    for epoch in range(tc.update_epochs):
        order = rng.permutation(batch)
        for start in range(0, batch, mb_size):
            mb = torch.from_numpy(order[start:start + mb_size]).to(device)
            loss, parts = _minibatch_loss(model, b, mb, tc)
            clipfracs.append(parts["clipfrac"])
            where = f"in epoch {epoch + 1}, minibatch {start // mb_size + 1} of the update"
            if not torch.isfinite(loss):
                raise NonFiniteError(f"the loss became {loss.item()} {where}")
            optimizer.zero_grad()
            loss.backward()
            grad_norm = nn.utils.clip_grad_norm_(model.parameters(), tc.max_grad_norm)
            if not torch.isfinite(grad_norm):
                raise NonFiniteError(f"the gradients became non-finite (norm {grad_norm.item()}) {where}")
            optimizer.step()
        if tc.target_kl is not None and parts["approx_kl"].item() > tc.target_kl:
            break
    bad = non_finite_tensors(model.state_dict())
    if bad:
        raise NonFiniteError(f"the weights {', '.join(bad[:3])} became non-finite in the update")
    var_y = float(np.var(returns))
    return {
        "policy_loss": parts["pg_loss"].item(), "value_loss": parts["v_loss"].item(),
        "entropy": parts["entropy"].item(), "approx_kl": parts["approx_kl"].item(),
        "clipfrac": float(np.mean(clipfracs)) if clipfracs else 0.0,
        "explained_variance": math.nan if var_y == 0 else float(1 - np.var(returns - values) / var_y),
        "batch_size": float(batch),
    }


# -- the run -----------------------------------------------------------------------------------

def _torch_device(config: Config) -> torch.device:
    """Threads, determinism, the device and every seed, as the config says."""
    limit_threads(config.torch_threads)
    torch.use_deterministic_algorithms(config.deterministic)
    device = torch.device(config.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {config.device!r} asked for, but CUDA is not available here; use device=cpu")
    random.seed(config.seed)
    np.random.seed(config.seed % 2**32)
    torch.manual_seed(config.seed)
    return device


def _initial_state(config: Config, rules: Rules, device: torch.device) -> TrainingState:
    """A new network (seeded by torch's generator), its optimiser, an empty pool, the trainer's generator."""
    nc = config.network
    model = ActorCritic.for_rules(rules, nc.hidden_sizes, nc.activation,
                                  critic_extra=central_size(rules) if nc.critic == "central" else 0,
                                  advice=nc.advice, advice_weight=nc.advice_weight,
                                  phase_slice=ObservationEncoder(rules).phase_slice() if nc.advice_per_kind else None
                                  ).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.train.learning_rate, eps=config.train.adam_eps)
    rng = np.random.default_rng(config.seed)  # every draw of the trainer (deals, opponents, minibatches)
    return TrainingState(model, optimizer, SnapshotPool(model, config.opponents.pool_size), rng)


def _resume(state: TrainingState, run: RunFolder, config: Config, rules: Rules, log: Callable[[str], None]) -> None:
    data = read_training_checkpoint(run, rules)
    saved, now = data["config"], config.to_dict()
    for section in ("rules", "network"):
        if saved.get(section) != now[section]:
            raise ValueError(f"cannot resume {run.latest}: its {section} section differs from this config's "
                             f"({saved.get(section)} vs {now[section]})")
    changed = sorted(f"{s}.{k}" for s, v in now.items() if isinstance(v, dict)
                     for k in v if saved.get(s, {}).get(k) != v[k])
    if changed:
        log(f"resuming with changed settings: {', '.join(changed)}")
    state.restore(data)
    run.last_checkpoint = f"the last good checkpoint is {run.latest} (step {state.global_step})"
    log(f"resumed {run.run_dir} at step {state.global_step} (update {state.updates})")


def _stale_kinds(state: TrainingState) -> set[str]:
    """The kinds of log rows a resume drops: final evaluations, and warm-start rows of a warm
    start the checkpoint does not include (it runs again)."""
    return {"final_eval"} | {kind for kind, stage in WARM_START_KINDS.items() if stage not in state.warm_starts_done}


def _update_row(session: Session, lr: float, metrics: dict[str, float], ro: Rollout) -> dict[str, Any]:
    st, s = session.state, ro.stats

    def mean(key: str) -> float | None:
        return float(np.mean(s[key])) if s[key] else None

    return {
        "kind": "update", "global_step": st.global_step, "update": st.updates, "env_steps": st.env_steps,
        "deals": st.deals, "time_s": session.elapsed(), "steps_per_s": session.steps_per_s(), "learning_rate": lr,
        **metrics,
        "return_vs_snapshot": mean("return_vs_snapshot"), "return_vs_heuristic": mean("return_vs_heuristic"),
        "return_vs_random": mean("return_vs_random"), "return_learner": mean("return_learner"),
        "bid_won_rate": mean("bid_won"), "contract_made_rate": mean("made"), "suit_share": mean("suit"),
        "nt_share": mean("nt"), "misere_share": mean("misere"), "thrown_in_rate": mean("thrown_in"),
        "contract_value": mean("contract_value"),
    }


def _crossed(before: int, after: int, interval: int) -> bool:
    return bool(interval) and after // interval > before // interval


def ppo_loop(config: Config, rules: Rules, session: Session, run: RunFolder, runlog: RunLog, device: torch.device,
             stop_after_updates: int | None, log: Callable[[str], None]) -> bool:
    """Rollout, update, log, evaluate, checkpoint, until ``total_steps``; ``True`` if it stopped
    early after ``stop_after_updates`` updates of this session (with a checkpoint)."""
    from tqdm import tqdm

    tc, oc, ev, st = config.train, config.opponents, config.evaluation, session.state
    collector = make_collector(rules, config, st.model, st.pool.models, st.rng, device)
    last_eval: dict[str, float] = {}
    session.loop_start = time.time()
    cluster = connected(Backend.from_config(config.distributed), collect_shard)  # one connection for the run
    with cluster, tqdm(total=tc.total_steps, initial=st.global_step, unit="step", unit_scale=True,
                       dynamic_ncols=True, disable=not config.logging.progress, smoothing=0.05) as bar:
        while st.global_step < tc.total_steps:
            lr = tc.learning_rate * (1.0 - st.global_step / tc.total_steps) if tc.anneal_lr else tc.learning_rate
            for group in st.optimizer.param_groups:
                group["lr"] = lr
            ro = collector.collect()
            try:
                metrics = ppo_update(st.model, st.optimizer, ro, tc, st.rng, device)
            except NonFiniteError as e:
                raise NonFiniteError(f"training stopped at step {st.global_step + len(ro)} (update {st.updates + 1}): "
                                     f"{e}; {run.last_checkpoint} (try a lower train.learning_rate)") from None
            prev_step = st.global_step
            st.global_step += len(ro)
            st.env_steps += ro.env_steps
            st.deals += ro.deals
            st.updates += 1
            session.steps += len(ro)
            session.updates += 1
            bar.update(len(ro))
            if _crossed(prev_step, st.global_step, oc.snapshot_interval):
                st.pool.add(st.model.state_dict())
            row = _update_row(session, lr, metrics, ro)
            if ev.deals and _crossed(prev_step, st.global_step, ev.interval):
                for opponent in ev.opponents:
                    m, lo, hi = score_ci(evaluate_policy(st.model, rules, opponent, ev.deals, ev.seed,
                                                         start=start_path(run)))
                    last_eval[opponent] = m
                    row.update({f"eval_{opponent}_mean": m, f"eval_{opponent}_lo": lo, f"eval_{opponent}_hi": hi})
            runlog.write(row)
            postfix = {"ret_rand": row["return_vs_random"], "ent": metrics["entropy"],
                       **{f"ev_{k[:4]}": v for k, v in last_eval.items()}}
            bar.set_postfix({k: f"{v:.2f}" for k, v in postfix.items() if v is not None}, refresh=False)
            stopping = stop_after_updates is not None and session.updates >= stop_after_updates
            if _crossed(prev_step, st.global_step, config.checkpoint.interval) or stopping:
                checkpoint(run, session, rules, config, periodic=not stopping)
            if stopping:
                return True
    return False


def train(config: Config, resume: bool = False, overwrite: bool = False,
          stop_after_updates: int | None = None, log: Callable[[str], None] = tqdm_write) -> TrainResult:
    """Train by PPO self-play as the config says. ``resume`` continues from the run's
    ``latest.pt``; ``overwrite`` starts a run again (deleting the files its manifest lists);
    ``stop_after_updates`` stops (with a checkpoint) after that many updates of this session,
    as an interrupted run would; ``log`` prints messages.

    Raises :class:`training.records.runs.RunFolderError` (a ``ValueError``) for a folder that cannot be
    used as asked, :class:`training.records.runs.DiskFullError` and :class:`training.records.runs.NonFiniteError`
    (``RuntimeError``) when training stops on a fault, and lets ``KeyboardInterrupt`` through once
    it has said where ``--resume`` picks up."""
    rules = config.to_rules()
    for name in {k for k, r in config.opponents.rates().items() if r > 0 and k in ("heuristic", "random")} \
            | set(config.evaluation.opponents) - {START}:
        make_agent(name, rules, 0)  # fail now, not an hour in, if an agent is missing
    run = open_run(config, resume, overwrite, log)
    run.manifest.add(run.run_dir / "config.yaml", "config")
    save_config(config, run.run_dir / "config.yaml")
    device = _torch_device(config)
    session = Session(_initial_state(config, rules, device))
    if resume:
        _resume(session.state, run, config, rules, log)
        if START in config.evaluation.opponents and not start_path(run).is_file():
            raise RunFolderError(f"{start_path(run)} does not exist (the run began before its start was kept): "
                                 f"resume without {START} in evaluation.opponents")
    runlog: RunLog | None = None
    phase = "the start"
    try:
        runlog = RunLog(run, config.logging, session.state.global_step if resume else None, log,
                        drop_kinds=frozenset(_stale_kinds(session.state)))
        phase = "the warm start"
        run_warm_starts(config, rules, session, run, runlog, device, log)
        phase = "training"
        if ppo_loop(config, rules, session, run, runlog, device, stop_after_updates, log):
            log(f"stopped after {session.updates} updates at step {session.state.global_step}; continue with --resume")
            return TrainResult(run.run_dir, session.state.global_step, session.state.updates, None, {},
                               time.time() - session.start, session.steps_per_s())
        phase = "the final evaluation"
        return _finish(config, rules, session, run, runlog, log)
    except KeyboardInterrupt:
        log(f"\ninterrupted during {phase} at step {session.state.global_step}: "
            + (f"--resume continues from {run.latest}" if run.latest.exists()
               else "no checkpoint yet, start again with --overwrite"))
        raise
    except OSError as e:
        stop_on_a_full_disk(e, run, session.state.global_step)
    finally:
        if runlog is not None:
            runlog.close()


def _finish(config: Config, rules: Rules, session: Session, run: RunFolder, runlog: RunLog,
            log: Callable[[str], None]) -> TrainResult:
    """The final checkpoint, ``final.pt`` (the network alone), the final evaluation table."""
    st = session.state
    train_time = time.time() - session.loop_start
    steps_per_s = session.steps_per_s()
    checkpoint(run, session, rules, config)
    final = run.run_dir / "final.pt"
    # The agent to share: the network and where it came from (latest.pt keeps the rest for --resume).
    payload = st.payload(rules, config, session.elapsed())
    save_checkpoint_file(run, final, {k: payload[k] for k in ("rules", "model_spec", "model", "counters", "config")})
    evaluations = final_evaluation(config, rules, session, run, runlog, final, log)
    wall = time.time() - session.start
    trained = (f"trained {session.steps} steps in {train_time:.0f} s ({steps_per_s:.0f} learner steps/s)"
               if config.train.total_steps else "no PPO (train.total_steps: 0)")
    log(f"\n{trained}; total wall-clock {wall:.0f} s; agent: {final}")
    return TrainResult(run.run_dir, st.global_step, st.updates, final, evaluations, wall, steps_per_s)
