"""Expert iteration: learn from search, iteration by iteration, under a YAML config, resumable.

    python -m training.algorithms.expert_iteration CONFIG.yaml [KEY=VALUE ...] [--resume] [--overwrite]

Each iteration

1. **generates** data (``training.rollouts.exit_data``) in ``generation.workers`` processes: deals played
   by the current network (iteration 0: a fresh ``network.advice: heuristic`` network, which plays
   as the heuristic, or ``init_from``'s weights), with improved targets at sampled decisions of
   every kind — rollouts of every candidate bid, discard and nomination on the same deal, PIMC
   values for the card play — and the deals' results for the critic;
2. **fits** the network (:func:`training.algorithms.exit_fit.fit`): the actor to the improved targets (``fit.objective``:
   ``all_action`` maximises ``Σ_a π(a|o)·A(o, a)``, the all-action policy gradient;
   ``cross_entropy`` imitates the best-scoring candidate; ``regression`` estimates the advantages
   and leaves the heuristic's advice only above a held-out threshold), the critic to
   the results; the last ``fit.held_out`` of the chunks is held out and the epoch whose greedy
   policy gains most on it is kept (the starting weights, if no epoch gains);
3. **logs** a row (``progress.csv`` and TensorBoard, through ``training.records.runlog.RunLog``), with a
   duplicate evaluation against the heuristic every ``evaluation.interval`` iterations, and
   **checkpoints** the network (``latest.pt`` and ``step_N.pt``, atomic, listed in the run's
   manifest) — the next iteration's rollouts are played by the improved network.

Every seed derives from ``seed`` and the iteration, so a run resumed after iteration ``k`` (from
``latest.pt``, which holds the network) is the run that never stopped, and the data do not depend
on the number of workers. ``docs/expert_iteration.md`` describes the method and the measurements.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from pydantic import Field, model_validator

from agents.central import central_size
from agents.neural import ActorCritic, load_training_weights, read_checkpoint
from agents.weights_files import CheckpointError
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules
from training.algorithms.exit_fit import fit, selection_bound
from training.evaluation.policy_evaluation import evaluate_policy, score_ci
from training.records.runlog import RunLog
from training.records.runs import CACHE, CONFIG, RunFolder, open_run, save_checkpoint_file, write_checkpoint
from training.rollouts.exit_data import (
    DECISION_KINDS,
    RESULT_SCALE,
    ChunkJob,
    chunk_sizes,
    generate_cached,
    target_stats,
)
from training.settings.config import (
    MAX_DEALS,
    MAX_SEED,
    ConfigError,
    DistributedConfig,
    LoggingConfig,
    NetworkConfig,
    RulesConfig,
    Section,
    load_config,
    save_config,
)
from training.settings.config_base import TorchThreads
from training.settings.improvement_config import FitConfig, GameScoresConfig, SampleConfig
from training.workers.distributed import Backend
from training.workers.threads import limit_threads

CHECKPOINT_KIND = "expert_iteration"
"""The ``kind`` entry of this trainer's checkpoints (a PPO ``latest.pt`` cannot resume it)."""

ITERATION_STEP = 1000
"""``global_step`` of iteration ``k``'s row is ``k × 1000``; its fit's epoch ``e`` is ``(k − 1) × 1000 + e``."""

Log = Callable[[str], None]


class GenerationConfig(GameScoresConfig):
    """How each iteration's data are made (``training.rollouts.exit_data``)."""

    deals: int = Field(300, gt=0, le=MAX_DEALS, description="deals played per iteration")
    chunk_deals: int = Field(25, gt=0, le=10_000, description="deals per unit of work (one seed each)")
    workers: int = Field(1, gt=0, le=256, description="processes (the data do not depend on it)")
    chunk_timeout: float = Field(3600.0, gt=0, le=86_400, description="seconds a chunk may take before the run stops")
    sample: SampleConfig = Field(default_factory=SampleConfig)
    value_rate: float = Field(0.25, gt=0, le=1, description="share of all decisions kept for the critic")
    worlds: int = Field(8, gt=0, le=1000, description="PIMC worlds per card-play target")
    solver_tricks: int = Field(4, ge=0, le=13, description="tricks left at which the exact solver replaces playouts")
    base: Literal["policy", "heuristic"] = Field(
        "policy", description="the policy that plays the deals and the playouts and whose choices the advantages are "
                              "measured against: the current network, or the heuristic (one improvement step over "
                              "it, ~10x cheaper per playout)")
    play_targets: Literal["pimc", "rollout"] = Field(
        "pimc", description="card-play targets by PIMC over `worlds` sampled worlds (no hidden card), or by one "
                            "playout of each legal card on the real deal, as the bids are")
    cache: bool = Field(False, description="keep each iteration's data in <run dir>/data_N.npz; a later run over "
                                           "the very same deals (same settings, seeds and weights) reads them")


class ExitEvaluationConfig(Section):
    """Duplicate evaluation of the greedy network against the heuristic."""

    interval: int = Field(1, ge=0, le=10_000, description="iterations between evaluations (0: none); the last always")
    deals: int = Field(200, ge=0, le=MAX_DEALS)
    seed: int = Field(12345, ge=0, le=MAX_SEED)


class ExitCheckpointConfig(Section):
    """Checkpoints: ``latest.pt`` and the last ``keep`` ``step_N.pt`` (one per iteration)."""

    dir: str | None = Field(None, description="default: <run dir>/checkpoints")
    keep: int = Field(3, gt=0, le=1000)


class ExitConfig(Section):
    """A whole expert-iteration run."""

    seed: int = Field(1, ge=0, le=MAX_SEED)
    deterministic: bool = True
    torch_threads: TorchThreads = 1
    iterations: int = Field(3, gt=0, le=10_000)
    init_from: str | None = Field(None, description="a checkpoint whose network (same spec) starts iteration 0")
    rules: RulesConfig = Field(default_factory=RulesConfig)
    network: NetworkConfig = Field(default_factory=lambda: NetworkConfig(advice="heuristic"))
    generation: GenerationConfig = Field(default_factory=GenerationConfig)
    fit: FitConfig = Field(default_factory=FitConfig)
    evaluation: ExitEvaluationConfig = Field(default_factory=ExitEvaluationConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)
    checkpoint: ExitCheckpointConfig = Field(default_factory=ExitCheckpointConfig)
    distributed: DistributedConfig = Field(default_factory=DistributedConfig)

    @model_validator(mode="after")
    def _a_starting_policy(self) -> ExitConfig:
        # The heuristic as the base plays the first iteration's deals itself: a fresh network without advice
        # then learns every decision from the heuristic's rollouts (a network that makes every decision itself).
        if self.network.advice != "heuristic" and self.init_from is None and self.generation.base != "heuristic":
            raise ValueError("iteration 0 needs a policy worth improving: network.advice: heuristic, init_from, "
                             "or generation.base: heuristic")
        return self

    def to_dict(self) -> dict[str, Any]:
        """Plain data (YAML/JSON-able), as the run folder's config.yaml holds it."""
        return self.model_dump(mode="json")


# -- the config file ------------------------------------------------------------------------------

def load_exit_config(path: str | Path, overrides: Iterable[str] = ()) -> ExitConfig:
    """Read and validate an expert-iteration config with ``key.sub=value`` overrides, through the
    same loader as the PPO configs (:func:`training.settings.config.load_config`: safe YAML, errors that
    name the file, the key and the override to blame; the run named after the file)."""
    return load_config(path, overrides, model=ExitConfig)


# -- the network and its checkpoints ---------------------------------------------------------------

def build_model(config: ExitConfig, rules: Rules) -> ActorCritic:
    """The config's network, fresh (seeded by torch's global generator)."""
    nc = config.network
    return ActorCritic.for_rules(rules, nc.hidden_sizes, nc.activation,
                                 critic_extra=central_size(rules) if nc.critic == "central" else 0,
                                 advice=nc.advice, advice_weight=nc.advice_weight,
                                 phase_slice=ObservationEncoder(rules).phase_slice() if nc.advice_per_kind else None)


def _payload(model: ActorCritic, rules: Rules, config: ExitConfig, iteration: int, time_s: float) -> dict[str, Any]:
    return {"kind": CHECKPOINT_KIND, "rules": rules.to_dict(), "model_spec": model.spec(), "model": model.state_dict(),
            "config": config.to_dict(),
            "counters": {"iteration": iteration, "global_step": iteration * ITERATION_STEP, "time_s": time_s}}


def _resume_from(run: RunFolder, model: ActorCritic, rules: Rules, config: ExitConfig, log: Log) -> tuple[int, float]:
    """Load ``latest.pt`` into ``model``: the iterations done and the time they took."""
    data = read_checkpoint(run.latest, rules)
    if data.get("kind") != CHECKPOINT_KIND:
        raise CheckpointError(f"{run.latest} is not an expert-iteration checkpoint (kind {data.get('kind')!r})")
    saved, now = data["config"], config.to_dict()
    for section in ("rules", "network"):
        if saved.get(section) != now[section]:
            raise ConfigError(f"--resume: the {section} section differs from the run's ({saved.get(section)}); "
                              "resume with the run's config, or start a new run")
    changed = sorted(k for k in now if k not in ("logging", "iterations") and saved.get(k) != now[k])
    if changed:
        log(f"resuming with changed settings: {', '.join(changed)}")
    model.load_state_dict(data["model"])
    return int(data["counters"]["iteration"]), float(data["counters"]["time_s"])


# -- the run ---------------------------------------------------------------------------------------

def _seeds(config: ExitConfig, iteration: int, count: int) -> list[int]:
    """``count`` seeds for iteration ``iteration``: a function of the run's seed and the iteration
    alone, so a resumed run draws what the uninterrupted one drew."""
    rng = np.random.default_rng(np.random.SeedSequence([config.seed, iteration]))
    return [int(s) for s in rng.integers(2**31, size=count)]


def _jobs(config: ExitConfig, rules: Rules, model: ActorCritic, seeds: list[int]) -> list[ChunkJob]:
    g = config.generation
    weights = {k: v.detach().cpu().numpy().copy() for k, v in model.state_dict().items()}
    return [ChunkJob(rules, seed, deals, model.spec(), weights, g.sample.rates(), g.value_rate, g.worlds, g.solver_tricks,
                     g.base, g.play_targets, g.starting_scores, g.win_bonus)
            for seed, deals in zip(seeds, chunk_sizes(g.deals, g.chunk_deals), strict=True)]


def _evaluate(config: ExitConfig, rules: Rules, model: ActorCritic) -> dict[str, float]:
    report = evaluate_policy(model, rules, "heuristic", config.evaluation.deals, config.evaluation.seed, "exit")
    mean, lo, hi = score_ci(report)
    return {"eval_heuristic_mean": mean, "eval_heuristic_lo": lo, "eval_heuristic_hi": hi}


def _evaluation_due(config: ExitConfig, iteration: int) -> bool:
    every = config.evaluation.interval
    return config.evaluation.deals > 0 and every > 0 and (iteration % every == 0 or iteration == config.iterations)


def _data_key(config: ExitConfig, rules: Rules, model: ActorCritic, seeds: list[int]) -> str:
    """What an iteration's data depend on: the rules, the generation settings but the workers, the
    seeds and (unless the heuristic is the base policy) the network's weights."""
    settings = config.generation.model_dump(mode="json")
    generation = {k: v for k, v in settings.items() if k not in ("workers", "chunk_timeout", "cache")}
    digest = ""
    if config.generation.base == "policy":
        h = hashlib.sha256(json.dumps(model.spec(), sort_keys=True).encode())
        for name, tensor in sorted(model.state_dict().items()):
            h.update(name.encode())
            h.update(tensor.detach().cpu().numpy().tobytes())
        digest = h.hexdigest()
    return json.dumps({"rules": rules.to_dict(), "generation": generation, "seeds": seeds, "weights": digest},
                      sort_keys=True)


def run_iteration(config: ExitConfig, rules: Rules, model: ActorCritic, iteration: int, runlog: RunLog,
                  log: Log, run_dir: Path) -> dict[str, Any]:
    """Iteration ``iteration`` (1-based): generate (or read the data cached in ``run_dir`` for
    exactly these deals), fit, evaluate; returns its ``progress.csv`` row."""
    started = time.time()
    seeds = _seeds(config, iteration, len(chunk_sizes(config.generation.deals, config.generation.chunk_deals)) + 1)
    jobs = _jobs(config, rules, model, seeds[1:])
    g = config.generation
    data = generate_cached(jobs, g.workers, g.chunk_timeout, run_dir / f"data_{iteration}.npz" if g.cache else None,
                           _data_key(config, rules, model, seeds), f"iteration {iteration}", config.logging.progress,
                           Backend.from_config(config.distributed))
    generated = time.time()
    stats = target_stats(data)
    counts = ", ".join(f"{int(stats[kind + '_targets'])} {kind}" for kind in DECISION_KINDS)
    log(f"iteration {iteration}: {config.generation.deals} deals in {generated - started:.0f} s, "
        f"{int(stats['targets'])} targets ({counts}), "
        f"{int(stats['value_samples'])} value samples; the best candidate beats the policy's choice at "
        f"{stats['improvable']:.0%} of them")
    step0 = (iteration - 1) * ITERATION_STEP

    def log_epoch(m: dict[str, float]) -> None:
        runlog.write({"kind": "exit_fit", "global_step": step0 + int(m["epoch"]), "update": iteration,
                      "policy_loss": m["policy_loss"], "value_loss": m["held_value_loss"],
                      "imitation_agreement": m["agreement"], "rollout_gain": RESULT_SCALE * m["gain"],
                      "rollout_gain_se": RESULT_SCALE * m["gain_se"], "rollout_deviation": m["deviation"]})

    history = fit(model, data, config.fit, seeds[0], torch.device("cpu"), rules, log, log_epoch)
    kept = max(reversed(history), key=lambda m: selection_bound(m, config.fit))  # the last of the best: what fit kept
    row: dict[str, Any] = {
        "kind": "exit", "global_step": iteration * ITERATION_STEP, "update": iteration,
        "deals": iteration * config.generation.deals, "batch_size": int(stats["targets"]),
        "policy_loss": kept["policy_loss"], "value_loss": kept["held_value_loss"],
        "imitation_agreement": kept["agreement"], "rollout_gain": RESULT_SCALE * kept["gain"],
        "rollout_gain_se": RESULT_SCALE * kept["gain_se"], "rollout_deviation": kept["deviation"],
        "generation_s": generated - started, "fit_s": time.time() - generated,
        "kept_epoch": kept["epoch"], **stats,
    }
    if _evaluation_due(config, iteration):
        row.update(_evaluate(config, rules, model))
        log(f"iteration {iteration}: vs heuristic, {config.evaluation.deals} duplicate deals: "
            f"{row['eval_heuristic_mean']:+.1f} [{row['eval_heuristic_lo']:+.1f}, {row['eval_heuristic_hi']:+.1f}] per deal")
    return row


def train_exit(config: ExitConfig, resume: bool = False, overwrite: bool = False, log: Log = print) -> Path:
    """Run (or resume) the expert iteration a config describes; returns the path of ``final.pt``."""
    rules = config.rules.to_rules()
    torch.use_deterministic_algorithms(config.deterministic)
    limit_threads(config.torch_threads)
    torch.manual_seed(config.seed)
    model = build_model(config, rules)
    run = open_run(config, resume, overwrite, log)  # type: ignore[arg-type]  # reads .logging and .checkpoint.dir
    saved_config = run.run_dir / "config.yaml"
    run.manifest.add(saved_config, CONFIG)
    save_config(config, saved_config)
    done, time_before = 0, 0.0
    if resume:
        done, time_before = _resume_from(run, model, rules, config, log)
        log(f"resuming {run.run_dir} after iteration {done}")
    elif config.init_from:
        data = read_checkpoint(config.init_from, rules)
        if data["model_spec"] != model.spec():
            raise ConfigError(f"init_from: {config.init_from} holds another network ({data['model_spec']}; "
                              f"this config builds {model.spec()})")
        load_training_weights(model, data, config.init_from)
    runlog = RunLog(run, config.logging, done * ITERATION_STEP + 1 if resume else None, log)
    start = time.time()
    try:
        for iteration in range(done + 1, config.iterations + 1):
            if config.generation.cache:
                run.manifest.add(run.run_dir / f"data_{iteration}.npz", CACHE)
            row = run_iteration(config, rules, model, iteration, runlog, log, run.run_dir)
            row["time_s"] = time_before + time.time() - start
            runlog.write(row)
            write_checkpoint(run, _payload(model, rules, config, iteration, row["time_s"]), config.checkpoint.keep,
                             periodic=True)
    finally:
        runlog.close()
    final = run.run_dir / "final.pt"
    save_checkpoint_file(run, final, {"rules": rules.to_dict(), "model_spec": model.spec(), "model": model.state_dict()})
    log(f"done: {final} ({config.iterations} iterations; five-hundred evaluate {final} heuristic)")
    return final


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m training.algorithms.expert_iteration CONFIG.yaml [KEY=VALUE ...] [--resume] [--overwrite]``;
    returns the exit status (2, with a one-line message, for a bad config, run folder or checkpoint)."""
    parser = argparse.ArgumentParser(prog="five-hundred exit", description="Expert iteration: learn from search.")
    parser.add_argument("config", help="an expert-iteration YAML config (configs/exit_australian.yaml)")
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="config overrides, e.g. iterations=5")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--resume", action="store_true", help="continue the run from its latest.pt")
    group.add_argument("--overwrite", action="store_true", help="delete the run's files and start again")
    args = parser.parse_args(argv)
    try:
        config = load_exit_config(args.config, args.overrides)
        train_exit(config, resume=args.resume, overwrite=args.overwrite)
    except (ValueError, OSError) as e:  # ConfigError, RunFolderError and CheckpointError are ValueErrors
        print(f"five-hundred exit: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
