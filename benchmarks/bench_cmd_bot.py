"""The cmd: protocol's overhead per decision (issue 36's target: at most 0.2 ms for a bot that
plays its first legal action).

    python benchmarks/bench_cmd_bot.py [--deals 300] [--rules australian]

Plays the same deals with seat 0 taken by (1) an in-process agent that plays its first legal
action, (2) the Python example bot ``examples/bots/first_legal.py`` and (3) the C example bot
``examples/bots/first_legal.c`` (compiled to a temporary folder when a C compiler is there),
the other seats by random agents (which bid, so that seat 0 plays cards). It prints, per decision
of seat 0, the wall-clock and the CPU time (this process's and the bot's) of each, and the
difference from (1): the protocol's cost (the JSON line written, read by the bot, its answer read
back; the deal's start and end lines included). The decisions are the same in all three (the
benchmark checks the deals' scores). The wall-clock counts two wake-ups per decision, which a
loaded machine delays; the CPU time does not.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from agents.base import Agent, RandomAgent
from agents.command import CommandAgent
from agents.play import play_deal
from five_hundred_env.env import raw_env
from five_hundred_env.rules import make_rules

BOTS = Path(__file__).resolve().parents[1] / "examples" / "bots"


class FirstLegal(Agent):
    name = "first_legal"

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


class Counting(Agent):
    """Counts the decisions of the agent it wraps, and tells it the table's news."""

    def __init__(self, inner: Agent) -> None:
        super().__init__(inner.rules)
        self.inner, self.decisions = inner, 0

    def act(self, observation):
        self.decisions += 1
        return self.inner.act(observation)

    def notify(self, event):
        self.inner.notify(event)


def run(agent: Agent, rules_name: str, deals: int) -> tuple[float, float, int, list[int]]:
    """Wall-clock and CPU seconds (this process's), seat 0's decisions and the summed score
    changes of ``deals`` deals, ``agent`` in seat 0 and random agents in the others."""
    rules = make_rules(rules_name)
    env = raw_env(rules=rules, episode="deal")
    counted = Counting(agent)
    seats = [counted, *(RandomAgent(rules, seat) for seat in range(1, rules.num_players))]
    totals = [0] * rules.num_sides
    wall, cpu = time.perf_counter(), time.process_time()
    for seed in range(deals):
        deal = play_deal(env, seats, seed=seed)
        totals = [t + c for t, c in zip(totals, deal.score_change or [0] * rules.num_sides, strict=True)]
    return time.perf_counter() - wall, time.process_time() - cpu, counted.decisions, totals


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=300)
    parser.add_argument("--rules", default="australian")
    args = parser.parse_args()
    rules = make_rules(args.rules)
    bots = {"python bot": [sys.executable, str(BOTS / "first_legal.py")]}
    compiler = shutil.which("cc") or shutil.which("gcc")
    folder = tempfile.mkdtemp()
    if compiler:
        binary = os.path.join(folder, "first_legal")
        subprocess.run([compiler, "-O2", "-o", binary, str(BOTS / "first_legal.c")], check=True)
        bots["C bot"] = [binary]
    run(FirstLegal(rules), args.rules, 5)  # warm up
    base, base_cpu, decisions, scores = run(FirstLegal(rules), args.rules, args.deals)
    print(f"{args.rules}, {args.deals} deals, {decisions} decisions of seat 0, load average {os.getloadavg()[0]:.1f}")
    print(f"{'in-process first legal':<24} {1e3 * base / decisions:.3f} ms a decision (CPU {1e3 * base_cpu / decisions:.3f})")
    for name, argv in bots.items():
        agent = CommandAgent(rules, 0, argv=argv)
        run(agent, args.rules, 2)  # the process started, its interpreter warm
        before = children_cpu()
        seconds, cpu, count, bot_scores = run(agent, args.rules, args.deals)
        agent.close()  # the bot exits: its CPU time is counted
        bot_cpu = children_cpu() - before
        if count != decisions or bot_scores != scores:
            raise SystemExit(f"the {name} played other actions than its in-process twin")
        print(f"{'cmd: ' + name:<24} {1e3 * seconds / count:.3f} ms a decision, protocol overhead "
              f"{1e3 * (seconds - base) / count:.3f} ms wall-clock, {1e3 * (cpu + bot_cpu - base_cpu) / count:.3f} ms "
              f"CPU ({1e3 * (cpu - base_cpu) / count:.3f} here, {1e3 * bot_cpu / count:.3f} in the bot)")
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
