"""Self-play rollouts for PPO: the batched engine, who sits at each game, the snapshot pool.

``train.num_envs`` games of one :class:`five_hundred_env.vector.BatchEngine` (``episode="deal"``, any
preset) are stepped together by :class:`SelfPlayCollector`, one decision per game per step. At the start of
each deal, each game draws who sits at it (``opponents``): the current policy in every seat
(*self-play*: every seat learns), or one learning side against a past snapshot of the policy
(:class:`SnapshotPool`), the heuristic or the random agent. One shared policy plays every
learning seat: all the games whose acting seat learns are evaluated in one batch; each snapshot
in use plays its games in one batch, the heuristic reads each of its games' observation (the
engine's observations are the AEC environment's, byte for byte) and the random agent's moves are
drawn inside the engine. A rollout ends once it holds ``num_envs × num_steps`` learner decisions
*and every deal in it is finished* (games that reach the quota start no new deal and are left
as they are). Rollouts are therefore made of whole deals: no value is ever bootstrapped across a
rollout boundary, and a checkpoint taken between rollouts captures the whole state (every
rollout reseeds the engine from the trainer's generator).

Each learning seat keeps its own chain of decisions in a deal. When a deal ends, every learning
seat's last decision gets the seat's reward (its side's result, as the environment gives it)
and is terminal. With ``env.starting_scores: uniform`` each deal starts from scores drawn over
the game's range (:func:`draw_starting_scores`), which the observation shows; the reward is
still the deal's result.

With ``distributed.backend: ray``, :class:`ShardedCollector` collects each rollout as shards of
these games, one Ray task each (:func:`make_collector` chooses).
"""

from __future__ import annotations

import copy
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
import torch

from agents.central import central_features
from agents.neural import ActorCritic, HeuristicAdviser, make_adviser
from agents.registry import make_agent
from five_hundred_env.actions import MISERE, NT, OPEN_MISERE, bid_strain, bid_value
from five_hundred_env.rules import Rules
from five_hundred_env.vector import BatchEngine
from training.settings.config import Config
from training.workers.distributed import Backend, run_jobs

OPPONENT_KINDS = ("self_play", "snapshot", "heuristic", "random")
SELF_PLAY, SNAPSHOT, HEURISTIC, RANDOM = range(len(OPPONENT_KINDS))

SCORE_GRID = 10
"""Starting scores are drawn on multiples of this (the scores of §8 move in tens)."""


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
    """(game, seat) of each decision: for checks and debugging."""
    env_steps: int = 0
    deals: int = 0
    stats: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))

    def __len__(self) -> int:
        return len(self.rewards)


def deal_stats(rules: Rules, summary: np.ndarray, side_points: np.ndarray, learner_sides: set[int], kind: str,
               stats: dict[str, list[float]]) -> None:
    """Bid statistics and returns of a finished deal, from the learning sides' point of view.
    ``summary`` is the engine's ``last_deal`` row (contract, contractor, made), ``side_points``
    each side's zero-sum result in points."""
    contract, contractor, made = (int(x) for x in summary[:3])
    thrown_in = contractor < 0
    stats["thrown_in"].append(float(thrown_in))
    for side in learner_sides:
        if kind != "self_play":  # in self-play both sides learn: the mean return is 0 by symmetry
            stats[f"return_vs_{kind}"].append(float(side_points[side]))
        stats["return_learner"].append(float(side_points[side]))
        ours = not thrown_in and rules.side_of(contractor) == side
        stats["bid_won"].append(float(ours))
        if ours:
            stats["made"].append(float(made))
            misere = contract in (MISERE, OPEN_MISERE)
            stats["misere"].append(float(misere))
            stats["nt"].append(float(not misere and bid_strain(contract) == NT))
            stats["suit"].append(float(not misere and bid_strain(contract) != NT))
            stats["contract_value"].append(float(bid_value(contract, rules.misere_value)))


def zero_sum_points(score_change: np.ndarray, num_sides: int) -> np.ndarray:
    """Each side's ``Deal.zero_sum_result``: its score change minus the mean of the others'."""
    change = score_change[:num_sides].astype(np.float64)
    return change - (change.sum() - change) / (num_sides - 1)


def draw_starting_scores(rules: Rules, rng: np.random.Generator) -> list[int]:
    """Each side's starting score, uniform on the multiples of :data:`SCORE_GRID` strictly
    between ``losing_score`` and ``target`` (§9: none ends the game at once)."""
    low = rules.losing_score // SCORE_GRID + 1
    high = -(-rules.target // SCORE_GRID)  # the first multiple at or above the target, excluded
    return (rng.integers(low, high, size=rules.num_sides) * SCORE_GRID).tolist()


def policy_inputs(obs: np.ndarray, masks: np.ndarray, adviser: HeuristicAdviser | None) -> np.ndarray:
    """:func:`agents.neural.policy_input` of many rows: the observations, followed by the
    adviser's one-hot of each row when the network takes advice."""
    if adviser is None:
        return obs
    advice = [adviser({"observation": o, "action_mask": m}) for o, m in zip(obs, masks, strict=True)]
    return np.concatenate([obs, np.stack(advice)], axis=1)


class SelfPlayCollector:
    """Steps ``num_envs`` games of a :class:`BatchEngine` together and gathers the learning
    seats' decisions.

    ``pool_models`` is the snapshot pool's networks (shared with the trainer, which adds to it);
    ``rng`` is the trainer's generator: it draws every rollout's engine seed, every seating,
    every starting score and the heuristic's seed, so a rollout is reproducible from the
    generator's state alone."""

    def __init__(self, rules: Rules, config: Config, model: ActorCritic, pool_models: list[ActorCritic],
                 rng: np.random.Generator, device: torch.device) -> None:
        self.rules, self.model, self.pool_models, self.rng, self.device = rules, model, pool_models, rng, device
        self.target = config.train.num_envs * config.train.num_steps
        self.central = config.network.critic == "central"
        self.uniform_scores = config.env.starting_scores == "uniform"
        self.adviser = make_adviser(config.network.advice, rules)  # snapshots share the network's spec
        rates = config.opponents.rates()
        self.kinds = [OPPONENT_KINDS.index(k) for k in OPPONENT_KINDS if rates[k] > 0]
        self.kind_p = np.array([rates[OPPONENT_KINDS[k]] for k in self.kinds])
        self.heuristic = make_agent("heuristic", rules) if HEURISTIC in self.kinds else None
        self.engine = BatchEngine(rules, config.train.num_envs, episode="deal", reward=config.env.reward,
                                  reward_scale=config.env.reward_scale, seed=0)
        games, n = config.train.num_envs, rules.num_players
        self.games = np.arange(games)
        self.kind = np.zeros(games, dtype=np.int64)
        """Who sits at each game in its current deal (an index of :data:`OPPONENT_KINDS`)."""
        self.learner = np.zeros((games, n), dtype=bool)
        self.snapshot = np.full(games, -1, dtype=np.int64)
        self.last_index = np.full((games, n), -1, dtype=np.int64)
        """Each learning seat's latest decision in the rollout (-1: none yet this deal)."""
        self.active = np.zeros(games, dtype=bool)
        self.actions = np.full(games, -1, dtype=np.int64)
        self.random_actions = np.zeros(games, dtype=np.int64)
        self.side_of_seat = np.array([rules.side_of(s) for s in range(n)])

    def start_deal(self, game: int) -> None:
        """Who sits where in ``game``'s new deal (already dealt by the engine), and its scores."""
        rules, rng = self.rules, self.rng
        kind = self.kinds[int(rng.choice(len(self.kinds), p=self.kind_p))]
        if kind == SNAPSHOT and not self.pool_models:
            kind = SELF_PLAY  # no snapshot yet: the current policy plays itself
        self.kind[game] = kind
        learning_side = int(rng.integers(rules.num_sides))
        self.learner[game] = (self.side_of_seat == learning_side) | (kind == SELF_PLAY)
        self.snapshot[game] = int(rng.integers(len(self.pool_models))) if kind == SNAPSHOT else -1
        self.last_index[game] = -1
        if self.uniform_scores:
            self.engine.set_scores(game, draw_starting_scores(rules, rng))

    def collect(self) -> Rollout:
        """One rollout: at least ``num_envs × num_steps`` learner decisions, in whole deals."""
        ro = Rollout()
        engine = self.engine
        engine.reset(seed=int(self.rng.integers(2**31)))
        if self.heuristic is not None:
            self.heuristic.seed(int(self.rng.integers(2**31)))
        for game in self.games:
            self.start_deal(int(game))
        self.active[:] = True
        while self.active.any():
            # The opponents move first, until every game waits for a learning seat: the
            # policy's forward pass then has a row for every game still playing.
            waiting = self.active & ~self.learner[self.games, engine.seat]
            while waiting.any():
                self.actions[:] = -1
                self._opponents_act(waiting)
                self._step(ro)
                waiting = self.active & ~self.learner[self.games, engine.seat]
            if self.active.any():
                self.actions[:] = -1
                self._learners_act(np.flatnonzero(self.active), ro)
                self._step(ro)
        return ro

    def _step(self, ro: Rollout) -> None:
        """Play :attr:`actions` (-1: the game waits) and settle the deals that ended."""
        step = self.engine.step(self.actions)
        ro.env_steps += int(np.count_nonzero(self.actions >= 0))
        for game in np.flatnonzero(step.deal_done):
            self._finish_deal(int(game), step.rewards[game], ro)

    def _finish_deal(self, game: int, rewards: np.ndarray, ro: Rollout) -> None:
        """Credit every learning seat's last decision with its reward and end its chain; count
        the deal; start the game's next deal unless the rollout is full."""
        ro.deals += 1
        for seat in np.flatnonzero(self.learner[game]):
            idx = int(self.last_index[game, seat])
            if idx >= 0:
                ro.rewards[idx] += float(rewards[seat])
                ro.done[idx] = True
        rules, engine = self.rules, self.engine
        sides = {int(self.side_of_seat[s]) for s in np.flatnonzero(self.learner[game])}
        deal_stats(rules, engine.last_deal[game], zero_sum_points(engine.score_change[game], rules.num_sides),
                   sides, OPPONENT_KINDS[self.kind[game]], ro.stats)
        if len(ro) >= self.target:
            self.active[game] = False  # this game's share is done
        else:
            self.start_deal(game)

    def _learners_act(self, games: np.ndarray, ro: Rollout) -> None:
        """The learning seats of ``games``: one batched forward pass of the current policy,
        stored in ``ro``; each seat's decision is linked to its previous one in the deal."""
        engine, device = self.engine, self.device
        seats = engine.seat[games]
        mask = engine.masks[games].astype(bool)
        obs = policy_inputs(engine.obs[games], engine.masks[games], self.adviser)
        extra = (central_features(engine.state(seats=engine.seat)[games], self.rules) if self.central
                 else np.zeros((len(games), 0), dtype=np.int8))
        with torch.no_grad():
            a, logp, v = self.model.act(torch.from_numpy(obs).to(device), torch.from_numpy(mask).to(device),
                                        torch.from_numpy(extra).to(device) if self.central else None)
        a_np = a.cpu().numpy()
        base, k = len(ro), len(games)
        ro.obs.append(obs)
        ro.masks.append(mask)
        ro.extras.append(extra)
        ro.actions.append(a_np)
        ro.logprobs.append(logp.cpu().numpy())
        ro.values.append(v.cpu().numpy())
        ro.rewards.extend([0.0] * k)
        ro.done.extend([False] * k)
        ro.next_index.extend([-1] * k)
        ro.owner.extend(zip(games.tolist(), seats.tolist(), strict=True))
        index = np.arange(base, base + k)
        previous = self.last_index[games, seats]
        for prev, idx in zip(previous[previous >= 0].tolist(), index[previous >= 0].tolist(), strict=True):
            ro.next_index[prev] = idx  # this seat's own chain of decisions
        self.last_index[games, seats] = index
        self.actions[games] = a_np

    def _opponents_act(self, waiting: np.ndarray) -> None:
        """The actions of the non-learning seats to act in the ``waiting`` games: each snapshot
        in use in one batched pass (actions sampled), the heuristic game by game, the random
        agent inside the engine."""
        engine, kind = self.engine, self.kind
        for snap in np.unique(self.snapshot[waiting & (kind == SNAPSHOT)]).tolist():
            self._snapshot_acts(snap, np.flatnonzero(waiting & (self.snapshot == snap)))
        if self.heuristic is not None:
            for game in np.flatnonzero(waiting & (kind == HEURISTIC)).tolist():
                self.actions[game] = self.heuristic.act({"observation": engine.obs[game],
                                                         "action_mask": engine.masks[game]})
        random_games = waiting & (kind == RANDOM)
        if random_games.any():
            engine.sample_actions(self.random_actions)
            self.actions[random_games] = self.random_actions[random_games]

    def _snapshot_acts(self, snap: int, games: np.ndarray) -> None:
        """The seats of past policy ``snap`` in ``games``: one batched pass, actions sampled."""
        engine, device = self.engine, self.device
        obs = torch.from_numpy(policy_inputs(engine.obs[games], engine.masks[games], self.adviser)).to(device)
        mask = torch.from_numpy(engine.masks[games].astype(bool)).to(device)
        with torch.no_grad():
            logits = self.pool_models[snap].masked_logits(obs, mask)
            self.actions[games] = torch.distributions.Categorical(logits=logits).sample().cpu().numpy()


GAMES_PER_SHARD = 16
"""On Ray, a rollout's games are split into shards of at most this many, one task each: the
split depends on ``train.num_envs`` alone, never on the cluster, so a rollout does not either."""

SHARD_TIMEOUT_S = 3600.0
"""How long one shard's task may take before the run stops (a stuck worker)."""


@dataclass(frozen=True)
class ShardJob:
    """One Ray task of a rollout: ``config.train.num_envs`` is the shard's number of games; the
    networks are CPU copies of the current policy and the snapshot pool, sent every rollout."""

    rules: Rules
    config: Config
    model: ActorCritic
    pool_models: list[ActorCritic]
    seed: int


def collect_shard(job: ShardJob) -> Rollout:
    """A shard's rollout, a function of the job alone: the collector's generator and torch's
    (which samples the policy's actions) are seeded from ``job.seed``; torch's is restored after."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(job.seed)
        collector = SelfPlayCollector(job.rules, job.config, job.model, job.pool_models,
                                      np.random.default_rng(job.seed), torch.device("cpu"))
        return collector.collect()


def concatenate_rollouts(shards: list[Rollout], games_per_shard: list[int]) -> Rollout:
    """The shards one after the other, as one rollout: each shard's links and games shifted by
    what comes before it (a seat's next decision still comes later), its statistics appended."""
    whole = Rollout()
    first_game = 0
    for ro, games in zip(shards, games_per_shard, strict=True):
        base = len(whole)
        for name in ("obs", "masks", "extras", "actions", "logprobs", "values", "rewards", "done"):
            getattr(whole, name).extend(getattr(ro, name))
        whole.next_index.extend(i + base if i >= 0 else -1 for i in ro.next_index)
        whole.owner.extend((game + first_game, seat) for game, seat in ro.owner)
        whole.env_steps += ro.env_steps
        whole.deals += ro.deals
        for key, values in ro.stats.items():
            whole.stats[key].extend(values)
        first_game += games
    return whole


class ShardedCollector:
    """:class:`SelfPlayCollector`'s rollouts collected by Ray tasks (``distributed.backend: ray``):
    the ``train.num_envs`` games in shards of at most :data:`GAMES_PER_SHARD`, each shard a task
    with the current weights and its own seed from the trainer's generator; the shards' rollouts
    are put together in shard order. A dead worker's task is retried; a failing one stops the run
    (:class:`training.workers.distributed.WorkerError`)."""

    def __init__(self, rules: Rules, config: Config, model: ActorCritic, pool_models: list[ActorCritic],
                 rng: np.random.Generator, backend: Backend) -> None:
        self.rules, self.config, self.model, self.pool_models, self.rng = rules, config, model, pool_models, rng
        self.backend = backend
        games = config.train.num_envs
        self.games_per_shard = [min(GAMES_PER_SHARD, games - start) for start in range(0, games, GAMES_PER_SHARD)]

    def jobs(self) -> list[ShardJob]:
        """This rollout's shards (their seeds drawn now), with CPU copies of the networks."""
        model = copy.deepcopy(self.model).cpu()
        pool = [copy.deepcopy(m).cpu() for m in self.pool_models]
        seeds = self.rng.integers(2**31, size=len(self.games_per_shard)).tolist()
        return [ShardJob(self.rules, self._shard_config(games), model, pool, seed)
                for games, seed in zip(self.games_per_shard, seeds, strict=True)]

    def collect(self) -> Rollout:
        """One rollout: every shard's (at least ``games × num_steps`` learner decisions each)."""
        shards = run_jobs(collect_shard, self.jobs(), workers=1, timeout=SHARD_TIMEOUT_S, backend=self.backend)
        return concatenate_rollouts(shards, self.games_per_shard)

    def _shard_config(self, games: int) -> Config:
        return self.config.model_copy(update={"train": self.config.train.model_copy(update={"num_envs": games})})


def make_collector(rules: Rules, config: Config, model: ActorCritic, pool_models: list[ActorCritic],
                   rng: np.random.Generator, device: torch.device) -> SelfPlayCollector | ShardedCollector:
    """The rollouts' collector of the config's ``distributed`` backend: in this process
    (``local``), or in Ray tasks (``ray``)."""
    backend = Backend.from_config(config.distributed)
    if backend.kind == "ray":
        return ShardedCollector(rules, config, model, pool_models, rng, backend)
    return SelfPlayCollector(rules, config, model, pool_models, rng, device)
