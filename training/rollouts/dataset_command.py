"""``five-hundred dataset``: its options and its run (the games: :mod:`training.rollouts.datasets`,
imported only when it runs, so that the parser stays light)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from training.settings.command_options import (
    add_distributed_arguments,
    add_rules_arguments,
    check_at_least,
    check_workers,
    rules_from_args,
)


def add_dataset_arguments(parser: argparse.ArgumentParser, presets: Sequence[str], agent_help: str) -> None:
    """The options of ``dataset``, and its function in ``func``."""
    parser.add_argument("agent", metavar="AGENT", help=f"the agent in every seat: {agent_help}")
    add_rules_arguments(parser, presets)
    parser.add_argument("--deals", type=int, required=True, help="deals to play")
    parser.add_argument("--out", required=True, metavar="DIR", help="the dataset folder to write (new or empty)")
    parser.add_argument("--seed", type=int, default=0, help="the seed of the deals (and of the agents; default 0)")
    parser.add_argument("--starting-scores", choices=("zero", "uniform"), default="zero",
                        help="the game scores each deal starts from: 0 (default), or drawn over the game's range")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="report the deals done (default: when standard error is a terminal)")
    add_distributed_arguments(parser, "worker processes playing the deals (default 1: this process)")
    parser.set_defaults(func=run_dataset)


def run_dataset(args: argparse.Namespace) -> int:
    """Play the deals, write the dataset (docs/datasets.md) and say what was written."""
    from training.rollouts.datasets import dataset_summary, generate_dataset
    from training.workers.distributed import LOCAL, Backend

    rules = rules_from_args(args)
    check_at_least(args.seed, "--seed", 0)
    check_at_least(args.deals, "--deals", 1)
    check_workers(args.workers, args.ray_address)
    backend = LOCAL if args.ray_address is None else Backend("ray", args.ray_address)
    progress = sys.stderr.isatty() if args.progress is None else args.progress

    def report(done: int, total: int) -> None:
        print(f"\r{done:,} of {total:,} deals", end="\n" if done == total else "", file=sys.stderr, flush=True)

    manifest = generate_dataset(args.agent, rules, args.deals, args.out, seed=args.seed, workers=args.workers or 1,
                                starting_scores=args.starting_scores, backend=backend,
                                on_done=report if progress else None)
    print(dataset_summary(manifest, args.out))
    return 0
