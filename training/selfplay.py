"""Self-play rollouts for PPO: tables of environments, who sits at them, the snapshot pool.

``train.num_envs`` AEC environments (``five_hundred_env.env(episode="deal")``) are stepped
together by :class:`SelfPlayCollector`. At the start of each deal, each environment draws who
sits at it (``opponents``): the current policy in every seat (*self-play*: every seat learns),
or one learning side against a past snapshot of the policy (:class:`SnapshotPool`), the
heuristic or the random agent. One shared policy plays every learning seat; all the learning
seats waiting for a decision are evaluated in one batch. A rollout ends once it holds
``num_envs × num_steps`` learner decisions *and every deal in it is finished* (environments that
reach the quota start no new deal). Rollouts are therefore made of whole deals: no value is
ever bootstrapped across a rollout boundary, and a checkpoint taken between rollouts captures
the whole state.

Each learning seat keeps its own chain of decisions in a deal. A reward is credited to the
seat's latest decision when ``env.last()`` shows it to that seat (the environment credits every
seat with its side's result when the deal ends); the last decision of a seat is terminal.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

import five_hundred_env
from agents.base import Agent
from agents.neural import ActorCritic, hidden_cards, make_adviser, policy_input
from agents.registry import make_agent
from five_hundred_env.actions import MISERE, NT, OPEN_MISERE, bid_strain, bid_value
from five_hundred_env.engine import Deal
from five_hundred_env.rules import Rules
from training.config import Config

OPPONENT_KINDS = ("self_play", "snapshot", "heuristic", "random")

Observation = dict[str, np.ndarray]


class SnapshotPool:
    """Past policies, oldest first: their state dicts (what checkpoints keep) and a frozen copy
    of the network for each (what plays). At most ``size`` are kept."""

    def __init__(self, model: ActorCritic, size: int) -> None:
        self.model, self.size = model, size
        self.states: list[dict[str, torch.Tensor]] = []
        self.models: list[ActorCritic] = []

    def add(self, state: dict[str, torch.Tensor]) -> None:
        """Add a snapshot of ``state`` (copied), dropping the oldest beyond ``size``."""
        self.states.append({k: v.detach().clone() for k, v in state.items()})
        snap = copy.deepcopy(self.model).eval()
        snap.load_state_dict(self.states[-1])
        self.models.append(snap)
        while len(self.states) > self.size:
            self.states.pop(0)
            self.models.pop(0)


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


class SelfPlayCollector:
    """Steps ``num_envs`` environments together and gathers the learning seats' decisions.

    ``pool_models`` is the snapshot pool's networks (shared with the trainer, which adds to it);
    ``rng`` is the trainer's generator: it draws every deal, every seating and every baseline's
    seed, so a rollout is reproducible from the generator's state alone."""

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
                t.baselines[kind] = make_agent(kind, rules)
            t.baselines[kind].seed(int(rng.integers(2**31)))
        t.env.reset(seed=int(rng.integers(2**31)))
        t.deal = t.env.unwrapped.deal
        t.last_index = [-1] * rules.num_players
        t.active = True

    def collect(self) -> Rollout:
        """One rollout: at least ``num_envs × num_steps`` learner decisions, in whole deals."""
        ro = Rollout()
        for t in self.tables:
            self.start_deal(t)
        while True:
            learners: list[tuple[int, int, Observation]] = []
            snapshots: dict[int, list[tuple[Table, Observation]]] = defaultdict(list)
            for ti, t in enumerate(self.tables):
                waiting = self._advance(t, ro)
                if waiting is None:
                    continue
                seat, obs = waiting
                if t.learner[seat]:
                    learners.append((ti, seat, obs))
                else:
                    snapshots[t.snapshot].append((t, obs))
            if not learners and not snapshots:
                return ro
            if learners:
                self._learners_act(learners, ro)
            for snap, group in sorted(snapshots.items()):  # past policies: one pass per snapshot in use
                self._snapshot_acts(snap, group, ro)

    def _advance(self, t: Table, ro: Rollout) -> tuple[int, Observation] | None:
        """Step table ``t`` to its next decision that needs a network (the seat and its
        observation), or ``None`` once its share of the rollout is done. Baselines play at once;
        seats whose deal is over see their result and step None."""
        env = t.env
        while t.active:
            seat = int(env.agent_selection.rsplit("_", 1)[1])
            obs, reward, terminated, truncated, _ = env.last()
            idx = t.last_index[seat]
            if t.learner[seat] and idx >= 0:
                ro.rewards[idx] += float(reward)  # the reward since this seat last acted
            if terminated or truncated:
                if t.learner[seat] and idx >= 0:
                    ro.done[idx] = True
                env.step(None)
                if not env.agents:  # every seat has seen the deal's result
                    self._finish_deal(t, ro)
                continue
            if t.learner[seat] or t.kind == "snapshot":
                return seat, obs
            env.step(t.baselines[t.kind].act(obs))
            ro.env_steps += 1
        return None

    def _finish_deal(self, t: Table, ro: Rollout) -> None:
        """Count a finished deal, then start the next one unless the rollout is full."""
        rules = self.rules
        assert t.deal is not None
        ro.deals += 1
        sides = {rules.side_of(s) for s in range(rules.num_players) if t.learner[s]}
        deal_stats(t.deal, sides, {side: t.deal.zero_sum_result(side) for side in sides}, t.kind, ro.stats)
        if len(ro) >= self.target:
            t.active = False  # this environment's share is done
        else:
            self.start_deal(t)

    def _learners_act(self, learners: list[tuple[int, int, Observation]], ro: Rollout) -> None:
        """The learning seats: one batched forward pass of the current policy, stored in ``ro``."""
        device = self.device
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

    def _snapshot_acts(self, snap: int, group: list[tuple[Table, Observation]], ro: Rollout) -> None:
        """The seats of past policy ``snap``: one batched pass, actions sampled."""
        device = self.device
        obs_t = torch.from_numpy(np.stack([policy_input(o, self.adviser) for _, o in group])).to(device)
        mask_t = torch.from_numpy(np.stack([o["action_mask"] for _, o in group]).astype(bool)).to(device)
        with torch.no_grad():
            logits = self.pool_models[snap].masked_logits(obs_t, mask_t)
            acts = torch.distributions.Categorical(logits=logits).sample().cpu().numpy()
        for (t, _), act in zip(group, acts, strict=True):
            t.env.step(int(act))
        ro.env_steps += len(group)
