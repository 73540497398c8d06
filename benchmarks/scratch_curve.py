"""The tabula-rasa recipe's learning curve against CPU-hours, beside the standard algorithms' baselines.

    python benchmarks/scratch_curve.py runs/scratch_australian --out docs/scratch_curve.png

Reads the run's ``progress.csv`` (the ``eval_*`` columns its periodic duplicate evaluations wrote:
the score per deal against random and the heuristic with their 95% intervals, the share of the deals
the network bid and the share of its contracts it made against each) and draws them against the
training CPU-hours (``cpu_s``: the training process's CPU time, the evaluations left out). The
standard algorithms' curves of ``--baselines`` (benchmarks/baselines.py's JSON: PPO, DMC,
MaskablePPO, RLlib's PPO from a random start) are drawn on the same axes. Prints the curve as a
Markdown table (the one docs/baselines.md carries).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from five_hundred_env.files import check_output, write_atomic
from training.records.plot import read_progress

ROOT = Path(__file__).resolve().parent.parent


def curve(run: Path) -> list[dict[str, float]]:
    """The evaluation points of a DMC run: training CPU-hours, learner steps and the ``eval_*`` columns."""
    rows = [r for r in read_progress(run / "progress.csv", "dmc")
            if not math.isnan(float(r.get("eval_heuristic_mean", math.nan)))]
    return [{"cpu_hours": float(r["cpu_s"]) / 3600, "steps": float(r["global_step"]),
             **{k: float(v) for k, v in r.items() if k.startswith("eval_")}} for r in rows]


def table(points: list[dict[str, float]]) -> str:
    """The curve as Markdown: a row per evaluation."""
    lines = ["| CPU-hours | learner steps | vs random | vs heuristic | bid (vs heuristic) | made (vs heuristic) |",
             "|---|---|---|---|---|---|"]
    for p in points:
        lines.append(f"| {p['cpu_hours']:.2f} | {p['steps'] / 1e6:.0f} M | {p['eval_random_mean']:+.0f} | "
                     f"{p['eval_heuristic_mean']:+.0f} [{p['eval_heuristic_lo']:+.0f}, {p['eval_heuristic_hi']:+.0f}] | "
                     f"{p['eval_heuristic_bid']:.0%} | {p['eval_heuristic_made']:.0%} |")
    return "\n".join(lines)


def plot(points: list[dict[str, float]], baselines: list[dict], out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    hours = [p["cpu_hours"] for p in points]
    fig, (score, contracts) = plt.subplots(1, 2, figsize=(14, 5))
    for opponent, colour in (("random", "tab:blue"), ("heuristic", "tab:red")):
        score.plot(hours, [p[f"eval_{opponent}_mean"] for p in points], "o-", color=colour, label=f"scratch vs {opponent}")
        score.fill_between(hours, [p[f"eval_{opponent}_lo"] for p in points], [p[f"eval_{opponent}_hi"] for p in points],
                           color=colour, alpha=0.15)
    for run in baselines:
        x = [c["cpu_minutes"] / 60 for c in run["curve"]]
        score.plot(x, [c["heuristic"][0] for c in run["curve"]], "x:",
                   label=f"{run['algorithm']} (seed {run['seed']}) vs heuristic")
    score.axhline(0, color="grey", lw=0.8)
    score.set_xscale("log")  # minutes of the baselines beside hours of the recipe
    score.set_xlabel("training CPU-hours")
    score.set_ylabel("points per deal (duplicate, 95% CI)")
    score.set_title("from a random start, no heuristic in training")
    score.legend(fontsize=7)
    contracts.plot(hours, [p["eval_heuristic_bid"] for p in points], "o-", color="tab:purple", label="share of deals bid")
    contracts.plot(hours, [p["eval_heuristic_made"] for p in points], "s--", color="tab:green",
                   label="share of its contracts made")
    contracts.set_ylim(-0.02, 1.02)
    contracts.set_xlabel("training CPU-hours")
    contracts.set_title("scratch against the heuristic: its contracts")
    contracts.legend()
    fig.tight_layout()
    write_atomic(out, lambda f: fig.savefig(f, dpi=100, format="png"))
    plt.close(fig)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="the recipe's run folder (runs/scratch_australian)")
    parser.add_argument("--out", type=Path, default=Path("runs/scratch_curve.png"), help="the PNG to write")
    parser.add_argument("--baselines", type=Path, default=ROOT / "docs" / "baselines_australian.json",
                        help="benchmarks/baselines.py's JSON of the standard algorithms (drawn alongside)")
    args = parser.parse_args(argv)
    points = curve(args.run)
    if not points:
        parser.error(f"{args.run / 'progress.csv'} holds no evaluation yet")
    baselines = json.loads(args.baselines.read_text())["runs"] if args.baselines.is_file() else []
    out = plot(points, baselines, check_output(args.out, "--out"))
    print(table(points))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
