"""``five-hundred export``: its options and its run (a checkpoint's policy file, an ensemble's, or a
DMC network's: agents.policy_files, agents.ensemble, agents.dmc)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_export_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``five-hundred export``."""
    parser.add_argument("checkpoints", metavar="CHECKPOINT", nargs="+",
                        help="a training checkpoint, e.g. runs/NAME/final.pt (or a policy file); several: their "
                             "ensemble (agents/ensemble.py), which needs --threshold if they take advice")
    parser.add_argument("out", metavar="OUT.pt", help="the policy file to write")
    parser.add_argument("--dtype", choices=("float16", "float32"), default="float16",
                        help="the precision the weights are stored in (default float16; they play in float32)")
    parser.add_argument("--note", default="", help="free text kept in the file's provenance")
    parser.add_argument("--threshold", metavar="POINTS",
                        help="a regression-fitted network's threshold (its advice weight, in points) instead of the "
                             "one its fit chose on the held-out deals: it leaves the heuristic's choice only where an "
                             "estimated advantage beats it by more; KIND=POINTS,... sets one per decision kind (bid, "
                             "discard, nominate, play) of a network fitted per kind, or of an ensemble, whose kinds not named "
                             "keep the heuristic's choice; each kind once, from 0 to 10000 points (10000: always the "
                             "heuristic's) (docs/expert_iteration.md, \"Fit\")")


def _thresholds(text: str) -> float | dict[str, float]:
    """``--threshold``'s points as advice weights: ``30``, or ``bid=20,play=30`` (one per kind,
    each kind once), each from 0 to the points of :data:`agents.neural.NEVER`."""
    from agents.neural import NEVER
    from training.rollouts.exit_rows import RESULT_SCALE

    try:
        pairs = [part.split("=", 1) for part in text.split(",")] if "=" in text else [["", text]]
        points = {kind.strip(): float(value) for kind, value in pairs}
    except ValueError:
        raise ValueError(f"--threshold: expected POINTS or KIND=POINTS,KIND=POINTS, got {text!r}") from None
    if len(points) < len(pairs):
        kinds = [kind.strip() for kind, _ in pairs]
        twice = sorted({kind for kind in kinds if kinds.count(kind) > 1})
        raise ValueError(f"--threshold: {' and '.join(twice)} given twice in {text!r}; give each kind once")
    most = NEVER * RESULT_SCALE
    for kind, value in points.items():
        if not 0 <= value <= most:  # NaN too
            raise ValueError(f"--threshold: {kind + '=' if kind else ''}{value:g} is not from 0 to {most:g} points "
                             f"({most:g}: always the heuristic's choice)")
    return {kind: value / RESULT_SCALE for kind, value in points.items()} if "=" in text else points[""] / RESULT_SCALE


def _is_dmc(path: str) -> bool:
    """Whether ``path`` is a file written by DMC training (a Q-network: exported without a threshold)."""
    if not Path(path).is_file():
        return False
    from agents.dmc import is_dmc_file

    return is_dmc_file(path)


def run_export_command(args: argparse.Namespace) -> int:
    """Write the policy file of a checkpoint (the actor alone, to ship and play:
    agents.policy_files.export_policy), or of the ensemble of several (agents.ensemble.ensemble_policy)."""
    from agents.policy_files import export_policy
    from five_hundred_env.files import check_output

    sources = args.checkpoints
    out = check_output(args.out, "OUT", inputs=sources)
    if len(sources) == 1 and args.threshold is None and _is_dmc(sources[0]):  # a Q-network: no threshold to set
        from agents.dmc import export_dmc_policy

        provenance = export_dmc_policy(sources[0], out, dtype=args.dtype, note=args.note)
        budget = provenance["budget"]
        print(f"wrote {out} ({out.stat().st_size:,} bytes, {provenance['dtype']}; a DMC network of "
              f"{budget['global_step'] or 0:,} learner steps; sha256 of the source {provenance['sha256'][:16]}...)")
        return 0
    weight = None if args.threshold is None else _thresholds(args.threshold)
    if len(sources) > 1:
        from agents.ensemble import ensemble_policy

        provenance = ensemble_policy(sources, out, weight, dtype=args.dtype, note=args.note)
        what = f"the ensemble of {len(sources)} networks"
    else:
        provenance = export_policy(sources[0], out, dtype=args.dtype, note=args.note, advice_weight=weight)
        what = f"the checkpoint has {Path(sources[0]).stat().st_size:,}"
    print(f"wrote {out} ({out.stat().st_size:,} bytes, {provenance['dtype']}; {what}; "
          f"sha256 of the source {provenance['sha256'][:16]}...; {provenance['flushed_to_zero']:,} weights too "
          f"small for {provenance['dtype']} stored as 0)")
    return 0
