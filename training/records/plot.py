"""Learning curves of a training run, from its ``progress.csv`` to a PNG (matplotlib, Agg backend).

``five-hundred plot runs/quickstart`` (or the CSV's path) writes ``runs/quickstart/curves.png``:
the duplicate evaluations against random and heuristic with their 95% intervals, the training
returns against each kind of opponent, the PPO losses and entropy, and the bid statistics; for a
Deep Monte-Carlo run, its evaluations, the share of deals its network bids and of its contracts
it makes in them, and its regression loss. A run
with the rollout improvement over the heuristic (``pretrain.rollouts``) also gets its curve: the
held-out gain per scored decision and the deviation rate, epoch by epoch, next to its
evaluations (after the warm starts, and final; against random, heuristic and the run's start).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

from five_hundred_env.files import check_output, write_atomic


def read_progress(path: str | Path, kind: str = "update") -> list[dict[str, float | str]]:
    """The rows of one kind (``update``, ``imitation``, ``final_eval``) of a ``progress.csv``,
    with numbers as floats (NaN where empty)."""
    rows = []
    with Path(path).open(newline="") as f:
        for raw in csv.DictReader(f):
            if raw.get("kind") != kind:
                continue
            row: dict[str, float | str] = {}
            for k, v in raw.items():
                try:
                    row[k] = float(v) if v not in ("", None) else math.nan
                except ValueError:
                    row[k] = v
            rows.append(row)
    return rows


def plot_run(run: str | Path, out: str | Path | None = None) -> Path:
    """Draw the learning curves of a run folder (or of a ``progress.csv``) to ``out`` (default:
    ``curves.png`` next to the CSV). Returns the PNG's path."""
    run = Path(run)
    csv_path = run / "progress.csv" if run.is_dir() else run
    if not csv_path.is_file():
        raise FileNotFoundError(f"no progress.csv at {csv_path}")
    rows = read_progress(csv_path)
    rollouts = read_progress(csv_path, "rollouts")
    dmc = read_progress(csv_path, "dmc")
    if not rows and not rollouts and not dmc:
        raise ValueError(f"{csv_path} holds no training updates yet")
    out = Path(out).expanduser() if out is not None else csv_path.with_name("curves.png")
    if not out.suffix:  # matplotlib's rule, kept so the path printed is the one written: a bare name is a PNG
        out = out.with_name(f"{out.name}.png")
    out = check_output(out, "--out", inputs=[csv_path])
    finals = read_progress(csv_path, "final_eval")
    starts = read_progress(csv_path, "eval")  # the warm-started policy, before any PPO update

    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    if dmc:  # a Deep Monte-Carlo run: its evaluations, what its network bids and makes, its regression
        fig, axes = plt.subplots(1, 3, figsize=(19, 4.5))
        _evaluation_panel(axes[0], dmc, [], finals)
        for opponent, colour in (("random", "tab:blue"), ("heuristic", "tab:red")):
            for name, style in (("bid", "o-"), ("made", "s--")):
                x, y = _series(dmc, f"eval_{opponent}_{name}")
                if x:
                    axes[1].plot(x, y, style, color=colour, label=f"vs {opponent}: share of deals bid" if name == "bid"
                                 else f"vs {opponent}: share of its contracts made")
        axes[1].set_ylim(-0.02, 1.02)
        axes[1].set_title("the network's contracts in the evaluations")
        axes[1].set_xlabel("learner steps")
        _legend(axes[1])
        _lines_panel(axes[2], dmc, ("value_loss", "return_learner"), "training: Q regression loss, mean return")
        fig.suptitle(f"{csv_path.parent.name}: {int(_column(dmc, 'global_step')[-1])} learner steps (DMC)")
        return _save(fig, out)
    if not rows:  # the warm starts alone (train.total_steps: 0)
        fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
        _rollout_panels(axes, rollouts, starts, finals)
        fig.suptitle(f"{csv_path.parent.name}: rollout improvement, no PPO")
        return _save(fig, out)

    steps = _column(rows, "global_step")
    fig, axes = plt.subplots(3 if rollouts else 2, 2, figsize=(13, 12.5 if rollouts else 8.5))
    if rollouts:
        _rollout_panels(axes[2], rollouts, starts, finals)
    _evaluation_panel(axes[0][0], rows, starts, finals)
    _lines_panel(axes[0][1], rows, ("return_vs_random", "return_vs_heuristic", "return_vs_snapshot"),
                 "training deals: learning side's result (points, smoothed)", strip="return_")
    axes[0][1].axhline(0, color="grey", lw=0.8)
    _lines_panel(axes[1][0], rows, ("policy_loss", "value_loss", "entropy", "approx_kl", "explained_variance"), "PPO")
    axes[1][0].set_yscale("symlog", linthresh=0.01)
    _lines_panel(axes[1][1], rows, ("bid_won_rate", "contract_made_rate", "nt_share", "misere_share", "thrown_in_rate"),
                 "bidding (learning sides)")
    axes[1][1].set_ylim(-0.02, 1.02)
    fig.suptitle(f"{csv_path.parent.name}: {int(steps[-1])} learner steps")
    return _save(fig, out)


Rows = list[dict[str, float | str]]


def _column(rows: Rows, name: str) -> list[float]:
    return [float(r.get(name, math.nan)) for r in rows]  # type: ignore[arg-type]


def _series(rows: Rows, name: str) -> tuple[list[float], list[float]]:
    """The steps and values of a column where it has a value."""
    pairs = [(s, v) for s, v in zip(_column(rows, "global_step"), _column(rows, name), strict=True) if not math.isnan(v)]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _lines_panel(ax: Any, rows: Rows, names: tuple[str, ...], title: str, strip: str = "") -> None:
    """Smoothed curves of some columns against the learner steps."""
    for name in names:
        x, y = _series(rows, name)
        if x:
            ax.plot(x, _smooth(y), label=name.replace(strip, "") if strip else name)
    ax.set_title(title)
    ax.set_xlabel("learner steps")
    _legend(ax)


def _evaluation_panel(ax: Any, rows: Rows, starts: Rows, finals: Rows) -> None:
    """The periodic duplicate evaluations (after the warm start first) with their intervals, and
    the final one as a star."""
    for opponent, colour in (("random", "tab:blue"), ("heuristic", "tab:red"), ("start", "tab:green")):
        x, m = _series(starts + rows, f"eval_{opponent}_mean")
        if x:
            _, lo = _series(starts + rows, f"eval_{opponent}_lo")
            _, hi = _series(starts + rows, f"eval_{opponent}_hi")
            ax.plot(x, m, "o-", color=colour, label=f"vs {opponent}")
            ax.fill_between(x, lo, hi, color=colour, alpha=0.2)
        for row in finals:  # the final evaluation (more deals): a star with its interval
            mean = float(row.get(f"eval_{opponent}_mean", math.nan))
            if not math.isnan(mean):
                low, high = float(row[f"eval_{opponent}_lo"]), float(row[f"eval_{opponent}_hi"])
                ax.errorbar([float(row["global_step"])], [mean], yerr=[[mean - low], [high - mean]], fmt="*", ms=12,
                            color=colour, capsize=4, label=f"final vs {opponent}")
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_title("duplicate evaluation: score difference per deal (95% CI)")
    ax.set_xlabel("learner steps")
    ax.set_ylabel("points per deal")
    _legend(ax)


def _save(fig: object, out: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.tight_layout()  # type: ignore[attr-defined]
    write_atomic(out, lambda f: fig.savefig(f, dpi=100, format=out.suffix[1:].lower()))  # type: ignore[attr-defined]
    plt.close(fig)  # type: ignore[arg-type]
    return out


def _rollout_panels(axes: object, rollouts: list[dict[str, float | str]], starts: list[dict[str, float | str]],
                    finals: list[dict[str, float | str]]) -> None:
    """Left: the rollout fit's held-out gain (± one standard error) and deviation rate by epoch.
    Right: the duplicate evaluations after the warm starts and at the end, with 95% intervals."""
    from matplotlib.ticker import MaxNLocator

    ax, right = axes[0], axes[1]  # type: ignore[index]
    epochs = list(range(1, len(rollouts) + 1))
    gain = [float(r["rollout_gain"]) for r in rollouts]
    se = [float(r["rollout_gain_se"]) for r in rollouts]
    ax.plot(epochs, gain, "o-", color="tab:green", label="held-out gain per scored decision")
    ax.fill_between(epochs, [g - e for g, e in zip(gain, se, strict=True)], [g + e for g, e in zip(gain, se, strict=True)],
                    color="tab:green", alpha=0.2)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel("epoch of the fit")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("points (vs the heuristic's choice)")
    ax.set_title("rollouts: held-out gain (± s.e.) and deviation rate")
    twin = ax.twinx()
    twin.plot(epochs, [float(r["rollout_deviation"]) for r in rollouts], "s--", color="tab:purple",
              label="deviates from the heuristic")
    twin.set_ylabel("share of scored decisions")
    twin.set_ylim(0, 1)
    lines = ax.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    ax.legend(lines, [str(line.get_label()) for line in lines], loc="upper left")
    labels, means, errs, colours = [], [], [], []
    for when, group in (("after warm start", starts), ("final", finals)):
        for row in group:
            for opponent, colour in (("random", "tab:blue"), ("heuristic", "tab:red"), ("start", "tab:green")):
                m = float(row.get(f"eval_{opponent}_mean", math.nan))
                if not math.isnan(m):
                    lo, hi = float(row[f"eval_{opponent}_lo"]), float(row[f"eval_{opponent}_hi"])
                    labels.append(f"{when}\nvs {opponent}")
                    means.append(m)
                    errs.append((m - lo, hi - m))
                    colours.append(colour)
    if means:
        x = list(range(len(means)))
        right.bar(x, means, color=colours, alpha=0.6)
        right.errorbar(x, means, yerr=[[e[0] for e in errs], [e[1] for e in errs]], fmt="none", ecolor="black", capsize=5)
        for xi, m in zip(x, means, strict=True):
            right.annotate(f"{m:+.1f}", (xi, m), ha="center", va="bottom" if m >= 0 else "top")
        right.set_xticks(x, labels)
        right.set_yscale("symlog", linthresh=20)
        right.set_ylim(top=max(max(means), 1.0) * 2.5)  # room for the labels above the bars
    right.axhline(0, color="grey", lw=0.8)
    right.set_title("duplicate evaluation: score difference per deal (95% CI)")


def _legend(ax: object) -> None:
    if ax.get_legend_handles_labels()[0]:  # type: ignore[attr-defined]
        ax.legend(loc="best")  # type: ignore[attr-defined]


def _smooth(ys: list[float], alpha: float = 0.1) -> list[float]:
    """An exponential moving average (the raw per-update values are noisy)."""
    out, acc = [], None
    for y in ys:
        acc = y if acc is None else (1 - alpha) * acc + alpha * y
        out.append(acc)
    return out
