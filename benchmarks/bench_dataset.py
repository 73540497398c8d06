"""Benchmark of datasets (docs/datasets.md): how fast each agent's games are written, how fast the
loader replays them, and what the records cost on disk (CPU time, one process).

* **generation**: ``training.rollouts.datasets.generate_dataset`` for each of ``--agents``, one
  worker (this process), after a warm-up run of each (numba's kernels loaded, torch imported,
  networks read): deals per CPU-second, from the CPU-seconds the manifest records (the play and
  the records, every job's; the Parquet writing after them is not counted), and bytes per deal;
* **loader**: the decisions per CPU-second of ``Dataset.batches`` over the heuristic dataset
  (observations, masks, actions, returns; batches of ``--batch``), the best of three passes;
* **format**: the heuristic records in Parquet (zstd, the format's, and snappy) and in Arrow IPC
  (zstd, lz4): bytes per deal, and the CPU-milliseconds to read the file back into records.

    python benchmarks/bench_dataset.py
    python benchmarks/bench_dataset.py --preset six_handed --agent heuristic 50000 --agent pimc 8 --json dataset.json

Targets (issue 35): heuristic records at >= 1,000 deals per CPU-second, the loader at >= 1 M
decisions per CPU-second with observations.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from five_hundred_env.dataset import DealRecords, open_dataset
from five_hundred_env.rules import PRESETS, make_rules
from training.rollouts.datasets import generate_dataset

DEFAULT_AGENTS = (("heuristic", 20000), ("random", 20000), ("pretrained", 4000),
                  ("pimc:worlds=8,bid_worlds=8,kitty_worlds=8", 32), ("pimc", 16))
"""Each agent spec measured by default, and its deals."""


def generation(spec: str, preset: str, deals: int, folder: Path) -> dict[str, float]:
    """Deals per CPU-second writing ``deals`` deals of ``spec`` (after a warm-up of a few deals)."""
    rules = make_rules(preset)
    generate_dataset(spec, rules, min(deals, 8), folder / f"{spec}-warm", seed=1)
    manifest = generate_dataset(spec, rules, deals, folder / spec, seed=0)
    size = sum((folder / spec / entry["name"]).stat().st_size for entry in manifest["files"])
    return {"deals": deals, "cpu_seconds": manifest["cpu_seconds"],
            "deals_per_cpu_s": deals / manifest["cpu_seconds"], "decisions": manifest["decisions"],
            "bytes_per_deal": size / deals}


def loader(folder: Path, batch: int) -> dict[str, float]:
    """The loader's decisions per CPU-second over a dataset (best of three passes)."""
    dataset = open_dataset(folder)
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        decisions = sum(len(b) for b in dataset.batches(batch))
        best = min(best, time.process_time() - start)
    return {"decisions": decisions, "cpu_seconds": best, "decisions_per_cpu_s": decisions / best}


def formats(folder: Path) -> dict[str, dict[str, float]]:
    """Bytes per deal and CPU-milliseconds to read back, per file format (best of five reads)."""
    import pyarrow.feather as feather
    import pyarrow.parquet as pq

    records = open_dataset(folder).records()
    table = records.to_table()
    kinds = {
        "parquet zstd": (lambda p: pq.write_table(table, p, compression="zstd"), pq.read_table),
        "parquet snappy": (lambda p: pq.write_table(table, p, compression="snappy"), pq.read_table),
        "arrow ipc zstd": (lambda p: feather.write_feather(table, p, compression="zstd"), feather.read_table),
        "arrow ipc lz4": (lambda p: feather.write_feather(table, p, compression="lz4"), feather.read_table),
    }
    out = {}
    for name, (write, read) in kinds.items():
        path = folder / "format.bin"
        write(path)
        best = float("inf")
        for _ in range(5):
            start = time.process_time()
            DealRecords.from_table(read(path), name)
            best = min(best, time.process_time() - start)
        out[name] = {"bytes_per_deal": path.stat().st_size / len(records), "read_ms": 1000 * best}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="australian", choices=sorted(PRESETS))
    parser.add_argument("--agent", nargs=2, action="append", metavar=("SPEC", "DEALS"),
                        help="an agent and its deals (repeatable; default: "
                             + ", ".join(f"{spec} {deals}" for spec, deals in DEFAULT_AGENTS) + ")")
    parser.add_argument("--batch", type=int, default=1024, help="the loader's batch size (default 1024)")
    parser.add_argument("--json", metavar="OUT", help="also write the figures as JSON")
    args = parser.parse_args()
    agents = [(spec, int(deals)) for spec, deals in args.agent] if args.agent else list(DEFAULT_AGENTS)
    if "heuristic" not in dict(agents):
        raise SystemExit("--agent heuristic DEALS is needed: the loader and formats read its dataset")
    results: dict = {"preset": args.preset, "generation": {}}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print(f"generation ({args.preset}, one process)   deals   CPU-s   deals/CPU-s   decisions   bytes/deal")
        for spec, deals in agents:
            row = results["generation"][spec] = generation(spec, args.preset, deals, folder)
            print(f"{spec:38s} {deals:7,d} {row['cpu_seconds']:7.1f} {row['deals_per_cpu_s']:13,.1f} "
                  f"{row['decisions']:11,d} {row['bytes_per_deal']:12.1f}")
        row = results["loader"] = loader(folder / "heuristic", args.batch)
        print(f"loader (heuristic dataset, batches of {args.batch}): {row['decisions']:,} decisions in "
              f"{row['cpu_seconds']:.2f} CPU-s: {row['decisions_per_cpu_s']:,.0f} decisions per CPU-second")
        results["formats"] = formats(folder / "heuristic")
        print("format            bytes/deal   read ms (the heuristic records)")
        for name, row in results["formats"].items():
            print(f"{name:16s} {row['bytes_per_deal']:11.1f} {row['read_ms']:9.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
