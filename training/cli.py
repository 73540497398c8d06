"""The ``five-hundred`` command line: thin commands over the engine, environment, agents and training."""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from five_hundred_env.actions import FIRST_CARD_ACTION, FIRST_JOKER_LEAD, action_to_str, parse_action
from five_hundred_env.engine import Deal, Game, Phase
from five_hundred_env.rules import PRESETS, Rules, make_rules


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


def _train(args: argparse.Namespace) -> int:
    """Train an agent by PPO self-play from a YAML config (training.ppo)."""
    from training.config import load_config  # torch is imported only by the commands that need it
    from training.ppo import train

    # The overrides take the rest of the line (argparse cannot mix a list of positionals with
    # flags), so --resume / --overwrite written after them are picked out here.
    flags = {a for a in args.overrides if a in ("--resume", "--overwrite")}
    unknown = [a for a in args.overrides if a.startswith("-") and a not in flags]
    if unknown:
        raise ValueError(f"unknown option(s) for train: {' '.join(unknown)}")
    overrides = [a for a in args.overrides if not a.startswith("-")]
    config = load_config(args.config, overrides)
    try:
        train(config, resume=args.resume or "--resume" in flags, overwrite=args.overwrite or "--overwrite" in flags)
    except KeyboardInterrupt:  # train() has said where --resume will pick up
        return 130
    return 0


def _plot(args: argparse.Namespace) -> int:
    """Draw a run's learning curves from its progress.csv to a PNG."""
    from training.plot import plot_run

    print(f"wrote {plot_run(args.run, args.out)}")
    return 0


def _option_value(key: str, text: str) -> Any:
    """A rule option's value from the command line, read by the option's kind: a word for the
    named choices (``misere=none``), true/false for switches, a number or off for the rest."""
    value = text.strip()
    kind = PRESETS["australian"].get(key)
    if isinstance(kind, str):
        return value
    low = value.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no"):
        return False
    if low in ("none", "off", "null"):
        return None
    try:
        return int(value)
    except ValueError:
        return value


def _rules_from_args(args: argparse.Namespace) -> Rules:
    """The preset of ``--rules`` with every ``--option KEY=VALUE`` applied."""
    options = {}
    for item in getattr(args, "option", None) or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--option takes KEY=VALUE (e.g. slam_bonus=false), got {item!r}")
        options[key.strip()] = _option_value(key.strip(), value)
    return make_rules(args.rules, **options)


def _evaluate(args: argparse.Namespace) -> int:
    """Duplicate match between two agents (training.evaluate); prints a table, optionally writes JSON."""
    from agents.registry import agent_factory  # the agents and the evaluator load only for this command
    from training.evaluate import duplicate_match

    rules = _rules_from_args(args)
    if args.deals < 1:
        raise ValueError(f"--deals must be at least 1, got {args.deals}")
    if args.games < 0:
        raise ValueError(f"--games must be 0 or more, got {args.games}")
    factory_a, factory_b = agent_factory(args.agent_a), agent_factory(args.agent_b)
    factory_a(rules, 0), factory_b(rules, 0)  # fail fast on a bad spec, before any deal is played
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    report = duplicate_match(rules, factory_a, factory_b, args.deals, seed=args.seed, games=args.games,
                             progress=progress)
    print(report.format_table())
    if args.json:
        text = json.dumps(report.to_dict(), indent=2) + "\n"
        if args.json == "-":
            sys.stdout.write(text)
        else:
            Path(args.json).write_text(text)
            print(f"wrote {args.json}")
    return 0


class _Quit(Exception):
    """The human ended the game (end of input, or ``quit``)."""


def _ask_action(env: Any, obs: dict[str, Any], legal_text: str) -> int:
    """Read actions from the terminal until one is legal; bad input gets a message and another try."""
    while True:
        try:
            text = input("your action> ")
        except (EOFError, KeyboardInterrupt):  # end of input or Ctrl-C: stop cleanly, keep the record
            print()
            raise _Quit from None
        text = text.strip()
        if text.lower() in ("quit", "exit", "q"):
            raise _Quit
        if not text or text.lower() in ("?", "help", "legal"):
            print(f"  legal moves: {legal_text}  (or 'quit')")
            continue
        try:
            action = env.str_to_action(text)
        except ValueError as e:
            print(f"  {e}; try again (legal moves: {legal_text})")
            continue
        if not obs["action_mask"][action]:
            print(f"  {env.action_to_str(action)} is not legal now; legal moves: {legal_text}")
            continue
        return action


def _public_text(env: Any, action: int) -> str:
    """How another player's action is announced: discards are face down (RULES.md §5)."""
    universal = env.actions.universal[action]
    if env.deal.phase == Phase.DISCARD and FIRST_CARD_ACTION <= universal < FIRST_JOKER_LEAD:  # the kitty phase
        return "discards a card"
    return env.action_to_str(action)


def _deal_summary(deal: Deal, names: Sequence[str], scores: Sequence[int]) -> str:
    rules = deal.rules
    if deal.thrown_in:
        return "deal thrown in: everyone passed"
    made = "made" if deal.contract_made() else "lost"
    tricks = ", ".join(f"side {i}: {t}" for i, t in enumerate(deal.side_tricks()))
    return (f"deal over: {action_to_str(deal.contract, rules)} by {names[deal.contractor]} {made} "
            f"(tricks {tricks}); score change {deal.score_change}; scores {list(scores)}")


def _play(args: argparse.Namespace) -> int:
    """A human plays one seat in the terminal against agents, for a game to 500 (or --deals deals)."""
    from agents.registry import make_agent
    from five_hundred_env.env import raw_env
    from five_hundred_env.records import save_record

    rules = _rules_from_args(args)
    n = rules.num_players
    if not 0 <= args.seat < n:
        raise ValueError(f"--seat must be a seat 0..{n - 1}, got {args.seat}")
    others = {s: make_agent(args.opponents, rules, seed=args.seed * 100 + s) for s in range(n) if s != args.seat}
    env = raw_env(rules=rules, episode="game", render_mode="ansi", max_deals=args.deals)
    env.reset(seed=args.seed)
    names = env.possible_agents
    human = names[args.seat]
    partner = f", partner {names[(args.seat + 2) % 4]}" if n == 4 else ""
    print(f"Five Hundred ({rules.describe()}): you are {human}{partner}; the others are {args.opponents} agents.")
    print("Type actions as in RULES.md §1 (PASS, 7H, MISERE, Ah, JK:H, NOMINATE_S ...); "
          "'help' lists the legal moves, 'quit' stops.")
    finished = False
    try:
        for agent in env.agent_iter():
            _obs, _reward, term, trunc, _info = env.last()
            if term or trunc:
                env.step(None)
                continue
            obs = _obs
            deal = env.deal
            if agent == human:
                legal = [env.action_to_str(a) for a in range(len(obs["action_mask"])) if obs["action_mask"][a]]
                legal_text = " ".join(legal)
                print()
                print(env.render())
                print(f"legal moves: {legal_text}")
                action = _ask_action(env, obs, legal_text)
                print(f"{agent} (you): {env.action_to_str(action)}")
            else:
                action = others[names.index(agent)].act(obs)
                print(f"{agent}: {_public_text(env, action)}")
            env.step(action)
            if deal.is_over:
                print(_deal_summary(deal, names, env.game.scores))
        finished = True
    except _Quit:
        print("game stopped.")
    game = env.game
    if finished and game.is_over:
        print("game over; winners: " + ", ".join(names[s] for s in game.winning_seats()))
    elif finished:
        print(f"stopped after {len(game.deals)} deals; scores {game.scores}")
    if args.save:
        save_record(game, args.save)
        print(f"saved the game record to {args.save}")
    return 0


def _replay(args: argparse.Namespace) -> int:
    """Step through a saved record (a deal or a game), printing the table after each action."""
    from five_hundred_env.records import load_record, replay
    from five_hundred_env.render import render_table

    record = load_record(args.file)
    replay(record)  # validates the whole record first: a bad one is refused with a clear message
    rules = Rules.from_dict(record["rules"])
    entries = record["deals"]
    deals = [Deal.from_cards(rules, e["hands"], e["kitty"], e["dealer"]) for e in entries]
    scores = record.get("starting_scores") if record.get("kind") == "game" else None
    game = Game(rules, first_deal=deals[0], scores=scores, max_deals=len(deals))  # no deal beyond the record
    game.upcoming_deals = deals[1:]
    names = [f"player_{i}" for i in range(rules.num_players)]
    two = rules.two_jokers
    try:
        for i, (deal, entry) in enumerate(zip(deals, entries, strict=True)):
            print(f"=== deal {i + 1} of {len(deals)}, dealer {names[deal.dealer]} ===")
            for seat, hand in enumerate(deal.hands):
                print(f"  {names[seat]}: " + " ".join(_card_names(hand, two)))
            print("  kitty: " + " ".join(_card_names(deal.kitty, two)))
            for text in entry["actions"]:
                seat = deal.to_act
                game.apply_action(parse_action(text, rules))
                print(f"\n{names[seat]}: {text}")
                print(render_table(game, names, deal=deal))
                if args.step:
                    input("[Enter] next action ")
            if deal.is_over:
                print(_deal_summary(deal, names, game.scores))
    except (EOFError, KeyboardInterrupt):
        print("\nreplay stopped.")
        return 0
    if game.is_over:
        print("game over; winners: " + ", ".join(names[s] for s in game.winning_seats()))
    return 0


def _card_names(mask: int, two_jokers: bool) -> list[str]:
    from five_hundred_env.cards import card_to_str, mask_to_cards

    return [card_to_str(c, two_jokers) for c in mask_to_cards(mask)]


def _add_rules_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rules", default="australian", choices=sorted(PRESETS), help="the preset (default australian)")
    parser.add_argument("--option", action="append", metavar="KEY=VALUE",
                        help="override a rule option, e.g. --option slam_bonus=false (repeatable)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="five-hundred", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="play and print a whole game between random players")
    demo.add_argument("--rules", default="australian", choices=sorted(PRESETS))
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--verbose", "-v", action="store_true", help="print every action")
    demo.set_defaults(func=_demo)
    train = sub.add_parser("train", help="train an agent by PPO self-play from a YAML config")
    train.add_argument("config", help="a YAML config, e.g. configs/quickstart.yaml")
    train.add_argument("overrides", nargs=argparse.REMAINDER, metavar="KEY=VALUE",
                       help="override a config key, e.g. train.total_steps=2e6")
    train.add_argument("--resume", action="store_true", help="continue the run from its latest checkpoint")
    train.add_argument("--overwrite", action="store_true", help="start the run again, deleting its checkpoints and logs")
    train.set_defaults(func=_train)
    plot = sub.add_parser("plot", help="draw a run's learning curves (from progress.csv) to a PNG")
    plot.add_argument("run", help="a run folder (runs/NAME) or its progress.csv")
    plot.add_argument("--out", help="the PNG to write (default: curves.png next to the CSV)")
    plot.set_defaults(func=_plot)
    evaluate = sub.add_parser("evaluate", help="duplicate match between two agents (mean score difference per deal)")
    evaluate.add_argument("agent_a", metavar="AGENT_A", help="random, heuristic, or a trained checkpoint's path")
    evaluate.add_argument("agent_b", metavar="AGENT_B", help="random, heuristic, or a trained checkpoint's path")
    _add_rules_arguments(evaluate)
    evaluate.add_argument("--deals", type=int, default=1000, help="duplicate deals (boards) to play (default 1000)")
    evaluate.add_argument("--games", type=int, default=0, help="also play this many games to 500 (default 0)")
    evaluate.add_argument("--seed", type=int, default=0)
    evaluate.add_argument("--json", metavar="PATH", help="write the report as JSON ('-' for standard output)")
    evaluate.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                          help="show a progress bar (default: when standard error is a terminal)")
    evaluate.set_defaults(func=_evaluate)
    play = sub.add_parser("play", help="play one seat yourself, in the terminal, against agents")
    _add_rules_arguments(play)
    play.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    play.add_argument("--opponents", default="heuristic",
                      help="the other seats' agent: heuristic (default), random or a checkpoint's path")
    play.add_argument("--seed", type=int, default=0)
    play.add_argument("--deals", type=int, default=None, help="stop after this many deals (default: the whole game)")
    play.add_argument("--save", metavar="PATH", help="save the game record (JSON) here, to replay it later")
    play.set_defaults(func=_play)
    replay = sub.add_parser("replay", help="step through a saved game or deal record")
    replay.add_argument("file", metavar="FILE", help="a record saved by 'play --save' or five_hundred_env.save_record")
    replay.add_argument("--step", action="store_true", help="wait for Enter after each action")
    replay.set_defaults(func=_replay)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError, RuntimeError) as e:
        print(f"five-hundred: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
