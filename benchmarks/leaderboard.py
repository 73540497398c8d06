"""The project's leaderboard (docs/leaderboard.md): a league of the reference agents on every preset.

    python benchmarks/leaderboard.py --workers 2                 # every preset, writes docs/leaderboard.md
    python benchmarks/leaderboard.py --workers 2 --agent runs/NAME/final.pt  # one more agent: only its pairs play

Each preset's league (``five-hundred league``, :func:`training.evaluation.league.run_league`) plays
random, the heuristic, the shipped ``pretrained`` and ``scratch`` networks where the preset has them, and the search
agent at two budgets (``pimc:worlds=8`` and its defaults) on the first boards of the benchmark set
``v1``; the boards per preset are :data:`DEALS` (the five- and six-player searches cost 5-10 times
more a board). Every pair's boards are kept in the cache folder (``--cache``, default
``league-cache``): a run stopped midway goes on from there, and an agent added with ``--agent``
plays only its new pairs. The page is written with the wall-clock of each league and of the whole
run, and the load average the run saw.
"""

from __future__ import annotations

import argparse
import os
import time
from datetime import date
from pathlib import Path

from agents.pretrained import available_presets, scratch_presets
from five_hundred_env.files import check_output, write_atomic
from five_hundred_env.rules import PRESETS
from training.evaluation.league import run_league
from training.workers.threads import limit_threads

BENCH = "v1"
DEALS = {"australian": 150, "italian_3p": 100, "french_46": 80, "two_handed": 150, "five_handed": 12, "six_handed": 16}
"""Boards per preset: a whole run stays well under an hour of CPU (the page says what it took)."""
SEARCH = ("pimc:worlds=8", "pimc")


def reference_agents(preset: str, extra: list[str]) -> list[str]:
    """The agents of a preset's league: random, heuristic, pretrained and scratch (where shipped), the two
    searches, then ``extra``."""
    shipped = [name for name, presets in (("pretrained", available_presets()), ("scratch", scratch_presets()))
               if preset in presets]
    return ["random", "heuristic", *shipped, *SEARCH, *extra]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--agent", action="append", default=[], metavar="SPEC", help="one more agent in every league")
    parser.add_argument("--presets", nargs="+", default=list(PRESETS), choices=list(PRESETS))
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every preset's boards (default 1)")
    parser.add_argument("--cache", default="league-cache", help="the leagues' cache folder (default league-cache)")
    parser.add_argument("--out", default="docs/leaderboard.md", help="the page to write (default docs/leaderboard.md)")
    args = parser.parse_args()
    out = check_output(args.out, "--out")
    limit_threads(1)
    sections, started, load_before = [], time.monotonic(), os.getloadavg()[0]
    for done, preset in enumerate(args.presets, 1):
        deals = max(1, round(DEALS[preset] * args.scale))
        agents = reference_agents(preset, args.agent)
        print(f"{preset}: {len(agents)} agents on {deals} boards", flush=True)
        report = run_league(preset, agents, deals, bench=BENCH, workers=args.workers, cache=Path(args.cache))
        print(report.format_table(), flush=True)
        sections.append(f"## {preset}\n\n{report.format_table()}\n\n"
                        f"{report.played_boards:,} boards played now and {report.cached_boards:,} taken from the cache, "
                        f"in {report.seconds / 60:.1f} min.\n")
        page = header(args, (time.monotonic() - started) / 60, load_before, args.presets[done:]) + "\n".join(sections)
        write_atomic(out, lambda f, text=page: f.write(text.encode()))  # after each preset: a long run leaves its part
    print(f"wrote {out} ({(time.monotonic() - started) / 60:.1f} min)")


def header(args: argparse.Namespace, minutes: float, load_before: float, pending: list[str]) -> str:
    """The page's opening: what the leagues are, the command, its wall-clock and load, the boards."""
    extra = "".join(f" --agent {a}" for a in args.agent)
    later = (f" Not played yet: {', '.join(pending)} (the same command goes on from the cache)." if pending else "")
    return (f"# The leaderboard\n\n"
            f"Every reference agent against every other, in duplicate, on the benchmark boards `{BENCH}` of each "
            f"preset (docs/evaluation.md, \"Leagues\"): random, the heuristic (rating 0), the shipped `pretrained` "
            f"network where the preset has one, the `scratch` network (learned from a random start, docs/scratch.md) "
            f"where the preset has one, and the search at two budgets (`pimc:worlds=8`, and `pimc` with "
            f"its defaults). A rating is Bradley–Terry on the boards won, on the Elo scale: 200 points above "
            f"another agent is winning 76% of the boards against it; points/deal is the scale of `evaluate`.\n\n"
            f"Regenerated by `python benchmarks/leaderboard.py --workers {args.workers}{extra}` "
            f"({date.today().isoformat()}): {minutes:.0f} min of wall-clock with {args.workers} worker process(es) "
            f"on the 2 cores, load average {load_before:.1f} at the start and {os.getloadavg()[0]:.1f} at the end "
            f"(other jobs shared the machine). Boards per preset: "
            + ", ".join(f"{p} {max(1, round(DEALS[p] * args.scale))}" for p in args.presets)
            + f" (the five- and six-player searches cost several CPU-seconds a board).{later} Every pair's boards "
            "stay in the cache (`--cache`), so `--agent SPEC` adds an agent to every league at the cost of its own "
            "pairs alone, and a stopped run goes on where it stopped.\n\n")


if __name__ == "__main__":
    main()
