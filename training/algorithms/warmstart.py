"""Before and after PPO: the optional warm starts, and the evaluations of the greedy policy.

Warm starts (``pretrain``), in order, only before the first PPO update:

* ``init_from``: the weights of an earlier checkpoint (same preset and network);
* ``deals``: imitation of the teacher agent (:mod:`training.algorithms.imitation`): PPO from a random
  network learns that bidding loses, stops bidding, and never learns to play contracts;
* ``rollouts``: one step of policy iteration over the heuristic: at sampled decisions of every
  kind, every candidate played out by the heuristic on the same deal, and the network fitted to
  the measured advantages (:func:`rollouts`);

then, if any ran, the policy is evaluated (an ``eval`` row: the yardstick for what PPO adds).
Each of the last three is checkpointed once finished, with its name in the checkpoint's
``warm_starts_done``, so that a resume neither repeats it nor skips the rest.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from agents.neural import load_training_weights, make_adviser, read_checkpoint
from agents.registry import make_agent
from five_hundred_env.files import write_atomic
from five_hundred_env.rules import Rules
from training.evaluation.policy_evaluation import START, START_NAME, evaluate_policy, score_ci
from training.records.runlog import RunLog
from training.records.runs import (
    CACHE,
    NonFiniteError,
    RunFolder,
    Session,
    checkpoint,
    non_finite_tensors,
    save_checkpoint_file,
)
from training.settings.config import Config

WARM_START_KINDS = {"imitation": "imitation", "rollouts": "rollouts", "eval": "warm_start_eval"}
"""The kind of ``progress.csv`` row each warm-start stage writes -> the stage's name."""

Log = Callable[[str], None]


def start_path(run: RunFolder) -> Path:
    """``<run>/start.pt``: the network as the run began (the ``start`` opponent)."""
    return run.run_dir / START_NAME


def save_start(run: RunFolder, session: Session, rules: Rules) -> None:
    """Keep the network as it is now, before any warm start or training, as ``start.pt``."""
    model = session.state.model
    save_checkpoint_file(run, start_path(run), {"rules": rules.to_dict(), "model_spec": model.spec(),
                                                "model": model.state_dict()})


def learning_verdict(start_report: dict[str, Any]) -> dict[str, Any]:
    """Whether the run learned, from the final report against its start: ``stronger`` (the 95%
    interval above zero), ``weaker`` (below) or ``not measurably different`` (it contains zero)."""
    d = start_report["score_diff_per_deal"]
    mean, (lo, hi) = d["mean"], d["ci95"]
    verdict = "not measurably different"
    if lo is not None and lo > 0:
        verdict = "stronger"
    elif hi is not None and hi < 0:
        verdict = "weaker"
    return {"mean": mean, "ci95": [lo, hi], "boards": start_report["deals"], "verdict": verdict}


def learning_line(verdict: dict[str, Any]) -> str:
    """``learning: +12.3 [+6.1, +18.5] points per deal over its start (1,000 boards): stronger``."""
    mean, (lo, hi) = verdict["mean"], verdict["ci95"]
    if mean is None or lo is None or hi is None:
        figures = "no finite difference"
    else:
        figures = f"{mean:+.1f} [{lo:+.1f}, {hi:+.1f}] points per deal"
    return f"learning: {figures} over its start ({verdict['boards']:,} boards): {verdict['verdict']}"


def _check_finite(session: Session, after: str) -> None:
    bad = non_finite_tensors(session.state.model.state_dict())
    if bad:
        raise NonFiniteError(f"the weights {', '.join(bad[:3])} are not finite after {after}: nothing was checkpointed")


def init_from(config: Config, rules: Rules, session: Session, log: Log) -> None:
    """Start from the weights of ``pretrain.init_from``."""
    path, model = config.pretrain.init_from, session.state.model
    data = read_checkpoint(path, rules)
    if data["model_spec"] != model.spec():
        raise ValueError(f"pretrain.init_from: {path} holds another network "
                         f"({data['model_spec']}, this config builds {model.spec()})")
    load_training_weights(model, data, path)  # read_checkpoint has refused non-finite weights
    log(f"network initialised from {path}")


def imitation(config: Config, rules: Rules, session: Session, runlog: RunLog, device: torch.device, log: Log) -> None:
    """Imitate the teacher: its demonstrations, then behaviour cloning (a row per epoch)."""
    from training.algorithms.imitation import behaviour_clone, teacher_demonstrations

    pc, st = config.pretrain, session.state
    log(f"imitation warm start: {pc.deals} deals of the {pc.teacher} agent in every seat")
    demos = teacher_demonstrations(rules, make_agent(pc.teacher, rules), pc.deals, st.rng,
                                   config.network.critic == "central", config.env.reward, config.env.reward_scale,
                                   config.train.gamma, config.logging.progress,
                                   adviser=make_adviser(config.network.advice, rules))

    def log_epoch(epoch: dict[str, float]) -> None:
        runlog.write({"kind": "imitation", "global_step": 0, "update": 0, "time_s": session.elapsed(),
                      "policy_loss": epoch["policy_loss"], "value_loss": epoch["value_loss"],
                      "imitation_agreement": epoch["agreement"], "imitation_bid_agreement": epoch["bid_agreement"]},
                     tb_step=int(epoch["epoch"]))

    behaviour_clone(st.model, demos, pc, st.rng, device, log, on_epoch=log_epoch, progress=config.logging.progress)
    _check_finite(session, "the imitation warm start")


def rollouts(config: Config, rules: Rules, session: Session, run: RunFolder, runlog: RunLog,
             device: torch.device, log: Log) -> None:
    """The one-step rollout improvement over the heuristic of every sampled decision kind
    (:func:`training.rollouts.exit_data.heuristic_rollouts`), fitted by :func:`training.algorithms.exit_fit.fit`
    (a row per epoch)."""
    from training.algorithms.exit_fit import fit
    from training.rollouts.exit_data import DECISION_KINDS, RESULT_SCALE, chunk_sizes, heuristic_rollouts, target_stats
    from training.workers.distributed import Backend

    rc, st = config.pretrain.rollouts, session.state
    backend = Backend.from_config(config.distributed)
    workers = f"{rc.workers} workers" if backend.kind == "local" else backend.describe()
    log(f"rollouts: every candidate of the sampled decisions of {rc.deals} heuristic deals played out ({workers})")
    seeds = [int(s) for s in st.rng.integers(2**31, size=len(chunk_sizes(rc.deals, rc.chunk_deals)) + 1)]
    # Cached in the run's folder: a fresh run (--overwrite) with the same deals reuses them.
    cache = run.run_dir / "rollouts.npz"
    run.manifest.add(cache, CACHE)
    data = heuristic_rollouts(rules, st.model, rc, seeds[1:], cache, config.logging.progress, backend)
    stats = target_stats(data)
    log(f"rollouts: {int(stats['targets'])} decisions scored ("
        + ", ".join(f"{int(stats[k + '_targets'])} {k}" for k in DECISION_KINDS)
        + f"); the best candidate beats the heuristic's choice at {stats['improvable']:.0%} of them")

    def log_epoch(epoch: dict[str, float]) -> None:
        runlog.write({"kind": "rollouts", "global_step": 0, "update": 0, "time_s": session.elapsed(),
                      "policy_loss": epoch["policy_loss"], "value_loss": epoch["held_value_loss"],
                      "imitation_agreement": epoch["agreement"], "rollout_gain": RESULT_SCALE * epoch["gain"],
                      "rollout_gain_se": RESULT_SCALE * epoch["gain_se"], "rollout_deviation": epoch["deviation"]},
                     tb_step=int(epoch["epoch"]))

    fit(st.model, data, rc.fit, seeds[0], device, rules, log, log_epoch)
    _check_finite(session, "the rollouts")


def warm_start_eval(config: Config, rules: Rules, session: Session, run: RunFolder, runlog: RunLog, log: Log) -> None:
    """Where the warm starts leave the policy: the yardstick for what PPO adds."""
    ev = config.evaluation
    row: dict[str, Any] = {"kind": "eval", "global_step": 0, "update": 0, "time_s": session.elapsed()}
    for opponent in ev.opponents:
        m, lo, hi = score_ci(evaluate_policy(session.state.model, rules, opponent, ev.deals, ev.seed,
                                             start=start_path(run)))
        row.update({f"eval_{opponent}_mean": m, f"eval_{opponent}_lo": lo, f"eval_{opponent}_hi": hi})
    runlog.write(row)
    log("after the warm start: " + ", ".join(
        f"{o} {row[f'eval_{o}_mean']:+.1f} [{row[f'eval_{o}_lo']:+.1f}, {row[f'eval_{o}_hi']:+.1f}]"
        for o in ev.opponents))


def run_warm_starts(config: Config, rules: Rules, session: Session, run: RunFolder, runlog: RunLog,
                    device: torch.device, log: Log) -> None:
    """The warm starts the config asks for that the training state has not done yet."""
    st, pc, ev = session.state, config.pretrain, config.evaluation
    if st.updates or st.global_step:
        return  # PPO has started: warm starts are over (even if a resume's config asks for more)
    fresh = not st.warm_starts_done and not run.latest.exists()
    if fresh and pc.init_from:
        init_from(config, rules, session, log)
    if fresh:
        save_start(run, session, rules)
    stages: list[tuple[str, bool, Callable[[], None]]] = [
        ("imitation", pc.deals > 0, lambda: imitation(config, rules, session, runlog, device, log)),
        ("rollouts", pc.rollouts.deals > 0, lambda: rollouts(config, rules, session, run, runlog, device, log)),
        ("warm_start_eval", bool((pc.deals or pc.init_from or pc.rollouts.deals) and ev.interval and ev.deals),
         lambda: warm_start_eval(config, rules, session, run, runlog, log)),
    ]
    for name, wanted, stage in stages:
        if wanted and name not in st.warm_starts_done:
            stage()
            st.warm_starts_done.append(name)
            checkpoint(run, session, rules, config)  # a resume never repeats it


def final_evaluation(config: Config, rules: Rules, session: Session, run: RunFolder, runlog: RunLog, final: Path,
                     log: Log) -> dict[str, Any]:
    """The final evaluation table against each opponent (``final_eval`` rows, ``final_eval.json``)."""
    ev, st = config.evaluation, session.state
    evaluations: dict[str, Any] = {}
    if not ev.final_deals:
        return evaluations
    log(f"\nfinal evaluation: {ev.final_deals} duplicate deals against each of {', '.join(ev.opponents)}")
    for opponent in ev.opponents:
        # Named after the checkpoint file, as `five-hundred evaluate` names it.
        report = evaluate_policy(st.model, rules, opponent, ev.final_deals, ev.seed, label=final.name,
                                 start=start_path(run))
        evaluations[opponent] = report.to_dict()
        log(f"\n== {final} vs {opponent} ==")
        log(report.format_table())
        m, lo, hi = score_ci(report)
        runlog.write({"kind": "final_eval", "global_step": st.global_step, "update": st.updates,
                      f"eval_{opponent}_mean": m, f"eval_{opponent}_lo": lo, f"eval_{opponent}_hi": hi})
    if START in evaluations:
        evaluations["learning"] = learning_verdict(evaluations[START])
        log("\n" + learning_line(evaluations["learning"]))
    else:
        log(f"\nlearning: not measured (evaluation.opponents has no {START})")
    path = run.run_dir / "final_eval.json"
    run.manifest.add(path)
    body = json.dumps(evaluations, indent=2).encode()
    write_atomic(path, lambda f: f.write(body), run.manifest.run_id)
    return evaluations
