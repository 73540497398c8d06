"""Deep Monte-Carlo (DMC) self-play for Five Hundred, as DouZero trains: Q(o, a), Monte-Carlo returns, ε-greedy.

``five-hundred train CONFIG.yaml [key.sub=value ...] [--resume]`` runs :func:`train_dmc` when the
config says ``train.algorithm: dmc`` (``configs/dmc_australian.yaml``); every setting comes from
the config (:class:`training.settings.dmc_config.DmcConfig`, validated as the PPO configs are).

Collection
    One :class:`five_hundred_env.vector.BatchEngine` of ``train.num_envs`` games; every seat of
    every game is the current network (self-play, one network for all seats: the observation is
    the seat's own view). Each step, each game's acting seat plays the legal action of highest
    Q-value, or with probability ε (``epsilon_start`` decaying linearly to ``epsilon_end`` over
    ``epsilon_decay_steps`` learner steps) a uniformly random legal one (drawn inside the engine).

Monte-Carlo returns
    A decision's target is its seat's return from that decision to the end of its episode,
    undiscounted: the sum of the rewards its seat is credited with afterwards (``env.reward``:
    the deal's zero-sum result, or with ``env.episode: game`` and ``reward: win`` the game's ±1,
    optionally shaped by the deals' results: docs/vector.md). No bootstrapping: a decision enters
    training once its episode has ended.

The update
    Every ``train.batch_size`` finished decisions: one pass of Adam over them in minibatches of
    ``train.minibatch_size``, on the mean squared error between Q(o, a) and the return (each
    decision trained on once, as in DouZero), gradients clipped to ``max_grad_norm``. A
    non-finite loss, gradient or weight stops training before anything non-finite is written.

Runs
    The run folder, ``latest.pt``/``step_N.pt`` and ``--resume``/``--overwrite`` are
    :mod:`training.records.runs`'; the log rows (``kind: dmc``) go through :class:`training.records.runlog.RunLog`;
    the greedy network is evaluated in duplicate against ``evaluation.opponents`` every
    ``evaluation.interval`` learner steps and at the end (``final_eval`` rows, ``final_eval.json``),
    as the PPO runs are. ``final.pt`` plays through ``agents.make_agent(path)``
    (:class:`agents.dmc.DMCAgent`). A resumed run restores the network, the optimiser, the
    generators and the counters; the games in progress at the checkpoint are dealt again from a
    seed of the run's seed and update count (their open decisions are not kept).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml
from torch import nn

from agents.dmc import DMC_FORMAT, QNetwork
from five_hundred_env.engine import Phase
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules
from five_hundred_env.vector import BatchEngine
from training.algorithms.dmc_networks import (
    OracleInput,
    build_baseline,
    build_oracle,
    build_q_network,
    load_init,
    oracle_keep,
)
from training.algorithms.warmstart import learning_line, learning_verdict
from training.evaluation.dmc_evaluation import eval_columns
from training.evaluation.policy_evaluation import START, START_NAME
from training.records.runlog import RunLog
from training.records.runs import (
    CONFIG,
    NonFiniteError,
    RunFolder,
    non_finite_tensors,
    open_run,
    read_resume_checkpoint,
    restore_rng_states,
    rng_states,
    save_checkpoint_file,
    stop_on_a_full_disk,
    write_checkpoint,
)
from training.rollouts.curriculum import Auction, TrickCredit, uniform_legal
from training.rollouts.selfplay import draw_starting_scores
from training.settings.config import ConfigError
from training.settings.dmc_config import DmcConfig, DmcTrainConfig
from training.workers.threads import limit_threads

Log = Callable[[str], None]


# -- collection: ε-greedy self-play on the batched engine, Monte-Carlo returns -----------------------

DECISION_ARRAYS = ("obs", "states", "actions", "seats", "returns", "plays")


class Decisions:
    """The decisions collected: each one's observation, action and seat, the return its seat has
    been credited since (``returns``), and which are *open* (their episode goes on) per game."""

    def __init__(self, num_games: int, obs_size: int, state_size: int = 0) -> None:
        self.obs = np.zeros((1024, obs_size), dtype=np.int8)
        self.states = np.zeros((1024, state_size), dtype=np.int8)  # the global state at each decision (baseline)
        self.actions = np.zeros(1024, dtype=np.int64)
        self.seats = np.zeros(1024, dtype=np.int64)
        self.returns = np.zeros(1024, dtype=np.float64)
        self.plays = np.zeros(1024, dtype=bool)  # a card play (the trick reward's decisions)
        self.size = 0
        self.open: list[list[int]] = [[] for _ in range(num_games)]
        self.finished: list[int] = []

    def add(self, obs: np.ndarray, actions: np.ndarray, seats: np.ndarray, states: np.ndarray | None = None,
            plays: np.ndarray | None = None) -> None:
        """One decision per game (its episode's decisions stay open until it ends); ``plays`` says
        which are card plays."""
        n = len(actions)
        if self.size + n > len(self.actions):
            self._grow(2 * (self.size + n))
        rows = slice(self.size, self.size + n)
        self.obs[rows], self.actions[rows], self.seats[rows], self.returns[rows] = obs, actions, seats, 0.0
        self.plays[rows] = False if plays is None else plays
        if states is not None:
            self.states[rows] = states
        for b in range(n):
            self.open[b].append(self.size + b)
        self.size += n

    def credit(self, rewards: np.ndarray, deal_done: np.ndarray, episode_done: np.ndarray) -> None:
        """Add each seat's reward of a deal that ended to that seat's open decisions of the game;
        close the decisions of episodes that ended (they are ready to train on)."""
        for b in np.flatnonzero(deal_done):
            rows = np.array(self.open[b], dtype=np.int64)
            self.returns[rows] += rewards[b, self.seats[rows]]
            if episode_done[b]:
                self.finished.extend(self.open[b])
                self.open[b] = []

    def add_rewards(self, rewards: np.ndarray) -> None:
        """Add ``rewards[b, s]`` to seat ``s``'s open card plays of game ``b`` (the trick reward: it
        shapes the card play alone, and leaves the value of bids and discards to the deals' results)."""
        for b in np.flatnonzero(rewards.any(axis=1)):
            rows = np.array(self.open[b], dtype=np.int64)
            rows = rows[self.plays[rows]]
            self.returns[rows] += rewards[b, self.seats[rows]]

    def take_finished(self) -> dict[str, np.ndarray]:
        """The finished decisions (removed), keeping the open ones (renumbered)."""
        done = np.array(self.finished, dtype=np.int64)
        batch = {"obs": self.obs[done], "actions": self.actions[done], "returns": self.returns[done].astype(np.float32),
                 "seats": self.seats[done], "states": self.states[done]}
        keep = np.array([i for rows in self.open for i in rows], dtype=np.int64)
        renumber = np.full(self.size, -1, dtype=np.int64)
        renumber[keep] = np.arange(len(keep))
        for name in DECISION_ARRAYS:
            array = getattr(self, name)
            array[:len(keep)] = array[keep]
        self.size = len(keep)
        self.open = [renumber[rows].tolist() for rows in self.open]
        self.finished = []
        return batch

    def _grow(self, capacity: int) -> None:
        for name in DECISION_ARRAYS:
            old = getattr(self, name)
            new = np.zeros((capacity, *old.shape[1:]), dtype=old.dtype)
            new[:self.size] = old[:self.size]
            setattr(self, name, new)


def epsilon(tc: DmcTrainConfig, step: int) -> float:
    """The exploration rate after ``step`` learner steps (linear decay, then constant)."""
    frac = min(step / tc.epsilon_decay_steps, 1.0)
    return tc.epsilon_start + frac * (tc.epsilon_end - tc.epsilon_start)


class SelfPlay:
    """ε-greedy self-play of the current network in every seat of a batched engine's games."""

    def __init__(self, config: DmcConfig, rules: Rules, model: QNetwork, rng: np.random.Generator, seed: int,
                 oracle: OracleInput | None = None) -> None:
        e = config.env
        self.engine = BatchEngine(rules, config.train.num_envs, episode=e.episode, reward=e.reward,
                                  reward_scale=e.reward_scale, win_shaping=e.win_shaping, seed=seed)
        self.model, self.rng, self.oracle = model, rng, oracle
        self.keeps_states = config.network.baseline == "central" or oracle is not None  # the baseline's, the oracle's input
        self.play_phase = ObservationEncoder(rules).layout["phase"][0] + int(Phase.PLAY)  # the observation's phase: play
        state_size = self.engine.state_size if self.keeps_states else 0
        self.decisions = Decisions(config.train.num_envs, self.engine.obs_size, state_size)
        self.auction = Auction(config.train.num_envs, rules.num_players, config.curriculum.last_bidder_bids(0))
        self.rules = rules
        self.uniform_scores = e.starting_scores == "uniform"
        self.tricks = TrickCredit(rules, config.train.num_envs) if config.curriculum.trick_reward_at(0) else None
        self.deals = 0
        self.steps = 0

    def step(self, eps: float, last_bidder_bids: float = 0.0, trick_reward: float = 0.0, keep: float = 0.0) -> None:
        """One decision in every game; ``last_bidder_bids`` and ``trick_reward`` are the curriculum's
        share of deals where the last bidder must bid and reward per trick now, ``keep`` the oracle's."""
        engine = self.engine
        masks = self.auction.masks(engine.masks)
        states = engine.state(seats=engine.seat) if self.keeps_states else None
        with torch.inference_mode():
            extra = self.oracle.features(states, keep, self.rng) if self.oracle is not None and keep else None
            greedy = self.model.greedy(torch.from_numpy(engine.obs), torch.from_numpy(masks), extra).numpy()
        explore = self.rng.random(engine.num_games) < eps
        actions = np.where(explore, uniform_legal(masks, self.rng), greedy)
        self.decisions.add(engine.obs, actions, engine.seat, states, engine.obs[:, self.play_phase] != 0)
        self.auction.record(engine.masks, actions)
        result = engine.step(actions)
        self.auction.new_deals(result.deal_done, last_bidder_bids, self.rng)
        if self.uniform_scores:
            for b in np.flatnonzero(result.deal_done):
                engine.set_scores(int(b), draw_starting_scores(self.rules, self.rng))
        if self.tricks is not None:
            tricks = self.tricks.won(result.obs, result.seat, result.deal_done)
            if trick_reward:
                self.decisions.add_rewards(trick_reward * tricks)
        self.decisions.credit(result.rewards, result.deal_done, result.episode_done)
        self.deals += int(result.deal_done.sum())
        self.steps += engine.num_games

    def collect(self, batch_size: int, eps: float, last_bidder_bids: float = 0.0,
                trick_reward: float = 0.0, keep: float = 0.0) -> dict[str, np.ndarray]:
        """Play until ``batch_size`` decisions of ended episodes are ready; returns them."""
        while len(self.decisions.finished) < batch_size:
            self.step(eps, last_bidder_bids, trick_reward, keep)
        return self.decisions.take_finished()


# -- the update ------------------------------------------------------------------------------------

def dmc_update(model: QNetwork, optimizer: torch.optim.Optimizer, batch: dict[str, np.ndarray], tc: DmcTrainConfig,
               rng: np.random.Generator, baseline: QNetwork | None = None, oracle: OracleInput | None = None,
               keep: float = 0.0) -> dict[str, float]:
    """One pass over the batch, in minibatches: MSE between Q(o, a) and the Monte-Carlo return, or
    with a ``baseline`` (a value of the global state, fitted to the return) the return less the
    baseline's value of the state the decision was taken in; with an ``oracle`` and ``keep`` above
    0, Q also reads the hidden cards, each entry kept with probability ``keep``."""
    n = len(batch["actions"])
    order = rng.permutation(n)
    losses, baseline_losses = [], []
    parameters = [p for group in optimizer.param_groups for p in group["params"]]  # the Q-network's and the baseline's
    for start in range(0, n, tc.minibatch_size):
        mb = order[start:start + tc.minibatch_size]
        rows = torch.arange(len(mb))
        returns = torch.from_numpy(batch["returns"][mb])
        extra = oracle.features(batch["states"][mb], keep, rng) if oracle is not None and keep else None
        q = model.q(torch.from_numpy(batch["obs"][mb]), rows, torch.from_numpy(batch["actions"][mb]), extra)
        loss = torch.zeros(())
        if baseline is not None:
            value = baseline.q(torch.from_numpy(batch["states"][mb]), rows, torch.zeros(len(mb), dtype=torch.int64))
            baseline_loss = nn.functional.mse_loss(value, returns)
            loss = loss + baseline_loss
            baseline_losses.append(baseline_loss.item())
            returns = returns - value.detach()
        q_loss = nn.functional.mse_loss(q, returns)
        loss = loss + q_loss
        if not torch.isfinite(loss):
            raise NonFiniteError(f"the loss became {loss.item()}")
        optimizer.zero_grad()
        loss.backward()
        norm = nn.utils.clip_grad_norm_(parameters, tc.max_grad_norm)
        if not torch.isfinite(norm):
            raise NonFiniteError(f"the gradients became non-finite (norm {norm.item()})")
        optimizer.step()
        losses.append(q_loss.item())
    bad = [name for network in (model, baseline, oracle) if network is not None
           for name in non_finite_tensors(network.state_dict())]
    if bad:
        raise NonFiniteError(f"the weights {', '.join(bad[:3])} became non-finite in the update")
    metrics = {"value_loss": float(np.mean(losses)), "return_learner": float(batch["returns"].mean()), "batch_size": float(n)}
    if baseline_losses:
        metrics["baseline_loss"] = float(np.mean(baseline_losses))
    return metrics


# -- the run ---------------------------------------------------------------------------------------

@dataclass
class DmcState:
    """What a checkpoint restores: the network, the optimiser, the generators and the counters."""

    model: QNetwork
    optimizer: torch.optim.Optimizer
    rng: np.random.Generator
    baseline: QNetwork | None = None
    oracle: OracleInput | None = None
    global_step: int = 0
    env_steps: int = 0
    deals: int = 0
    updates: int = 0
    time_before: float = 0.0
    cpu_before: float = 0.0
    eval_cpu: float = 0.0
    start: float = field(default_factory=time.time)
    cpu_start: float = field(default_factory=time.process_time)

    def elapsed(self) -> float:
        return self.time_before + time.time() - self.start

    def cpu(self) -> float:
        """CPU-seconds of training (this process's, over every session of the run, the evaluations left out)."""
        return self.cpu_before + time.process_time() - self.cpu_start - self.eval_cpu

    def payload(self, rules: Rules, config: DmcConfig, whole: bool = True) -> dict[str, Any]:
        """``latest.pt``/``step_N.pt`` (``whole``) or ``final.pt`` (the network to play, and where it came from)."""
        data = {"format": DMC_FORMAT, "kind": "dmc", "rules": rules.to_dict(), "model_spec": self.model.spec(),
                "model": self.model.state_dict(), "config": config.to_dict(),
                "counters": {"global_step": self.global_step, "env_steps": self.env_steps, "deals": self.deals,
                             "updates": self.updates, "time_s": self.elapsed(), "cpu_s": self.cpu()}}
        if whole:
            data.update(optimizer=self.optimizer.state_dict(), rng=rng_states(self.rng))
            if self.baseline is not None:  # training only: the network plays without it
                data.update(baseline_spec=self.baseline.spec(), baseline=self.baseline.state_dict())
            if self.oracle is not None:  # training only, as the baseline
                data.update(oracle=self.oracle.state_dict())
        return data


@dataclass
class DmcResult:
    """What :func:`train_dmc` returns."""

    run_dir: Path
    global_step: int
    final_checkpoint: Path
    evaluations: dict[str, Any]
    steps_per_s: float


def _resume(state: DmcState, run: RunFolder, config: DmcConfig, log: Log) -> None:
    data = read_resume_checkpoint(run, DMC_FORMAT, "a DMC training checkpoint (a PPO run's, or a final.pt?)",
                                  config.to_dict(), ("rules", "network"))
    state.model.load_state_dict(data["model"])
    if state.baseline is not None:
        if "baseline" not in data:
            raise ConfigError(f"cannot resume {run.latest}: it holds no baseline network (network.baseline differs)")
        state.baseline.load_state_dict(data["baseline"])
    if state.oracle is not None:
        if "oracle" not in data:
            raise ConfigError(f"cannot resume {run.latest}: it holds no oracle input (network.oracle_steps differs)")
        state.oracle.load_state_dict(data["oracle"])
    state.optimizer.load_state_dict(data["optimizer"])
    for group in state.optimizer.param_groups:  # the config's rate, which a resumed run may change
        group["lr"] = config.train.learning_rate
    restore_rng_states(data["rng"], state.rng)
    c = data["counters"]
    state.global_step, state.env_steps, state.deals, state.updates = c["global_step"], c["env_steps"], c["deals"], c["updates"]
    state.time_before = float(c["time_s"])
    state.cpu_before = float(c.get("cpu_s", c["time_s"]))
    run.last_checkpoint = f"the last good checkpoint is {run.latest} (step {state.global_step})"
    log(f"resumed {run.run_dir} at step {state.global_step} (update {state.updates})")


def train_dmc(config: DmcConfig, resume: bool = False, overwrite: bool = False,
              stop_after_updates: int | None = None, log: Log = print) -> DmcResult:
    """Train by DMC self-play as the config says (see the module docstring). ``resume`` continues
    from the run's ``latest.pt``, ``overwrite`` starts it again; ``stop_after_updates`` stops (with
    a checkpoint) after that many updates of this session, as an interrupted run would."""
    rules = config.to_rules()
    limit_threads(config.torch_threads)
    torch.use_deterministic_algorithms(config.deterministic)
    random.seed(config.seed)
    np.random.seed(config.seed % 2**32)
    torch.manual_seed(config.seed)
    tc, ev, cc = config.train, config.evaluation, config.curriculum
    model, baseline, oracle = build_q_network(config, rules), build_baseline(config, rules), build_oracle(config, rules)
    if config.network.init and not resume:  # checked before the run folder is touched
        load_init(config, rules, model, baseline)
    parameters = [p for network in (model, baseline, oracle) if network is not None for p in network.parameters()]
    state = DmcState(model, torch.optim.Adam(parameters, lr=tc.learning_rate, eps=tc.adam_eps),
                     np.random.default_rng(config.seed), baseline, oracle)
    run = open_run(config, resume, overwrite, log)  # type: ignore[arg-type]  # reads .logging and .checkpoint.dir
    saved_config = run.run_dir / "config.yaml"
    run.manifest.add(saved_config, CONFIG)
    saved_config.write_text(yaml.safe_dump(config.to_dict(), sort_keys=False))
    start = run.run_dir / START_NAME
    if resume:
        _resume(state, run, config, log)
    else:  # the network as it began (fresh or network.init's): the start opponent
        save_checkpoint_file(run, start, state.payload(rules, config, whole=False))
    runlog = RunLog(run, config.logging, state.global_step if resume else None, log)
    # The games restart on resume, from a seed of the run's seed and the updates done.
    selfplay = SelfPlay(config, rules, model, state.rng, seed=int(np.random.SeedSequence([config.seed, state.updates])
                                                                   .generate_state(1)[0]), oracle=oracle)
    session_steps, loop_start = 0, time.time()
    try:
        while state.global_step < tc.total_steps:
            eps = epsilon(tc, state.global_step)
            env_before, deals_before = selfplay.steps, selfplay.deals
            keep = oracle_keep(config, state.global_step)
            batch = selfplay.collect(tc.batch_size, eps, cc.last_bidder_bids(state.global_step),
                                     cc.trick_reward_at(state.global_step), keep)
            try:
                metrics = dmc_update(model, state.optimizer, batch, tc, state.rng, baseline, oracle, keep)
            except NonFiniteError as e:
                raise NonFiniteError(f"training stopped at update {state.updates + 1}: {e}; {run.last_checkpoint} "
                                     "(try a lower train.learning_rate)") from None
            previous = state.global_step
            n = len(batch["actions"])
            state.global_step += n
            state.env_steps += selfplay.steps - env_before
            state.deals += selfplay.deals - deals_before
            state.updates += 1
            session_steps += n
            row = {"kind": "dmc", "global_step": state.global_step, "update": state.updates, "env_steps": state.env_steps,
                   "deals": state.deals, "time_s": state.elapsed(), "cpu_s": state.cpu(), "learning_rate": tc.learning_rate,
                   "steps_per_s": session_steps / max(time.time() - loop_start, 1e-9), "epsilon": eps, **metrics}
            if ev.deals and ev.interval and state.global_step // ev.interval > previous // ev.interval:
                eval_start = time.process_time()
                row.update({k: v for k, v in eval_columns(model, rules, config, ev.deals, start).items()
                            if not k.startswith("report_")})
                state.eval_cpu += time.process_time() - eval_start
            runlog.write(row)
            if config.logging.progress:
                evals = " ".join(f"{o} {row[f'eval_{o}_mean']:+.0f} (bid {row[f'eval_{o}_bid']:.0%}, "
                                 f"made {row[f'eval_{o}_made']:.0%})"
                                 for o in config.evaluation.opponents if f"eval_{o}_mean" in row)
                log(f"step {state.global_step}: return {metrics['return_learner']:+.3f}, loss {metrics['value_loss']:.3f}, "
                    f"ε {eps:.3f}, {row['steps_per_s']:.0f} steps/s {evals}")
            stopping = stop_after_updates is not None and state.updates >= stop_after_updates
            crossed = state.global_step // config.checkpoint.interval > previous // config.checkpoint.interval
            if crossed or stopping:
                write_checkpoint(run, state.payload(rules, config), config.checkpoint.keep, periodic=not stopping)
            if stopping:
                log(f"stopped after {state.updates} updates at step {state.global_step}; continue with --resume")
                return DmcResult(run.run_dir, state.global_step, run.latest, {}, row["steps_per_s"])
        steps_per_s = session_steps / max(time.time() - loop_start, 1e-9)
        write_checkpoint(run, state.payload(rules, config), config.checkpoint.keep, periodic=False)
        final = run.run_dir / "final.pt"
        save_checkpoint_file(run, final, state.payload(rules, config, whole=False))
        evaluations = _final_evaluation(model, rules, config, state, run, runlog, final, log)
    except OSError as e:
        stop_on_a_full_disk(e, run, state.global_step)
    finally:
        runlog.close()
    log(f"trained {session_steps} learner steps in {time.time() - loop_start:.0f} s ({steps_per_s:.0f} learner steps/s); "
        f"total wall-clock {state.elapsed():.0f} s; agent: {final}")
    return DmcResult(run.run_dir, state.global_step, final, evaluations, steps_per_s)


def _final_evaluation(model: QNetwork, rules: Rules, config: DmcConfig, state: DmcState, run: RunFolder,
                      runlog: RunLog, final: Path, log: Log) -> dict[str, Any]:
    """``final_eval`` rows and ``final_eval.json``, one report per opponent (as the PPO runs)."""
    ev = config.evaluation
    if not ev.final_deals:
        return {}
    log(f"final evaluation: {ev.final_deals} duplicate deals against each of {', '.join(ev.opponents)}")
    columns = eval_columns(model, rules, config, ev.final_deals, run.run_dir / START_NAME, label=final.name)
    evaluations = {}
    for opponent in ev.opponents:
        report = columns[f"report_{opponent}"]
        evaluations[opponent] = report.to_dict()
        log(f"\n== {final} vs {opponent} ==\n{report.format_table()}")
        runlog.write({"kind": "final_eval", "global_step": state.global_step, "update": state.updates,
                      **{k: v for k, v in columns.items() if k.startswith(f"eval_{opponent}_")}})
    if START in evaluations:
        evaluations["learning"] = learning_verdict(evaluations[START])
        log("\n" + learning_line(evaluations["learning"]))
    path = run.run_dir / "final_eval.json"
    run.manifest.add(path)
    path.write_text(json.dumps(evaluations, indent=2))
    return evaluations
