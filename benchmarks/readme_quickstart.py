"""Regenerate the README's quickstart block from a real run of the main job.

    python benchmarks/readme_quickstart.py              # run the main job, then rewrite the block
    python benchmarks/readme_quickstart.py --load 2     # the same beside two busy competitor processes
    python benchmarks/readme_quickstart.py --log FILE   # rewrite the block from a saved run's output

The block between the ``quickstart-block`` markers in README.md is replaced by the end of the run's
output (its final evaluation tables) and a line stating the wall-clock, the CPU time, the machine
(cores) and how loaded it was (the load average when the run started and ended), so the README's
figures always come from the command shown beside them.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import resource
import subprocess
import sys
import time
from contextlib import nullcontext
from pathlib import Path

from competitors import busy_competitors  # benchmarks/competitors.py, beside this script

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
START, END = "<!-- quickstart-block:start -->", "<!-- quickstart-block:end -->"
COMMAND = ["five-hundred", "train", "configs/quickstart.yaml"]


def final_tables(output: str) -> str:
    """The run's final evaluation: from the first ``== … vs … ==`` header to the end, without
    progress-bar lines."""
    lines = [line for line in output.splitlines() if "\r" not in line and "it/s" not in line]
    for i, line in enumerate(lines):
        if re.match(r"^== .* vs .* ==$", line):
            return "\n".join(lines[i:]).strip("\n")
    raise SystemExit("no final evaluation table (a line '== A vs B ==') in the run's output")


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
    block = f"{START}\n```\n$ {' '.join(COMMAND)}\n…\n{tables}\n```\n\n{timing}.\n{END}"
    README.write_text(head + block + tail)


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
