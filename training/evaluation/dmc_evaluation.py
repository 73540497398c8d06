"""The duplicate evaluations of a DMC run's greedy network (``training.algorithms.dmc``): a match
against an agent or the run's start, and the progress.csv columns of one evaluation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.dmc import DMCAgent, QNetwork
from five_hundred_env.rules import Rules
from training.evaluation.policy_evaluation import START, score_ci
from training.settings.dmc_config import DmcConfig


def evaluate(model: QNetwork, rules: Rules, opponent: str, deals: int, seed: int, label: str = "dmc",
             start: Path | None = None) -> Any:
    """A duplicate match of the greedy network (team A) against an agent spec (team B), or against
    ``start``: the network of the run's ``start.pt``."""
    from agents.registry import make_agent
    from training.evaluation.evaluate import duplicate_match
    from training.records.runs import preserved_rng

    with preserved_rng():
        agent = DMCAgent(rules, seed, model=model)
        agent.label = label  # type: ignore[attr-defined]  # the name reports give team A
        if opponent == START:
            if start is None:
                raise ValueError("the start opponent needs the run's start.pt")
            other = make_agent(str(start), rules, seed + 1)
            other.label = START  # type: ignore[attr-defined]  # the name reports give team B
        else:
            other = make_agent(opponent, rules, seed + 1)
        report = duplicate_match(rules, agent, other, deals, seed=seed)
    model.train()
    return report


def eval_columns(model: QNetwork, rules: Rules, config: DmcConfig, deals: int, start: Path,
                 label: str = "dmc") -> dict[str, Any]:
    """The progress.csv columns of one evaluation: against each of ``evaluation.opponents``, the
    mean points per deal with its 95% interval, the share of deals bid and of contracts made, and
    the report itself (``report_OPPONENT``)."""
    row: dict[str, Any] = {}
    for opponent in config.evaluation.opponents:
        report = evaluate(model, rules, opponent, deals, config.evaluation.seed, label, start)
        m, lo, hi = score_ci(report)
        contracts = report.to_dict()["contracts"]["A"]["all"]
        row.update({f"eval_{opponent}_mean": m, f"eval_{opponent}_lo": lo, f"eval_{opponent}_hi": hi,
                    f"eval_{opponent}_bid": contracts["share_of_deals"],
                    f"eval_{opponent}_made": contracts["made_rate"] if contracts["bid"] else 0.0,
                    f"report_{opponent}": report})
    return row
