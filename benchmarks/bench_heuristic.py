"""Benchmark of the compiled heuristic against the Python one (CPU time, one core).

For each preset, heuristic games are played on the batched engine (``--batch`` games, every
decision kind in its natural proportion), and only the deciding is timed, call by call, on the
observations and masks the engine has just written (as in use: the engine writes a batch, the
policy reads it):

* ``compiled``: :meth:`agents.heuristic.compiled.HeuristicPolicy.act_batch`, one call per batch;
* ``python``: ``HeuristicAgent.act`` alone, one call per game of the batch (no environment);

and their ratio. The games step with the chosen actions (the two forms choose the same). CPU
time (``time.process_time``), not wall time: the machine may be shared. A forced decision (one
legal action) counts for both, as both answer it without thinking.

    python benchmarks/bench_heuristic.py --seconds 3 --json heuristic.json
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import numpy as np

from agents import HeuristicAgent
from agents.heuristic.compiled import HeuristicPolicy
from five_hundred_env.rules import PRESETS
from five_hundred_env.vector import BatchEngine

DEFAULT_BATCH = 1024


def decisions_per_cpu_second(preset: str, batch: int, seconds: float,
                             act: Callable[[np.ndarray, np.ndarray], np.ndarray], seed: int = 0) -> float:
    """Heuristic games on a batched engine until ``act`` (observations, masks -> actions) has
    spent about ``seconds`` of CPU time: the decisions it made per CPU-second."""
    engine = BatchEngine(preset, batch, seed=seed)
    spent = 0.0
    decisions = 0
    while spent < seconds:
        start = time.process_time()
        actions = act(engine.obs, engine.masks)
        spent += time.process_time() - start
        decisions += batch
        engine.step(actions)
    return decisions / spent


def compiled_act(policy: HeuristicPolicy, batch: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``HeuristicPolicy.act_batch`` into one reused buffer, its kernels loaded (or compiled) first."""
    out = np.empty(batch, dtype=np.int64)
    policy.act_batch(np.zeros((1, policy.encoder.size), np.int8), np.zeros((1, len(policy.actions)), np.int8))
    return lambda obs, masks: policy.act_batch(obs, masks, out)


def python_act(agent: HeuristicAgent) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``HeuristicAgent.act`` row by row, as a batch policy."""
    def act(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.array([agent.act({"observation": obs[b], "action_mask": masks[b]}) for b in range(len(obs))])
    return act


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per measurement")
    parser.add_argument("--batch", type=int, default=DEFAULT_BATCH, help="games per batch (positions per act_batch call)")
    parser.add_argument("--preset", choices=list(PRESETS), action="append", help="a preset (repeat; default: all)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    if args.seconds <= 0 or args.batch < 1:
        parser.error("--seconds must be positive and --batch at least 1")
    report: dict = {"batch": args.batch, "seconds": args.seconds, "clock": "process_time", "presets": {}}
    for preset in args.preset or list(PRESETS):
        act = compiled_act(HeuristicPolicy(preset), args.batch)
        compiled = decisions_per_cpu_second(preset, args.batch, args.seconds, act)
        python = decisions_per_cpu_second(preset, args.batch, args.seconds, python_act(HeuristicAgent(preset, seed=0)))
        report["presets"][preset] = {
            "compiled_decisions_per_s": round(compiled),
            "python_decisions_per_s": round(python),
            "speedup": round(compiled / python, 1),
        }
        print(f"{preset:12s} compiled {compiled:12,.0f} decisions/CPU-s   python {python:9,.0f}   "
              f"speedup {compiled / python:6.1f}x", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
