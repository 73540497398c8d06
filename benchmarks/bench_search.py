"""Benchmarks of the search package: world sampling, the exact solver, and PIMC against the heuristic.

    python benchmarks/bench_search.py sampling              # µs per world, every preset
    python benchmarks/bench_search.py solver                # ms per solved decision by tricks left
    python benchmarks/bench_search.py decisions --deals 20  # s per searched decision of each kind, one-step gains
    python benchmarks/bench_search.py match --deals 40 --worlds 8 --search play   # duplicate PIMC vs heuristic

Positions for ``sampling`` and ``solver`` are random legal deals stopped after a given number of
tricks (seeded). ``decisions`` lets one PIMC agent make every decision of australian deals and,
at each searched one, plays the real deal out after the search's best candidate and after the
base agent's choice (the heuristic continuing everywhere): the *one-step gain* of deviating,
per ``min_gain`` threshold. ``match`` runs :func:`training.evaluation.evaluate.duplicate_match` on the
australian preset and prints the mean board difference with its 95% interval and the seconds per
searched decision of each kind.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from agents.base import DECISION_KINDS as KINDS
from agents.heuristic import HeuristicAgent
from agents.search.inference import DEFAULT_BUDGET
from agents.search.pimc import PIMCAgent, SearchRecord
from agents.search.solver import action_values
from agents.search.values import PlayOut, policy_play_out
from five_hundred_env import make_rules
from five_hundred_env.actions import ActionTable
from five_hundred_env.engine import Deal, Phase
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import PRESETS, Rules
from five_hundred_env.sampling import InfoSet, WorldSampler
from training.evaluation.evaluate import duplicate_match, mean_ci95

THRESHOLDS = (0, 10, 20, 40, 80, 160)
"""The ``min_gain`` values the ``decisions`` row compares (points)."""


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
                  f"{elapsed / count * 1e6:6.1f} µs per world (a whole Deal)")


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


def _realised_gain(deal: Deal, record: SearchRecord, play_out: PlayOut) -> float:
    """The real deal's result after the search's best candidate minus after the base choice (same continuation)."""
    if record.best == record.base_action:
        return 0.0
    side = deal.rules.side_of(deal.to_act)
    results = []
    for action in (record.best, record.base_action):
        trial = deal.clone()
        trial.apply_action(action)
        play_out(trial)
        results.append(trial.zero_sum_result(side))
    return results[0] - results[1]


def bench_decisions(deals: int, seed: int, options: dict[str, Any]) -> None:
    rules = make_rules("australian")
    agent = PIMCAgent(rules, seed=seed, **options)
    table, encoder = ActionTable(rules), ObservationEncoder(rules)
    play_out = policy_play_out(rules, HeuristicAgent(rules, seed).act)
    rng = random.Random(seed)
    gains: dict[str, list[tuple[float, float]]] = {kind: [] for kind in KINDS}  # (estimated, realised)
    start = time.process_time()
    for _ in range(deals):
        deal = Deal.new(rules, rng, rng.randrange(rules.num_players))
        while not deal.is_over:
            before = agent.last_search
            action = table.universal[agent.act(encoder.encode_turn(deal, table))]
            record = agent.last_search
            if record is not None and record is not before:
                gains[record.kind].append((record.gain, _realised_gain(deal, record, play_out)))
            deal.apply_action(action)
    print(f"PIMC {options}, australian, {deals} deals, seed {seed}: {time.process_time() - start:.0f} s CPU")
    for kind in KINDS:
        stats, rows = agent.stats[kind], gains[kind]
        print(f"{kind:8s} {stats.searches:5d} searched, {stats.seconds / max(stats.searches, 1):.3f} s each, "
              f"fallbacks {stats.fallbacks}")
        for threshold in THRESHOLDS if rows else ():
            taken = [realised if estimated >= threshold else 0.0 for estimated, realised in rows]
            mean, lo, hi, _se = mean_ci95(taken)
            share = sum(1 for (estimated, realised) in rows if estimated >= threshold and realised != 0) / len(rows)
            print(f"    min_gain {threshold:3d}: one-step gain {mean:+6.2f} [{lo:+6.2f}, {hi:+6.2f}] points per "
                  f"decision, {share:.0%} deviate with an effect")
    _print_inference([agent])


def _print_inference(agents: list[PIMCAgent]) -> None:
    """The auction inference's counts over ``agents`` (nothing when it is off)."""
    counts = [a.inference for a in agents if a.inference is not None]
    if not counts:
        return
    candidates, accepted = sum(c.candidates for c in counts), sum(c.accepted for c in counts)
    print(f"inference: {candidates} candidate worlds tested, {accepted} accepted ({accepted / max(candidates, 1):.1%}), "
          f"{sum(c.uniform_worlds for c in counts)} uniform worlds in {sum(c.uniform_decisions for c in counts)} "
          f"decisions whose budget ran out")


def bench_match(deals: int, seed: int, options: dict[str, Any]) -> None:
    made: list[PIMCAgent] = []

    def pimc(rules: Rules, agent_seed: int | None) -> PIMCAgent:
        agent = PIMCAgent(rules, seed=agent_seed, **options)
        made.append(agent)
        return agent

    start = time.process_time()
    report = duplicate_match("australian", pimc, HeuristicAgent, deals=deals, seed=seed)
    cpu = time.process_time() - start
    mean, lo, hi, _se = report.score_diff
    print(f"PIMC {options} vs heuristic, australian, {deals} boards, seed {seed}: "
          f"{mean:+.1f} [{lo:+.1f}, {hi:+.1f}] points per deal; {cpu:.0f} s CPU in all")
    for kind in KINDS:
        searches = sum(a.stats[kind].searches for a in made)
        seconds = sum(a.stats[kind].seconds for a in made)
        print(f"{kind:8s} {searches:5d} searched, {seconds / max(searches, 1):.3f} s each; deviations "
              f"{sum(a.stats[kind].deviations for a in made)}, fallbacks {sum(a.stats[kind].fallbacks for a in made)}")
    _print_inference(made)


def _min_gain_option(text: str) -> float | dict[str, float]:
    """``--min-gain``: one number, or ``kind=points`` pairs separated by commas."""
    if "=" not in text:
        return float(text)
    return {kind.strip(): float(points) for kind, points in (pair.split("=") for pair in text.split(","))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    s = sub.add_parser("sampling")
    s.add_argument("--positions", type=int, default=30)
    s.add_argument("--worlds", type=int, default=50)
    v = sub.add_parser("solver")
    v.add_argument("--positions", type=int, default=10)
    searched = [sub.add_parser("decisions"), sub.add_parser("match")]
    for p in searched:
        p.add_argument("--deals", type=int, default=20 if p is searched[0] else 40)
        p.add_argument("--worlds", type=int, default=16)
        p.add_argument("--bid-worlds", type=int, default=None)
        p.add_argument("--kitty-worlds", type=int, default=None)
        p.add_argument("--solver-tricks", type=int, default=4)
        p.add_argument("--search", default="+".join(KINDS), help="the kinds searched, e.g. bid+play")
        p.add_argument("--min-gain", default=None, help="points, or per kind: bid=160,play=0 (default: the agent's)")
        p.add_argument("--inference", action="store_true", help="worlds consistent with the auction (agents/search/inference.py)")
        p.add_argument("--inference-budget", type=int, default=DEFAULT_BUDGET, help="candidate worlds per decision")
    for p in (s, v, *searched):
        p.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.what == "sampling":
        bench_sampling(args.positions, args.worlds, args.seed)
    elif args.what == "solver":
        bench_solver(args.positions, args.seed)
    else:
        options = {"worlds": args.worlds, "bid_worlds": args.bid_worlds, "kitty_worlds": args.kitty_worlds,
                   "solver_tricks": args.solver_tricks, "search": args.search}
        if args.inference:
            options.update(inference=True, inference_budget=args.inference_budget)
        if args.min_gain is not None:
            options["min_gain"] = _min_gain_option(args.min_gain)
        (bench_decisions if args.what == "decisions" else bench_match)(args.deals, args.seed, options)


if __name__ == "__main__":
    main()
