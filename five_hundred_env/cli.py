"""The ``five-hundred`` command line: thin commands over the engine, environment, agents and training."""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence

from five_hundred_env.actions import action_to_str
from five_hundred_env.engine import Game
from five_hundred_env.rules import PRESETS, make_rules


def _demo(args: argparse.Namespace) -> int:
    """Play and print a whole game to 500 between random players."""
    rules = make_rules(args.rules)
    rng = random.Random(args.seed)
    game = Game(rules, seed=args.seed)
    shown = 0
    while not game.is_over:
        deal = game.deal
        game.apply_action(rng.choice(game.legal_actions()))
        if deal.is_over:
            shown += 1
            words = " ".join(action_to_str(a, rules) for a in deal.history)
            if deal.thrown_in:
                print(f"deal {shown} (dealer {deal.dealer}): thrown in")
            else:
                print(f"deal {shown} (dealer {deal.dealer}): contract {action_to_str(deal.contract, rules)} "
                      f"by seat {deal.contractor}, {'made' if deal.contract_made() else 'lost'}; "
                      f"change {deal.score_change}; scores {game.scores}")
            if args.verbose:
                print("   ", words)
    print(f"game over after {shown} deals: winners (sides) {game.winners}, scores {game.scores}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="five-hundred", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="play and print a whole game between random players")
    demo.add_argument("--rules", default="australian", choices=sorted(PRESETS))
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--verbose", "-v", action="store_true", help="print every action")
    demo.set_defaults(func=_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError) as e:
        print(f"five-hundred: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
