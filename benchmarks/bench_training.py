"""Learner steps per second of PPO training: the self-play collector and the update, timed apart.

Builds the config's network and optimiser (fresh weights, no warm start), then alternates
``SelfPlayCollector.collect()`` and ``ppo_update`` until ``--steps`` learner decisions, and
prints the learner steps per wall-second and per CPU-second of this process for each part and
for the whole. It uses only the collector's and the update's public calls, so the same script
measures any checkout: run it with ``PYTHONPATH`` set to the checkout to measure.

    python benchmarks/bench_training.py configs/quickstart.yaml --steps 40000
    python benchmarks/bench_training.py configs/quickstart.yaml train.num_envs=256 --profile 25
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import numpy as np
import torch

import five_hundred_env
from agents.neural import ActorCritic, central_size
from training.config import load_config
from training.ppo import ppo_update
from training.selfplay import SelfPlayCollector


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config")
    parser.add_argument("overrides", nargs="*", help="section.key=value, as for five-hundred train")
    parser.add_argument("--steps", type=int, default=40_000, help="learner decisions to collect and train on")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1: CPU time is meaningful)")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="print the N costliest calls of collect()")
    args = parser.parse_args()
    config = load_config(args.config, args.overrides)
    torch.set_num_threads(args.threads)
    torch.manual_seed(config.seed)
    rules = config.to_rules()
    probe = five_hundred_env.env(rules=rules)
    nc = config.network
    model = ActorCritic(probe.unwrapped.encoder.size, int(probe.action_space(probe.possible_agents[0]).n),
                        nc.hidden_sizes, nc.activation,
                        critic_extra=central_size(rules.num_players) if nc.critic == "central" else 0,
                        num_sides=rules.num_sides, advice=nc.advice, advice_weight=nc.advice_weight)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.train.learning_rate, eps=config.train.adam_eps)
    rng, device = np.random.default_rng(config.seed), torch.device("cpu")
    collector = SelfPlayCollector(rules, config, model, [], rng, device)
    profiler = cProfile.Profile() if args.profile else None
    steps = 0
    wall = {"collect": 0.0, "update": 0.0}
    cpu = dict(wall)
    while steps < args.steps:
        w, c = time.perf_counter(), time.process_time()
        if profiler is not None:
            profiler.enable()
        ro = collector.collect()
        if profiler is not None:
            profiler.disable()
        w2, c2 = time.perf_counter(), time.process_time()
        ppo_update(model, optimizer, ro, config.train, rng, device)
        wall["collect"] += w2 - w
        cpu["collect"] += c2 - c
        wall["update"] += time.perf_counter() - w2
        cpu["update"] += time.process_time() - c2
        steps += len(ro)
    wall["whole"], cpu["whole"] = sum(wall.values()), sum(cpu.values())
    print(f"{steps} learner steps, batch {len(ro)}, {args.threads} torch thread(s)")
    for part in wall:
        print(f"{part:8s} {steps / wall[part]:9,.0f} steps/s  {steps / cpu[part]:9,.0f} steps/CPU-s  "
              f"({wall[part]:.1f} s wall, {cpu[part]:.1f} s CPU)")
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.profile)


if __name__ == "__main__":
    main()
