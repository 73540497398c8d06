"""Benchmarks of the search package: world sampling, the exact solver, and PIMC against the heuristic.

    python benchmarks/bench_search.py sampling              # µs per world, every preset
    python benchmarks/bench_search.py solver                # ms per solved decision by tricks left
    python benchmarks/bench_search.py match --deals 40 --worlds 8   # duplicate PIMC vs heuristic

Positions for ``sampling`` and ``solver`` are random legal deals stopped after a given number of
tricks (seeded); ``match`` runs :func:`training.evaluate.duplicate_match` on the australian preset
and prints the mean board difference with its 95% interval and the seconds per PIMC decision.
"""

from __future__ import annotations

import argparse
import random
import time

from agents.heuristic import HeuristicAgent
from agents.search.pimc import PIMCAgent
from agents.search.sampling import InfoSet, WorldSampler
from agents.search.solver import action_values
from five_hundred_env import make_rules
from five_hundred_env.engine import Deal, Phase
from five_hundred_env.rules import PRESETS, Rules
from training.evaluate import duplicate_match


def random_position(rules: Rules, rng: random.Random, tricks_done: int) -> Deal | None:
    """A random legal deal stopped at a leading decision after ``tricks_done`` tricks (or None if thrown in)."""
    deal = Deal.new(rules, rng, rng.randrange(rules.num_players))
    while not deal.is_over and (deal.phase != Phase.PLAY or len(deal.tricks) < tricks_done or deal.trick):
        deal.apply_action(rng.choice(deal.legal_actions()))
    return None if deal.is_over else deal


def bench_sampling(positions: int, worlds: int, seed: int) -> None:
    for preset in PRESETS:
        rules = make_rules(preset)
        rng = random.Random(seed)
        for tricks_done in (0, 5, 8):
            elapsed = hidden_elapsed = 0.0
            count = 0
            for _ in range(positions):
                deal = random_position(rules, rng, tricks_done)
                if deal is None:
                    continue
                sampler = WorldSampler(InfoSet.from_deal(deal, (deal.to_act + 1) % rules.num_players))
                sampler.sample(rng)  # the counting tables are built on the first draw
                start = time.perf_counter()
                for _ in range(worlds):
                    sampler.sample_hidden(rng)
                hidden_elapsed += time.perf_counter() - start
                start = time.perf_counter()
                for _ in range(worlds):
                    sampler.sample(rng)
                elapsed += time.perf_counter() - start
                count += worlds
            print(f"{preset:11s} after {tricks_done} tricks: {hidden_elapsed / count * 1e6:6.1f} µs per assignment, "
                  f"{elapsed / count * 1e6:6.1f} µs per world (Deal replayed)")


def bench_solver(positions: int, seed: int) -> None:
    for preset in PRESETS:
        rules = make_rules(preset)
        rng = random.Random(seed)
        for left in (3, 4, 5):
            times = []
            while len(times) < positions:
                deal = random_position(rules, rng, rules.hand_size - left)
                if deal is None:
                    continue
                start = time.perf_counter()
                action_values(deal)
                times.append(time.perf_counter() - start)
            times.sort()
            print(f"{preset:11s} {left} tricks left: mean {sum(times) / len(times) * 1e3:7.1f} ms, "
                  f"max {times[-1] * 1e3:7.1f} ms per decision (every action solved)")


def bench_match(deals: int, worlds: int, solver_tricks: int, seed: int) -> None:
    made: list[PIMCAgent] = []

    def pimc(rules: Rules, agent_seed: int | None) -> PIMCAgent:
        agent = PIMCAgent(rules, seed=agent_seed, worlds=worlds, solver_tricks=solver_tricks)
        made.append(agent)
        return agent

    start = time.process_time()
    report = duplicate_match("australian", pimc, HeuristicAgent, deals=deals, seed=seed)
    cpu = time.process_time() - start
    mean, lo, hi, _se = report.score_diff
    searches = sum(a.searches for a in made)
    seconds = sum(a.search_seconds for a in made)
    print(f"PIMC (worlds={worlds}, solver at {solver_tricks} tricks) vs heuristic, australian, {deals} boards, "
          f"seed {seed}: {mean:+.1f} [{lo:+.1f}, {hi:+.1f}] points per deal")
    print(f"{searches} searched card plays, {seconds / max(searches, 1):.3f} s each; "
          f"fallbacks {sum(a.fallbacks for a in made)}; {cpu:.0f} s CPU in all")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    s = sub.add_parser("sampling")
    s.add_argument("--positions", type=int, default=30)
    s.add_argument("--worlds", type=int, default=50)
    v = sub.add_parser("solver")
    v.add_argument("--positions", type=int, default=10)
    m = sub.add_parser("match")
    m.add_argument("--deals", type=int, default=40)
    m.add_argument("--worlds", type=int, default=8)
    m.add_argument("--solver-tricks", type=int, default=4)
    for p in (s, v, m):
        p.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.what == "sampling":
        bench_sampling(args.positions, args.worlds, args.seed)
    elif args.what == "solver":
        bench_solver(args.positions, args.seed)
    else:
        bench_match(args.deals, args.worlds, args.solver_tricks, args.seed)


if __name__ == "__main__":
    main()
