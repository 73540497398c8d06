"""Search distillation: a network that makes every decision itself, fitted to datasets of play.

``five-hundred train CONFIG.yaml [key.sub=value ...] [--resume]`` runs :func:`train_distill` when
the config says ``train.algorithm: distill`` (``configs/distill_australian.yaml``); every setting
comes from the config (:class:`training.settings.distill_config.DistillConfig`).

Data
    Two sources of deals, each played in every seat by one agent and written as dataset chunks
    (``five-hundred dataset``'s format, docs/datasets.md) under ``data.dir``: ``data.imitation``
    (a fast agent: the heuristic, thousands of deals a CPU-second) and ``data.search`` (the search,
    ``pimc``, whose records hold every searched candidate's value), with ``data.more_search``'s
    deals fitted beside the latter's (the earlier rounds' data in a round of search over the
    network). A chunk is played once and kept: another run, a resumed one or a larger ``deals``
    reads the chunks already there.

The fits
    The network (:class:`agents.neural.ActorCritic`, policy only, no advice input) first imitates
    the fast agent's choices (cross-entropy over the masked logits) for ``fit.imitation_decisions``
    decisions, then passes ``fit.search_epochs`` times over the search's decisions of
    ``fit.kinds``: the target is ``soft_weight`` × softmax(value / ``temperature``) over the
    searched candidates plus the rest on the search's own choice (a decision that was not searched,
    its choice alone); forced decisions teach nothing and are left out. ``fit.mix`` imitation
    batches join each search batch's loss, so the decisions the search's data covers thinly keep
    what imitation taught.
    With ``network.form: q`` the network is instead the DMC network of ``network.init``, its
    Q-values fitted to the search's values (:mod:`training.algorithms.distill_q`; no imitation fit),
    and ``final.pt`` is a DMC checkpoint.

Choosing the network
    After the imitation fit, every ``evaluation.interval`` search epochs and after the last the network plays
    ``evaluation.opponent`` in duplicate (``evaluation.deals`` boards and ``evaluation.games``
    games to 500); the one with the most games won (then points per deal) becomes ``final.pt``,
    a policy file that every command loads (the game's result is the real reward: a network that
    wins deals and not games is not the better one).

Runs
    The run folder and ``--resume``/``--overwrite`` are :mod:`training.records.runs`'; the log
    rows (``distill_imitation``, ``distill_search``, ``distill_eval``) go through
    :class:`training.records.runlog.RunLog`. ``latest.pt`` is written after each fit stage and
    each search epoch; a resumed run goes on from the stage after it (a stage interrupted midway
    is fitted again from its start, from the same state: the result is the same).
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml
from torch.nn import functional

from agents.base import DECISION_KINDS, KIND_OF_PHASE
from agents.dmc import QNetwork
from agents.neural import ActorCritic, read_checkpoint
from agents.policy_files import write_policy
from agents.weights_files import DISTILL_FORMAT
from five_hundred_env.actions import ActionTable
from five_hundred_env.dataset import MANIFEST, DatasetError, open_dataset
from five_hundred_env.engine import Phase
from five_hundred_env.files import make_folder
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules
from training.algorithms.distill_q import build_q_network, q_loss, write_q_network
from training.evaluation.evaluate import EvaluationReport
from training.evaluation.policy_evaluation import evaluate_policy
from training.records.runlog import RunLog
from training.records.runs import (
    CONFIG,
    RunFolder,
    open_run,
    read_resume_checkpoint,
    save_checkpoint_file,
    stop_on_a_full_disk,
)
from training.rollouts.datasets import generate_dataset
from training.rollouts.decision_dataset import DecisionDataset
from training.settings.distill_config import DatasetSource, DistillConfig
from training.workers.threads import limit_threads

Log = Callable[[str], None]


# -- the datasets --------------------------------------------------------------------------------

AGENT_IN_NAME = 120
"""The most characters of an agent spec that a chunk folder's name holds."""


def chunk_folder(data_dir: str | Path, rules: Rules, source: DatasetSource, starting_scores: str,
                 seed: int, deals: int) -> Path:
    """The folder of one chunk: its preset, agent, starting scores, seed and size in the name (an
    agent spec longer than :data:`AGENT_IN_NAME` characters cut there and followed by a hash of the
    whole spec: a file name holds at most 255 bytes)."""
    agent = re.sub(r"[^A-Za-z0-9_.=-]+", "_", source.agent)
    if len(agent) > AGENT_IN_NAME:
        agent = f"{agent[:AGENT_IN_NAME - 13]}-{hashlib.sha256(source.agent.encode()).hexdigest()[:12]}"
    return Path(data_dir) / f"{rules.preset or 'custom'}-{agent}-{starting_scores}-s{seed}-{deals}"


def ensure_chunks(config: DistillConfig, source: DatasetSource, rules: Rules, log: Log) -> list[Path]:
    """Every chunk of ``source``: those already in ``data.dir`` (checked: the same rules and agent)
    and the missing ones, played now."""
    data = config.data
    make_folder(data.dir, "data.dir")  # the one missing folder a command may create (five_hundred_env.files)
    folders = []
    for seed, deals in source.chunks():
        folder = chunk_folder(data.dir, rules, source, data.starting_scores, seed, deals)
        if (folder / MANIFEST).exists():
            found = open_dataset(folder, verify=False)
            if found.rules != rules or found.agent != source.agent or found.deals != deals:
                raise DatasetError(f"{folder} holds {found.deals} deals of {found.agent} under other rules or "
                                   f"agent than this run's: move it away, or give another data.dir")
        else:
            start = time.time()
            manifest = generate_dataset(source.agent, rules, deals, folder, seed=seed, workers=data.workers,
                                        starting_scores=data.starting_scores)
            log(f"played {folder}: {manifest['decisions']:,} decisions in {time.time() - start:.0f} s")
        folders.append(folder)
    return folders


def _cpu_seconds(folders: list[Path]) -> float:
    """The CPU-seconds the chunks' games took to play (their manifests'): the data's share of a run's budget."""
    return round(sum(float(json.loads((folder / MANIFEST).read_text()).get("cpu_seconds", 0)) for folder in folders), 3)


def _batches(folders: list[Path], batch_size: int, seed: int, epoch: int) -> Iterator[dict[str, torch.Tensor]]:
    """One pass over the chunks' decisions: the chunks in an order of ``(seed, epoch)``, each
    chunk's deals shuffled by the same."""
    order = np.random.default_rng([seed, epoch]).permutation(len(folders))
    for i in order:
        data = DecisionDataset(folders[i], batch_size, shuffle=True, seed=seed, verify=False)
        data.set_epoch(epoch)
        yield from data


def _endless(folders: list[Path], batch_size: int, seed: int) -> Iterator[dict[str, torch.Tensor]]:
    epoch = 0
    while True:
        yield from _batches(folders, batch_size, seed, epoch)
        epoch += 1


# -- the fits ------------------------------------------------------------------------------------

def build_policy(config: DistillConfig, rules: Rules) -> ActorCritic:
    """The config's policy network: fresh (seeded by torch's global generator), or with the actor
    weights of ``network.init``, which must be a network of these rules with the config's sizes and
    activation and no advice input (a ``ValueError`` names what differs)."""
    model = ActorCritic.for_rules(rules, config.network.hidden_sizes, config.network.activation, policy_only=True,
                                 card_features=config.network.card_features)
    path = config.network.init
    if path:
        data = read_checkpoint(path, rules)  # its spec and weights checked
        ours, theirs = _shape(model.spec()), _shape(data["model_spec"])
        differ = [k for k in ours if ours[k] != theirs[k]]
        if differ:
            raise ValueError(f"network.init {path}: its network differs from the config's in "
                             + ", ".join(f"{k} ({theirs[k]!r}, the config {ours[k]!r})" for k in differ))
        model.load_state_dict({name: data["model"][name] for name in model.state_dict()})  # a critic, if any, is left
    return model


def _shape(spec: dict[str, Any]) -> dict[str, Any]:
    """What ``network.init``'s network must share with the config's: sizes, inputs, outputs."""
    shape = {k: spec[k] for k in ("obs_size", "num_actions", "hidden_sizes", "activation", "advice", "scores_at")}
    return {**shape, "card_features": spec.get("card_features") is not None}


@functools.cache
def _kind_of_phase(rules: Rules) -> tuple[slice, torch.Tensor]:
    """Where the observation's phase one-hot lies, and the index in :data:`DECISION_KINDS` of each
    of its phases (in the order of the Phase values)."""
    start, stop = ObservationEncoder(rules).phase_slice()
    kinds = [DECISION_KINDS.index(KIND_OF_PHASE.get(Phase(p), "play")) for p in range(stop - start)]
    return slice(start, stop), torch.tensor(kinds)


def decision_kinds(obs: torch.Tensor, rules: Rules) -> torch.Tensor:
    """Each row's decision kind, as its index in :data:`agents.base.DECISION_KINDS` (read from the
    observation's phase one-hot)."""
    phase, kind_of = _kind_of_phase(rules)
    return kind_of[obs[:, phase].float().argmax(1)]


def search_targets(batch: dict[str, torch.Tensor], num_actions: int, temperature: float,
                   soft_weight: float) -> torch.Tensor:
    """Each decision's target distribution: ``soft_weight`` on softmax(value / ``temperature``)
    over its searched candidates and the rest on the action taken; only the action where nothing
    was searched."""
    target = functional.one_hot(batch["action"], num_actions).float()
    values = batch.get("values")
    if values is None or soft_weight == 0:
        return target
    searched = ~torch.isnan(values).all(1)
    soft = torch.softmax(torch.nan_to_num(values, nan=-torch.inf).masked_fill(~searched[:, None], 0) / temperature, 1)
    return torch.where(searched[:, None], soft_weight * soft + (1 - soft_weight) * target, target)


def _cross_entropy(logits: torch.Tensor, target: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    # Masked logits are -1e8 where the target is 0: clamp so that 0 × -1e8 stays finite.
    per_row = -(target * torch.log_softmax(logits, 1).clamp_min(-1e4)).sum(1)
    return (per_row * weight).sum() / weight.sum().clamp_min(1)


@dataclass
class DistillState:
    """Everything ``latest.pt`` restores."""

    model: ActorCritic | QNetwork
    optimizer: torch.optim.Optimizer
    stage: int = 0
    """Stages done: 0 none, 1 the imitation fit, 1 + k the search's k-th epoch."""
    decisions: int = 0
    time_before: float = 0.0
    start: float = field(default_factory=time.time)
    best: dict[str, Any] | None = None
    """The best network so far: ``state`` (its weights), ``stage`` and its evaluation's ``games`` and ``points``."""
    evaluations: list[dict[str, Any]] = field(default_factory=list)

    def elapsed(self) -> float:
        return self.time_before + time.time() - self.start

    def payload(self, rules: Rules, config: DistillConfig) -> dict[str, Any]:
        return {"format": DISTILL_FORMAT, "rules": rules.to_dict(), "model_spec": self.model.spec(),
                "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                "config": config.to_dict(), "best": self.best, "evaluations": self.evaluations,
                "torch_rng": torch.get_rng_state(),
                "counters": {"stage": self.stage, "global_step": self.decisions, "time_s": self.elapsed()}}


PROGRESS_STEPS = 500
"""Adam steps between progress lines (with ``logging.progress``)."""


def fit_pass(model: ActorCritic | QNetwork, optimizer: torch.optim.Optimizer, batches: Iterator[dict[str, torch.Tensor]],
             rules: Rules, config: DistillConfig, limit: int | None, mix: Iterator[dict[str, torch.Tensor]] | None,
             search: bool, log: Log | None = None) -> dict[str, float]:
    """One fit over ``batches`` (at most ``limit`` decisions); returns the loss and the share of
    the fitted decisions where the network's choice is the data's. ``log`` gets a progress line
    every :data:`PROGRESS_STEPS` steps."""
    fc = config.fit
    kinds = torch.tensor([DECISION_KINDS.index(k) for k in fc.kinds])
    num_actions = len(ActionTable(rules))
    seen = agreed = 0
    total_loss = 0.0
    steps = 0
    for batch in batches:
        weight = (batch["mask"].sum(1) > 1).float()  # a forced decision teaches nothing
        if search:
            weight = weight * torch.isin(decision_kinds(batch["obs"], rules), kinds).float()
        if isinstance(model, QNetwork):
            loss, choice = q_loss(model, batch, weight, fc.value_scale)
        else:
            logits = model.masked_logits(batch["obs"], batch["mask"])
            target = (search_targets(batch, num_actions, fc.temperature, fc.soft_weight) if search
                      else functional.one_hot(batch["action"], num_actions).float())
            loss, choice = _cross_entropy(logits, target, weight), logits.argmax(1)
        for _ in range(fc.mix if mix is not None else 0):
            extra = next(mix)
            loss = loss + _cross_entropy(model.masked_logits(extra["obs"], extra["mask"]),
                                         functional.one_hot(extra["action"], num_actions).float(),
                                         torch.ones(len(extra["action"]))) / fc.mix
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        steps += 1
        total_loss += loss.item()
        agreed += int(((choice == batch["action"]).float() * weight).sum())
        seen += int(weight.sum())
        if log is not None and steps % PROGRESS_STEPS == 0:
            log(f"  {seen:,} decisions{f' of {limit:,}' if limit else ''}: loss {total_loss / steps:.3f}, "
                f"the data's choice in {agreed / max(seen, 1):.1%}")
        if limit is not None and seen >= limit:
            break
    return {"decisions": seen, "loss": total_loss / max(steps, 1), "agreement": agreed / max(seen, 1)}


def _evaluate(model: ActorCritic | QNetwork, rules: Rules, config: DistillConfig, label: str) -> EvaluationReport:
    ev = config.evaluation
    return evaluate_policy(model, rules, ev.opponent, ev.deals, ev.seed, label=label, games=ev.games)


def _score(report: EvaluationReport) -> tuple[float, float]:
    return (report.game_wins_a / report.games if report.games else 0.0, report.score_diff[0])


def _resume(state: DistillState, run: RunFolder, config: DistillConfig, log: Log) -> None:
    data = read_resume_checkpoint(run, DISTILL_FORMAT, "a distillation run's checkpoint", config.to_dict(),
                                  ("rules", "network", "data", "fit"))
    state.model.load_state_dict(data["model"])
    state.optimizer.load_state_dict(data["optimizer"])
    torch.set_rng_state(data["torch_rng"])
    state.best, state.evaluations = data["best"], data["evaluations"]
    c = data["counters"]
    state.stage, state.decisions, state.time_before = int(c["stage"]), int(c["global_step"]), float(c["time_s"])
    log(f"resumed {run.run_dir} after stage {state.stage} of {1 + config.fit.search_epochs}")


@dataclass
class DistillResult:
    """What :func:`train_distill` returns."""

    run_dir: Path
    final_checkpoint: Path
    evaluations: list[dict[str, Any]]


def train_distill(config: DistillConfig, resume: bool = False, overwrite: bool = False,
                  stop_after_stages: int | None = None, log: Log = print) -> DistillResult:
    """Fit the network as the config says (see the module docstring). ``resume`` continues from
    the run's ``latest.pt``, ``overwrite`` starts it again; ``stop_after_stages`` stops after that
    many stages of this session, as an interrupted run would."""
    rules = config.to_rules()
    limit_threads(config.torch_threads)
    torch.use_deterministic_algorithms(config.deterministic)
    random.seed(config.seed)
    np.random.seed(config.seed % 2**32)
    torch.manual_seed(config.seed)
    fc = config.fit
    model = build_q_network(config, rules) if config.network.form == "q" else build_policy(config, rules)
    state = DistillState(model, torch.optim.Adam(model.parameters(), lr=fc.imitation_learning_rate))
    run = open_run(config, resume, overwrite, log)  # type: ignore[arg-type]  # reads .logging and .checkpoint.dir
    saved_config = run.run_dir / "config.yaml"
    run.manifest.add(saved_config, CONFIG)
    saved_config.write_text(yaml.safe_dump(config.to_dict(), sort_keys=False))
    if resume:
        _resume(state, run, config, log)
    runlog = RunLog(run, config.logging, state.decisions if resume else None, log)
    imitating = bool(config.data.imitation.deals and fc.imitation_decisions)
    imitation = ensure_chunks(config, config.data.imitation, rules, log) if config.data.imitation.deals else []
    search = [folder for source in config.data.search_sources if fc.search_epochs
              for folder in ensure_chunks(config, source, rules, log)]
    progress = log if config.logging.progress else None
    stages = [("imitation", 0)] * imitating + [("search", e) for e in range(fc.search_epochs if search else 0)]
    evaluations = state.evaluations
    done_now = 0
    try:
        for number, (stage, epoch) in enumerate(stages, start=1):
            if number <= state.stage:
                continue
            if stop_after_stages is not None and done_now >= stop_after_stages:
                log(f"stopped after stage {state.stage}; continue with --resume")
                return DistillResult(run.run_dir, run.latest, evaluations)
            lr = fc.imitation_learning_rate if stage == "imitation" else fc.search_learning_rate
            for group in state.optimizer.param_groups:
                group["lr"] = lr
            start = time.time()
            if stage == "imitation":
                metrics = fit_pass(model, state.optimizer, _endless(imitation, fc.batch_size, config.seed), rules,
                                   config, fc.imitation_decisions, None, search=False, log=progress)
            else:
                mix = _endless(imitation, fc.batch_size, config.seed + 1 + epoch) if fc.mix and imitation else None
                metrics = fit_pass(model, state.optimizer, _batches(search, fc.batch_size, config.seed, epoch), rules,
                                   config, None, mix, search=True, log=progress)
            state.decisions += metrics["decisions"]
            row = {"kind": f"distill_{stage}", "global_step": state.decisions, "time_s": state.elapsed(),
                   "learning_rate": lr, "policy_loss": metrics["loss"], "imitation_agreement": metrics["agreement"],
                   "steps_per_s": metrics["decisions"] / max(time.time() - start, 1e-9)}
            runlog.write(row)
            log(f"{stage}{'' if stage == 'imitation' else f' epoch {epoch + 1}'}: {metrics['decisions']:,} decisions, "
                f"loss {metrics['loss']:.3f}, the data's choice in {metrics['agreement']:.1%}")
            state.stage = number
            due = stage == "imitation" or (epoch + 1) % config.evaluation.interval == 0 or number == len(stages)
            if config.evaluation.deals and due:
                report = _evaluate(model, rules, config, f"stage {number}")
                games, points = _score(report)
                mean, lo, hi, _ = report.score_diff
                evaluations.append({"stage": number, "fit": stage, "epoch": epoch, "report": report.to_dict()})
                runlog.write({"kind": "distill_eval", "global_step": state.decisions, "time_s": state.elapsed(),
                              "eval_heuristic_mean": mean, "eval_heuristic_lo": lo, "eval_heuristic_hi": hi,
                              "games_won": games})
                log(f"  against {config.evaluation.opponent}: {mean:+.1f} [{lo:+.1f}, {hi:+.1f}] a deal, "
                    f"{games:.1%} of {report.games} games")
                if state.best is None or (games, points) > (state.best["games"], state.best["points"]):
                    state.best = {"state": {k: v.clone() for k, v in model.state_dict().items()}, "stage": number,
                                  "games": games, "points": points}
            save_checkpoint_file(run, run.latest, state.payload(rules, config))
            done_now += 1
        final = run.run_dir / "final.pt"
        if state.best is not None:
            model.load_state_dict(state.best["state"])
        run.manifest.add(final)
        budget = {"decisions": state.decisions, "time_s": state.elapsed(), "data_cpu_s": _cpu_seconds([*imitation, *search])}
        if isinstance(model, QNetwork):
            write_q_network(model, rules, config, run, final, budget)
        else:
            write_policy(model, rules, final, note=f"search distillation ({config.logging.run_name}), stage "
                         f"{state.best['stage'] if state.best else state.stage}",
                         origin={"source": "train.algorithm: distill", "config": config.to_dict(), "budget": budget})
        path = run.run_dir / "final_eval.json"
        run.manifest.add(path)
        path.write_text(json.dumps({"chosen_stage": state.best["stage"] if state.best else state.stage,
                                    "evaluations": evaluations}, indent=2))
    except OSError as e:
        stop_on_a_full_disk(e, run, state.decisions)
    finally:
        runlog.close()
    log(f"fitted {state.decisions:,} decisions in {state.elapsed():.0f} s; agent: {final}")
    return DistillResult(run.run_dir, final, evaluations)


__all__ = ["DISTILL_FORMAT", "DistillResult", "build_policy", "chunk_folder", "decision_kinds", "ensure_chunks",
           "search_targets", "train_distill"]
