"""The networks that ship with the package: one policy file per preset, ``<preset>.pt`` here.

Every preset's is a network that makes every decision itself, with no advice input, fitted to the
search's data (``five-hundred train configs/distill_<preset>.yaml``, docs/distill.md). The files they
imitated (the heuristic with learned bids, and french_46's advised policy-gradient network) are
kept in ``stages/``; docs/agents.md, "Pretrained agents".
The files are package data, read through :mod:`importlib.resources`, so they load from an
installed wheel as from a source tree, with no training. This module imports no torch: only
:func:`load_pretrained` does, when it loads one.
"""

from __future__ import annotations

from importlib.resources import as_file, files
from importlib.util import find_spec
from typing import TYPE_CHECKING

from five_hundred_env.rules import Rules, make_rules

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    from agents.base import Agent
    from agents.neural import NeuralAgent

PRETRAINED_DIR: Traversable = files(__name__)
"""Where the policy files lie (the package's own folder, or its place inside a wheel)."""

SUFFIX = ".pt"


def pretrained_path(preset: str) -> Traversable:
    """The policy file of ``preset`` (which may not exist: see :func:`available_presets`)."""
    return PRETRAINED_DIR.joinpath(f"{preset}{SUFFIX}")


def available_presets() -> list[str]:
    """The presets that have a shipped network, sorted."""
    return sorted(entry.name[: -len(SUFFIX)] for entry in PRETRAINED_DIR.iterdir()
                  if entry.name.endswith(SUFFIX) and entry.is_file())


def strongest_plain_agent(rules: Rules) -> str:
    """The spec of the strongest agent that plays without search for these rules: ``"pretrained"``
    where the preset ships a network, torch is installed and the rules are the preset's own (the
    options the network was trained on), else ``"heuristic"``. The search agent's default base."""
    own = rules.preset in available_presets() and rules == make_rules(rules.preset)
    return "pretrained" if own and find_spec("torch") is not None else "heuristic"


SCRATCH_DIR: Traversable = PRETRAINED_DIR.joinpath("scratch")
"""The networks learned from a random start with no heuristic in their training (``scratch/<preset>.pt``:
``five-hundred train configs/scratch_<preset>.yaml``, then ``five-hundred export``)."""


def scratch_presets() -> list[str]:
    """The presets that ship a ``scratch`` network, sorted."""
    if not SCRATCH_DIR.is_dir():
        return []
    return sorted(entry.name[: -len(SUFFIX)] for entry in SCRATCH_DIR.iterdir()
                  if entry.name.endswith(SUFFIX) and entry.is_file())


def scratch_path(preset: str) -> Traversable:
    """The ``scratch`` network of ``preset`` (which may not exist: see :func:`scratch_presets`)."""
    return SCRATCH_DIR.joinpath(f"{preset}{SUFFIX}")


def load_scratch(rules: Rules | str, seed: int | None = None) -> Agent:
    """The ``scratch`` network of the rules' preset, greedy in its Q-values: it makes every decision
    itself (no heuristic, no search). A preset without one is a ``ValueError`` naming those that have one."""
    rules = make_rules(rules) if isinstance(rules, str) else rules
    path = scratch_path(rules.preset)
    if not path.is_file():
        have = scratch_presets()
        raise ValueError(f"no scratch network for the {rules.preset!r} preset: "
                         + (f"the presets with one are {', '.join(have)}" if have else "none is installed"))
    from agents.dmc import load_checkpoint_agent  # torch, only now

    with as_file(path) as file:
        agent = load_checkpoint_agent(file, rules=rules, seed=seed)
    agent.label = "scratch"  # type: ignore[attr-defined]  # the name reports give it
    return agent


def load_pretrained(rules: Rules | str, seed: int | None = None) -> NeuralAgent:
    """The shipped network of the rules' preset, as a greedy :class:`~agents.neural.NeuralAgent`
    for these rules. It was trained on the preset's own options: other options load it with a
    ``UserWarning`` naming them. A preset without a network is a ``ValueError`` naming the
    presets that have one."""
    rules = make_rules(rules) if isinstance(rules, str) else rules
    path = pretrained_path(rules.preset)
    if not path.is_file():
        have = available_presets()
        raise ValueError(f"no pretrained network for the {rules.preset!r} preset: "
                         + (f"the presets with one are {', '.join(have)}" if have else "none is installed"))
    from agents.neural import load_agent  # torch, only now

    with as_file(path) as file:  # a real file even when the package is zipped
        return load_agent(file, rules=rules, seed=seed)


__all__ = ["PRETRAINED_DIR", "SCRATCH_DIR", "available_presets", "load_pretrained", "load_scratch", "pretrained_path",
           "scratch_presets", "strongest_plain_agent"]
