"""Benchmark of the batched engine against the scalar engine and the AEC environment (one core).

For each preset, random legal play (every game's action drawn uniformly from its mask by
``BatchEngine.sample_actions``) through :class:`five_hundred_env.vector.BatchEngine` at a batch
of ``--batch`` games: decisions per second with action masks only (``observations=False``)
and with every acting seat's full observation written too. In the same run, the scalar engine
(``benchmarks/bench_engine.py``) and the AEC loop (``benchmarks/bench_aec.py``, its final
``None`` steps not counted as decisions) are measured and the ratios printed, and each preset's
batched decisions per CPU second as a share of ``australian``'s (masks only; with observations).

    python benchmarks/bench_vector.py --seconds 3 --json vector.json
    python benchmarks/bench_vector.py --preset australian --batch 4096 --seconds 10
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_aec import aec_loop
from bench_engine import peak_memory_mib
from bench_engine import run as engine_loop

import five_hundred_env
from five_hundred_env.cards import NUM_CARDS
from five_hundred_env.vector.batch import VECTOR_PRESETS as PRESETS  # the presets the kernels play

DEFAULT_BATCH = 1024  # the fastest batch measured (state, masks and observations stay in L2)


def vector_loop(preset: str, batch: int, seconds: float, observations: bool, seed: int = 0) -> tuple[float, float]:
    """Random legal play for about ``seconds``; return (decisions per wall second, per CPU second)."""
    from five_hundred_env.vector import BatchEngine

    engine = BatchEngine(preset, batch, seed=seed, observations=observations)
    actions = np.empty(batch, dtype=np.int64)
    engine.step(engine.sample_actions(actions))  # warm: loads (or compiles) every kernel
    steps = 0
    start, cpu_start = time.perf_counter(), time.process_time()
    deadline = start + seconds
    while True:
        for _ in range(20):
            engine.step(engine.sample_actions(actions))
        steps += 20
        now = time.perf_counter()
        if now >= deadline:
            decisions = steps * batch
            return decisions / (now - start), decisions / (time.process_time() - cpu_start)


def numpy_play_probe(batch: int, seconds: float, seed: int = 0) -> float:
    """Decisions per CPU second of the play phase alone vectorised in numpy (follow suit, a random
    legal card, the mask written; no tricks won, no bidding): an upper bound for a numpy engine,
    the measurement that chose numba."""
    from five_hundred_env.engine import EFFECTIVE_SUIT, SUIT_CARDS

    rng = np.random.default_rng(seed)
    four_to_ace = (1 << NUM_CARDS) - 1  # the cards of the australian pack's ranks
    suit_cards = np.array([[mask & four_to_ace for mask in row] for row in SUIT_CARDS], dtype=np.int64)
    effective_suit = np.array([row[:NUM_CARDS] for row in EFFECTIVE_SUIT], dtype=np.int64)
    hands = rng.integers(0, 1 << 46, (batch, 4), dtype=np.int64)
    ctx, led, to_act = (rng.integers(0, 4, batch) for _ in range(3))
    card_bits = np.int64(1) << np.arange(46, dtype=np.int64)
    games = np.arange(batch)
    masks = np.zeros((batch, 80), dtype=np.int8)
    steps = 0
    cpu_start = time.process_time()
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        hand = hands[games, to_act]
        follow = hand & suit_cards[ctx, led]
        legal = (np.where(follow != 0, follow, hand)[:, None] & card_bits) != 0
        card = (rng.random(legal.shape) * legal).argmax(1)
        hands[games, to_act] = hand ^ (np.int64(1) << card)
        led[:] = effective_suit[ctx, card]
        to_act[:] = (to_act + 1) % 4
        masks[:, 28:74] = legal
        steps += 1
    return steps * batch / (time.process_time() - cpu_start)


def first_call_seconds() -> float:
    """Seconds to import the vector package and make a first step (numba's cache hit, or a compile)."""
    start = time.perf_counter()
    from five_hundred_env.vector import BatchEngine

    engine = BatchEngine("australian", 8, seed=0)
    engine.step(engine.sample_actions())
    engine.state()
    return time.perf_counter() - start


def measure(preset: str, batch: int, seconds: float) -> dict[str, float | int]:
    """Every figure of one preset."""
    masks, masks_cpu = vector_loop(preset, batch, seconds, observations=False)
    obs, obs_cpu = vector_loop(preset, batch, seconds, observations=True)
    _deals, decisions, wall, _cpu = engine_loop(preset, seconds)
    env = five_hundred_env.env(rules=preset)
    steps, episodes, aec_wall, _ = aec_loop(env, seconds)
    aec = (steps - episodes * env.rules.num_players) / aec_wall  # the final None steps are no decisions
    scalar = decisions / wall
    return {"batch": batch, "decisions_per_s_masks": masks, "decisions_per_cpu_s_masks": masks_cpu,
            "decisions_per_s_obs": obs, "decisions_per_cpu_s_obs": obs_cpu, "scalar_engine_decisions_per_s": scalar,
            "aec_decisions_per_s": aec, "masks_vs_scalar": masks / scalar, "obs_vs_aec": obs / aec}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement (default 3)")
    parser.add_argument("--batch", type=int, default=DEFAULT_BATCH, help=f"games per batch (default {DEFAULT_BATCH})")
    parser.add_argument("--preset", choices=sorted(PRESETS), action="append", help="repeatable; default: all")
    parser.add_argument("--json", type=Path, help="write the figures to this JSON file")
    args = parser.parse_args(argv)
    first = first_call_seconds()
    print(f"first call (import, kernels loaded or compiled, one step): {first:.1f} s")
    print(f"{'preset':<12} {'batch':>6} {'masks/s':>11} {'masks/CPU-s':>12} {'obs/s':>11} {'obs/CPU-s':>11} "
          f"{'scalar/s':>9} {'AEC/s':>7} {'masks÷scalar':>12} {'obs÷AEC':>7} {'÷australian':>11}")
    results = {}
    for preset in args.preset or list(PRESETS):
        r = results[preset] = measure(preset, args.batch, args.seconds)
        base = results.get("australian", r)
        for kind in ("masks", "obs"):
            r[f"{kind}_vs_australian"] = r[f"decisions_per_cpu_s_{kind}"] / base[f"decisions_per_cpu_s_{kind}"]
        print(f"{preset:<12} {r['batch']:>6} {r['decisions_per_s_masks']:>11,.0f} {r['decisions_per_cpu_s_masks']:>12,.0f} "
              f"{r['decisions_per_s_obs']:>11,.0f} {r['decisions_per_cpu_s_obs']:>11,.0f} "
              f"{r['scalar_engine_decisions_per_s']:>9,.0f} {r['aec_decisions_per_s']:>7,.0f} "
              f"{r['masks_vs_scalar']:>11.0f}× {r['obs_vs_aec']:>6.0f}× "
              f"{r['masks_vs_australian']:>5.0%} {r['obs_vs_australian']:>5.0%}")
    probe = numpy_play_probe(args.batch, args.seconds)
    print(f"numpy probe (the play phase alone, vectorised in numpy): {probe:,.0f} decisions/CPU-s")
    peak = peak_memory_mib()
    print(f"peak memory (ru_maxrss): {peak:.1f} MiB")
    if args.json:
        args.json.write_text(json.dumps({"presets": results, "first_call_s": first, "peak_memory_mib": peak,
                                         "numpy_play_probe_decisions_per_cpu_s": probe},
                                        indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
