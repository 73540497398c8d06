"""PPO self-play for Five Hundred, in the CleanRL style: one file that reads top to bottom.

``five-hundred train CONFIG.yaml [key.sub=value ...] [--resume]`` runs :func:`train`. Every
hyper-parameter comes from the config (:mod:`training.config`).

How a rollout is gathered
    ``train.num_envs`` AEC environments (``five_hundred_env.env(episode="deal")``) are stepped
    together. At the start of each deal, each environment draws who sits at it
    (``opponents``): the current policy in every seat (*self-play*: every seat learns), or one
    learning side against a past snapshot of the policy, the heuristic or the random agent. One
    shared policy plays every learning seat; all the learning seats waiting for a decision are
    evaluated in one batch. A rollout ends once it holds ``num_envs × num_steps`` learner
    decisions *and every deal in it is finished* (environments that reach the quota start no
    new deal). Rollouts are therefore made of whole deals: no value is ever bootstrapped across
    a rollout boundary, and a checkpoint taken between rollouts captures the whole state.

Rewards and advantages per seat
    Each learning seat keeps its own chain of decisions in a deal. A reward is credited to the
    seat's latest decision when ``env.last()`` shows it to that seat (the environment credits
    every seat with its side's result when the deal ends, see ``five_hundred_env.env``); the
    last decision of a seat is terminal. GAE runs over each seat's *own* successive decisions:
    the next value of a decision is the value at the same seat's next decision, never at another
    player's turn (the bug of the PettingZoo SB3 tutorial, which bootstraps from whoever moves
    next).

The update
    The clipped PPO objective (CleanRL), with the same action masks re-applied when
    log-probabilities are recomputed; value clipping, advantage normalisation, entropy bonus,
    gradient clipping, optional KL early stop and linear learning-rate annealing. The critic may
    be *centralised* (``network.critic: central``): it also sees the hidden cards, from
    ``env.state()``, which is only used in training.

Warm starts (optional)
    ``pretrain.init_from`` starts from an earlier checkpoint's weights, and ``pretrain.deals``
    first has the network imitate the heuristic agent (:mod:`training.imitation`): PPO from a
    random network learns that bidding loses, stops bidding, and never learns to play contracts.
    ``pretrain.bid_rollouts`` then improves an advised network's bidding from rollouts of every
    candidate bid on the same deals (:mod:`training.bid_rollouts`); ``train.total_steps: 0``
    stops there (no PPO).

Runs
    ``<logging.dir>/<run_name>/`` holds ``config.yaml`` (the resolved config), ``progress.csv``,
    ``tb/`` (TensorBoard), ``checkpoints/`` (``latest.pt`` and periodic ``step_N.pt``: the whole
    training state), ``final.pt`` (the trained network alone: the agent to evaluate and play) and
    ``final_eval.json``. Checkpoints hold the model, the optimiser, the
    snapshot pool, the RNG states (python, numpy, torch) and the counters, and are written
    atomically; ``--resume`` continues from ``latest.pt`` exactly as if the run had never
    stopped (with ``deterministic: true``, bit for bit).
"""

from __future__ import annotations

import contextlib
import copy
import csv
import json
import math
import random
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

import five_hundred_env
from agents.base import Agent, RandomAgent
from agents.neural import (
    ActorCritic,
    NeuralAgent,
    central_size,
    hidden_cards,
    make_adviser,
    policy_input,
    read_checkpoint,
    save_checkpoint,
)
from five_hundred_env.actions import MISERE, NT, OPEN_MISERE, bid_strain, bid_value
from five_hundred_env.engine import Deal
from five_hundred_env.rules import Rules
from training.config import Config, TrainConfig, save_config

OPPONENT_KINDS = ("self_play", "snapshot", "heuristic", "random")

CSV_COLUMNS = (
    "kind", "global_step", "update", "env_steps", "deals", "time_s", "steps_per_s", "learning_rate",
    "policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "explained_variance", "batch_size",
    "return_vs_snapshot", "return_vs_heuristic", "return_vs_random", "return_learner",
    "bid_won_rate", "contract_made_rate", "suit_share", "nt_share", "misere_share", "thrown_in_rate",
    "contract_value", "imitation_agreement", "imitation_bid_agreement",
    "rollout_gain", "rollout_gain_se", "rollout_deviation", "rollout_play_agreement",
    "eval_random_mean", "eval_random_lo", "eval_random_hi",
    "eval_heuristic_mean", "eval_heuristic_lo", "eval_heuristic_hi",
)
"""The columns of ``progress.csv``: an ``imitation`` row per epoch of the optional warm start,
a ``bid_rollouts`` row per epoch of the optional rollout improvement of the bidding (gains in
points per bidding decision), an ``eval`` row (the warm-started policy evaluated), one ``update`` row per PPO update (the
``eval_*`` columns filled when an evaluation ran), then a ``final_eval`` row per opponent."""


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


# -- opponents ---------------------------------------------------------------------------------

def baseline_agent(name: str, rules: Rules, seed: int | None = None) -> Agent:
    """The ``random`` or ``heuristic`` agent (the heuristic is imported only when asked for)."""
    if name == "random":
        return RandomAgent(rules, seed)
    if name == "heuristic":
        try:
            from agents.heuristic import HeuristicAgent
        except ImportError as e:
            raise ValueError(f"the heuristic agent is not available ({e}); set its rates to 0") from None
        return HeuristicAgent(rules, seed)
    raise ValueError(f"unknown baseline agent {name!r}")


# -- one environment and who sits at it --------------------------------------------------------

@dataclass
class Table:
    """An environment, who plays each seat in the current deal, and each learning seat's latest
    decision in the rollout buffer (-1: none yet this deal)."""

    env: Any
    kind: str = "self_play"
    learner: list[bool] = field(default_factory=list)
    snapshot: int = -1
    baselines: dict[str, Agent] = field(default_factory=dict)
    last_index: list[int] = field(default_factory=list)
    deal: Deal | None = None
    active: bool = True


@dataclass
class Rollout:
    """Learner decisions in the order they were taken; ``next_index[i]`` is the same seat's next
    decision in the same deal (-1 if ``i`` was the seat's last one, then ``done[i]``)."""

    obs: list[np.ndarray] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    extras: list[np.ndarray] = field(default_factory=list)
    actions: list[np.ndarray] = field(default_factory=list)
    logprobs: list[np.ndarray] = field(default_factory=list)
    values: list[np.ndarray] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    done: list[bool] = field(default_factory=list)
    next_index: list[int] = field(default_factory=list)
    owner: list[tuple[int, int]] = field(default_factory=list)
    """(environment, seat) of each decision: for checks and debugging."""
    env_steps: int = 0
    deals: int = 0
    stats: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))

    def __len__(self) -> int:
        return len(self.rewards)


def deal_stats(deal: Deal, learner_sides: set[int], reward_points: dict[int, float], kind: str,
               stats: dict[str, list[float]]) -> None:
    """Bid statistics and returns of a finished deal, from the learning sides' point of view."""
    rules = deal.rules
    stats["thrown_in"].append(float(deal.thrown_in))
    for side in learner_sides:
        if kind != "self_play":  # in self-play both sides learn: the mean return is 0 by symmetry
            stats[f"return_vs_{kind}"].append(reward_points[side])
        stats["return_learner"].append(reward_points[side])
        ours = not deal.thrown_in and deal.contractor >= 0 and rules.side_of(deal.contractor) == side
        stats["bid_won"].append(float(ours))
        if ours:
            contract = deal.contract
            stats["made"].append(float(deal.contract_made()))
            misere = contract in (MISERE, OPEN_MISERE)
            stats["misere"].append(float(misere))
            stats["nt"].append(float(not misere and bid_strain(contract) == NT))
            stats["suit"].append(float(not misere and bid_strain(contract) != NT))
            stats["contract_value"].append(float(bid_value(contract, rules.misere_value)))


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


# -- checkpoints, RNG, logs --------------------------------------------------------------------

def rng_states(rng: np.random.Generator) -> dict[str, Any]:
    return {"python": random.getstate(), "numpy": rng.bit_generator.state,
            "numpy_global": _np_global_state(), "torch": torch.get_rng_state()}


def _np_global_state() -> dict[str, Any]:
    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    return {"kind": kind, "keys": keys.tolist(), "pos": pos, "has_gauss": has_gauss, "gauss": gauss}


def restore_rng_states(states: dict[str, Any], rng: np.random.Generator) -> None:
    random.setstate(_as_tuples(states["python"]))
    rng.bit_generator.state = states["numpy"]
    g = states["numpy_global"]
    np.random.set_state((g["kind"], np.array(g["keys"], dtype=np.uint32), g["pos"], g["has_gauss"], g["gauss"]))
    torch.set_rng_state(states["torch"])


def _as_tuples(x: Any) -> Any:
    return tuple(_as_tuples(v) for v in x) if isinstance(x, (list, tuple)) else x


@contextlib.contextmanager
def preserved_rng() -> Iterator[None]:
    """Evaluation must not move the training generators (a resumed run must match)."""
    py, npg, tg = random.getstate(), np.random.get_state(), torch.get_rng_state()
    try:
        yield
    finally:
        random.setstate(py)
        np.random.set_state(npg)
        torch.set_rng_state(tg)


class CsvLog:
    """``progress.csv`` with a fixed header; on resume, rows past the checkpoint are dropped."""

    def __init__(self, path: Path, resume_step: int | None) -> None:
        self.path = path
        rows: list[dict[str, str]] = []
        if resume_step is not None and path.exists():
            with path.open(newline="") as f:
                rows = [r for r in csv.DictReader(f) if r.get("kind") != "final_eval" and int(r["global_step"]) <= resume_step]
        with path.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
            writer.writeheader()
            writer.writerows({k: r.get(k, "") for k in CSV_COLUMNS} for r in rows)

    def write(self, row: dict[str, Any]) -> None:
        with self.path.open("a", newline="") as f:
            csv.DictWriter(f, fieldnames=CSV_COLUMNS).writerow(
                {k: _fmt(row.get(k)) for k in CSV_COLUMNS})


def _fmt(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return v


def _mean(xs: list[float]) -> float | None:
    return float(np.mean(xs)) if xs else None


# -- evaluation --------------------------------------------------------------------------------

def evaluate_policy(model: ActorCritic, rules: Rules, opponent: str, deals: int, seed: int) -> Any:
    """A duplicate match of the greedy policy (team A) against a baseline (team B)."""
    from training.evaluate import duplicate_match  # the baselines issue's evaluator

    with preserved_rng(), torch.inference_mode():
        agent = NeuralAgent(rules, seed, model=model, greedy=True)
        report = duplicate_match(rules, agent, baseline_agent(opponent, rules, seed + 1), deals, seed=seed)
    model.train()
    return report


def _ci(report: Any) -> tuple[float, float, float]:
    d = report.to_dict()["score_diff_per_deal"]
    return float(d["mean"]), float(d["ci95"][0]), float(d["ci95"][1])


# -- a rollout: several environments stepped together, whole deals only ---------------------------

class SelfPlayCollector:
    """Steps ``num_envs`` environments together and gathers the learning seats' decisions.

    ``pool_models`` is the snapshot pool (shared with the trainer, which adds to it); ``rng``
    is the trainer's generator: it draws every deal, every seating and every baseline's seed, so
    a rollout is reproducible from the generator's state alone."""

    def __init__(self, rules: Rules, config: Config, model: ActorCritic, pool_models: list[ActorCritic],
                 rng: np.random.Generator, device: torch.device) -> None:
        self.rules, self.model, self.pool_models, self.rng, self.device = rules, model, pool_models, rng, device
        self.target = config.train.num_envs * config.train.num_steps
        self.central = config.network.critic == "central"
        self.adviser = make_adviser(config.network.advice, rules)  # snapshots share the network's spec
        rates = config.opponents.rates()
        self.kinds = [k for k in OPPONENT_KINDS if rates[k] > 0]
        self.kind_p = np.array([rates[k] for k in self.kinds])
        self.tables = [Table(env=five_hundred_env.env(rules=rules, episode="deal", reward=config.env.reward,
                                                      reward_scale=config.env.reward_scale))
                       for _ in range(config.train.num_envs)]

    def start_deal(self, t: Table) -> None:
        """A new deal at table ``t``: draw who sits where, then shuffle."""
        rules, rng = self.rules, self.rng
        kind = self.kinds[int(rng.choice(len(self.kinds), p=self.kind_p))]
        if kind == "snapshot" and not self.pool_models:
            kind = "self_play"  # no snapshot yet: the current policy plays itself
        t.kind = kind
        learning_side = int(rng.integers(rules.num_sides))
        t.learner = [kind == "self_play" or rules.side_of(s) == learning_side for s in range(rules.num_players)]
        t.snapshot = int(rng.integers(len(self.pool_models))) if kind == "snapshot" else -1
        if kind in ("heuristic", "random"):
            if kind not in t.baselines:
                t.baselines[kind] = baseline_agent(kind, rules)
            t.baselines[kind].seed(int(rng.integers(2**31)))
        t.env.reset(seed=int(rng.integers(2**31)))
        t.deal = t.env.unwrapped.deal
        t.last_index = [-1] * rules.num_players
        t.active = True

    def collect(self) -> Rollout:
        """One rollout: at least ``num_envs × num_steps`` learner decisions, in whole deals."""
        rules, n, device = self.rules, self.rules.num_players, self.device
        ro = Rollout()
        for t in self.tables:
            self.start_deal(t)
        while True:
            learners: list[tuple[int, int, dict[str, np.ndarray]]] = []
            snapshots: dict[int, list[tuple[Table, dict[str, np.ndarray]]]] = defaultdict(list)
            for ti, t in enumerate(self.tables):
                env = t.env
                # Advance this table to its next decision that needs a network: baselines play at
                # once, and seats whose deal is over see their result and step None.
                while t.active:
                    agent = env.agent_selection
                    seat = int(agent.rsplit("_", 1)[1])
                    obs, reward, terminated, truncated, _ = env.last()
                    idx = t.last_index[seat]
                    if t.learner[seat] and idx >= 0:
                        ro.rewards[idx] += float(reward)  # the reward since this seat last acted
                    if terminated or truncated:
                        if t.learner[seat] and idx >= 0:
                            ro.done[idx] = True
                        env.step(None)
                        if not env.agents:  # every seat has seen the deal's result
                            assert t.deal is not None
                            ro.deals += 1
                            sides = {rules.side_of(s) for s in range(n) if t.learner[s]}
                            deal_stats(t.deal, sides, {side: t.deal.zero_sum_result(side) for side in sides},
                                       t.kind, ro.stats)
                            if len(ro) >= self.target:
                                t.active = False  # this environment's share is done
                            else:
                                self.start_deal(t)
                        continue
                    if t.learner[seat]:
                        learners.append((ti, seat, obs))
                        break
                    if t.kind == "snapshot":
                        snapshots[t.snapshot].append((t, obs))
                        break
                    env.step(t.baselines[t.kind].act(obs))
                    ro.env_steps += 1
            if not learners and not snapshots:
                return ro
            if learners:  # the learning seats: one batched forward pass of the current policy
                obs_b = np.stack([policy_input(o, self.adviser) for _, _, o in learners])
                mask_b = np.stack([o["action_mask"] for _, _, o in learners]).astype(bool)
                extra_b = (np.stack([hidden_cards(self.tables[ti].env.unwrapped.deal, s) for ti, s, _ in learners])
                           if self.central else np.zeros((len(learners), 0), dtype=np.int8))
                with torch.no_grad():
                    a, logp, v = self.model.act(torch.from_numpy(obs_b).to(device), torch.from_numpy(mask_b).to(device),
                                                torch.from_numpy(extra_b).to(device) if self.central else None)
                a_np = a.cpu().numpy()
                base = len(ro)
                ro.obs.append(obs_b)
                ro.masks.append(mask_b)
                ro.extras.append(extra_b)
                ro.actions.append(a_np)
                ro.logprobs.append(logp.cpu().numpy())
                ro.values.append(v.cpu().numpy())
                for k, (ti, seat, _) in enumerate(learners):
                    t, idx = self.tables[ti], base + k
                    ro.rewards.append(0.0)
                    ro.done.append(False)
                    ro.next_index.append(-1)
                    ro.owner.append((ti, seat))
                    if t.last_index[seat] >= 0:
                        ro.next_index[t.last_index[seat]] = idx  # this seat's own chain of decisions
                    t.last_index[seat] = idx
                    t.env.step(int(a_np[k]))
                ro.env_steps += len(learners)
            for snap, group in sorted(snapshots.items()):  # past policies: one pass per snapshot in use
                obs_t = torch.from_numpy(np.stack([policy_input(o, self.adviser)
                                                   for _, o in group])).to(device)
                mask_t = torch.from_numpy(np.stack([o["action_mask"] for _, o in group]).astype(bool)).to(device)
                with torch.no_grad():
                    logits = self.pool_models[snap].masked_logits(obs_t, mask_t)
                    acts = torch.distributions.Categorical(logits=logits).sample().cpu().numpy()
                for (t, _), act in zip(group, acts, strict=True):
                    t.env.step(int(act))
                ro.env_steps += len(group)


# -- the PPO update ----------------------------------------------------------------------------

def ppo_update(model: ActorCritic, optimizer: torch.optim.Optimizer, ro: Rollout, tc: TrainConfig,
               rng: np.random.Generator, device: torch.device) -> dict[str, float]:
    """CleanRL's clipped PPO update on one rollout (advantages by per-seat GAE)."""
    central = model.critic_extra > 0
    rewards = np.asarray(ro.rewards, dtype=np.float32)
    values = np.concatenate(ro.values)
    advantages, returns = compute_gae(rewards, values, np.asarray(ro.done), np.asarray(ro.next_index),
                                      tc.gamma, tc.gae_lambda)
    b_obs = torch.from_numpy(np.concatenate(ro.obs)).to(device)
    b_mask = torch.from_numpy(np.concatenate(ro.masks)).to(device)
    b_extra = torch.from_numpy(np.concatenate(ro.extras)).to(device) if central else None
    b_actions = torch.from_numpy(np.concatenate(ro.actions)).to(device)
    b_logprobs = torch.from_numpy(np.concatenate(ro.logprobs)).to(device)
    b_adv = torch.from_numpy(advantages).to(device)
    b_returns = torch.from_numpy(returns).to(device)
    b_values = torch.from_numpy(values).to(device)
    batch = len(ro)
    mb_size = math.ceil(batch / tc.num_minibatches)
    clipfracs: list[float] = []
    approx_kl = pg_loss = v_loss = entropy_loss = torch.zeros(())
    for _epoch in range(tc.update_epochs):
        order = rng.permutation(batch)
        for start in range(0, batch, mb_size):
            mb = torch.from_numpy(order[start:start + mb_size]).to(device)
            # The stored masks again: illegal actions keep probability 0 in the recomputed policy.
            new_logp, entropy, new_value = model.evaluate_actions(
                b_obs[mb], b_mask[mb], b_actions[mb], b_extra[mb] if b_extra is not None else None)
            logratio = new_logp - b_logprobs[mb]
            ratio = logratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - logratio).mean()  # the k3 estimator, as CleanRL
                clipfracs.append(((ratio - 1.0).abs() > tc.clip_coef).float().mean().item())
            mb_adv = b_adv[mb]
            if tc.norm_adv and len(mb) > 1:
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
            pg_loss = torch.max(-mb_adv * ratio, -mb_adv * torch.clamp(ratio, 1 - tc.clip_coef, 1 + tc.clip_coef)).mean()
            if tc.clip_vloss:
                v_unclipped = (new_value - b_returns[mb]) ** 2
                v_clipped = b_values[mb] + torch.clamp(new_value - b_values[mb], -tc.clip_coef, tc.clip_coef)
                v_loss = 0.5 * torch.max(v_unclipped, (v_clipped - b_returns[mb]) ** 2).mean()
            else:
                v_loss = 0.5 * ((new_value - b_returns[mb]) ** 2).mean()
            entropy_loss = entropy.mean()
            loss = pg_loss - tc.ent_coef * entropy_loss + tc.vf_coef * v_loss
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), tc.max_grad_norm)
            optimizer.step()
        if tc.target_kl is not None and approx_kl.item() > tc.target_kl:
            break
    var_y = float(np.var(returns))
    return {
        "policy_loss": pg_loss.item(), "value_loss": v_loss.item(), "entropy": entropy_loss.item(),
        "approx_kl": approx_kl.item(), "clipfrac": float(np.mean(clipfracs)) if clipfracs else 0.0,
        "explained_variance": math.nan if var_y == 0 else float(1 - np.var(returns - values) / var_y),
        "batch_size": float(batch),
    }


# -- the run -----------------------------------------------------------------------------------

def run_dir_of(config: Config) -> Path:
    return Path(config.logging.dir) / (config.logging.run_name or "run")


def train(config: Config, resume: bool = False, overwrite: bool = False,
          stop_after_updates: int | None = None, log: Any = print) -> TrainResult:
    """Train by PPO self-play as the config says. ``resume`` continues from the run's
    ``latest.pt``; ``stop_after_updates`` stops (with a checkpoint) after that many updates of
    this session, as an interrupted run would; ``log`` prints messages."""
    start_time = time.time()
    # ---- 1. the run's folder, the resolved config, seeds, torch settings --------------------
    rules = config.to_rules()
    run_dir = run_dir_of(config)
    ckpt_dir = Path(config.checkpoint.dir) if config.checkpoint.dir else run_dir / "checkpoints"
    latest = ckpt_dir / "latest.pt"
    if resume and not latest.exists():
        raise FileNotFoundError(f"nothing to resume: {latest} does not exist")
    if not resume and latest.exists() and not overwrite:
        raise ValueError(f"{run_dir} already holds a run: pass --resume to continue it, --overwrite to start "
                         f"again, or logging.run_name=NEW_NAME for a new run")
    if not resume:  # a fresh run: nothing of an earlier one (say, killed before its first checkpoint) stays
        for old in [*ckpt_dir.glob("*.pt"), run_dir / "final.pt", run_dir / "progress.csv", run_dir / "final_eval.json"]:
            old.unlink(missing_ok=True)
        for old in (run_dir / "tb").glob("events.*"):
            old.unlink()
    run_dir.mkdir(parents=True, exist_ok=True)
    save_config(config, run_dir / "config.yaml")

    if config.torch_threads > 0:
        torch.set_num_threads(config.torch_threads)
    torch.use_deterministic_algorithms(config.deterministic)
    device = torch.device(config.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {config.device!r} asked for, but CUDA is not available here; use device=cpu")
    random.seed(config.seed)
    np.random.seed(config.seed % 2**32)
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)  # every draw of the trainer (deals, opponents, minibatches)

    tc, oc = config.train, config.opponents
    needed = {k for k, r in oc.rates().items() if r > 0 and k in ("heuristic", "random")}
    for name in needed | set(config.evaluation.opponents):
        baseline_agent(name, rules, 0)  # fail now, not an hour in, if an agent is missing

    # ---- 2. network, optimiser, snapshot pool, checkpoints ---------------------------------
    n = rules.num_players
    probe = five_hundred_env.env(rules=rules)
    obs_size = int(probe.unwrapped.encoder.size)
    num_actions = int(probe.action_space(probe.possible_agents[0]).n)  # a numpy int: checkpoints hold plain ints
    central = config.network.critic == "central"
    model = ActorCritic(obs_size, num_actions, config.network.hidden_sizes, config.network.activation,
                        critic_extra=central_size(n) if central else 0, num_sides=rules.num_sides,
                        advice=config.network.advice, advice_weight=config.network.advice_weight).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=tc.learning_rate, eps=tc.adam_eps)
    pool: list[dict[str, torch.Tensor]] = []  # past policies (state dicts), oldest first
    pool_models: list[ActorCritic] = []
    global_step = env_steps = deals_done = updates = 0

    def add_snapshot(state: dict[str, torch.Tensor]) -> None:
        pool.append({k: v.detach().clone() for k, v in state.items()})
        snap = copy.deepcopy(model).eval()
        snap.load_state_dict(pool[-1])
        pool_models.append(snap)
        while len(pool) > oc.pool_size:
            pool.pop(0)
            pool_models.pop(0)

    def checkpoint_payload() -> dict[str, Any]:
        return {
            "rules": rules.to_dict(), "model_spec": model.spec(), "model": model.state_dict(),
            "optimizer": optimizer.state_dict(), "pool": pool, "rng": rng_states(rng),
            "counters": {"global_step": global_step, "env_steps": env_steps, "deals": deals_done, "updates": updates,
                         "time_s": elapsed()},
            "config": config.to_dict(),
        }

    def write_checkpoint(periodic: bool) -> None:
        payload = checkpoint_payload()
        save_checkpoint(latest, payload)
        if periodic:
            save_checkpoint(ckpt_dir / f"step_{global_step:09d}.pt", payload)
            for old in sorted(ckpt_dir.glob("step_*.pt"))[: -config.checkpoint.keep]:
                old.unlink()

    time_before = 0.0  # training time of earlier sessions of this run

    def elapsed() -> float:
        return time_before + time.time() - start_time

    # ---- 3. resuming: the whole state of the last checkpoint ------------------------------
    resume_step: int | None = None
    if resume:
        data = read_checkpoint(latest, rules)
        saved = data["config"]
        for section in ("rules", "network"):
            if saved.get(section) != config.to_dict()[section]:
                raise ValueError(f"cannot resume {latest}: its {section} section differs from this config's "
                                 f"({saved.get(section)} vs {config.to_dict()[section]})")
        changed = sorted(f"{s}.{k}" for s, v in config.to_dict().items() if isinstance(v, dict)
                         for k in v if saved.get(s, {}).get(k) != v[k])
        if changed:
            log(f"resuming with changed settings: {', '.join(changed)}")
        model.load_state_dict(data["model"])
        optimizer.load_state_dict(data["optimizer"])
        for state in data["pool"]:
            add_snapshot(state)
        restore_rng_states(data["rng"], rng)
        counters = data["counters"]
        global_step, env_steps, deals_done, updates = (
            counters["global_step"], counters["env_steps"], counters["deals"], counters["updates"])
        resume_step = global_step
        time_before = float(counters.get("time_s", 0.0))
        log(f"resumed {run_dir} at step {global_step} (update {updates})")

    # ---- 4. logs --------------------------------------------------------------------------
    csv_log = CsvLog(run_dir / "progress.csv", resume_step) if config.logging.csv else None
    writer = None
    if config.logging.tensorboard:
        from torch.utils.tensorboard import SummaryWriter

        # purge_step drops events a stopped run wrote after its last checkpoint.
        writer = SummaryWriter(str(run_dir / "tb"), purge_step=resume_step)
    from tqdm import tqdm

    # ---- 5. optional warm starts (fresh runs only): earlier weights, imitation of a teacher --
    if not resume and config.pretrain.init_from:
        data = read_checkpoint(config.pretrain.init_from, rules)
        if data["model_spec"] != model.spec():
            raise ValueError(f"pretrain.init_from: {config.pretrain.init_from} holds another network "
                             f"({data['model_spec']}, this config builds {model.spec()})")
        model.load_state_dict(data["model"])
        log(f"network initialised from {config.pretrain.init_from}")
    if not resume and config.pretrain.deals:
        # Imitate the teacher, then checkpoint, so that a resume never repeats it.
        from training.imitation import behaviour_clone, teacher_demonstrations

        pc = config.pretrain
        log(f"imitation warm start: {pc.deals} deals of the {pc.teacher} agent in every seat")
        demos = teacher_demonstrations(rules, baseline_agent(pc.teacher, rules), pc.deals, rng, central,
                                       config.env.reward, config.env.reward_scale, tc.gamma, config.logging.progress,
                                       adviser=make_adviser(config.network.advice, rules))

        def log_epoch(epoch: dict[str, float]) -> None:
            row = {"kind": "imitation", "global_step": 0, "update": 0, "time_s": elapsed(),
                   "policy_loss": epoch["policy_loss"], "value_loss": epoch["value_loss"],
                   "imitation_agreement": epoch["agreement"], "imitation_bid_agreement": epoch["bid_agreement"]}
            if csv_log:
                csv_log.write(row)
            if writer:
                for key in ("policy_loss", "value_loss", "agreement", "bid_agreement"):
                    writer.add_scalar(f"imitation/{key}", epoch[key], int(epoch["epoch"]))

        behaviour_clone(model, demos, pc, rng, device, log, on_epoch=log_epoch)
        del demos
        write_checkpoint(periodic=False)
    br = config.pretrain.bid_rollouts
    if not resume and br.deals:
        # Bids that beat the heuristic's, measured by rollouts on the same deals, then checkpoint.
        from training.bid_rollouts import improve_bidding, rollout_targets

        log(f"bid rollouts: every candidate bid of {br.deals} heuristic deals played out ({br.workers} workers)")
        # Cached in the run's folder: a fresh run (--overwrite) with the same deals reuses them.
        targets = rollout_targets(rules, br, rng, config.logging.progress, cache=run_dir / "bid_rollouts.npz")
        log(f"bid rollouts: {len(targets['bid_x'])} bidding decisions, {len(targets['play_x'])} other decisions")

        def log_rollout_epoch(epoch: dict[str, float]) -> None:
            row = {"kind": "bid_rollouts", "global_step": 0, "update": 0, "time_s": elapsed(),
                   "rollout_gain": 100 * epoch["gain"], "rollout_gain_se": 100 * epoch["gain_se"],
                   "rollout_deviation": epoch["deviation"], "rollout_play_agreement": epoch["play_agreement"]}
            if csv_log:
                csv_log.write(row)
            if writer:
                for key in ("gain", "deviation", "play_agreement"):
                    writer.add_scalar(f"bid_rollouts/{key}", epoch[key], int(epoch["epoch"]))

        improve_bidding(model, targets, br, device, log, on_epoch=log_rollout_epoch)
        del targets
        write_checkpoint(periodic=False)

    bar = tqdm(total=tc.total_steps, initial=global_step, unit="step", unit_scale=True, dynamic_ncols=True,
               disable=not config.logging.progress, smoothing=0.05)

    collector = SelfPlayCollector(rules, config, model, pool_models, rng, device)

    # ---- 6. the loop: rollout (SelfPlayCollector), update, log, evaluate, checkpoint ---------
    session_start, session_steps, session_updates = time.time(), 0, 0
    last_eval: dict[str, tuple[float, float, float]] = {}
    ev = config.evaluation
    if not resume and (config.pretrain.deals or config.pretrain.init_from or br.deals) and ev.interval and ev.deals:
        # Where the warm start leaves the policy: the yardstick for what PPO adds.
        row = {"kind": "eval", "global_step": 0, "update": 0, "time_s": elapsed()}
        for opponent in ev.opponents:
            last_eval[opponent] = m, lo, hi = _ci(evaluate_policy(model, rules, opponent, ev.deals, ev.seed))
            row.update({f"eval_{opponent}_mean": m, f"eval_{opponent}_lo": lo, f"eval_{opponent}_hi": hi})
            if writer:
                writer.add_scalar(f"eval/{opponent}_mean", m, 0)
        if csv_log:
            csv_log.write(row)
        log("after the warm start: " + ", ".join(f"{k} {v[0]:+.1f} [{v[1]:+.1f}, {v[2]:+.1f}]" for k, v in last_eval.items()))
    try:
        while global_step < tc.total_steps:
            lr = tc.learning_rate * (1.0 - global_step / tc.total_steps) if tc.anneal_lr else tc.learning_rate
            for group in optimizer.param_groups:
                group["lr"] = lr
            ro = collector.collect()
            metrics = ppo_update(model, optimizer, ro, tc, rng, device)
            prev_step = global_step
            global_step += len(ro)
            env_steps += ro.env_steps
            deals_done += ro.deals
            updates += 1
            session_steps += len(ro)
            session_updates += 1
            bar.update(len(ro))
            if global_step // oc.snapshot_interval > prev_step // oc.snapshot_interval:
                add_snapshot(model.state_dict())

            s = ro.stats
            row: dict[str, Any] = {
                "kind": "update", "global_step": global_step, "update": updates, "env_steps": env_steps,
                "deals": deals_done, "time_s": elapsed(),
                "steps_per_s": session_steps / max(time.time() - session_start, 1e-9), "learning_rate": lr,
                **metrics,
                "return_vs_snapshot": _mean(s["return_vs_snapshot"]), "return_vs_heuristic": _mean(s["return_vs_heuristic"]),
                "return_vs_random": _mean(s["return_vs_random"]), "return_learner": _mean(s["return_learner"]),
                "bid_won_rate": _mean(s["bid_won"]), "contract_made_rate": _mean(s["made"]),
                "suit_share": _mean(s["suit"]), "nt_share": _mean(s["nt"]), "misere_share": _mean(s["misere"]),
                "thrown_in_rate": _mean(s["thrown_in"]), "contract_value": _mean(s["contract_value"]),
            }
            if ev.interval and ev.deals and global_step // ev.interval > prev_step // ev.interval:
                for opponent in ev.opponents:
                    last_eval[opponent] = _ci(evaluate_policy(model, rules, opponent, ev.deals, ev.seed))
                    m, lo, hi = last_eval[opponent]
                    row.update({f"eval_{opponent}_mean": m, f"eval_{opponent}_lo": lo, f"eval_{opponent}_hi": hi})
            if csv_log:
                csv_log.write(row)
            if writer:
                for key, value in row.items():
                    if key != "kind" and value is not None and not (isinstance(value, float) and math.isnan(value)):
                        writer.add_scalar(_tb_name(key), value, global_step)
            postfix = {"ret_rand": row["return_vs_random"], "ent": metrics["entropy"]}
            postfix.update({f"ev_{k[:4]}": v[0] for k, v in last_eval.items()})
            bar.set_postfix({k: f"{v:.2f}" if isinstance(v, float) else v for k, v in postfix.items() if v is not None},
                            refresh=False)

            stopping = stop_after_updates is not None and session_updates >= stop_after_updates
            if global_step // config.checkpoint.interval > prev_step // config.checkpoint.interval or stopping:
                write_checkpoint(periodic=not stopping)
            if stopping:
                bar.close()
                log(f"stopped after {session_updates} updates at step {global_step}; continue with --resume")
                return TrainResult(run_dir, global_step, updates, None, {}, time.time() - start_time,
                                   session_steps / max(time.time() - session_start, 1e-9))
    except KeyboardInterrupt:
        bar.close()
        log(f"\ninterrupted at step {global_step}; --resume continues from the last checkpoint ({latest})")
        raise
    bar.close()
    train_time = time.time() - session_start
    steps_per_s = session_steps / max(train_time, 1e-9)

    # ---- 7. the end: final checkpoint, final evaluation table -------------------------------
    write_checkpoint(periodic=False)
    final = run_dir / "final.pt"
    # The agent to share: the network and where it came from (latest.pt keeps the rest for --resume).
    payload = checkpoint_payload()
    save_checkpoint(final, {k: payload[k] for k in ("rules", "model_spec", "model", "counters", "config")})
    evaluations: dict[str, Any] = {}
    ev = config.evaluation
    if ev.final_deals:
        log(f"\nfinal evaluation: {ev.final_deals} duplicate deals against each of {', '.join(ev.opponents)}")
        for opponent in ev.opponents:
            report = evaluate_policy(model, rules, opponent, ev.final_deals, ev.seed)
            evaluations[opponent] = report.to_dict()
            log(f"\n== {final} vs {opponent} ==")
            log(report.format_table())
            m, lo, hi = _ci(report)
            row = {"kind": "final_eval", "global_step": global_step, "update": updates,
                   f"eval_{opponent}_mean": m, f"eval_{opponent}_lo": lo, f"eval_{opponent}_hi": hi}
            if csv_log:
                csv_log.write(row)
            if writer:
                writer.add_scalar(f"final_eval/{opponent}", m, global_step)
        (run_dir / "final_eval.json").write_text(json.dumps(evaluations, indent=2))
    if writer:
        writer.close()
    wall = time.time() - start_time
    log(f"\ntrained {session_steps} steps in {train_time:.0f} s ({steps_per_s:.0f} learner steps/s); "
        f"total wall-clock {wall:.0f} s; agent: {final}")
    return TrainResult(run_dir, global_step, updates, final, evaluations, wall, steps_per_s)


def _tb_name(key: str) -> str:
    if key.startswith("eval_"):
        return "eval/" + key[5:]
    if key.startswith(("return_", "bid_", "contract_", "suit_", "nt_", "misere_", "thrown_")):
        return "play/" + key
    if key in ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "explained_variance"):
        return "losses/" + key
    return "charts/" + key
