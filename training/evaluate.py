"""Duplicate evaluation of two agents: the score difference per deal with the luck of the cards taken out.

Every *board* is one deal (hands, kitty, dealer) played several times through the environment:

* teams (four players, and six in teams of three): team A (side 0's seats: 0 and 2, or 0, 2 and 4)
  against team B (side 1's), then the same deal again with the teams swapped, so each hand is
  played once by each agent;
* players alone (two, three or five): A alone against copies of B with A in each seat in turn, then
  B alone against copies of A likewise, so each hand is played by each agent in every seat (with
  two players the two layouts are A–B and B–A).

A play's difference is A's score change minus B's (players alone: the mean of the A players'
changes minus the mean of the B players'; a five-handed partner scores for its own seat); a
board's difference is the mean over its plays, so the card luck of the board cancels and its unit
is points per deal. The report gives the mean over boards with a 95% t interval, each side's
contracts by type (suit, no trumps, misère including open misère), and optionally whole games to
500 (A's win rate with a Wilson interval; the seats alternate between games of the same seed, so
those are duplicated too).

With ``workers`` above 1 or the Ray backend (:mod:`training.distributed`) the boards and games are
split into ranges, each played in a worker with agents built there, and the results are tallied
in board order as one process would: the report is exactly the same whatever the split (every
play reseeds its agents, and every board and game has its own seed).

Importing this module does not import torch: an agent that needs it imports it itself.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from agents.base import Agent
from agents.play import play_deal, play_game
from five_hundred_env.actions import OPEN_MISERE
from five_hundred_env.cards import card_to_str, mask_to_cards
from five_hundred_env.engine import Deal
from five_hundred_env.env import raw_env
from five_hundred_env.rules import Rules, make_rules
from five_hundred_env.scoring import CONTRACT_TYPES, contract_type
from training.distributed import LOCAL, Backend
from training.statistics import mean_ci95, t_quantile_975, wilson_ci95  # the report's intervals (re-exported)

AgentLike = Agent | Callable[[Rules, int | None], Agent] | str
"""An agent instance (used in every seat it takes), a factory ``f(rules, seed) -> Agent``, or an
agent spec of :func:`agents.registry.agent_factory` (a name or a checkpoint path)."""

SIDES = ("A", "B")
MAX_GAME_DEALS = 400  # a game to 500 that has not ended after this many deals counts as undecided


# -- the report --------------------------------------------------------------------------------
def _empty_contracts() -> dict[str, dict[str, int]]:
    counts = {kind: {"bid": 0, "made": 0} for kind in CONTRACT_TYPES}
    counts["open_misere"] = {"bid": 0, "made": 0}
    return counts


@dataclass
class EvaluationReport:
    """The result of :func:`duplicate_match`; :meth:`to_dict` is the JSON schema (see the README)."""

    rules: Rules
    agent_a: str
    agent_b: str
    deals: int
    seed: int
    board_diffs: list[float] = field(default_factory=list)
    """Each board's mean score difference A − B (points per deal)."""
    play_diffs: list[float] = field(default_factory=list)
    """Each single play's score difference A − B, before the duplicate averaging."""
    score_a: float = 0.0
    """Total score change of A players over all plays (per-player, not per side)."""
    score_b: float = 0.0
    plays: int = 0
    thrown_in: int = 0
    contracts: dict[str, dict[str, dict[str, int]]] = field(
        default_factory=lambda: {side: _empty_contracts() for side in SIDES})
    games: int = 0
    game_wins_a: float = 0.0
    games_undecided: int = 0
    game_deals: int = 0

    @property
    def score_diff(self) -> tuple[float, float, float, float]:
        """Mean board difference, its 95% interval (lo, hi) and standard error."""
        return mean_ci95(self.board_diffs)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data (schema in the README)."""
        mean, lo, hi, se = self.score_diff
        plays = max(self.plays, 1)
        contracts: dict[str, Any] = {}
        for side in SIDES:
            rows: dict[str, Any] = {}
            total_bid = total_made = 0
            for kind, c in self.contracts[side].items():
                rows[kind] = {
                    "bid": c["bid"], "made": c["made"],
                    "share_of_deals": c["bid"] / plays,
                    "made_rate": c["made"] / c["bid"] if c["bid"] else None,
                }
                if kind in CONTRACT_TYPES:
                    total_bid += c["bid"]
                    total_made += c["made"]
            rows["all"] = {"bid": total_bid, "made": total_made, "share_of_deals": total_bid / plays,
                           "made_rate": total_made / total_bid if total_bid else None}
            contracts[side] = rows
        out: dict[str, Any] = {
            "rules": self.rules.to_dict(),
            "agent_a": self.agent_a,
            "agent_b": self.agent_b,
            "seed": self.seed,
            "deals": self.deals,
            "plays": self.plays,
            "score_diff_per_deal": {
                "mean": _finite(mean), "ci95": [_finite(lo), _finite(hi)], "stderr": _finite(se),
                "raw_play_std": _finite(_std(self.play_diffs)),
            },
            "score_per_deal": {"A": self.score_a / plays, "B": self.score_b / plays},
            "thrown_in": self.thrown_in,
            "contracts": contracts,
            "games": None,
        }
        if self.games:
            lo_w, hi_w = wilson_ci95(self.game_wins_a, self.games)
            out["games"] = {
                "games": self.games, "wins_a": self.game_wins_a, "win_rate_a": self.game_wins_a / self.games,
                "ci95": [lo_w, hi_w], "baseline": 1 / self.rules.num_sides,
                "undecided": self.games_undecided, "mean_deals": self.game_deals / self.games,
            }
        return out

    def format_table(self) -> str:
        """A short text table for the terminal."""
        d = self.to_dict()
        sd = d["score_diff_per_deal"]
        lines = [
            f"{self.agent_a} (A) vs {self.agent_b} (B) — {self.rules.describe()}, {self.deals} duplicate deals "
            f"({self.plays} plays), seed {self.seed}",
            f"score difference per deal (A − B): {_fmt(sd['mean'])}  95% CI [{_fmt(sd['ci95'][0])}, {_fmt(sd['ci95'][1])}]",
            f"seats: {layout_text(self.rules)}",
            f"score per deal: A {d['score_per_deal']['A']:.1f}, B {d['score_per_deal']['B']:.1f}; thrown in "
            f"{d['thrown_in']} of {self.plays} plays",
            "",
            f"{'contracts':<12}" + "".join(f"{side + ' bid':>10}{side + ' made':>10}{side + ' %made':>9}" for side in SIDES),
        ]
        for kind in (*CONTRACT_TYPES, "open_misere", "all"):
            row = f"{kind if kind != 'open_misere' else '  open':<12}"
            for side in SIDES:
                c = d["contracts"][side][kind]
                rate = "-" if c["made_rate"] is None else f"{100 * c['made_rate']:.0f}%"
                row += f"{c['bid']:>10}{c['made']:>10}{rate:>9}"
            lines.append(row)
        lines.append("(share of deals bid: " + ", ".join(
            f"{side} {100 * d['contracts'][side]['all']['share_of_deals']:.1f}%" for side in SIDES) + ")")
        if d["games"]:
            g = d["games"]
            lines.append("")
            lines.append(f"games to {self.rules.target}: A won {g['wins_a']:g} of {g['games']} = {100 * g['win_rate_a']:.1f}% "
                         f"95% CI [{100 * g['ci95'][0]:.1f}%, {100 * g['ci95'][1]:.1f}%] (equal strength: "
                         f"{100 * g['baseline']:.0f}%); {g['undecided']} undecided; {g['mean_deals']:.1f} deals per game")
        return "\n".join(lines)


def _std(values: Sequence[float]) -> float:
    n = len(values)
    if n < 2:
        return float("nan")
    m = sum(values) / n
    return math.sqrt(sum((x - m) ** 2 for x in values) / (n - 1))


def _finite(x: float) -> float | None:
    return None if x != x or x in (float("inf"), float("-inf")) else float(x)


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.1f}"


# -- boards and plays -----------------------------------------------------------------------------
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


def layout_text(rules: Rules) -> str:
    """How the two agents share the seats of a board, in words (the report's ``seats`` line)."""
    n = rules.num_players
    plays = len(seat_layouts(rules))
    if rules.has_partners:
        size = len(rules.seats_of(0))
        teams = " against ".join(", ".join(map(str, rules.seats_of(side))) for side in range(rules.num_sides))
        return f"teams of {size} (seats {teams}): A as each team in turn, {plays} plays a board"
    return (f"each alone: A against {n - 1} B in every seat, then B against {n - 1} A, "
            f"{plays} plays a board")


class _Seats:
    """The agent playing each seat: instances are shared, factories build one agent per seat."""

    def __init__(self, rules: Rules, spec_a: AgentLike, spec_b: AgentLike, seed: int) -> None:
        n = rules.num_players
        self.agents: dict[tuple[str, int], Agent] = {}
        for label, spec in (("A", _factory(spec_a)), ("B", _factory(spec_b))):
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


def play_board(
    env: raw_env, deal: BoardDeal, agent_a: AgentLike, agent_b: AgentLike, seed: int = 0,
    seats: _Seats | None = None,
) -> list[PlayResult]:
    """Play one board: the deal once for every seat layout of :func:`seat_layouts`.

    Every play reseeds the agents from the same ``seed``, so identical deterministic agents play
    each layout identically and the board's difference is exactly zero.
    """
    rules = env.rules
    seats = seats or _Seats(rules, agent_a, agent_b, seed)
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


def _progress_bar(total: int, enabled: bool, desc: str, iterable: Iterable[Any] | None = None) -> Any:
    """A tqdm bar over ``iterable`` (without one: a bar to update); without a bar (disabled, or
    no tqdm), ``iterable`` itself."""
    if not enabled:
        return iterable
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm comes with the training extra; without it, no bar
        return iterable
    return tqdm(iterable, total=total, desc=desc, unit="deal" if desc == "deals" else "game")


def _factory(spec: AgentLike) -> Agent | Callable[[Rules, int | None], Agent]:
    """An agent spec's factory (from the registry); instances and factories as they are."""
    if isinstance(spec, str):
        from agents.registry import agent_factory

        return agent_factory(spec)
    return spec


def _name(spec: AgentLike) -> str:
    spec = _factory(spec)
    if isinstance(spec, Agent):
        return getattr(spec, "label", None) or spec.name
    return getattr(spec, "label", None) or getattr(spec, "name", None) or getattr(spec, "__name__", "agent")


def duplicate_match(rules: Rules | str, agent_a: AgentLike, agent_b: AgentLike, deals: int, seed: int = 0, games: int = 0,
                    progress: bool = False, workers: int = 1, backend: Backend = LOCAL) -> EvaluationReport:
    """Play ``agent_a`` against ``agent_b`` over ``deals`` duplicate boards (and ``games`` games to 500).

    ``rules`` is a preset name or a :class:`Rules`; each agent is an :class:`Agent` (shared by the
    seats it takes; it must not keep per-seat state), a factory ``f(rules, seed) -> Agent`` or a
    spec (``"heuristic"``, a checkpoint path). With ``workers`` above 1 or the Ray ``backend`` the
    match is split over workers (the agents must then be picklable: a spec, a class or a
    module-level factory) with exactly the same report. Everything is reproducible from ``seed``.
    See the module docstring for the method.
    """
    rules = make_rules(rules) if isinstance(rules, str) else rules
    if not isinstance(deals, int) or deals < 0:
        raise ValueError(f"deals must be a whole number >= 0, got {deals!r}")
    if not isinstance(games, int) or games < 0:
        raise ValueError(f"games must be a whole number >= 0, got {games!r}")
    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a whole number >= 1, got {workers!r}")
    report = EvaluationReport(rules, _name(agent_a), _name(agent_b), deals, seed)
    if workers == 1 and backend.kind == "local":
        seats = _Seats(rules, agent_a, agent_b, seed)
        boards = _progress_bar(deals, progress, "deals", board_results(rules, agent_a, agent_b, seed, 0, deals, seats))
        played: Iterable[GameResult] = _progress_bar(games, progress, "games", game_results(
            rules, agent_a, agent_b, seed, 0, games, seats)) if games else ()
    else:
        from training.evaluate_ranges import play_in_ranges  # it imports this module

        bar = _progress_bar(deals + games, progress, "deals and games")
        try:
            boards, played = play_in_ranges(rules, agent_a, agent_b, seed, deals, games, workers, backend,
                                            on_progress=bar.update if bar else None)
        finally:
            if bar:
                bar.close()
    for results in boards:
        _tally(report, results)
    for game in played:
        _tally_game(report, game)
    return report


def board_results(rules: Rules, agent_a: AgentLike, agent_b: AgentLike, seed: int, start: int, stop: int,
                  seats: _Seats | None = None) -> Iterator[list[PlayResult]]:
    """The plays of boards ``start`` to ``stop`` (excluded) of the match of ``seed``, one list per
    board, as :func:`duplicate_match` plays them (``seats``: the match's agents, else built here)."""
    seats = seats or _Seats(rules, agent_a, agent_b, seed)
    env = raw_env(rules=rules, episode="deal")
    for i, deal in enumerate(islice(board_deals(rules, stop, seed), start, None), start):
        yield play_board(env, deal, agent_a, agent_b, seed=seed * 1_000_003 + i, seats=seats)


@dataclass(frozen=True)
class GameResult:
    """What the report counts of one game to 500: the seats' sides, its length, whether it ended
    and who won (the winning sides)."""

    layout: tuple[str, ...]
    deals: int
    finished: bool
    winners: tuple[int, ...]


def game_results(rules: Rules, agent_a: AgentLike, agent_b: AgentLike, seed: int, start: int, stop: int,
                 seats: _Seats | None = None) -> Iterator[GameResult]:
    """Games ``start`` to ``stop`` (excluded) to 500 of the match of ``seed``; the layouts of
    :func:`seat_layouts` alternate over games of one seed."""
    seats = seats or _Seats(rules, agent_a, agent_b, seed)
    layouts = seat_layouts(rules)
    if not rules.has_partners:
        layouts = layouts[:rules.num_players]  # A alone against two copies of B, in each seat
    env = raw_env(rules=rules, episode="game", max_deals=MAX_GAME_DEALS)
    for g in range(start, stop):
        layout = layouts[g % len(layouts)]
        game_seed = seed * 1_000_003 + 500_000 + g // len(layouts)
        game = play_game(env, seats.players(layout, game_seed), seed=game_seed)
        yield GameResult(layout, len(game.deals), game.is_over, tuple(game.winners or ()))


def _tally(report: EvaluationReport, results: list[PlayResult]) -> None:
    rules = report.rules
    n = rules.num_players
    diffs = []
    for r in results:
        d = r.diff
        diffs.append(d)
        report.play_diffs.append(d)
        report.plays += 1
        side_of = rules.side_of
        for label in SIDES:
            members = [s for s in range(n) if r.seats[s] == label]
            total = sum(r.score_change[side_of(s)] for s in members) / len(members)
            if label == "A":
                report.score_a += total
            else:
                report.score_b += total
        if r.contract < 0:
            report.thrown_in += 1
            continue
        label = r.seats[r.contractor]
        kind = contract_type(r.contract)
        row = report.contracts[label]
        row[kind]["bid"] += 1
        row[kind]["made"] += int(r.made)
        if r.contract == OPEN_MISERE:
            row["open_misere"]["bid"] += 1
            row["open_misere"]["made"] += int(r.made)
    report.board_diffs.append(sum(diffs) / len(diffs))


def _tally_game(report: EvaluationReport, game: GameResult) -> None:
    """Count one game to 500: a win for A's side (a tie for the win between lone players shared), or
    undecided (counted as an even share)."""
    rules = report.rules
    report.games += 1
    report.game_deals += game.deals
    if not game.finished:
        report.games_undecided += 1
        report.game_wins_a += 1 / rules.num_sides
        return
    a_sides = {rules.side_of(s) for s, label in enumerate(game.layout) if label == "A"}
    if a_sides & set(game.winners):
        report.game_wins_a += 1.0 if rules.has_partners else 1.0 / len(game.winners)


__all__ = [
    "BoardDeal",
    "EvaluationReport",
    "GameResult",
    "PlayResult",
    "board_deals",
    "board_results",
    "duplicate_match",
    "game_results",
    "layout_text",
    "mean_ci95",
    "play_board",
    "seat_layouts",
    "t_quantile_975",
    "wilson_ci95",
]
