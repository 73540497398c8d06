"""The command line's options that several commands share: the rules (``--rules``, ``--option``),
the workers (``--workers``, ``--ray-address``), and the checks of whole-number options, each a
one-line error naming the option as the user wrote it."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any


def check_at_least(value: int | None, option: str, minimum: int) -> None:
    """Refuse a whole-number option below ``minimum``, naming the option as the user wrote it."""
    if value is not None and value < minimum:
        raise ValueError(f"{option} must be at least {minimum}, got {value}")


def check_workers(workers: int | None, ray_address: str | None) -> None:
    """--workers (local processes) and --ray-address (the cluster's CPUs decide) exclude each other."""
    if workers is not None and ray_address is not None:
        raise ValueError("--workers sets the local worker processes; with --ray-address the cluster's CPUs set "
                         "how many jobs run at once: give one or the other")
    if workers is not None and workers < 1:
        raise ValueError(f"--workers must be at least 1, got {workers}")


def rules_from_args(args: argparse.Namespace) -> Any:
    """The preset of --rules with every --option KEY=VALUE applied."""
    from five_hundred_env.rules import make_rules
    from training.settings.overrides import parse_rule_option  # the one reader of rule-option text (configs use it too)

    options = dict(parse_rule_option(item) for item in getattr(args, "option", None) or [])
    return make_rules(args.rules, **options)


def add_rules_arguments(parser: argparse.ArgumentParser, presets: Sequence[str]) -> None:
    """``--rules`` (one of ``presets``) and the repeatable ``--option KEY=VALUE``."""
    parser.add_argument("--rules", default="australian", choices=presets, help="the preset (default australian)")
    parser.add_argument("--option", action="append", metavar="KEY=VALUE",
                        help="override a rule option, e.g. --option slam_bonus=false (repeatable)")


def add_distributed_arguments(parser: argparse.ArgumentParser, workers_help: str) -> None:
    """``--workers N`` (``workers_help`` says what they do) and ``--ray-address``."""
    parser.add_argument("--workers", type=int, default=None, metavar="N", help=f"{workers_help}; the result does not "
                        "depend on it")
    parser.add_argument("--ray-address", metavar="ADDRESS", default=None,
                        help="run the jobs as Ray tasks on this cluster (host:6379, auto or ray://host:10001; "
                             "needs the ray extra): see docs/distributed.md")

