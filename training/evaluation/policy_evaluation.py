"""A network's greedy policy in a duplicate match, against an agent spec or the run's start: the
evaluations of PPO runs (after the warm starts, during training, the final one) and of expert
iteration, both of which import it from here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from agents.dmc import DMCAgent, QNetwork
from agents.neural import NeuralAgent, load_agent
from agents.registry import make_agent
from five_hundred_env.rules import Rules
from training.records.runs import preserved_rng

START, START_NAME = "start", "start.pt"
"""The opponent that is the run's own start, and its file in the run folder."""


def evaluate_policy(model: Any, rules: Rules, opponent: str, deals: int, seed: int, label: str | None = None,
                    start: Path | None = None, games: int = 0) -> Any:
    """A duplicate match of the greedy policy (a policy network's or a :class:`QNetwork`'s: team A,
    named ``label``) against an agent (team B):
    an agent spec, or ``start``, the greedy network of the run's ``start`` checkpoint; ``games``
    games to 500 besides the ``deals`` boards."""
    from training.evaluation.evaluate import duplicate_match

    with preserved_rng(), torch.inference_mode():  # building a network draws from torch's generator
        other = _start_agent(start, rules, seed + 1) if opponent == START else make_agent(opponent, rules, seed + 1)
        agent = (DMCAgent(rules, seed, model=model) if isinstance(model, QNetwork)
                 else NeuralAgent(rules, seed, model=model, greedy=True))
        if label:
            agent.label = label  # type: ignore[attr-defined]  # the name reports give team A
        report = duplicate_match(rules, agent, other, deals, seed=seed, games=games)
    model.train()
    return report


def _start_agent(start: Path | None, rules: Rules, seed: int) -> NeuralAgent:
    if start is None:
        raise ValueError("the start opponent needs the run's start.pt")
    agent = load_agent(start, rules, seed, greedy=True)
    agent.label = START  # type: ignore[attr-defined]  # the name reports give team B
    return agent


def score_ci(report: Any) -> tuple[float, float, float]:
    """The mean score difference per deal of a report and its 95% interval."""
    d = report.to_dict()["score_diff_per_deal"]
    return float(d["mean"]), float(d["ci95"][0]), float(d["ci95"][1])
