"""The options of the commands that play matches (``evaluate``, ``league``): the published boards
(``--bench``), what a failing ``cmd:`` bot costs (``--on-bot-error``), and the backend that plays
them (``--ray-address``)."""

from __future__ import annotations

import argparse
from typing import Any


def add_match_arguments(parser: argparse.ArgumentParser) -> None:
    """``--bench`` (a published board set instead of --seed) and ``--on-bot-error`` (for ``cmd:`` bots)."""
    from training.evaluation.bench import BENCH_SETS
    from training.evaluation.matches import ON_BOT_ERROR

    parser.add_argument("--bench", choices=BENCH_SETS, default=None,
                        help="play the first --deals boards of this published benchmark set (and its seed) instead of "
                             "boards dealt from --seed: docs/evaluation.md")
    parser.add_argument("--on-bot-error", choices=ON_BOT_ERROR, default="raise",
                        help="a cmd: bot that answers late, illegally or garbage, or dies: stop with the error (raise, "
                             "the default) or score that board as its side's loss (forfeit)")


def backend_from_args(args: argparse.Namespace) -> Any:
    """The backend of --ray-address (local processes without it)."""
    from training.workers.distributed import LOCAL, Backend

    return LOCAL if args.ray_address is None else Backend("ray", args.ray_address)
