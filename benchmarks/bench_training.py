"""Learner steps per second of PPO training: the self-play collector and the update, timed apart.

Builds the config's network and optimiser (fresh weights, no warm start), then alternates
``SelfPlayCollector.collect()`` and ``ppo_update`` until ``--steps`` learner decisions, and
prints the learner steps per wall-second and per CPU-second of this process for each part and
for the whole. It uses only the collector's and the update's public calls, so the same script
measures any checkout: run it with ``PYTHONPATH`` set to the checkout to measure.

With ``--load N`` it measures twice in one run: idle, then with N busy competitor processes
(each a Python loop spinning on one core) running for the duration, and prints the slowdown
(idle steps/s ÷ loaded steps/s); on a machine of C cores, N competitors leave a fair share of
C / (N + 1) cores, so 2 competitors on 2 cores should cost at most 1.5× (the target: 2.5×).
``--json OUT`` writes the figures (``idle_steps_per_s``, ``loaded_steps_per_s``, ``slowdown``).

    python benchmarks/bench_training.py configs/quickstart.yaml --steps 40000
    python benchmarks/bench_training.py configs/quickstart.yaml --steps 20000 --load 2 --json OUT
    python benchmarks/bench_training.py configs/quickstart.yaml train.num_envs=256 --profile 25
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import time
from pathlib import Path

import numpy as np
import torch
from competitors import busy_competitors  # benchmarks/competitors.py, beside this script

import five_hundred_env
from agents.central import central_size
from agents.neural import ActorCritic
from training.algorithms.ppo import ppo_update
from training.rollouts.selfplay import SelfPlayCollector
from training.settings.config import Config, load_config
from training.workers.threads import limit_threads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config")
    parser.add_argument("overrides", nargs="*", help="section.key=value, as for five-hundred train")
    parser.add_argument("--steps", type=int, default=40_000, help="learner decisions to collect and train on")
    parser.add_argument("--threads", default=None,
                        help="torch threads: a number or auto (default: the config's torch_threads)")
    parser.add_argument("--load", type=int, default=0, metavar="N",
                        help="measure again with N busy competitor processes running, and print the slowdown")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write the figures to this JSON file")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="print the N costliest calls of collect()")
    args = parser.parse_args()
    config = load_config(args.config, args.overrides)
    setting = config.torch_threads if args.threads is None else args.threads
    threads = limit_threads(int(setting) if str(setting).isdigit() else setting)
    torch.manual_seed(config.seed)
    rules = config.to_rules()
    probe = five_hundred_env.env(rules=rules)
    nc = config.network
    model = ActorCritic(probe.unwrapped.encoder.size, int(probe.action_space(probe.possible_agents[0]).n),
                        nc.hidden_sizes, nc.activation,
                        critic_extra=central_size(rules) if nc.critic == "central" else 0,
                        num_sides=rules.num_sides, advice=nc.advice, advice_weight=nc.advice_weight)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.train.learning_rate, eps=config.train.adam_eps)
    rng, device = np.random.default_rng(config.seed), torch.device("cpu")
    collector = SelfPlayCollector(rules, config, model, [], rng, device)
    ppo_update(model, optimizer, collector.collect(), config.train, rng, device)  # compiles and warms up, untimed
    profiler = cProfile.Profile() if args.profile else None
    print(f"{threads or torch.get_num_threads()} torch thread(s), {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}")
    figures: dict[str, float] = {"threads": threads or torch.get_num_threads(), "steps": args.steps,
                                 "load": args.load, "cores": os.cpu_count() or 1}
    figures |= measure(collector, model, optimizer, config, rng, args.steps, profiler, "idle")
    if args.load:
        with busy_competitors(args.load):
            figures |= measure(collector, model, optimizer, config, rng, args.steps, None, "loaded")
        figures["slowdown"] = figures["idle_steps_per_s"] / figures["loaded_steps_per_s"]
        # Steps per CPU-second: the work done for the CPU time the process got. Unchanged under
        # load when its threads never wait on each other, whatever else runs on the machine.
        figures["cpu_efficiency_loss"] = figures["idle_steps_per_cpu_s"] / figures["loaded_steps_per_cpu_s"]
        print(f"slowdown {figures['slowdown']:.2f}x with {args.load} busy competitor(s) on {figures['cores']} cores "
              f"(steps per CPU-second {figures['cpu_efficiency_loss']:.2f}x fewer; this process had "
              f"{figures['idle_cpu_share']:.2f} of a core idle, {figures['loaded_cpu_share']:.2f} loaded)")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
        print(f"wrote {args.json}")
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.profile)


def measure(collector: SelfPlayCollector, model: ActorCritic, optimizer: torch.optim.Optimizer, config: Config,
            rng: np.random.Generator, total: int, profiler: cProfile.Profile | None, label: str) -> dict[str, float]:
    """Collect and update until ``total`` learner steps; print the parts' speeds; return the whole's
    steps per second and per CPU-second and the cores' worth of CPU the process got, named ``LABEL_...``."""
    steps = 0
    wall = {"collect": 0.0, "update": 0.0}
    cpu = dict(wall)
    while steps < total:
        w, c = time.perf_counter(), time.process_time()
        if profiler is not None:
            profiler.enable()
        ro = collector.collect()
        if profiler is not None:
            profiler.disable()
        w2, c2 = time.perf_counter(), time.process_time()
        ppo_update(model, optimizer, ro, config.train, rng, torch.device("cpu"))
        wall["collect"] += w2 - w
        cpu["collect"] += c2 - c
        wall["update"] += time.perf_counter() - w2
        cpu["update"] += time.process_time() - c2
        steps += len(ro)
    wall["whole"], cpu["whole"] = sum(wall.values()), sum(cpu.values())
    print(f"{label}: {steps} learner steps, batch {len(ro)}, load average {os.getloadavg()[0]:.1f}")
    for part in wall:
        print(f"  {part:8s} {steps / wall[part]:9,.0f} steps/s  {steps / cpu[part]:9,.0f} steps/CPU-s  "
              f"({wall[part]:.1f} s wall, {cpu[part]:.1f} s CPU)")
    return {f"{label}_steps_per_s": steps / wall["whole"], f"{label}_steps_per_cpu_s": steps / cpu["whole"],
            f"{label}_cpu_share": cpu["whole"] / wall["whole"]}


if __name__ == "__main__":
    main()
