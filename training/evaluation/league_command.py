"""``five-hundred league``: its options and its run (every pair of agents in duplicate on the same
boards, and their ratings: training.evaluation.league)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from training.evaluation.match_options import add_match_arguments, backend_from_args
from training.settings.command_options import (
    add_distributed_arguments,
    add_rules_arguments,
    check_at_least,
    check_workers,
    rules_from_args,
)


def add_league_arguments(league: argparse.ArgumentParser, presets: Sequence[str], agent_help: str) -> None:
    """The options of ``five-hundred league``."""
    league.add_argument("agents", nargs="+", metavar="AGENT", help=f"two or more agents: {agent_help}")
    add_rules_arguments(league, presets)
    league.add_argument("--deals", type=int, default=1000, help="duplicate deals (boards) per pair (default 1000)")
    league.add_argument("--games", type=int, default=0, help="also play this many games to 500 per pair (default 0)")
    league.add_argument("--seed", type=int, default=0, help="the seed the boards are dealt from (not with --bench)")
    add_match_arguments(league)
    league.add_argument("--json", metavar="PATH", help="write the ratings and every match as JSON ('-' for standard output)")
    league.add_argument("--out", metavar="TABLE.md", help="write the ratings table (Markdown)")
    league.add_argument("--plot", metavar="PNG", help="draw the ratings with their intervals")
    league.add_argument("--cache", metavar="DIR", default="league-cache",
                        help="keep each pair's played boards here, to resume and to add agents (default league-cache)")
    league.add_argument("--no-cache", action="store_true", help="play everything, keep nothing")
    league.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show a progress bar (default: when standard error is a terminal)")
    add_distributed_arguments(league, "worker processes playing the pairs' boards (default 1: this process)")


def run_league_command(args: argparse.Namespace) -> int:
    """Play the league of ``args.agents``, print the ratings and the matches, write what was asked."""
    from agents.registry import agent_factory
    from five_hundred_env.files import check_output, write_atomic
    from training.evaluation.league import run_league

    rules = rules_from_args(args)
    check_at_least(args.seed, "--seed", 0)
    check_at_least(args.deals, "--deals", 1)
    check_at_least(args.games, "--games", 0)
    check_workers(args.workers, args.ray_address)
    backend = backend_from_args(args)
    outputs = {option: check_output(value, option, inputs=args.agents) for option, value in
               (("--json", args.json), ("--out", args.out), ("--plot", args.plot)) if value not in (None, "-")}
    for spec in args.agents:
        agent_factory(spec)(rules, 0)  # fail fast on a bad spec, before any deal is played
    cache = None if args.no_cache else Path(args.cache)
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    bar: Any = None

    def plan(to_play: int, cached: int) -> None:
        nonlocal bar
        where = "no cache" if cache is None else f"cache {cache}"
        print(f"league of {len(args.agents)} agents, {len(args.agents) * (len(args.agents) - 1) // 2} pairs: "
              f"{to_play:,} boards and games to play, {cached:,} from the {where}", file=sys.stderr)
        if progress and to_play:
            from tqdm import tqdm

            bar = tqdm(total=to_play, desc="league", unit="board")

    try:
        report = run_league(rules, args.agents, args.deals, seed=args.seed, games=args.games, bench=args.bench,
                            workers=args.workers or 1, backend=backend, cache=cache, on_bot_error=args.on_bot_error,
                            on_plan=plan, on_progress=(lambda n: bar.update(n)) if progress else None)
    finally:
        if bar is not None:
            bar.close()
    table = report.format_table()
    print(table)
    print()
    print(report.format_matches())
    print(f"played {report.played_boards:,} boards ({report.cached_boards:,} from the cache) in {report.seconds:.0f} s")
    text = json.dumps(report.to_dict(), indent=2) + "\n"
    if args.json == "-":
        sys.stdout.write(text)
    writes = [("--json", lambda f: f.write(text.encode())), ("--out", lambda f: f.write((table + "\n").encode()))]
    for option, write in writes:
        if option in outputs:
            write_atomic(outputs[option], write)
            print(f"wrote {outputs[option]}")
    if "--plot" in outputs:
        report.plot(outputs["--plot"])
        print(f"wrote {outputs['--plot']}")
    return 0
