"""Regenerate the README's quickstart block from a real run of the main job.

    python benchmarks/readme_quickstart.py              # run the main job, then rewrite the block
    python benchmarks/readme_quickstart.py --load 2     # the same beside two busy competitor processes
    python benchmarks/readme_quickstart.py --log FILE   # rewrite the block from a saved run's output

The block between the ``quickstart-block`` markers in README.md is replaced by the summary of the
run's final evaluation (each opponent's score difference, the verdict, the steps) and a line stating
the wall-clock, the CPU time, the machine (cores) and how loaded it was (the load average when the
run started and ended), so the README's figures always come from the command shown beside them.

The same rewrite stores, in tests/quickstart_tiny.txt, the final tables of a tiny run of the same
config (:data:`TINY_OVERRIDES`, about half a CPU-minute) and the sha256 of the README block.
tests/test_quickstart_block.py runs the tiny run again and compares: when the code moves under the
block (the same command would now print other tables), the test fails and says to run this script.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

from competitors import busy_competitors  # benchmarks/competitors.py, beside this script

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
START, END = "<!-- quickstart-block:start -->", "<!-- quickstart-block:end -->"
COMMAND = ["five-hundred", "train", "configs/quickstart.yaml"]
STORED_TINY = ROOT / "tests" / "quickstart_tiny.txt"
# The same config at a budget the test suite affords: every phase runs (self-play under the curriculum
# and after it, the final evaluation against each opponent), each a few seconds.
TINY_OVERRIDES = ["train.total_steps=12000", "train.num_envs=16", "train.batch_size=2000", "train.minibatch_size=500",
                  "curriculum.last_bidder_bids_steps=8000", "curriculum.trick_reward_steps=8000",
                  "network.hidden_sizes=[32,32]", "evaluation.interval=0", "evaluation.final_deals=16",
                  "checkpoint.interval=1000000", "logging.tensorboard=false", "logging.progress=false",
                  "logging.run_name=quickstart_tiny"]
SUMMARY_LINES = ("== ", "score difference per deal", "learning:", "trained ")


def final_tables(output: str) -> str:
    """The run's final evaluation: from the first ``== … vs … ==`` header to the end, without
    progress-bar lines."""
    lines = [line for line in output.splitlines() if "\r" not in line and "it/s" not in line]
    for i, line in enumerate(lines):
        if re.match(r"^== .* vs .* ==$", line):
            return "\n".join(lines[i:]).strip("\n")
    raise SystemExit("no final evaluation table (a line '== A vs B ==') in the run's output")


def summary(tables: str) -> str:
    """The lines of the final evaluation a reader compares: each opponent's header and score difference,
    the verdict on learning, and the steps trained."""
    return "\n".join(line for line in tables.splitlines() if line.startswith(SUMMARY_LINES))


def tiny_run_tables() -> str:
    """The final tables of the tiny run (its timings left out: only what the code decides)."""
    with tempfile.TemporaryDirectory() as folder:
        proc = subprocess.run([sys.executable, "-m", "training.cli", "train", "configs/quickstart.yaml",
                               *TINY_OVERRIDES, f"logging.dir={folder}"], cwd=ROOT, capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    if proc.returncode != 0:
        raise SystemExit(f"the tiny run failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    tables = final_tables(proc.stdout).replace(folder, "RUNS")
    return re.sub(r"^(trained \d+ (?:learner )?steps) in .*$", r"\1", tables, flags=re.M)


def block_digest(text: str) -> str:
    """The sha256 of the README's quickstart block (between the markers)."""
    return hashlib.sha256(text.split(START, 1)[1].split(END, 1)[0].encode()).hexdigest()


def store_tiny_tables() -> None:
    """Record the tiny run's tables beside the digest of the README block they were made with."""
    STORED_TINY.write_text(f"readme-block-sha256: {block_digest(README.read_text())}\n{tiny_run_tables()}\n")


def run_main_job(extra: list[str], log: Path, load: int) -> tuple[str, str]:
    """Run the main job (beside ``load`` busy competitor processes); return its output and a line
    describing how long it took and where."""
    load_start = os.getloadavg()[0]
    with busy_competitors(load) if load else nullcontext():
        started = time.perf_counter()
        proc = subprocess.run([*COMMAND, "--overwrite", *extra], cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - started
    load_end = os.getloadavg()[0]
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    log.write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        raise SystemExit(f"the main job failed (exit {proc.returncode}); its output is in {log}")
    minutes, seconds = divmod(round(wall), 60)
    cpu = usage.ru_utime + usage.ru_stime
    command = "python benchmarks/readme_quickstart.py" + (f" --load {load}" if load else "")
    beside = f", beside {load} busy competitor processes" if load else ""
    timing = (f"measured {datetime.date.today().isoformat()} by `{command}`: "
              f"{minutes} min {seconds:02d} s wall-clock, {cpu / 60:.1f} CPU-minutes, on {os.cpu_count()} cores{beside} "
              f"(load average {load_start:.1f} at the start, {load_end:.1f} at the end)")
    return proc.stdout, timing


def rewrite_readme(tables: str, timing: str) -> None:
    text = README.read_text()
    if START not in text or END not in text:
        raise SystemExit(f"README.md has no {START} … {END} markers")
    head, rest = text.split(START, 1)
    _old, tail = rest.split(END, 1)
    block = f"{START}\n```\n$ {' '.join(COMMAND)}\n…\n{summary(tables)}\n```\n\n{timing}.\n{END}"
    README.write_text(head + block + tail)
    store_tiny_tables()


def main() -> int:
    parser = argparse.ArgumentParser(description="Regenerate the README's quickstart block.")
    parser.add_argument("--log", type=Path, help="use this saved output of the main job instead of running it")
    parser.add_argument("--load", type=int, default=0, metavar="N",
                        help="run the main job beside N busy competitor processes (a loop on a core each)")
    parser.add_argument("--timing", default="", help="with --log: the timing sentence to print under the block")
    parser.add_argument("overrides", nargs="*", help="KEY=VALUE overrides passed to the run (none for the README)")
    args = parser.parse_args()
    if args.log:
        output, timing = args.log.read_text(), args.timing or f"from the saved output {args.log.name}"
    else:
        (ROOT / "runs").mkdir(exist_ok=True)
        output, timing = run_main_job(args.overrides, ROOT / "runs" / "quickstart.log", args.load)
    rewrite_readme(final_tables(output), timing)
    print(timing)
    return 0


if __name__ == "__main__":
    sys.exit(main())
