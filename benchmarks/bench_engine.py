"""Benchmark of the rules engine alone: random legal deals through :class:`Deal`.

Each deal is shuffled with :meth:`Deal.new`, then every decision picks a uniformly random legal
action (``legal[int(rnd() * len(legal))]`` with a seeded :class:`random.Random`) until the deal
is over. Prints deals per second, decisions per second, the microseconds one
:meth:`Deal.clone` takes (of deals caught mid-play, as search and rollouts clone them) and the
peak memory of the process, and each preset's decisions per CPU-second as a share of the
``australian`` figure of the same run (when it ran).

    python benchmarks/bench_engine.py                      # every preset, 3 s each
    python benchmarks/bench_engine.py --preset australian --seconds 10
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time

from five_hundred_env import Deal, make_rules
from five_hundred_env.rules import PRESETS


def run(preset: str, seconds: float, seed: int = 0) -> tuple[int, int, float, float]:
    """Play random deals for about ``seconds``; return (deals, decisions, elapsed wall seconds,
    elapsed CPU seconds of this process)."""
    rules = make_rules(preset)
    rng = random.Random(seed)
    rnd = rng.random
    n = rules.num_players
    deals = decisions = 0
    dealer = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    deadline = start + seconds
    while True:
        for _ in range(100):  # check the clock every 100 deals
            deal = Deal.new(rules, rng, dealer)
            dealer = (dealer + 1) % n
            legal_actions, apply_action = deal.legal_actions, deal.apply_action
            while deal.phase != 4:  # Phase.DEAL_OVER (the five-handed call, Phase.CALL, is numbered 5)
                legal = legal_actions()
                apply_action(legal[int(rnd() * len(legal))])
                decisions += 1
            deals += 1
        now = time.perf_counter()
        if now >= deadline:
            return deals, decisions, now - start, time.process_time() - cpu_start


def clone_microseconds(preset: str, seed: int = 0, deals: int = 200, repeat: int = 5) -> float:
    """The best-of-``repeat`` mean time of one :meth:`Deal.clone`, in µs, over ``deals`` random
    deals each stopped at a random point of its play (history, tricks and trick half full)."""
    rules = make_rules(preset)
    rng = random.Random(seed)
    positions = []
    for i in range(deals):
        deal = Deal.new(rules, rng, i % rules.num_players)
        stop = rng.randrange(10, 45)
        while deal.phase != 4 and len(deal.history) < stop:  # Phase.DEAL_OVER
            legal = deal.legal_actions()
            deal.apply_action(legal[int(rng.random() * len(legal))])
        positions.append(deal)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for deal in positions:
            deal.clone()
        best = min(best, (time.perf_counter() - start) / len(positions))
    return best * 1e6


def peak_memory_mib() -> float:
    """The process's peak resident memory in MiB (``ru_maxrss``: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per preset (default 3)")
    parser.add_argument("--preset", choices=sorted(PRESETS), action="append",
                        help="a preset to run (repeatable; default: all)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"{'preset':<12} {'deals/s':>10} {'decisions/s':>12} {'decisions/CPU-s':>16} {'decisions/deal':>15} "
          f"{'µs/clone':>9} {'vs australian':>14}")
    presets = args.preset or list(PRESETS)
    base = None
    for preset in sorted(presets, key=lambda p: p != "australian"):  # australian first: the reference
        deals, decisions, wall, cpu = run(preset, args.seconds, args.seed)
        rate = decisions / cpu
        base = rate if preset == "australian" else base
        share = f"{100 * rate / base:>13.0f}%" if base else f"{'-':>14}"
        print(f"{preset:<12} {deals / wall:>10,.0f} {decisions / wall:>12,.0f} {rate:>16,.0f} "
              f"{decisions / deals:>15.1f} {clone_microseconds(preset, args.seed):>9.2f} {share}")
    print(f"peak memory (ru_maxrss): {peak_memory_mib():.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
