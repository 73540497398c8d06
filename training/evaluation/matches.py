"""The plays of a duplicate match: its boards, who sits where, the agents of each seat, and the
results of boards and games, in the order :func:`training.evaluation.evaluate.duplicate_match` tallies them.

Both the one-process match (:mod:`training.evaluation.evaluate`) and the ranges played by workers
(:mod:`training.evaluation.evaluate_ranges`) play through these functions, so their reports are the same;
this module imports neither. Every play reseeds its agents, and every board and game has its own
seed (see :mod:`training.evaluation.evaluate` for the method).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

from agents.base import Agent
from agents.command import BotError
from agents.play import play_deal, play_game
from five_hundred_env.actions import OPEN_MISERE, bid_value
from five_hundred_env.cards import card_to_str, mask_to_cards
from five_hundred_env.engine import Deal
from five_hundred_env.env import raw_env
from five_hundred_env.rules import Rules

AgentLike = Agent | Callable[[Rules, int | None], Agent] | str
"""An agent instance (used in every seat it takes), a factory ``f(rules, seed) -> Agent``, or an
agent spec of :func:`agents.registry.agent_factory` (a name or a checkpoint path)."""

SIDES = ("A", "B")
MAX_GAME_DEALS = 400  # a game to 500 that has not ended after this many deals counts as undecided


@dataclass(frozen=True)
class BoardDeal:
    """One deal to play in duplicate: the dealer, each seat's hand and the kitty, by card name."""

    dealer: int
    hands: tuple[tuple[str, ...], ...]
    kitty: tuple[str, ...]

    def options(self) -> dict[str, Any]:
        """The environment's reset options for this deal."""
        return {"dealer": self.dealer, "hands": [list(h) for h in self.hands], "kitty": list(self.kitty)}


def board_deals(rules: Rules, deals: int, seed: int) -> Iterator[BoardDeal]:
    """``deals`` uniformly shuffled deals with random dealers, reproducible from ``seed``, made one
    at a time as they are asked for (a long match never holds them all)."""
    rng = random.Random(seed)
    two = rules.two_jokers
    for _ in range(deals):
        deal = Deal.new(rules, rng, rng.randrange(rules.num_players))
        yield BoardDeal(
            deal.dealer,
            tuple(tuple(card_to_str(c, two) for c in mask_to_cards(h)) for h in deal.hands),
            tuple(card_to_str(c, two) for c in mask_to_cards(deal.kitty)),
        )


@dataclass
class PlayResult:
    """One play of a deal: who sat where, each side's score change and the contract."""

    seats: tuple[str, ...]
    """``"A"`` or ``"B"`` for each seat."""
    score_change: list[int]
    """Per side (team with four players, player with three)."""
    side_of_seat: tuple[int, ...]
    """Each seat's side (``Rules.side_of``)."""
    contract: int = -1
    contractor: int = -1
    made: bool = False
    forfeit: str | None = None
    """``"A"`` or ``"B"``: the side whose ``cmd:`` bot failed on this board (``on_bot_error="forfeit"``);
    the board is then scored as that side's loss of :func:`forfeit_points` in each of its plays."""

    @property
    def diff(self) -> float:
        """A's score change minus B's (per player: A players' mean minus B players' mean)."""
        a = [self.score_change[side] for side, label in zip(self.side_of_seat, self.seats, strict=True) if label == "A"]
        b = [self.score_change[side] for side, label in zip(self.side_of_seat, self.seats, strict=True) if label == "B"]
        return sum(a) / len(a) - sum(b) / len(b)


def seat_layouts(rules: Rules) -> list[tuple[str, ...]]:
    """Who sits where in the plays of one board (see the module docstring): with teams, A takes
    side 0's seats and B side 1's, then the reverse; alone, each agent alone in every seat in turn
    (a layout that comes twice, as with two players, is played once)."""
    seats = range(rules.num_players)
    if rules.has_partners:
        return [tuple(SIDES[rules.side_of(s)] for s in seats), tuple(SIDES[1 - rules.side_of(s)] for s in seats)]
    layouts: list[tuple[str, ...]] = []
    for lone in SIDES:
        other = "B" if lone == "A" else "A"
        for seat in seats:
            layout = tuple(lone if s == seat else other for s in seats)
            if layout not in layouts:  # two players: A alone against B is B alone against A
                layouts.append(layout)
    return layouts


def agent_or_factory(spec: AgentLike) -> Agent | Callable[[Rules, int | None], Agent]:
    """An agent spec's factory (from the registry); instances and factories as they are."""
    if isinstance(spec, str):
        from agents.registry import agent_factory

        return agent_factory(spec)
    return spec


class Seats:
    """The agent playing each seat: instances are shared, factories build one agent per seat."""

    def __init__(self, rules: Rules, spec_a: AgentLike, spec_b: AgentLike, seed: int) -> None:
        n = rules.num_players
        self.agents: dict[tuple[str, int], Agent] = {}
        for label, spec in (("A", agent_or_factory(spec_a)), ("B", agent_or_factory(spec_b))):
            for seat in range(n):
                if isinstance(spec, Agent):
                    self.agents[label, seat] = spec
                else:
                    self.agents[label, seat] = spec(rules, seed * 1000 + seat * 2 + (label == "B"))

    def players(self, layout: Sequence[str], seed: int) -> list[Agent]:
        """The agents of a seat layout, reseeded from the play's seed by seat (in seat order, so an
        instance shared by several seats ends with its last seat's seed): identical agents get
        identical random streams whichever side they play for."""
        players = [self.agents[label, s] for s, label in enumerate(layout)]
        for s, agent in enumerate(players):
            agent.seed(seed * 7919 + s)
        return players


ON_BOT_ERROR = ("raise", "forfeit")
"""What a match does when a ``cmd:`` bot fails (:class:`agents.command.BotError`): stop with the
error, or score the board as a loss for the bot's side and go on with the next."""


def forfeit_points(rules: Rules) -> int:
    """What a forfeited board costs its side per play: the value of the preset's highest bid (520
    in the Avondale table), the most any contract is worth."""
    return max(bid_value(bid, rules.misere_value) for bid in range(1, OPEN_MISERE + 1))


def _forfeited(rules: Rules, seats: Seats, error: BotError) -> list[PlayResult]:
    """The plays of a board forfeited by the side whose agent raised ``error``."""
    label = next((lbl for (lbl, _seat), agent in seats.agents.items() if agent is error.agent), None)
    if label is None:  # not one of this match's agents (one agent inside another): nobody to blame
        raise error
    side_of_seat = tuple(rules.side_of(s) for s in range(rules.num_players))
    results = []
    for layout in seat_layouts(rules):
        change = [0] * rules.num_sides
        for seat, who in enumerate(layout):
            if who == label:
                change[side_of_seat[seat]] = -forfeit_points(rules)
        results.append(PlayResult(layout, change, side_of_seat, forfeit=label))
    return results


def play_board(
    env: raw_env, deal: BoardDeal, agent_a: AgentLike, agent_b: AgentLike, seed: int = 0,
    seats: Seats | None = None, on_bot_error: str = "raise",
) -> list[PlayResult]:
    """Play one board: the deal once for every seat layout of :func:`seat_layouts`.

    Every play reseeds the agents from the same ``seed``, so identical deterministic agents play
    each layout identically and the board's difference is exactly zero. A ``cmd:`` bot that
    fails raises its :class:`~agents.command.BotError`, or with ``on_bot_error="forfeit"`` the
    board is its side's loss (:func:`forfeit_points` a play).
    """
    rules = env.rules
    seats = seats or Seats(rules, agent_a, agent_b, seed)
    try:
        return _play_layouts(env, deal, seats, seed)
    except BotError as e:
        if on_bot_error != "forfeit":
            raise
        return _forfeited(rules, seats, e)


def _play_layouts(env: raw_env, deal: BoardDeal, seats: Seats, seed: int) -> list[PlayResult]:
    rules = env.rules
    side_of_seat = tuple(rules.side_of(s) for s in range(rules.num_players))
    results = []
    for layout in seat_layouts(rules):
        finished = play_deal(env, seats.players(layout, seed), seed=seed, options=deal.options())
        result = PlayResult(layout, list(finished.score_change or [0] * rules.num_sides), side_of_seat)
        if not finished.thrown_in:
            result.contract = finished.contract
            result.contractor = finished.contractor
            result.made = finished.contract_made()
        results.append(result)
    return results


def board_results(rules: Rules, agent_a: AgentLike, agent_b: AgentLike, seed: int, start: int, stop: int,
                  seats: Seats | None = None, boards: Sequence[BoardDeal] | None = None,
                  on_bot_error: str = "raise") -> Iterator[list[PlayResult]]:
    """The plays of boards ``start`` to ``stop`` (excluded) of the match of ``seed``, one list per
    board, as :func:`training.evaluation.evaluate.duplicate_match` plays them (``seats``: the match's agents,
    else built here). The deals are dealt from ``seed``, or taken from ``boards`` (a benchmark
    set's, :mod:`training.evaluation.bench`); board ``i`` is played with seed ``seed · 1,000,003 + i``
    either way."""
    seats = seats or Seats(rules, agent_a, agent_b, seed)
    env = raw_env(rules=rules, episode="deal")
    deals = islice(board_deals(rules, stop, seed), start, None) if boards is None else boards[start:stop]
    for i, deal in enumerate(deals, start):
        yield play_board(env, deal, agent_a, agent_b, seed=seed * 1_000_003 + i, seats=seats, on_bot_error=on_bot_error)


def match_outcomes(rules: Rules, agent_a: AgentLike, agent_b: AgentLike, deals: int,
                   seed: int) -> list[tuple[int, int, int, bool]]:
    """Every play of ``deals`` boards of the match of ``seed`` (a game of two sides), as A's side saw
    it: ``(A's change, B's change, contractor, made)``, the contractor ``0`` (A's side), ``1`` (B's)
    or ``-1`` (thrown in): what :meth:`agents.search.game_values.GameValues.fit` takes."""
    if rules.num_sides != 2:
        raise ValueError(f"match outcomes are kept for games of two sides, not {rules.num_sides}")
    outcomes = []
    for board in board_results(rules, agent_a, agent_b, seed, 0, deals):
        for play in board:
            a_side = next(side for side, who in zip(play.side_of_seat, play.seats, strict=True) if who == "A")
            contractor = -1 if play.contractor < 0 else int(rules.side_of(play.contractor) != a_side)
            outcomes.append((play.score_change[a_side], play.score_change[1 - a_side], contractor, play.made))
    return outcomes


@dataclass(frozen=True)
class GameResult:
    """What the report counts of one game to 500: the seats' sides, its length, whether it ended
    and who won (the winning sides)."""

    layout: tuple[str, ...]
    deals: int
    finished: bool
    winners: tuple[int, ...]


def game_results(rules: Rules, agent_a: AgentLike, agent_b: AgentLike, seed: int, start: int, stop: int,
                 seats: Seats | None = None, on_bot_error: str = "raise") -> Iterator[GameResult]:
    """Games ``start`` to ``stop`` (excluded) to 500 of the match of ``seed``; the layouts of
    :func:`seat_layouts` alternate over games of one seed. With ``on_bot_error="forfeit"`` a game
    in which a ``cmd:`` bot fails is won by the other agent's sides."""
    seats = seats or Seats(rules, agent_a, agent_b, seed)
    layouts = seat_layouts(rules)
    if not rules.has_partners:
        layouts = layouts[:rules.num_players]  # A alone against two copies of B, in each seat
    env = raw_env(rules=rules, episode="game", max_deals=MAX_GAME_DEALS)
    for g in range(start, stop):
        layout = layouts[g % len(layouts)]
        game_seed = seed * 1_000_003 + 500_000 + g // len(layouts)
        try:
            game = play_game(env, seats.players(layout, game_seed), seed=game_seed)
        except BotError as e:
            if on_bot_error != "forfeit":
                raise
            loser = _forfeited(rules, seats, e)[0].forfeit
            winners = sorted({rules.side_of(s) for s, who in enumerate(layout) if who != loser})
            yield GameResult(layout, len(env.game.deals) if env.game else 0, True, tuple(winners))
            continue
        yield GameResult(layout, len(game.deals), game.is_over, tuple(game.winners or ()))


__all__ = [
    "MAX_GAME_DEALS",
    "ON_BOT_ERROR",
    "SIDES",
    "AgentLike",
    "BoardDeal",
    "GameResult",
    "PlayResult",
    "Seats",
    "agent_or_factory",
    "board_deals",
    "board_results",
    "forfeit_points",
    "game_results",
    "match_outcomes",
    "play_board",
    "seat_layouts",
]
