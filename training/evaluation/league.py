"""A league: every pair of agents in a duplicate match on the same boards, one rating per agent.

:func:`run_league` plays each pair of ``agents`` as :func:`training.evaluation.evaluate.duplicate_match`
would (the same boards for every pair: dealt from ``seed``, or a benchmark set's), then fits the
ratings of :mod:`training.evaluation.ratings` to the per-board results (the heuristic at 0 when
it plays). Every range of boards (and games) a pair plays is kept in a cache folder as soon as it
is played, one file per pair, keyed by the rules, the boards and what each agent is (its spec,
and the SHA-256 of every file it names: a checkpoint, a bot's program), so that

* adding an agent to a league plays only its new pairs, and more boards only the new boards;
* a league stopped midway (Ctrl-C, a crash) goes on from what it had played;
* the report is the same whether a pair was played now, cached, or split over workers: each
  board is played exactly as one match would play it (its own seed, the agents reseeded).

The pairs' ranges are run as one batch of jobs on the workers (local processes or Ray,
:mod:`training.workers.distributed`), so a league costs the sum of its new matches, no more.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.command import is_command_spec, parse_command_spec
from five_hundred_env.rules import Rules, make_rules
from training.evaluation.bench import BoardSet
from training.evaluation.evaluate import EvaluationReport, check_match, tally_report
from training.evaluation.evaluate_ranges import BOARDS_PER_JOB, GAMES_PER_JOB, JOB_TIMEOUT_S, RangeJob, play_range
from training.evaluation.matches import GameResult, PlayResult, agent_or_factory
from training.evaluation.ratings import BOOTSTRAP_REPS, PRIOR_DRAWS, board_outcomes, league_points, league_ratings
from training.workers.distributed import LOCAL, Backend, run_jobs

ANCHOR = "heuristic"
"""The agent whose rating is 0 when it plays in the league."""
CACHE_VERSION = 1
"""Part of every cache key: a change of what a cached board means makes a new one."""


# -- what an agent is, for the cache -------------------------------------------------------------------
def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def spec_identity(spec: str, rules: Rules | None = None) -> dict[str, Any]:
    """What an agent spec is, as far as a cache can tell: the spec, and the SHA-256 of each file
    it names (the spec itself as a path, an option's value, a ``cmd:`` bot's program and
    arguments) or plays with (a shipped network: ``pretrained``, ``scratch``, ``pimc``'s default
    base; with ``rules``, only the network of their preset, else every preset's), so that a
    retrained checkpoint, a new shipped network or an edited bot is a new agent."""
    if is_command_spec(spec):
        words = parse_command_spec(spec)[0]
    else:
        words = [spec, spec.removeprefix("trusted:"), *re.split(r"[:,=@]", spec)]
    files = {}
    for word in dict.fromkeys(w.strip() for w in words if w.strip()):
        path = Path(word).expanduser()
        with contextlib.suppress(OSError):
            if path.is_file():
                files[word] = _file_digest(path)
        files.update(_shipped_networks(word.lower(), None if rules is None else rules.preset))
    return {"spec": spec, "files": files}


def _shipped_networks(name: str, preset: str | None) -> dict[str, str]:
    """The SHA-256 of each network shipped in the package that the registered agent ``name`` plays
    with (``pimc``: its default base, the pretrained networks) under ``preset`` (``None``: any), so
    that a new shipped network of that preset is a new agent, and another preset's leaves it alone."""
    from agents.pretrained import PRETRAINED_DIR, SCRATCH_DIR, SUFFIX

    folder = {"pretrained": PRETRAINED_DIR, "pimc": PRETRAINED_DIR, "scratch": SCRATCH_DIR}.get(name)
    if folder is None or not folder.is_dir():
        return {}
    return {f"{name}/{entry.name}": hashlib.sha256(entry.read_bytes()).hexdigest()
            for entry in sorted(folder.iterdir(), key=lambda e: e.name)
            if entry.name.endswith(SUFFIX) and entry.is_file() and preset in (None, entry.name[: -len(SUFFIX)])}


# -- the cache ------------------------------------------------------------------------------------------------
def _encode_play(play: PlayResult) -> list[Any]:
    return ["".join(play.seats), play.score_change, play.contract, play.contractor, play.made, play.forfeit]


def _decode_play(data: list[Any], side_of_seat: tuple[int, ...]) -> PlayResult:
    seats, change, contract, contractor, made, forfeit = data
    return PlayResult(tuple(seats), list(change), side_of_seat, contract, contractor, made, forfeit)


def _encode_game(game: GameResult) -> list[Any]:
    return ["".join(game.layout), game.deals, game.finished, list(game.winners)]


def _decode_game(data: list[Any]) -> GameResult:
    layout, deals, finished, winners = data
    return GameResult(tuple(layout), deals, finished, tuple(winners))


class PairCache:
    """The played ranges of one pair on one set of boards: a JSON-lines file, a header line (the
    key), then a line per range as it was played, ``{"kind", "start", "stop", "results"}``. A line
    cut short by a crash is ignored (its range is played again)."""

    def __init__(self, path: Path | None, key: dict[str, Any], rules: Rules) -> None:
        self.path, self.key = path, key
        self.side_of_seat = tuple(rules.side_of(s) for s in range(rules.num_players))
        self.boards: dict[int, list[PlayResult]] = {}
        self.games: dict[int, GameResult] = {}
        if path is not None and path.is_file():
            self._read(path)

    def _read(self, path: Path) -> None:
        lines = path.read_text().splitlines()
        try:
            header = json.loads(lines[0]) if lines else None
        except ValueError:
            header = None
        if header != {"key": self.key}:
            return  # another key's file under the same name cannot be: a damaged header is replayed
        for line in lines[1:]:
            try:
                entry = json.loads(line)
            except ValueError:  # cut short by a crash: that range is played again
                continue
            for offset, result in enumerate(entry["results"]):
                index = entry["start"] + offset
                if entry["kind"] == "boards":
                    self.boards[index] = [_decode_play(p, self.side_of_seat) for p in result]
                else:
                    self.games[index] = _decode_game(result)

    def add(self, job: RangeJob, results: list[Any]) -> None:
        """Keep a range just played (written to the file at once)."""
        store = self.boards if job.kind == "boards" else self.games
        for index, result in enumerate(results, job.start):
            store[index] = result
        if self.path is None:
            return
        encode = (lambda board: [_encode_play(p) for p in board]) if job.kind == "boards" else _encode_game
        entry = {"kind": job.kind, "start": job.start, "stop": job.stop, "results": [encode(r) for r in results]}
        new = not self.path.exists()
        with self.path.open("a") as f:
            if new:
                f.write(json.dumps({"key": self.key}) + "\n")
            f.write(json.dumps(entry, separators=(",", ":")) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def missing(self, kind: str, total: int) -> list[tuple[int, int]]:
        """The ranges of boards (or games) ``0 … total - 1`` not yet played, cut at the multiples
        of the job size so that ranges stay the same from one league to the next."""
        have = self.boards if kind == "boards" else self.games
        size = BOARDS_PER_JOB if kind == "boards" else GAMES_PER_JOB
        ranges: list[tuple[int, int]] = []
        for index in range(total):
            if index in have:
                continue
            if ranges and ranges[-1][1] == index and index % size:
                ranges[-1] = (ranges[-1][0], index + 1)
            else:
                ranges.append((index, index + 1))
        return ranges


@contextlib.contextmanager
def _locked(folder: Path | None) -> Iterator[None]:
    """The cache folder held by this league alone (two leagues writing one pair's file would mix it)."""
    if folder is None:
        yield
        return
    folder.mkdir(exist_ok=True)
    with (folder / ".lock").open("a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(f"another league is using the cache {folder}: wait for it, or give --cache another folder") from None
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=+-]+", "_", spec).strip("_")[:40] or "agent"


# -- the league -------------------------------------------------------------------------------------------------
@dataclass
class LeagueReport:
    """The result of :func:`run_league`; :meth:`to_dict` is its JSON."""

    rules: Rules
    agents: list[str]
    """The agents as given (specs)."""
    deals: int
    games: int
    seed: int
    bench: BoardSet | None
    matches: dict[tuple[int, int], EvaluationReport]
    """Each pair's match, by ``(i, j)``: agent ``i`` (the spec that sorts first) was side A."""
    ratings: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    points: np.ndarray
    """Each agent's points per deal (the additive fit of the pairs' means, :func:`league_points`)."""
    points_lo: np.ndarray
    points_hi: np.ndarray
    anchor: str | None
    played_boards: int = 0
    cached_boards: int = 0
    seconds: float = 0.0
    order: list[int] = field(default_factory=list)
    """The agents' indices by rating, best first."""

    def __post_init__(self) -> None:
        self.order = sorted(range(len(self.agents)), key=lambda i: -self.ratings[i])

    def versus(self, i: int, j: int) -> tuple[float, float, float]:
        """Points per deal of agent ``i`` against ``j`` (their match's mean difference) and its 95% interval."""
        mean, lo, hi, _se = self.matches[i, j].score_diff if (i, j) in self.matches else self.matches[j, i].score_diff
        return (mean, lo, hi) if (i, j) in self.matches else (-mean, -hi, -lo)

    def games_won(self, i: int, j: int) -> float | None:
        """The share of the games to 500 agent ``i`` won against ``j`` (``None`` without games)."""
        report = self.matches[i, j] if (i, j) in self.matches else self.matches[j, i]
        if not report.games:
            return None
        share_a = report.game_wins_a / report.games
        if (i, j) in self.matches:
            return share_a
        return (1 - share_a) if self.rules.has_partners or self.rules.num_players == 2 else None

    def boards_text(self) -> str:
        if self.bench is not None:
            return f"the first {self.deals:,} boards of {self.bench.describe()}"
        return f"{self.deals:,} boards dealt from seed {self.seed}"

    def to_dict(self) -> dict[str, Any]:
        """``ratings`` (rank order: ``{agent, rating, ci95}``), every pairwise ``matches`` entry (the
        report of :func:`duplicate_match`), the boards and the method."""
        def number(x: float) -> float | None:
            return None if not np.isfinite(x) else round(float(x), 1)

        return {
            "rules": self.rules.to_dict(),
            "agents": self.agents,
            "deals": self.deals,
            "games": self.games,
            "boards": ({"bench": self.bench.name, "sha256": self.bench.sha256, "boards": len(self.bench.boards)}
                       if self.bench else {"seed": self.seed}),
            "ratings": [{"rank": rank, "agent": self.agents[i], "rating": number(self.ratings[i]),
                         "ci95": [number(self.lo[i]), number(self.hi[i])], "points": number(self.points[i]),
                         "points_ci95": [number(self.points_lo[i]), number(self.points_hi[i])]}
                        for rank, i in enumerate(self.order, 1)],
            "method": {"model": "Bradley-Terry on per-board results (win, draw, loss), Elo scale (400 * log10 odds)",
                       "points": "least squares of the pairs' mean differences per deal, s_i - s_j",
                       "anchor": self.anchor, "prior_draws": PRIOR_DRAWS, "bootstrap": BOOTSTRAP_REPS},
            "matches": [self.matches[pair].to_dict() for pair in sorted(self.matches)],
            "played_boards": self.played_boards,
            "cached_boards": self.cached_boards,
            "seconds": round(self.seconds, 1),
        }

    def format_table(self) -> str:
        """The ratings table (Markdown): rank, agent, rating, interval, points per deal against
        each other agent (columns by rank), games won where played; then a line on the boards."""
        names = {i: f"#{rank}" for rank, i in enumerate(self.order, 1)}
        head = ["rank", "agent", "rating", "95% interval", "points/deal", *(f"vs {names[j]}" for j in self.order)]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for rank, i in enumerate(self.order, 1):
            cells = [str(rank), f"`{self.agents[i]}`", f"{self.ratings[i]:+.0f}", _interval(self.lo[i], self.hi[i]),
                     f"{self.points[i]:+.1f}"]
            for j in self.order:
                if i == j:
                    cells.append("–")
                    continue
                mean = self.versus(i, j)[0]
                won = self.games_won(i, j)
                cells.append(f"{mean:+.1f}" + ("" if won is None else f" ({100 * won:.0f}%)"))
            lines.append("| " + " | ".join(cells) + " |")
        anchor = f"{self.anchor} = 0" if self.anchor else "mean rating = 0"
        games = f"; (N%): games to {self.rules.target} won, {self.games} a pair" if self.games else ""
        lines += ["", f"{self.rules.describe()}; {self.boards_text()}; Bradley–Terry ratings on the boards won "
                      f"(Elo scale, {anchor}; 95% bootstrap intervals); points/deal: the agents' points per deal "
                      f"fitted to the pairs' means (same anchor); vs #k: points per deal against the agent ranked k "
                      f"(the pair's duplicate mean){games}."]
        return "\n".join(lines)

    def format_matches(self) -> str:
        """One line per pair: the mean difference per deal with its interval."""
        lines = []
        for (i, j), report in sorted(self.matches.items()):
            mean, lo, hi, _se = report.score_diff
            lines.append(f"{self.agents[i]} vs {self.agents[j]}: {mean:+.1f} [{lo:+.1f}, {hi:+.1f}] per deal")
        return "\n".join(lines)

    def plot(self, path: Path) -> None:
        """A picture of the ratings with their intervals, best at the top (matplotlib)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        order = self.order[::-1]
        y = np.arange(len(order))
        r = self.ratings[order]
        fig, ax = plt.subplots(figsize=(7, 0.45 * len(order) + 1.4))
        err = np.vstack([r - self.lo[order], self.hi[order] - r])
        ax.errorbar(r, y, xerr=np.where(np.isfinite(err), err, 0), fmt="o", color="#1f5fa8", ecolor="#7aa6d6", capsize=4)
        ax.set_yticks(y, [self.agents[i] for i in order])
        ax.axvline(0, color="#999999", lw=0.8, ls="--")
        ax.set_xlabel(f"rating (Elo scale, {self.anchor or 'mean'} = 0), 95% bootstrap interval")
        ax.set_title(f"{self.rules.preset}: {self.boards_text()}", fontsize=9)
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)


def _interval(lo: float, hi: float) -> str:
    return "n/a" if not (np.isfinite(lo) and np.isfinite(hi)) else f"[{lo:+.0f}, {hi:+.0f}]"


def _label(spec: Any) -> str:
    factory = agent_or_factory(spec)
    return str(getattr(factory, "label", None) or getattr(factory, "name", None) or spec)


def run_league(rules: Rules | str, agents: Sequence[str], deals: int, seed: int = 0, games: int = 0,
               bench: str | None = None, workers: int = 1, backend: Backend = LOCAL, cache: Path | None = None,
               on_bot_error: str = "raise", on_progress: Callable[[int], None] | None = None,
               on_plan: Callable[[int, int], None] | None = None) -> LeagueReport:
    """Play every pair of ``agents`` (specs, at least two, each once) over ``deals`` boards (and
    ``games`` games to 500), reusing what ``cache`` (a folder, or ``None``) holds, and rate them.

    ``on_plan(to_play, cached)`` is told the boards and games to play and those found in the cache
    before play starts; ``on_progress(n)`` as each range of ``n`` finishes. See the module docstring."""
    rules = make_rules(rules) if isinstance(rules, str) else rules
    if not all(isinstance(a, str) and a.strip() for a in agents):
        raise ValueError("a league's agents are specs (names, paths, cmd:...): they key its cache and go to its workers")
    specs = [a.strip() for a in agents]
    if len(specs) < 2:
        raise ValueError(f"a league needs at least two agents, got {len(specs)}")
    if len(set(specs)) != len(specs):
        twice = sorted({s for s in specs if specs.count(s) > 1})
        raise ValueError(f"agent {twice[0]!r} is given twice")
    board_set = check_match(rules, deals, games, workers, bench, on_bot_error)
    if board_set is not None:
        seed = board_set.seed
    boards_key = {"bench": board_set.name, "sha256": board_set.sha256} if board_set else {"seed": seed}
    started = time.monotonic()
    caches: dict[tuple[int, int], PairCache] = {}
    jobs: list[tuple[tuple[int, int], RangeJob]] = []
    identities = [spec_identity(spec, rules) for spec in specs]  # each checkpoint or bot hashed once
    with _locked(cache):
        for first in range(len(specs)):
            for second in range(first + 1, len(specs)):
                i, j = sorted((first, second), key=lambda k: specs[k])  # A sorts first: the cache ignores the order given
                key = {"version": CACHE_VERSION, "rules": rules.to_dict(), "boards": boards_key,
                       "a": identities[i], "b": identities[j], "on_bot_error": on_bot_error}
                digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
                path = None if cache is None else cache / f"{_slug(specs[i])}--{_slug(specs[j])}-{digest}.jsonl"
                caches[i, j] = pair = PairCache(path, key, rules)
                for kind, total in (("boards", deals), ("games", games)):
                    for lo, hi in pair.missing(kind, total):
                        jobs.append(((i, j), RangeJob(rules, specs[i], specs[j], seed, kind, lo, hi, bench, on_bot_error)))
        to_play = sum(job.stop - job.start for _pair, job in jobs)
        total = len(caches) * (deals + games)
        if on_plan:
            on_plan(to_play, total - to_play)

        def keep(index: int, results: list[Any]) -> None:
            pair, job = jobs[index]
            caches[pair].add(job, results)

        run_jobs(play_range, [job for _pair, job in jobs], workers, JOB_TIMEOUT_S, backend=backend, on_result=keep,
                 on_done=(lambda index: on_progress(jobs[index][1].stop - jobs[index][1].start)) if on_progress else None)
    labels = [_label(s) for s in specs]
    matches = {pair: tally_report(rules, labels[pair[0]], labels[pair[1]], seed,
                                  [c.boards[b] for b in range(deals)], [c.games[g] for g in range(games)], board_set)
               for pair, c in caches.items()}
    anchor = labels.index(ANCHOR) if ANCHOR in labels else None
    outcomes = {pair: board_outcomes(report.board_diffs) for pair, report in matches.items()}
    ratings, lo, hi = league_ratings(outcomes, len(specs), anchor)
    points = league_points({pair: np.asarray(report.board_diffs) for pair, report in matches.items()}, len(specs), anchor)
    played = sum(job.stop - job.start for _pair, job in jobs if job.kind == "boards")
    return LeagueReport(rules, labels, deals, games, seed, board_set, matches, ratings, lo, hi, *points,
                        None if anchor is None else ANCHOR, played_boards=played,
                        cached_boards=len(caches) * deals - played, seconds=time.monotonic() - started)


__all__ = ["ANCHOR", "LeagueReport", "PairCache", "run_league", "spec_identity"]
