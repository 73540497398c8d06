"""Per-action values by playouts: what PIMC search and expert-iteration targets are made of.

:func:`world_action_values` scores every legal action of one fully known deal (a sampled world or
the real deal): the deal is cloned, the action applied and the rest played out by a policy (or,
with few tricks left in the card play, solved exactly). Every action is scored on the very same
cards, so the differences between actions have *common random numbers*. :func:`pimc_action_values`
averages those values over worlds sampled uniformly from a seat's information set (docs/search.md
§1), which is how :class:`~agents.search.pimc.PIMCAgent` decides and how
``training.algorithms.expert_iteration`` builds its improvement targets for the card play.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from agents.search.solver import side_scores
from five_hundred_env.actions import (
    MISERE,
    OPEN_MISERE,
    PASS,
    ActionTable,
    action_card,
    bid_strain,
    is_card_action,
    is_trick_bid,
)
from five_hundred_env.cards import JOKERS_MASK, mask_to_cards
from five_hundred_env.engine import EFFECTIVE_SUIT, WIN_KEY, Deal, Phase, contract_winners
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules
from five_hundred_env.sampling import InfoSet, WorldSampler
from five_hundred_env.scoring import contract_made, win_bonus_share, zero_sum_result

if TYPE_CHECKING:  # an annotation only: the table is built by whoever values the game
    from agents.search.game_values import GameValues

try:  # the compiled solver (numba): solver.py's values, 5-30x faster; the Python solver without numba
    from agents.search.compiled_solver import action_values
except ImportError:
    from agents.search.solver import action_values

Policy = Callable[[dict[str, np.ndarray]], int]
"""A policy on the environment's terms: an observation dict in, a compact action id out."""

PlayOut = Callable[[Deal], None]
"""Plays a deal to its end, in place."""

Result = Callable[[Deal, int], float]
"""What a finished deal is worth to a side (default: ``Deal.zero_sum_result``, in points)."""


class Outcome(NamedTuple):
    """What a finished deal's worth depends on: each side's score ``change``, the contracting
    team's sides (``team``, sorted; empty for a deal thrown in) and whether the contract was ``made``."""

    change: Sequence[int]
    team: tuple[int, ...]
    made: bool


def deal_outcome(deal: Deal) -> Outcome:
    """The :class:`Outcome` of a finished ``Deal``."""
    if deal.thrown_in:
        return Outcome([0] * deal.rules.num_sides, (), False)
    team = tuple(sorted({deal.rules.side_of(seat) for seat in deal.contracting_seats()}))
    return Outcome(deal.score_change or (), team, deal.contract_made())


@dataclass(frozen=True)
class GameStakes:
    """The game a deal is played in, for a search that values the game and not only the deal: the
    side ``scores`` the deal starts from (what the real observations show; the playouts' policy sees
    them too) and ``win_bonus``, the points a side gains when the deal wins it the game (§9,
    :func:`~five_hundred_env.engine.contract_winners`), made zero-sum like the points (a winner's
    bonus less the mean of the other sides'); 0 values the deal's points only."""

    scores: tuple[int, ...]
    win_bonus: float = 0.0
    game_values: GameValues | None = None
    """With a table, a deal is worth the change it makes to the side's chance to win the game
    (:class:`~agents.search.game_values.GameValues`), not its points."""

    def value(self, rules: Rules, outcome: Outcome, side: int) -> float:
        """``side``'s worth of a deal that ended with ``outcome``: its zero-sum result, plus the win
        bonus's share; or, with ``game_values``, the change in its chance to win the game."""
        if self.game_values is not None:
            return self.game_values.value(self.scores, outcome.change, outcome.team, outcome.made, side)
        value = zero_sum_result(outcome.change, side)
        if self.win_bonus and outcome.team:
            after = [s + c for s, c in zip(self.scores, outcome.change, strict=True)]
            winners = contract_winners(rules, after, outcome.team, outcome.made)
            value += win_bonus_share(rules.num_sides, winners, self.win_bonus, side)
        return value

    def result(self, deal: Deal, side: int) -> float:
        """:meth:`value` of a finished ``Deal`` (a :data:`Result`)."""
        return self.value(deal.rules, deal_outcome(deal), side)


class BatchPlayOut:
    """Plays many deals to their end at once on the batched engine, every seat ``policy``: the
    heuristic (``None``: :func:`agents.heuristic.compiled.play_out`, its decisions with no Python
    per decision) or an agent with ``act_batch`` (a network: one call per step for every game still
    playing, each seat on its own observation). :meth:`branches` plays worlds out after each
    candidate action, their observations showing the game's side ``scores`` (none: zero), and
    returns each playout's :class:`Outcome`, leaving the worlds as they are. Needs numba (the
    ``vector`` extra)."""

    def __init__(self, rules: Rules, policy: Any = None) -> None:
        self.rules = rules
        self.policy = policy
        if policy is None:
            from agents.heuristic.compiled import policy_tables  # numba: imported only when used

            self.tables = policy_tables(rules)
        self._engine: Any = None

    def branches(self, worlds: list[Deal], actions: list[int], scores: Sequence[int] | None = None) -> list[Outcome]:
        """The :class:`Outcome` of every world after every one of ``actions`` (legal in each world),
        world by world, as the worlds' clones with each action applied would end, each world
        loaded once (:meth:`~five_hundred_env.vector.BatchEngine.load_branches`)."""
        self._engine_for(len(worlds) * len(actions)).load_branches(worlds, actions, scores)
        return self._play(len(worlds) * len(actions))

    def _engine_for(self, games: int) -> Any:
        from five_hundred_env.vector import BatchEngine

        if self._engine is None or self._engine.num_games < games:
            self._engine = BatchEngine(self.rules, max(games, 16), seed=0, observations=self.policy is not None)
        return self._engine

    def _play(self, count: int) -> list[Outcome]:
        """Play the first ``count`` games out; their outcomes."""
        engine, games = self._engine, np.arange(count)
        if self.policy is None:
            from agents.heuristic.compiled import play_out

            changes = play_out(engine, "heuristic", games=games, tables=self.tables)[games].tolist()
        else:
            actions = np.full(engine.num_games, -1, dtype=np.int64)
            live = games[~engine.deals_over(games)]
            while len(live):
                actions[live] = self.policy.act_batch(engine.obs[live], engine.masks[live])
                engine.advance(actions)
                actions[live] = -1
                live = live[~engine.deals_over(live)]
            changes = engine.deal_changes(games).tolist()
        thrown_in, team, made = engine.contract_outcomes(games)
        sides = range(self.rules.num_sides)
        team = np.where(thrown_in, 0, team)  # a deal thrown in has no team
        teams = {bits: tuple(s for s in sides if bits >> s & 1) for bits in set(team.tolist())}  # a few per batch
        return [Outcome(change, teams[bits], m) for change, bits, m in zip(changes, team.tolist(), made.tolist(), strict=True)]


def batch_play_out(rules: Rules, policy: Any) -> BatchPlayOut | None:
    """The batched playouts of ``policy`` where there are some (numba installed: the heuristic of
    compiled rules, or an agent of these rules with ``act_batch``, such as a network), else None."""
    from agents.heuristic import HeuristicAgent

    if getattr(policy, "rules", None) != rules:
        return None
    try:
        import numba  # noqa: F401  # the batched engine's (a network's playouts need no compiled heuristic)
    except ImportError:  # the scalar playouts serve
        return None
    if type(policy) is HeuristicAgent:
        from agents.heuristic.compiled import COMPILED_PRESETS

        return BatchPlayOut(rules) if rules.preset in COMPILED_PRESETS else None
    return BatchPlayOut(rules, policy) if callable(getattr(policy, "act_batch", None)) else None


def policy_play_out(rules: Rules, policy: Policy, scores: Sequence[int] | None = None) -> PlayOut:
    """A :data:`PlayOut` with ``policy`` in every seat, acting on that seat's own encoded
    observation and mask (the environment's vectors), so it never reads hidden cards; the
    observations show the game's side ``scores`` (none: zero)."""
    table = ActionTable(rules)
    encoder = ObservationEncoder(rules)

    def play_out(deal: Deal) -> None:
        while not deal.is_over:
            deal.apply_action(table.universal[policy(encoder.encode_turn(deal, table, scores))])

    return play_out


def world_action_values(deal: Deal, actions: list[int], side: int, play_out: PlayOut | BatchPlayOut,
                        solver_tricks: int = 0, result: Result | None = None,
                        stakes: GameStakes | None = None) -> dict[int, float]:
    """Each of ``actions`` (universal ids, legal in ``deal``) scored as ``side``'s zero-sum result
    (``Deal.zero_sum_result``, in points; ``stakes.result`` with ``stakes``; or ``result``) once the
    deal is played out after it; in the card play with ``solver_tricks`` tricks or fewer left,
    solved exactly instead (every legal action; the solver counts the deal's points, and the
    ``stakes``, but not a ``result``). A :class:`BatchPlayOut` plays every action's deal
    out in one batch (it takes ``stakes``, not ``result``); a scalar ``play_out`` shows the
    observations whatever scores it was built with (:func:`policy_play_out`)."""
    if isinstance(play_out, BatchPlayOut):
        if result is not None:
            raise ValueError("batched playouts take stakes, not a result function: pass result=None or a scalar play-out")
        return worlds_action_values([deal], actions, side, play_out, solver_tricks, stakes)[0]
    solved = _solved_values(deal, actions, side, solver_tricks, stakes)
    if solved is not None:
        return solved
    if result is None:
        result = stakes.result if stakes is not None else Deal.zero_sum_result
    out = {}
    for action in actions:
        trial = deal.clone()
        trial.apply_action(action)
        play_out(trial)
        out[action] = result(trial, side)
    return out


def worlds_action_values(worlds: list[Deal], actions: list[int], side: int, play_out: BatchPlayOut,
                         solver_tricks: int = 0, stakes: GameStakes | None = None) -> list[dict[int, float]]:
    """:func:`world_action_values` of every world, the playouts of all their actions in one batch."""
    worths: dict[tuple[int, ...], float] = {}
    values = [_solved_values(world, actions, side, solver_tricks, stakes, worths) for world in worlds]
    played = [world for world, solved in zip(worlds, values, strict=True) if solved is None]
    outcomes = iter(play_out.branches(played, actions, stakes.scores if stakes is not None else None) if played else [])
    rules = play_out.rules
    worth = stakes.value if stakes is not None else _points
    return [solved if solved is not None else {a: worth(rules, next(outcomes), side) for a in actions}
            for solved in values]


def _points(rules: Rules, outcome: Outcome, side: int) -> float:
    """A deal's worth without stakes: ``side``'s zero-sum result."""
    return zero_sum_result(outcome.change, side)


def _solved_values(deal: Deal, actions: list[int], side: int, solver_tricks: int, stakes: GameStakes | None,
                   worths: dict[tuple[int, ...], float] | None = None) -> dict[int, float] | None:
    """The actions' exact values in the card play's last ``solver_tricks`` tricks, else None.
    ``worths`` keeps :func:`solved_result` of each contract and tricks for the other worlds of the
    same decision (the same ``side`` and ``stakes``): a world's actions and worlds share a few."""
    if not (deal.phase == Phase.PLAY and _tricks_left(deal) <= solver_tricks):
        return None
    worths = {} if worths is None else worths
    solved = action_values(deal)
    out = {}
    for a in actions:
        key = (deal.contract, deal.contractor, deal.partner, solved[a])  # all solved_result reads of the deal
        if key not in worths:
            worths[key] = solved_result(deal, solved[a], side, stakes)
        out[a] = worths[key]
    return out


def pimc_action_values(info: InfoSet, legal: list[int], worlds: int, rng: random.Random, play_out: PlayOut,
                       solver_tricks: int = 0, result: Result | None = None) -> dict[int, float]:
    """The mean over ``worlds`` worlds drawn uniformly from ``info`` of
    :func:`world_action_values` (with ``result``) for the legal actions ``legal``. A world whose legal actions are
    not ``legal`` means the information set was built wrongly: a ``ValueError``."""
    sampler = WorldSampler(info)
    side = info.rules.side_of(info.seat)
    totals = dict.fromkeys(legal, 0.0)
    for _ in range(worlds):
        world = sampler.sample(rng)
        if sorted(world.legal_actions()) != sorted(legal):
            raise ValueError(f"a sampled world allows {sorted(world.legal_actions())}, the seat {sorted(legal)}")
        for action, value in world_action_values(world, legal, side, play_out, solver_tricks, result).items():
            totals[action] += value
    return {a: total / worlds for a, total in totals.items()}


def _tricks_left(deal: Deal) -> int:
    return deal.rules.hand_size - len(deal.tricks)


def solved_result(deal: Deal, tricks: int, side: int, stakes: GameStakes | None = None) -> float:
    """``side``'s zero-sum result (with ``stakes``: its :meth:`GameStakes.value`) when the contracting
    team ends with ``tricks`` tricks: exact with two sides; with more, the opponents share the team's
    loss equally (the solver plays them as one side, so it does not say how they split their tricks)."""
    rules = deal.rules
    k = rules.num_sides
    team = tuple(sorted({rules.side_of(s) for s in deal.contracting_seats()}))  # a five-handed partner's side too (§10.6)
    change = side_scores(deal, tricks)
    # a misère's contractor plays alone (§10.6), so the team's tricks are the contractor's
    outcome = Outcome(change, team, contract_made(deal.contract, tricks, tricks))
    worth = stakes.value if stakes is not None else _points
    if side in team:
        return worth(rules, outcome, side)
    team_result = sum(worth(rules, outcome, t) for t in team)
    return -team_result / (k - len(team))


def bid_candidates(legal: list[int], advised: int) -> list[int]:
    """The bids rolled out at a decision: PASS, the advised bid, the cheapest legal bid of each
    strain, misère and open misère (those of them that are legal), in id order."""
    cheapest: dict[int, int] = {}
    for u in legal:
        if is_trick_bid(u):
            strain = bid_strain(u)
            cheapest[strain] = min(u, cheapest.get(strain, u))
    wanted = {PASS, advised, MISERE, OPEN_MISERE, *cheapest.values()}
    return sorted(wanted & set(legal))


def play_candidates(info: InfoSet, legal: list[int], advised: int) -> list[int]:
    """The card plays rolled out at a decision: one of each run of *equal* cards, in id order.

    Two cards of ``info.seat``'s hand are equal when they are of the same effective suit (§6) and
    every card ranked between them in it is in the same hand or was played to a finished trick:
    whichever of them is played, every trick goes to the same seat whatever anyone does (the
    exact solver gives them the same value), so rolling both out only spends playouts. A run
    keeps ``advised`` where it holds it, else its first legal card in id order. Jokers, the
    five-handed called card (playing it shows the partner, §10.5) and joker leads are never merged;
    the cards of the current trick and those whose place is hidden (the kitty, another seat's
    discards, a misère's dead hand) count as in play, so they part runs."""
    rules = info.rules
    finished = len(info.plays) - len(info.plays) % info.trick_size()
    out_of_play = sum(1 << action_card(a) for _s, a in info.plays[:finished]) | (info.discards or 0)
    ctx = info.ctx
    run_of: dict[int, int] = {}  # card -> the lowest card of its run (the run's name)
    for suit in range(4):
        in_play = [c for c in mask_to_cards(rules.deck & ~out_of_play) if EFFECTIVE_SUIT[ctx][c] == suit]
        run = -1
        for card in sorted(in_play, key=lambda c: WIN_KEY[ctx][suit][c]):
            mergeable = info.hand >> card & 1 and not JOKERS_MASK >> card & 1
            run = (card if run < 0 else run) if mergeable else -1
            if mergeable:
                run_of[card] = run
    chosen: dict[int, int] = {}  # run -> the candidate kept for it
    kept = []
    for action in legal:
        card = action_card(action) if is_card_action(action) else -1
        if card not in run_of or action == info.call:
            kept.append(action)
        elif run_of[card] not in chosen or action == advised:
            chosen[run_of[card]] = action
    return sorted([*kept, *chosen.values()])
