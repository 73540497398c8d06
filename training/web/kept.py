"""What agents score against people: the games kept by ``serve --keep-games DIR`` and
``five-hundred human-results DIR``.

Every finished game with a person in it is kept once, as a file of its own in ``DIR``
(:func:`kept_record`, written 0600 by the server's writer thread): its rules and record
(:mod:`five_hundred_env.records`, every hand and move), and who sat at each seat from which move
on — an agent by its spec and version (:meth:`~training.web.menu.AgentMenu.version`: the package,
and the digest of the network it plays with), a person anonymously, by the name they gave if they
gave one. Nothing else: no seat token, no game id.

:func:`human_results` reads them all back and reports, per agent spec and preset, the deals and
games it played against people, with the figures of ``five-hundred evaluate`` and its intervals
(:mod:`training.evaluation.statistics`): its side's points per deal, the difference per deal
between its side and the people's sides it played against (the mean over those sides), and the
games to 500 it won. A deal counts for an agent at a seat when that agent and a person on another
side sat there through the whole deal; a game, when they sat there through the whole game.
"""

from __future__ import annotations

import secrets
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from five_hundred_env.engine import Game
from five_hundred_env.files import write_atomic
from five_hundred_env.records import record_of, replay
from five_hundred_env.rules import Rules
from training.evaluation.statistics import mean_ci95, wilson_ci95
from training.web.menu import AgentMenu
from training.web.saver import PRIVATE, private_folder
from training.web.session import GameSession

KEPT_FORMAT = "five-hundred-kept-game/1"


def kept_record(session: GameSession, menu: AgentMenu) -> dict[str, Any]:
    """(Under ``session``'s lock, or once it is finished.) What is kept of a finished game."""
    seats = []
    for seat, entries in enumerate(session.history):
        seats.append([{"from_move": e["from_move"], "agent": e["agent"],
                       "version": None if e["agent"] is None else menu.version(e["agent"], session.rules),
                       "name": session.given_names.get(seat) if e["agent"] is None else None} for e in entries])
    return {"format": KEPT_FORMAT, "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "length": session.length, "seats": seats, "record": record_of(session.game)}


def keep_game(folder: Path, session: GameSession, menu: AgentMenu) -> Path:
    """Write ``session``'s kept record into ``folder`` (0600), under a fresh name; returns its path."""
    with session.lock:
        data = orjson.dumps(kept_record(session, menu))
    path = private_folder(folder) / f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(4)}.json"
    write_atomic(path, lambda f: f.write(data), mode=PRIVATE)
    return path


# -- reading them back ---------------------------------------------------------------------------------
@dataclass
class Tally:
    """One agent spec's results against people in one preset."""

    points: list[float] = field(default_factory=list)
    """Its side's points in each deal it played against people."""
    diffs: list[float] = field(default_factory=list)
    """Its side's points minus the mean of the people's sides it played against, each deal."""
    games: int = 0
    wins: int = 0
    versions: set[str] = field(default_factory=set)

    def to_dict(self, rules: Rules) -> dict[str, Any]:
        mean, lo, hi, _se = mean_ci95(self.points)
        diff, dlo, dhi, _dse = mean_ci95(self.diffs)
        out: dict[str, Any] = {"deals": len(self.points),
                               "points_per_deal": {"mean": _number(mean), "ci95": [_number(lo), _number(hi)]},
                               "diff_per_deal": {"mean": _number(diff), "ci95": [_number(dlo), _number(dhi)]},
                               "games": None, "versions": sorted(self.versions)}
        if self.games:
            wlo, whi = wilson_ci95(self.wins, self.games)
            out["games"] = {"games": self.games, "wins": self.wins, "win_rate": self.wins / self.games, "ci95": [wlo, whi],
                            "baseline": 1 / rules.num_sides}
        return out


def _number(x: float) -> float | None:
    return None if x != x else round(x, 3)


def _occupant(entries: list[dict[str, Any]], move: int) -> dict[str, Any]:
    return [e for e in entries if e["from_move"] <= move][-1]


def _steady(entries: list[dict[str, Any]], start: int, stop: int) -> dict[str, Any] | None:
    """The seat's occupant from move ``start`` to ``stop`` (exclusive), if the same throughout."""
    occupant = _occupant(entries, start)
    return occupant if all(not start < e["from_move"] < stop for e in entries) else None


def tally_game(kept: dict[str, Any], tallies: dict[tuple[str, str], Tally]) -> None:
    """Add one kept game to ``tallies`` (per ``(spec, preset)``); a malformed one is a ``ValueError``."""
    if not isinstance(kept, dict) or kept.get("format") != KEPT_FORMAT:
        raise ValueError(f"not a kept game (expected format {KEPT_FORMAT!r})")
    game = replay(kept["record"])
    if not isinstance(game, Game):
        raise ValueError("a kept game holds a game record")
    rules, seats = game.rules, kept["seats"]
    if not isinstance(seats, list) or len(seats) != rules.num_players:
        raise ValueError(f"a kept game of {rules.preset} lists {rules.num_players} seats")
    start = 0
    for deal in game.deals:
        stop = start + len(deal.history)
        sitting = [_steady(entries, start, stop) for entries in seats]
        _tally_deal(rules, deal.score_change or [0] * rules.num_sides, sitting, tallies)
        start = stop
    if game.is_over:
        sitting = [_steady(entries, 0, start) for entries in seats]
        counted = set()
        for seat, occupant in enumerate(sitting):
            side = rules.side_of(seat)
            if occupant is None or occupant["agent"] is None or (occupant["agent"], side) in counted:
                continue
            if any(o is not None and o["agent"] is None and rules.side_of(s) != side for s, o in enumerate(sitting)):
                counted.add((occupant["agent"], side))
                tally = tallies[(occupant["agent"], rules.preset)]
                tally.games += 1
                tally.wins += side in game.winners


def _tally_deal(rules: Rules, change: list[int], sitting: list[dict[str, Any] | None],
                tallies: dict[tuple[str, str], Tally]) -> None:
    people_sides = {rules.side_of(s) for s, o in enumerate(sitting) if o is not None and o["agent"] is None}
    counted = set()
    for seat, occupant in enumerate(sitting):
        side = rules.side_of(seat)
        against = sorted(people_sides - {side})
        if occupant is None or occupant["agent"] is None or not against or (occupant["agent"], side) in counted:
            continue
        counted.add((occupant["agent"], side))
        tally = tallies[(occupant["agent"], rules.preset)]
        tally.points.append(change[side])
        tally.diffs.append(change[side] - sum(change[s] for s in against) / len(against))
        if occupant.get("version"):
            tally.versions.add(occupant["version"])


def human_results(folder: str | Path) -> tuple[dict[str, Any], list[str]]:
    """The results of every kept game in ``folder``: ``{"agents": [...]}`` (per spec and preset,
    :meth:`Tally.to_dict`) and the files skipped, each with why."""
    tallies: dict[tuple[str, str], Tally] = defaultdict(Tally)
    skipped, files = [], sorted(Path(folder).expanduser().glob("*.json"))
    presets: dict[str, Rules] = {}
    for path in files:
        try:
            kept = orjson.loads(path.read_bytes())
            tally_game(kept, tallies)
            presets.setdefault(Rules.from_dict(kept["record"]["rules"]).preset, Rules.from_dict(kept["record"]["rules"]))
        except (OSError, ValueError, KeyError, TypeError) as e:
            skipped.append(f"{path.name}: {e}")
    agents = [{"agent": spec, "preset": preset, **tally.to_dict(presets[preset])}
              for (spec, preset), tally in sorted(tallies.items())]
    return {"folder": str(folder), "files": len(files), "agents": agents}, skipped


def _signed(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.1f}"


def format_results(results: dict[str, Any]) -> str:
    """The report as text, line for line like ``five-hundred evaluate``'s figures."""
    lines = [f"{results['files']} kept games in {results['folder']}"]
    if not results["agents"]:
        lines.append("no deal of an agent against people yet")
    for row in results["agents"]:
        points, diff = row["points_per_deal"], row["diff_per_deal"]
        lines += ["", f"{row['agent']} against people — {row['preset']}, {row['deals']} deals",
                  f"score per deal: {_signed(points['mean'])}  95% CI "
                  f"[{_signed(points['ci95'][0])}, {_signed(points['ci95'][1])}]",
                  f"score difference per deal (agent − people): {_signed(diff['mean'])}  95% CI "
                  f"[{_signed(diff['ci95'][0])}, {_signed(diff['ci95'][1])}]"]
        games = row["games"]
        if games:
            lines.append(f"games: won {games['wins']} of {games['games']} = {100 * games['win_rate']:.1f}% 95% CI "
                         f"[{100 * games['ci95'][0]:.1f}%, {100 * games['ci95'][1]:.1f}%] (equal strength: "
                         f"{100 * games['baseline']:.0f}%)")
        else:
            lines.append("games: none played to the end against people")
        lines.append(f"versions: {', '.join(row['versions']) or 'unknown'}")
    return "\n".join(lines)


__all__ = ["KEPT_FORMAT", "Tally", "format_results", "human_results", "keep_game", "kept_record", "tally_game"]
