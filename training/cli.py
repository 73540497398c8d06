"""The five-hundred command line: thin commands over the engine, the environment, the agents and training.

Every error a user can cause (a bad option, file, config, checkpoint or record) is one line on
standard error and exit status 2; Ctrl-C is one line and 130, SIGTERM and SIGHUP are handled like
Ctrl-C (143, 129), also in a process started with SIGINT ignored (in the background); under
``nohup`` SIGHUP stays ignored. ``play`` saves the game so far whenever it stops. The commands import what they
need (torch only for training and checkpoints) when they run.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
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

DESCRIPTION = ("Five Hundred: play a game in the terminal, watch agents play, replay a record, evaluate agents in duplicate, "
               "rate several in a league, write an agent's games as a dataset, train an agent from a YAML config "
               "(PPO, Deep Monte-Carlo or search distillation), export its policy, plot a run.")


AGENT_SPECS = """\
agents (AGENT_A, AGENT_B; also play --opponents, watch):
  random, heuristic      the builtin players
  pretrained             the shipped network of the rules' preset (no training needed)
  scratch                the shipped network learned from a random start with no heuristic (australian)
  pimc                   the search agent: perfect-information Monte Carlo over sampled deals
  NAME:key=value,...     an agent built with options, e.g. pimc:worlds=8,bid_worlds=8,kitty_worlds=8,seconds=0.05
                         (pimc: worlds, seconds, rollout, solver_tricks, search, base, min_gain, bid_worlds,
                         kitty_worlds, inference, inference_budget, win_bonus, misere_play, equal_cards,
                         play_inference, bid_weights, game_values)
  SPEC@KINDS             SPEC makes the decisions of KINDS (bid, discard, nominate, play, joined by +),
                         the heuristic all the others: pretrained@play, pimc:worlds=4@bid+play
  PATH.pt                a checkpoint of five-hundred train (runs/NAME/final.pt) or a policy file of export
  PATH.zip               a model saved by sb3-contrib's MaskablePPO
  cmd:COMMAND            a bot in any language: COMMAND run as a child process speaking JSON lines
                         (docs/protocol.md); cmd[timeout=S]:COMMAND sets its seconds per decision

how long, per board (both plays) on one core: heuristic or random about 0.01 s, pretrained
about 0.03 s, pimc (its defaults, the shipped network as its base) about 0.4 s;
--workers N divides the wall-clock. See docs/agents.md."""


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the program is, so that everything that cleans up after
    Ctrl-C (``play`` saving the game, training checkpointing) does the same for them."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextmanager
def _signals_as_interrupts() -> Iterator[None]:
    """For the duration (main thread only; the previous handlers come back afterwards): SIGINT
    raises ``KeyboardInterrupt`` and SIGTERM and SIGHUP raise :class:`Stopped`, whatever the
    process inherited. A process started in the background by a shell (``cmd &``) inherits
    SIGINT ignored, and Python then installs no handler: ``kill -INT`` would do nothing. SIGHUP
    inherited ignored stays ignored: that is ``nohup``'s request to outlive the terminal."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_stopped(signum: int, _frame: Any) -> None:
        raise Stopped(signum)

    handlers: dict[int, Any] = {signal.SIGINT: signal.default_int_handler}
    for name in ("SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)
        if signum is not None and not (name == "SIGHUP" and signal.getsignal(signum) is signal.SIG_IGN):
            handlers[signum] = raise_stopped
    previous = {s: signal.signal(s, handler) for s, handler in handlers.items()}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _interruption(e: KeyboardInterrupt) -> tuple[str, int]:
    """The one-line message and exit status for Ctrl-C (130) or a signal (128 + its number)."""
    if isinstance(e, Stopped):
        return f"stopped by {signal.Signals(e.signum).name}", 128 + e.signum
    return "interrupted", 130


def _error_text(e: Exception) -> str:
    """One line for an error: an OS error as 'FILE: what is wrong', anything else its message."""
    if isinstance(e, OSError) and e.strerror and e.filename:
        return f"{e.filename}: {e.strerror}"
    return " ".join(str(e).split()) or type(e).__name__


# -- demo, train, plot -------------------------------------------------------------------------
def _demo(args: argparse.Namespace) -> int:
    """Play and print a whole game to 500 between random players."""
    import random

    from five_hundred_env.actions import action_to_str
    from five_hundred_env.engine import Game
    from five_hundred_env.rules import make_rules

    check_at_least(args.seed, "--seed", 0)
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


def _take_valued_options(words: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """``words`` without ``--workers N`` and ``--ray-address A`` (or ``--option=value``), and their values."""
    rest, values = [], {}
    remaining = iter(words)
    for word in remaining:
        name, equals, value = word.partition("=")
        if name not in ("--workers", "--ray-address"):
            rest.append(word)
            continue
        value = value if equals else next(remaining, "")
        if not value or value.startswith("-"):
            raise ValueError(f"{name} needs a value")
        values[name] = value
    return rest, values


def _distributed_overrides(args: argparse.Namespace, values: dict[str, str]) -> list[str]:
    """The config overrides of train's --workers (the rollout warm start's processes) and --ray-address."""
    workers, address = args.workers, values.get("--ray-address", args.ray_address)
    if "--workers" in values:
        if not values["--workers"].isdigit():
            raise ValueError(f"--workers needs a whole number, got {values['--workers']!r}")
        workers = int(values["--workers"])
    check_workers(workers, address)
    if workers is not None:
        return [f"pretrain.rollouts.workers={workers}"]
    if address is not None:  # as a JSON string, which YAML reads as the very same string
        return ["distributed.backend=ray", f"distributed.address={json.dumps(address)}"]
    return []


def _train(args: argparse.Namespace) -> int:
    """Train an agent from a YAML config: PPO self-play (training.algorithms.ppo), DMC
    (training.algorithms.dmc) with train.algorithm: dmc, or search distillation
    (training.algorithms.distill) with train.algorithm: distill."""
    from training.records.runs import TrainingFault
    from training.settings.distill_config import DistillConfig
    from training.settings.dmc_config import DmcConfig
    from training.settings.run_configs import load_training_config  # torch is imported only by the commands that need it

    # The overrides take the rest of the line (argparse cannot mix a list of positionals with
    # flags), so the options written after them are picked out here.
    words, values = _take_valued_options(args.overrides)
    flags = {a for a in words if a in ("--resume", "--overwrite")}
    unknown = [a for a in words if a.startswith("-") and a not in flags]
    if unknown:
        raise ValueError(f"unknown option(s) for train: {' '.join(unknown)}")
    overrides = [a for a in words if not a.startswith("-")] + _distributed_overrides(args, values)
    config = load_training_config(args.config, overrides)
    if isinstance(config, DmcConfig):  # Deep Monte-Carlo: its own config model and loop
        from training.algorithms.dmc import train_dmc as run
    elif isinstance(config, DistillConfig):  # search distillation: datasets, then fits
        from training.algorithms.distill import train_distill as run
    else:
        from training.algorithms.ppo import train as run
    try:
        run(config, resume=args.resume or "--resume" in flags, overwrite=args.overwrite or "--overwrite" in flags)
    except KeyboardInterrupt as e:  # train() has said in which phase, and whether --resume picks up
        message, status = _interruption(e)
        print(f"five-hundred: {message}", file=sys.stderr)
        return status
    except TrainingFault as e:  # a full disk, a non-finite loss: the message says what is kept and what to do
        print(f"five-hundred: error: {_error_text(e)}", file=sys.stderr)
        return 2
    return 0


def _exit(args: argparse.Namespace) -> int:
    """Expert iteration from a YAML config (training.algorithms.expert_iteration parses its own arguments)."""
    from training.algorithms.expert_iteration import main as expert_iteration

    return expert_iteration(args.arguments)


def _plot(args: argparse.Namespace) -> int:
    """Draw a run's learning curves from its progress.csv to a PNG."""
    from training.records.plot import plot_run

    print(f"wrote {plot_run(args.run, args.out)}")
    return 0


# -- evaluate ----------------------------------------------------------------------------------
def _evaluate(args: argparse.Namespace) -> int:
    """Duplicate match between two agents (training.evaluation.evaluate); prints a table, optionally writes JSON."""
    from agents.registry import agent_factory
    from five_hundred_env.files import check_output, write_atomic
    from training.evaluation.evaluate import duplicate_match

    rules = rules_from_args(args)
    check_at_least(args.seed, "--seed", 0)
    if args.deals < 1:
        raise ValueError(f"--deals must be at least 1, got {args.deals}")
    if args.games < 0:
        raise ValueError(f"--games must be 0 or more, got {args.games}")
    check_workers(args.workers, args.ray_address)
    backend = backend_from_args(args)
    writes_json = args.json is not None and args.json != "-"
    json_path = check_output(args.json, "--json", inputs=[args.agent_a, args.agent_b]) if writes_json else None
    factory_a, factory_b = agent_factory(args.agent_a), agent_factory(args.agent_b)
    factory_a(rules, 0), factory_b(rules, 0)  # fail fast on a bad spec, before any deal is played
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    # The specs, not their factories, go to the workers: each builds its agents from the registry.
    report = duplicate_match(rules, args.agent_a, args.agent_b, args.deals, seed=args.seed, games=args.games,
                             progress=progress, workers=args.workers or 1, backend=backend, bench=args.bench,
                             on_bot_error=args.on_bot_error)
    print(report.format_table())
    text = json.dumps(report.to_dict(), indent=2) + "\n"
    if args.json == "-":
        sys.stdout.write(text)
    elif json_path is not None:
        write_atomic(json_path, lambda f: f.write(text.encode()))
        print(f"wrote {json_path}")
    return 0


# -- play and replay ---------------------------------------------------------------------------
def _play(args: argparse.Namespace) -> int:
    from five_hundred_env.files import check_output
    from training.table.terminal import play_in_terminal

    rules = rules_from_args(args)
    check_at_least(args.seed, "--seed", 0)
    check_at_least(args.deals, "--deals", 1)
    save = check_output(args.save, "--save") if args.save is not None else None
    return play_in_terminal(rules, args.seat, args.opponents, args.seed, args.deals, save)


def _watch(args: argparse.Namespace) -> int:
    from five_hundred_env.files import check_output
    from training.table.watch import watch_in_terminal

    rules = rules_from_args(args)
    check_at_least(args.seed, "--seed", 0)
    gif = check_output(args.gif, "--gif", inputs=args.agents) if args.gif is not None else None
    return watch_in_terminal(rules, args.agents, args.seed, None if args.game else args.deals,
                             gif=gif, viewer=args.viewer, delay=args.delay)


def _replay(args: argparse.Namespace) -> int:
    from training.table.terminal import replay_in_terminal

    return replay_in_terminal(args.file, args.step)


def _serve(args: argparse.Namespace) -> int:
    from training.web.command import serve

    return serve(args)


def _human_results(args: argparse.Namespace) -> int:
    """What the agents scored against people (training.web.kept); prints it, optionally writes JSON."""
    from five_hundred_env.files import check_output, write_atomic
    from training.web.kept import format_results, human_results

    json_path = check_output(args.json, "--json") if args.json is not None else None
    folder = Path(args.folder).expanduser()
    if not folder.is_dir():
        raise ValueError(f"{args.folder}: no such folder (the DIR of serve --keep-games DIR)")
    results, skipped = human_results(folder)
    for line in skipped:
        print(f"skipped {line}", file=sys.stderr)
    print(format_results(results))
    if json_path is not None:
        text = json.dumps(results, indent=2) + "\n"
        write_atomic(json_path, lambda f: f.write(text.encode()))
        print(f"wrote {json_path}")
    return 0


# -- the parser --------------------------------------------------------------------------------
def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("five-hundred-env")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    """The five-hundred argument parser, every subcommand with its function in ``func``."""
    from five_hundred_env.rules import PRESETS
    from training.evaluation.league_command import add_league_arguments, run_league_command
    from training.records.export_command import add_export_arguments, run_export_command
    from training.rollouts.dataset_command import add_dataset_arguments

    presets = sorted(PRESETS)
    agent_help = "an agent: random, heuristic, a registered name, a trained checkpoint, an SB3 .zip or cmd:COMMAND"
    parser = argparse.ArgumentParser(prog="five-hundred", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="play and print a whole game between random players")
    demo.add_argument("--rules", default="australian", choices=presets)
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--verbose", "-v", action="store_true", help="print every action")
    demo.set_defaults(func=_demo)
    train = sub.add_parser("train", help="train an agent from a YAML config: PPO self-play, Deep Monte-Carlo "
                                   "or search distillation (train.algorithm)")
    train.add_argument("config", help="a YAML config, e.g. configs/quickstart.yaml")
    train.add_argument("overrides", nargs=argparse.REMAINDER, metavar="KEY=VALUE",
                       help="override a config key, e.g. train.total_steps=2e6")
    train.add_argument("--resume", action="store_true", help="continue the run from its latest checkpoint")
    train.add_argument("--overwrite", action="store_true", help="start again, deleting only the files in its manifest.json")
    add_distributed_arguments(train, "the rollout warm start's worker processes (pretrain.rollouts.workers)")
    train.set_defaults(func=_train)
    sub.add_parser("exit", add_help=False, help="expert iteration: learn from search (CONFIG [KEY=VALUE ...] "
                   "[--resume] [--overwrite]; exit --help for more)")  # parsed by training.algorithms.expert_iteration
    export = sub.add_parser("export", help="write a checkpoint's policy file: its actor alone, to ship and play "
                            "(several checkpoints: their ensemble, one network playing the mean of their logits)")
    add_export_arguments(export)
    export.set_defaults(func=run_export_command)
    plot = sub.add_parser("plot", help="draw a run's learning curves (from progress.csv) to a PNG")
    plot.add_argument("run", help="a run folder (runs/NAME) or its progress.csv")
    plot.add_argument("--out", help="the PNG to write (default: curves.png next to the CSV)")
    plot.set_defaults(func=_plot)
    evaluate = sub.add_parser("evaluate", help="duplicate match between two agents (mean score difference per deal)",
                              epilog=AGENT_SPECS, formatter_class=argparse.RawDescriptionHelpFormatter)
    evaluate.add_argument("agent_a", metavar="AGENT_A", help=agent_help)
    evaluate.add_argument("agent_b", metavar="AGENT_B", help=agent_help)
    add_rules_arguments(evaluate, presets)
    evaluate.add_argument("--deals", type=int, default=1000, help="duplicate deals (boards) to play (default 1000)")
    evaluate.add_argument("--games", type=int, default=0, help="also play this many games to 500 (default 0)")
    evaluate.add_argument("--seed", type=int, default=0)
    evaluate.add_argument("--json", metavar="PATH", help="write the report as JSON ('-' for standard output)")
    evaluate.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                          help="show a progress bar (default: when standard error is a terminal)")
    add_match_arguments(evaluate)
    add_distributed_arguments(evaluate, "worker processes playing the boards (default 1: this process)")
    evaluate.set_defaults(func=_evaluate)
    league = sub.add_parser("league", help="every pair of agents in duplicate on the same boards, and a rating for each",
                            epilog=AGENT_SPECS, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_league_arguments(league, presets, agent_help)
    league.set_defaults(func=run_league_command)
    dataset = sub.add_parser("dataset", help="write the games of an agent as a dataset: compact records of its deals "
                             "and actions (and a search's candidate values), with a manifest (docs/datasets.md)",
                             epilog=AGENT_SPECS, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_dataset_arguments(dataset, presets, agent_help)
    play = sub.add_parser("play", help="play one seat yourself, in the terminal, against agents")
    add_rules_arguments(play, presets)
    play.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    play.add_argument("--opponents", default="heuristic", help=f"the other seats' agent (default heuristic): {agent_help}")
    play.add_argument("--seed", type=int, default=0)
    play.add_argument("--deals", type=int, default=None, help="stop after this many deals (default: the whole game)")
    play.add_argument("--save", metavar="PATH", help="save the game record (JSON) here, to replay it later")
    play.set_defaults(func=_play)
    watch = sub.add_parser("watch", help="watch agents play each other, every hand shown")
    watch.add_argument("agents", nargs="+", metavar="AGENT",
                       help=f"one agent per side (or per seat), e.g. 'heuristic random': {agent_help}")
    add_rules_arguments(watch, presets)
    length = watch.add_mutually_exclusive_group()
    length.add_argument("--deals", type=int, default=1, help="deals to play (default 1)")
    length.add_argument("--game", action="store_true", help="play a whole game to 500 instead")
    watch.add_argument("--seed", type=int, default=0)
    watch.add_argument("--gif", metavar="OUT.gif", help="record the table picture after every action as an animated GIF")
    watch.add_argument("--viewer", type=int, default=None,
                       help="the seat the GIF is seen from (default: the player to act)")
    watch.add_argument("--delay", type=float, default=None,
                       help="seconds between actions (default 0.5 on a terminal, else 0)")
    watch.set_defaults(func=_watch)
    replay = sub.add_parser("replay", help="step through a saved game or deal record")
    replay.add_argument("file", metavar="FILE", help="a record saved by 'play --save' or five_hundred_env.save_record")
    replay.add_argument("--step", action="store_true", help="wait for Enter after each action")
    replay.set_defaults(func=_replay)
    from training.web.command import add_serve_arguments

    serve = sub.add_parser("serve", help="a table in the browser: play against agents, watch them, replay records")
    add_serve_arguments(serve)
    serve.set_defaults(func=_serve)
    results = sub.add_parser("human-results", help="what the agents scored against people in the games kept by "
                                                   "serve --keep-games DIR (evaluate's figures)")
    results.add_argument("folder", metavar="DIR", help="the folder of serve --keep-games")
    results.add_argument("--json", metavar="OUT", help="also write the figures as JSON")
    results.set_defaults(func=_human_results)
    return parser


def _run(argv: Sequence[str] | None) -> int:
    from agents.command import BotError
    from agents.registry import AgentUnavailableError
    from training.workers.worker_pool import WorkerError

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    # `exit` hands the rest of the line to expert iteration's own parser (--help included)
    args = argparse.Namespace(func=_exit, arguments=argv[1:]) if argv[:1] == ["exit"] else parser.parse_args(argv)
    command: Callable[[argparse.Namespace], int] = args.func
    try:
        return command(args)
    # ValueError covers training.settings.config.ConfigError and agents.weights_files.CheckpointError too
    except (ValueError, OSError, AgentUnavailableError, WorkerError, BotError) as e:
        print(f"five-hundred: error: {_error_text(e)}", file=sys.stderr)
        return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the five-hundred command line on ``argv`` (default: the program's arguments); returns the exit status."""
    from training.workers.threads import limit_threads

    limit_threads(1)  # before torch or numba starts a pool; train and exit then apply their config's torch_threads
    try:
        with _signals_as_interrupts():
            return _run(argv)
    except KeyboardInterrupt as e:  # Ctrl-C, SIGTERM or SIGHUP, wherever it came: one line, no traceback
        message, status = _interruption(e)
        print(f"\nfive-hundred: {message}", file=sys.stderr)
        return status


if __name__ == "__main__":
    sys.exit(main())
