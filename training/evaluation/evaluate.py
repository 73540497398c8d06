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

With ``workers`` above 1 or the Ray backend (:mod:`training.workers.distributed`) the boards and games are
split into ranges, each played in a worker with agents built there, and the results are tallied
in board order as one process would: the report is exactly the same whatever the split (every
play reseeds its agents, and every board and game has its own seed).

Importing this module does not import torch: an agent that needs it imports it itself.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.base import Agent
from five_hundred_env.actions import OPEN_MISERE
from five_hundred_env.rules import Rules, make_rules
from five_hundred_env.scoring import CONTRACT_TYPES, contract_type
from training.evaluation.bench import BoardSet, load_bench
from training.evaluation.evaluate_ranges import play_in_ranges
from training.evaluation.matches import (  # the plays of a match: boards, seats, results (re-exported)
    ON_BOT_ERROR,
    SIDES,
    AgentLike,
    BoardDeal,
    GameResult,
    PlayResult,
    Seats,
    agent_or_factory,
    board_deals,
    board_results,
    game_results,
    play_board,
    seat_layouts,
)
from training.evaluation.statistics import mean_ci95, t_quantile_975, wilson_ci95  # the report's intervals (re-exported)
from training.workers.distributed import LOCAL, Backend


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
    bench: BoardSet | None = None
    """The benchmark set the boards came from (``None``: dealt from ``seed``)."""
    forfeits: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SIDES, 0))
    """Boards each side forfeited (a ``cmd:`` bot failed, ``on_bot_error="forfeit"``)."""

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
            "bench": None if self.bench is None else {"set": self.bench.name, "sha256": self.bench.sha256,
                                                      "boards": len(self.bench.boards)},
            "forfeits": dict(self.forfeits),
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
        boards = f"seed {self.seed}" if self.bench is None else f"the first {self.deals} of {self.bench.describe()}"
        lines = [
            f"{self.agent_a} (A) vs {self.agent_b} (B) — {self.rules.describe()}, {self.deals} duplicate deals "
            f"({self.plays} plays), {boards}",
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
        if any(self.forfeits.values()):
            lines.append("boards forfeited (a bot failed): " + ", ".join(f"{side} {n}" for side, n in self.forfeits.items()))
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


def _name(spec: AgentLike) -> str:
    spec = agent_or_factory(spec)
    if isinstance(spec, Agent):
        return getattr(spec, "label", None) or spec.name
    return getattr(spec, "label", None) or getattr(spec, "name", None) or getattr(spec, "__name__", "agent")


def duplicate_match(rules: Rules | str, agent_a: AgentLike, agent_b: AgentLike, deals: int, seed: int = 0, games: int = 0,
                    progress: bool = False, workers: int = 1, backend: Backend = LOCAL, bench: str | None = None,
                    on_bot_error: str = "raise") -> EvaluationReport:
    """Play ``agent_a`` against ``agent_b`` over ``deals`` duplicate boards (and ``games`` games to 500).

    ``rules`` is a preset name or a :class:`Rules`; each agent is an :class:`Agent` (shared by the
    seats it takes; it must not keep per-seat state), a factory ``f(rules, seed) -> Agent`` or a
    spec (``"heuristic"``, a checkpoint path). With ``workers`` above 1 or the Ray ``backend`` the
    match is split over workers (the agents must then be picklable: a spec, a class or a
    module-level factory) with exactly the same report. Everything is reproducible from ``seed``;
    with ``bench`` (a benchmark set, ``"v1"``: :mod:`training.evaluation.bench`) the boards are the
    set's first ``deals`` and the seed is the set's. ``on_bot_error="forfeit"`` scores a board on
    which a ``cmd:`` bot fails as its side's loss instead of stopping.
    See the module docstring for the method.
    """
    rules = make_rules(rules) if isinstance(rules, str) else rules
    board_set = check_match(rules, deals, games, workers, bench, on_bot_error)
    if board_set is not None:
        seed = board_set.seed
    if workers == 1 and backend.kind == "local":
        seats = Seats(rules, agent_a, agent_b, seed)
        boards = _progress_bar(deals, progress, "deals", board_results(
            rules, agent_a, agent_b, seed, 0, deals, seats, board_set.boards if board_set else None, on_bot_error))
        played: Iterable[GameResult] = _progress_bar(games, progress, "games", game_results(
            rules, agent_a, agent_b, seed, 0, games, seats, on_bot_error)) if games else ()
    else:
        bar = _progress_bar(deals + games, progress, "deals and games")
        try:
            boards, played = play_in_ranges(rules, agent_a, agent_b, seed, deals, games, workers, backend,
                                            on_progress=bar.update if bar else None, bench=bench,
                                            on_bot_error=on_bot_error)
        finally:
            if bar:
                bar.close()
    return tally_report(rules, _name(agent_a), _name(agent_b), seed, boards, played, board_set)


def check_match(rules: Rules, deals: int, games: int, workers: int, bench: str | None,
                on_bot_error: str) -> BoardSet | None:
    """Refuse a match's bad settings (a ``ValueError`` naming the setting); the benchmark set's
    boards for the rules, if ``bench`` names one."""
    if not isinstance(deals, int) or deals < 0:
        raise ValueError(f"deals must be a whole number >= 0, got {deals!r}")
    if not isinstance(games, int) or games < 0:
        raise ValueError(f"games must be a whole number >= 0, got {games!r}")
    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a whole number >= 1, got {workers!r}")
    if on_bot_error not in ON_BOT_ERROR:
        raise ValueError(f"on_bot_error must be one of {', '.join(ON_BOT_ERROR)}, got {on_bot_error!r}")
    if bench is None:
        return None
    board_set = load_bench(bench, rules)
    if deals > len(board_set.boards):
        raise ValueError(f"{board_set.describe()} has {len(board_set.boards):,} boards: {deals:,} asked for")
    return board_set


def tally_report(rules: Rules, agent_a: str, agent_b: str, seed: int, boards: Iterable[list[PlayResult]],
                 games: Iterable[GameResult] = (), bench: BoardSet | None = None) -> EvaluationReport:
    """The report of a match from its boards' plays and its games' results, in order (how
    :func:`duplicate_match` and the league, from its cache, make theirs)."""
    report = EvaluationReport(rules, agent_a, agent_b, 0, seed, bench=bench)
    for results in boards:
        _tally(report, results)
    for game in games:
        _tally_game(report, game)
    report.deals = len(report.board_diffs)
    return report


def _tally(report: EvaluationReport, results: list[PlayResult]) -> None:
    rules = report.rules
    n = rules.num_players
    diffs = []
    if results[0].forfeit:
        report.forfeits[results[0].forfeit] += 1
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
            report.thrown_in += r.forfeit is None  # a forfeited board was not played out
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
    "tally_report",
    "wilson_ci95",
]
