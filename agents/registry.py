"""Agents by name: ``random``, ``heuristic``, or the path of a trained checkpoint.

The CLI (``five-hundred evaluate``, ``five-hundred play``) and the evaluator build agents from these
specs. Checkpoints are loaded through :func:`agents.neural.load_agent`, imported only when a path
is given, so ``random`` and ``heuristic`` never import torch.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

from agents.base import Agent, RandomAgent
from agents.heuristic import HeuristicAgent
from five_hundred_env.rules import Rules, make_rules

BUILTIN_AGENTS: dict[str, Callable[[Rules, int | None], Agent]] = {
    "random": RandomAgent,
    "heuristic": HeuristicAgent,
}
"""The agents known by name; anything else is taken as a checkpoint path."""


def make_agent(spec: str, rules: Rules | str, seed: int | None = None) -> Agent:
    """The agent a spec names: ``"random"``, ``"heuristic"``, or a trained checkpoint's path.

    Raises ``ValueError`` for a spec that is neither a known name nor an existing file, and
    ``RuntimeError`` when a checkpoint is given but the neural agents (``agents.neural``, torch)
    are not available.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an agent spec must be a name or a checkpoint path, got {spec!r}")
    rules = make_rules(rules) if isinstance(rules, str) else rules
    key = spec.strip().lower()
    if key in BUILTIN_AGENTS:
        return BUILTIN_AGENTS[key](rules, seed)
    path = Path(spec).expanduser()
    if not path.is_file():
        known = ", ".join(sorted(BUILTIN_AGENTS))
        raise ValueError(f"unknown agent {spec!r}: expected one of {known} or the path of a trained checkpoint")
    try:
        neural = importlib.import_module("agents.neural")
    except ImportError as e:  # no agents/neural.py yet, or no torch installed
        raise RuntimeError(
            f"cannot load the checkpoint {spec!r}: the neural agents are not available ({e}); "
            "install the training extra (pip install -e '.[train]')"
        ) from e
    load_agent = getattr(neural, "load_agent", None)
    if load_agent is None:
        raise RuntimeError(f"cannot load the checkpoint {spec!r}: agents.neural has no load_agent()")
    return load_agent(str(path), rules=rules, seed=seed)


def agent_factory(spec: str) -> Callable[[Rules, int | None], Agent]:
    """A factory ``f(rules, seed) -> Agent`` for a spec (what :func:`training.evaluate.duplicate_match` takes),
    labelled with the spec so reports name the agent."""

    def factory(rules: Rules, seed: int | None = None) -> Agent:
        return make_agent(spec, rules, seed)

    factory.label = Path(spec).name if spec.lower() not in BUILTIN_AGENTS else spec.lower()  # type: ignore[attr-defined]
    return factory


__all__ = ["BUILTIN_AGENTS", "agent_factory", "make_agent"]
