"""Benchmark of the full AEC loop, exactly as users run it, against PettingZoo's ``texas_holdem_v4``.

For each preset: ``five_hundred_env.env()``, then episodes of ``reset``, ``agent_iter``,
``last()``, the action mask and ``step`` with a uniformly random legal action (``None`` once the
agent is done). The same loop runs over ``pettingzoo.classic.texas_holdem_v4`` (needs rlcard:
``pip install "pettingzoo[classic]"``) as a reference, and the ratio is printed.

    python benchmarks/bench_aec.py                     # every preset, 3 s each, and texas_holdem_v4
    python benchmarks/bench_aec.py --preset australian --seconds 10 --repeat 3
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import five_hundred_env
from five_hundred_env.rules import PRESETS


def aec_loop(env: Any, seconds: float, seed: int = 0) -> tuple[int, int, float, float]:
    """Play random legal episodes for about ``seconds``; return (steps, episodes, elapsed wall
    seconds, elapsed CPU seconds of this process).

    A step is one ``env.step`` call, the final ``None`` steps of finished agents included.
    """
    rng = random.Random(seed)
    rnd = rng.random
    flatnonzero = np.flatnonzero
    steps = episodes = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    deadline = start + seconds
    env.reset(seed=seed)
    while True:
        env.reset()
        for _agent in env.agent_iter():
            _obs, _reward, termination, truncation, _info = env.last()
            if termination or truncation:
                action = None
            else:
                legal = flatnonzero(_obs["action_mask"])
                action = int(legal[int(rnd() * len(legal))])
            env.step(action)
            steps += 1
        episodes += 1
        now = time.perf_counter()
        if now >= deadline:
            return steps, episodes, now - start, time.process_time() - cpu_start


def texas_holdem() -> Any | None:
    """PettingZoo's ``texas_holdem_v4`` environment, or ``None`` when rlcard is not installed."""
    try:
        from pettingzoo.classic import texas_holdem_v4
    except ImportError:
        return None
    return texas_holdem_v4.env()


def best_of(make: Callable[[], Any], seconds: float, repeat: int) -> tuple[float, float, float]:
    """The best steps per wall-clock second and per CPU second over ``repeat`` runs (on a shared
    machine the CPU figure is the steadier one), and the steps per episode."""
    best = best_cpu = per_episode = 0.0
    for i in range(repeat):
        steps, episodes, wall, cpu = aec_loop(make(), seconds, seed=i)
        best = max(best, steps / wall)
        best_cpu = max(best_cpu, steps / cpu)
        per_episode = steps / episodes
    return best, best_cpu, per_episode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per run (default 3)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per environment; the best is shown")
    parser.add_argument("--preset", choices=sorted(PRESETS), action="append",
                        help="a preset to run (repeatable; default: all)")
    parser.add_argument("--episode", choices=("deal", "game"), default="deal")
    args = parser.parse_args(argv)

    reference = reference_cpu = None
    if texas_holdem() is not None:
        reference, reference_cpu, ref_per_episode = best_of(texas_holdem, args.seconds, args.repeat)
    print(f"{'environment':<24} {'steps/s':>10} {'steps/CPU-s':>12} {'steps/episode':>14} {'× texas_holdem_v4':>18}")
    for preset in args.preset or list(PRESETS):
        rate, rate_cpu, per_episode = best_of(lambda p=preset: five_hundred_env.env(rules=p, episode=args.episode),
                                              args.seconds, args.repeat)
        ratio = f"{rate_cpu / reference_cpu:>17.2f}×" if reference_cpu else f"{'n/a':>18}"
        print(f"{'five_hundred ' + preset:<24} {rate:>10,.0f} {rate_cpu:>12,.0f} {per_episode:>14.1f} {ratio}")
    if reference is not None:
        print(f"{'texas_holdem_v4':<24} {reference:>10,.0f} {reference_cpu:>12,.0f} {ref_per_episode:>14.1f} {1:>17.2f}×")
    else:
        print("texas_holdem_v4: not installed (pip install 'pettingzoo[classic]'), no reference")
    print("(the ratio compares steps per CPU second, steadier than wall-clock time on a shared machine)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
