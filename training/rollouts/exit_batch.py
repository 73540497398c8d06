"""Expert-iteration data on the batched engine: every deal of a chunk played side by side.

The rows are those of the scalar engine (:mod:`.exit_data`; the same deals, the same sampled
decisions, the same targets and returns: ``tests/test_exit_batch.py``), made at batch speed:

* the chunk's deals are loaded into the games of a :class:`~five_hundred_env.vector.BatchEngine`
  and stepped together, every seat's decision of every game in one call: the compiled heuristic
  (:class:`~agents.heuristic.compiled.HeuristicPolicy`, exactly ``HeuristicAgent``'s decisions)
  or the network, one forward pass over the games (:class:`~agents.neural_batch.GreedyActor`: its
  first layer summed over the nonzero inputs; its heuristic advice compiled too);
* the candidates of every decision sampled in a step become games of a second engine: the
  position copied (the state row of its game, or a PIMC world loaded with ``load_position``),
  the candidate applied, and every such game played to the end of its deal at once — by
  :func:`agents.heuristic.compiled.play_out` (one kernel call) or by the network (a forward pass
  per step over the games still playing); the engine's own end of game (§9) says which sides
  won, for ``win_bonus``.

A scalar :class:`~five_hundred_env.engine.Deal` follows each game of the chunk (a mirror, one
``apply_action`` per decision): the legal actions, the decision's kind, the hidden cards of the
central critic, PIMC's information sets and the deal's final result are read from it, with the
scalar engine's own functions. The last ``solver_tricks`` tricks of a PIMC world are solved by
the compiled solver (:mod:`agents.search.compiled_solver`: the values of ``solver.py``).
"""

from __future__ import annotations

import random

import numpy as np
import torch

from agents.central import hidden_cards
from agents.neural import ActorCritic
from agents.search.values import solved_result
from five_hundred_env.engine import Deal
from five_hundred_env.sampling import InfoSet, WorldSampler
from five_hundred_env.scoring import win_bonus_share, zero_sum_result
from training.rollouts.exit_rows import (
    ChunkJob,
    DataRows,
    deal_rng,
    deal_value,
    decision_rng,
    draw_decision,
    game_result,
)
from training.rollouts.selfplay import draw_starting_scores

Trial = tuple[int, Deal | None, int, int]
"""One playout to score: the chunk's game whose position it starts from, the PIMC world to load
instead (None: the game's real deal), the candidate (universal id) applied first, and the side
it is scored for."""

World = dict[int, float] | list[Trial]
"""One world of a decision's targets: its candidates' playouts, or their values (solved exactly)."""


def batch_plays(job: ChunkJob) -> bool:
    """Whether the batched engine plays this job: numba installed and the preset among those the
    compiled heuristic covers (today every preset; else the scalar engine plays it)."""
    try:
        from agents.heuristic.compiled import COMPILED_PRESETS
    except ImportError:  # no numba
        return False
    return job.rules.preset in COMPILED_PRESETS


class _BatchChunk:
    """One chunk's deals on a batched engine (``main``) and their playouts on another (``play``)."""

    def __init__(self, job: ChunkJob) -> None:
        from agents.heuristic.compiled import HeuristicPolicy
        from agents.neural_batch import GreedyActor
        from agents.search.compiled_solver import action_values
        from five_hundred_env.vector import BatchEngine

        self.job, self.rules = job, job.rules
        model = ActorCritic(**job.model_spec)
        model.load_state_dict({k: torch.from_numpy(v) for k, v in job.weights.items()})
        self.model = model.eval()
        self.greedy = GreedyActor(self.model)
        self.solve = action_values
        self.advised = model.advice != "none"
        self.heuristic = HeuristicPolicy(job.rules)
        self.actions = self.heuristic.actions
        self.universal = np.array(self.actions.universal, dtype=np.int64)
        self.engine_of = lambda games, views: BatchEngine(job.rules, games, seed=0, observations=views)
        self.main = self.engine_of(max(job.deals, 1), True)
        self.play = self.engine_of(256, job.base != "heuristic")
        rng, score_rng = deal_rng(job.seed), np.random.default_rng(job.seed)
        self.deals: list[Deal] = []
        self.results = []
        self.scores: list[list[int] | None] = []
        for game in range(job.deals):
            scores = draw_starting_scores(job.rules, score_rng) if job.starting_scores == "uniform" else None
            deal = Deal.new(job.rules, rng, dealer=rng.randrange(job.rules.num_players))
            self.main.load_position(game, deal, scores)
            self.deals.append(deal)
            self.scores.append(scores)
            self.results.append(game_result(job.rules, scores, job.win_bonus) if scores and job.win_bonus else None)
        self.rngs = [decision_rng(job.seed, game) for game in range(job.deals)]
        width = model.spec()["obs_size"] + (len(self.actions) if self.advised else 0)
        self.rows = DataRows(job.rules, job.seed, width, model.critic_extra)

    # -- the policy over a batch of observations ------------------------------------------------------
    def decide(self, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The network's inputs of these rows (with the heuristic's advice) and the base policy's
        compact action in each: the heuristic's, or the network's greedy choice (the only legal
        action where there is one, as the network's masked logits choose it)."""
        advice = self.heuristic.act_batch(obs, masks) if self.advised or self.job.base == "heuristic" else None
        x = obs
        if self.advised:
            onehot = np.zeros(masks.shape, dtype=np.int8)
            onehot[np.arange(len(onehot)), advice] = 1
            x = np.concatenate([obs, onehot], axis=1)
        if self.job.base == "heuristic":
            return x, advice
        choice = masks.argmax(axis=1)  # a forced move (one legal action) needs no forward pass
        free = np.flatnonzero(masks.sum(axis=1) > 1)
        if free.size:
            choice[free] = self.greedy(x, masks, free)
        return x, choice

    # -- the deals ------------------------------------------------------------------------------------
    def run(self) -> dict[str, np.ndarray]:
        """Every deal played to its end, its rows gathered."""
        active = np.arange(self.job.deals)
        waiting: list[list[tuple[int, int]]] = [[] for _ in range(self.job.deals)]  # (value row, side) per game
        while active.size:
            masks = self.main.masks[active]
            x, compact = self.decide(self.main.obs[active], masks)
            todo: list[tuple[int, int, int, list[World]]] = []  # (row of active, kind, action, its worlds)
            for i, game in enumerate(active.tolist()):
                todo.extend(self.sample(i, game, x[i], masks[i], int(self.universal[compact[i]]), waiting[game]))
            values = iter(self.score([trial for *_, worlds in todo for w in worlds if isinstance(w, list)
                                      for trial in w]))
            for i, kind, action, worlds in todo:
                totals: dict[int, float] = {}
                for world in worlds:  # summed in the scalar engine's order: the same floats
                    per_action = world if isinstance(world, dict) else {trial[2]: next(values) for trial in world}
                    for a, value in per_action.items():
                        totals[a] = totals.get(a, 0.0) + value
                self.rows.add_target(int(active[i]), x[i], masks[i], kind, action,
                                     {a: total / len(worlds) for a, total in totals.items()})
            step = np.full(self.main.num_games, -1, dtype=np.int64)
            step[active] = compact
            for i, game in enumerate(active.tolist()):
                self.deals[game].apply_action(int(self.universal[compact[i]]))
            self.main.step(step)
            over = self.main.deal_done[active]
            for game in active[over].tolist():
                deal, result = self.deals[game], self.results[game]
                for row, side in waiting[game]:
                    self.rows.set_return(row, deal_value(deal, side, result))
            active = active[~over]
        return self.rows.arrays()

    def sample(self, i: int, game: int, x: np.ndarray, mask: np.ndarray, action: int,
               waiting: list[tuple[int, int]]) -> list[tuple[int, int, int, list[World]]]:
        """The scalar engine's draws at game ``game``'s decision, in its order: a sample for the
        critic, then improved targets (the worlds of their playouts, scored with the step's others)."""
        deal, rng, job = self.deals[game], self.rngs[game], self.job
        seat = deal.to_act
        side = self.rules.side_of(seat)
        draw = draw_decision(job, rng, deal, action)
        if draw.critic:
            extra = hidden_cards(deal, seat) if self.model.critic_extra else np.zeros(0, np.int8)
            waiting.append((self.rows.add_value(game, x, mask, extra), side))
        if not draw.candidates:
            return []
        if draw.pimc:
            return [(i, draw.kind, action, self.pimc_worlds(game, draw.candidates, side, rng))]
        return [(i, draw.kind, action, [[(game, None, a, side) for a in draw.candidates]])]

    def pimc_worlds(self, game: int, legal: list[int], side: int, rng: random.Random) -> list[World]:
        """PIMC's worlds at a card play (``agents.search.values.pimc_action_values``' draws, in its
        order): each world's playouts, or its values when the exact solver takes it (few tricks left)."""
        deal = self.deals[game]
        sampler = WorldSampler(InfoSet.from_deal(deal, deal.to_act))
        worlds: list[World] = []
        for _ in range(self.job.worlds):
            world = sampler.sample(rng)
            if sorted(world.legal_actions()) != sorted(legal):
                raise ValueError(f"a sampled world allows {sorted(world.legal_actions())}, the seat {sorted(legal)}")
            if self.rules.hand_size - len(world.tricks) <= self.job.solver_tricks:  # the deal's points (values.py)
                solved = self.solve(world)
                worlds.append({a: solved_result(world, solved[a], side) for a in legal})
            else:
                worlds.append([(game, world, a, side) for a in legal])
        return worlds

    # -- the playouts ---------------------------------------------------------------------------------
    def score(self, trials: list[Trial]) -> list[float]:
        """Each trial's worth to its side (points, as the scalar engine's result), all played out at once."""
        if not trials:
            return []
        if self.play.num_games < len(trials):
            self.play = self.engine_of(2 * len(trials), self.job.base != "heuristic")
        rows = np.arange(len(trials))
        state, source = self.play.kernel_arrays().state, self.main.kernel_arrays().state
        real = np.array([world is None for _, world, _, _ in trials])
        games = np.array([game for game, *_ in trials], dtype=np.int64)
        state[rows[real]] = source[games[real]]
        self.play.refresh(rows[real])
        for row in rows[~real].tolist():
            game, world = trials[row][0], trials[row][1]
            self.play.load_position(row, world, self.scores[game])
        step = np.full(self.play.num_games, -1, dtype=np.int64)
        step[rows] = [self.actions.compact[a] for _, _, a, _ in trials]
        outcome = np.zeros((len(trials), 3 + self.rules.num_sides), dtype=np.int64)  # thrown in, winners, changes
        pending = rows
        while pending.size:
            self.play.step(step)
            over = self.play.deal_done[pending]
            done = pending[over]
            outcome[done, 0] = self.play.last_deal[done, 0] < 0
            outcome[done, 1] = self.play.last_deal[done, 3]
            outcome[done, 3:] = self.play.score_change[done, :self.rules.num_sides]
            pending = pending[~over]
            if pending.size and self.job.base == "heuristic":
                self.finish_heuristic(pending, outcome)
                break
            step[:] = -1
            if pending.size:
                step[pending] = self.decide(self.play.obs[pending], self.play.masks[pending])[1]
        return [self.value_of(trials[row], outcome[row]) for row in rows.tolist()]

    def finish_heuristic(self, games: np.ndarray, outcome: np.ndarray) -> None:
        """Play these games of ``play`` out with the compiled heuristic (one kernel call), then
        end them as a game's deal (§9: ``BatchEngine.end_game_deals``) for the winners."""
        from agents.heuristic.compiled import play_out

        outcome[games, 3:] = play_out(self.play, "heuristic", games=games, tables=self.heuristic.tables)[games]
        outcome[games, 0], outcome[games, 1] = self.play.end_game_deals(games)

    def value_of(self, trial: Trial, outcome: np.ndarray) -> float:
        """A played-out trial's worth to its side: what the scalar engine's result (the zero-sum
        points, or ``exit_rows.game_result``) says of the same finished deal."""
        game, _, _, side = trial
        k = self.rules.num_sides
        value = zero_sum_result(outcome[3:3 + k].tolist(), side)
        if self.results[game] is None or outcome[0]:
            return value
        winners = [s for s in range(k) if outcome[1] >> s & 1]
        return value + win_bonus_share(k, winners, self.job.win_bonus, side)


def generate_batch_chunk(job: ChunkJob) -> dict[str, np.ndarray]:
    """The data of one chunk played on the batched engine (:func:`batch_plays` says when)."""
    return _BatchChunk(job).run()


__all__ = ["batch_plays", "generate_batch_chunk"]
