"""Benchmark of the compiled heuristic against the Python one (CPU time, one core).

For each preset, heuristic games are played on the batched engine (``--batch`` games, every
decision kind in its natural proportion), and only the deciding is timed, call by call, on the
observations and masks the engine has just written (as in use: the engine writes a batch, the
policy reads it):

* ``compiled``: :meth:`agents.heuristic.compiled.HeuristicPolicy.act_batch` on the whole batch;
* ``python``: ``HeuristicAgent.act`` alone (no environment) on the first ``--python-rows``
  games of a batch, one call each;

and their ratio. The two take turns (ten batched steps, then a Python block), so a change of the
machine's load falls on both alike. The games step with the compiled actions (the two forms choose the same:
tests/test_heuristic_compiled.py). CPU time (``time.process_time``), not wall time: the machine
may be shared. A forced decision (one legal action) counts for both, as both answer it without
thinking.

    python benchmarks/bench_heuristic.py --seconds 3 --json heuristic.json
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from agents import HeuristicAgent
from agents.heuristic.compiled import HeuristicPolicy
from five_hundred_env.rules import PRESETS
from five_hundred_env.vector import BatchEngine

DEFAULT_BATCH = 1024
DEFAULT_PYTHON_ROWS = 128
COMPILED_STEPS = 10


def measure(preset: str, batch: int, python_rows: int, seconds: float, seed: int = 0) -> tuple[float, float]:
    """Heuristic games on a batched engine until each form has spent about ``seconds`` of CPU
    time deciding: (compiled, Python) decisions per CPU-second. The forms take turns, a block of
    ``COMPILED_STEPS`` batched steps for the compiled one, then ``python_rows`` games of the
    current batch for the Python one."""
    policy = HeuristicPolicy(preset)
    agent = HeuristicAgent(preset, seed=0)
    engine = BatchEngine(preset, batch, seed=seed)
    out = np.empty(batch, dtype=np.int64)
    policy.act_batch(engine.obs, engine.masks, out)  # warm: loads (or compiles) the kernels
    rows = min(python_rows, batch)
    compiled_spent = python_spent = 0.0
    compiled_decisions = python_decisions = 0
    while compiled_spent < seconds or python_spent < seconds:
        for _ in range(COMPILED_STEPS):
            start = time.process_time()
            policy.act_batch(engine.obs, engine.masks, out)
            compiled_spent += time.process_time() - start
            compiled_decisions += batch
            engine.step(out)
        if python_spent < seconds:
            start = time.process_time()
            for b in range(rows):
                agent.act({"observation": engine.obs[b], "action_mask": engine.masks[b]})
            python_spent += time.process_time() - start
            python_decisions += rows
    return compiled_decisions / compiled_spent, python_decisions / python_spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per measurement")
    parser.add_argument("--batch", type=int, default=DEFAULT_BATCH, help="games per batch (positions per act_batch call)")
    parser.add_argument("--python-rows", type=int, default=DEFAULT_PYTHON_ROWS,
                        help="games of each batch the Python heuristic decides (timed in turn with the compiled one)")
    parser.add_argument("--preset", choices=list(PRESETS), action="append", help="a preset (repeat; default: all)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    if args.seconds <= 0 or args.batch < 1 or args.python_rows < 1:
        parser.error("--seconds must be positive, --batch and --python-rows at least 1")
    report: dict = {"batch": args.batch, "seconds": args.seconds, "clock": "process_time", "presets": {}}
    for preset in args.preset or list(PRESETS):
        compiled, python = measure(preset, args.batch, args.python_rows, args.seconds)
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
