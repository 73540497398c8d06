"""The one agent registry: agents by name, trained checkpoints and SB3 models by path.

A *spec* is what every command and function that takes an agent accepts (``five-hundred evaluate``,
``five-hundred play --opponents``, :func:`training.evaluation.evaluate.duplicate_match` through
:func:`agent_factory`, the training opponents through :func:`make_agent`):

* a registered name: ``random``, ``heuristic``, ``pimc`` (search), ``pretrained`` (the shipped
  network of the rules' preset, :mod:`agents.pretrained`), ``scratch`` (the shipped network learned
  from a random start with no heuristic in its training), or any name given to :func:`register_agent`;
* the path of a trained checkpoint or policy file (loaded by :func:`agents.neural.load_agent`);
* the path of a ``.zip`` saved by sb3-contrib's ``MaskablePPO`` (wrapped in :class:`SB3Agent`),
  read as data: the policy's weights and architecture, never the objects pickled in the file
  (:mod:`agents.sb3_policy`); ``trusted:PATH.zip`` loads it through ``MaskablePPO.load``
  instead, which runs the file's pickled code — only for a file you trust, and needed only for a
  policy other than the default ``MlpPolicy`` (the refusal says so);
* ``NAME:key=value,key=value``: the registered agent ``NAME`` built with those keyword arguments,
  e.g. ``pimc:worlds=8,seconds=0.05``. A value reads as an int, a float, ``true``/``false``,
  ``none``, or else as the string itself; a keyword the agent's factory does not take is refused,
  naming those it takes;
* ``SPEC@KINDS``, ``KINDS`` a ``+``-joined subset of ``bid``, ``discard``, ``nominate``, ``play``:
  ``SPEC`` makes those decisions and the heuristic all the others
  (:class:`agents.split.DecisionSplitAgent`), e.g. ``pretrained@play`` or ``pimc:worlds=4@play``.

A spec with options or kinds is labelled in every report as written. torch (and sb3-contrib, for a
``trusted:`` model) are imported only when a network or an SB3 model is loaded, so ``random`` and
``heuristic`` never import them.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from agents.base import Agent, RandomAgent, parse_kinds
from agents.heuristic import HeuristicAgent
from agents.pretrained import load_pretrained, load_scratch
from agents.search import PIMCAgent
from agents.search.pimc import set_spec_resolver
from agents.split import DecisionSplitAgent
from five_hundred_env import wrappers
from five_hundred_env.actions import ActionTable
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules, make_rules

BuildAgent = Callable[[Rules, "int | None"], Agent]
"""Anything that builds an agent from the rules and a seed: an :class:`Agent` subclass or a function."""

SB3_SUFFIX = ".zip"
TRUSTED_PREFIX = "trusted:"
"""``trusted:PATH.zip`` loads an SB3 model with sb3-contrib, running the code pickled in it
(:func:`load_sb3_model`); a bare ``PATH.zip`` is read as data."""
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.:+-]*$")
_KEYWORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


class AgentUnavailableError(RuntimeError):
    """An agent needs a package that is not installed (torch for checkpoints, sb3-contrib for SB3 models)."""


class AgentFactory:
    """``factory(rules, seed) -> Agent`` for one spec; ``label`` is the agent's name in every report."""

    def __init__(self, label: str, build: BuildAgent) -> None:
        self.label = label
        self._build = build

    def __call__(self, rules: Rules | str, seed: int | None = None) -> Agent:
        rules = make_rules(rules) if isinstance(rules, str) else rules
        agent = self._build(rules, seed)
        if not isinstance(agent, Agent):
            raise ValueError(f"the factory of agent {self.label!r} returned {type(agent).__name__}, not an Agent")
        return agent

    def __repr__(self) -> str:
        return f"AgentFactory({self.label!r})"

    def keywords(self) -> list[str] | None:
        """The keyword arguments the factory takes after the rules and the seed (``None``: any)."""
        try:
            parameters = list(inspect.signature(self._build).parameters.values())
        except (TypeError, ValueError):  # no signature to read: it takes none we can know of
            return []
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
            return None
        rules_and_seed = [p for p in parameters if p.kind in _POSITIONAL][:2]
        return [p.name for p in parameters if p not in rules_and_seed
                and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]

    def with_options(self, label: str, options: dict[str, Any]) -> AgentFactory:
        """This factory with keyword arguments, labelled ``label``; a keyword it does not take is
        refused, naming those it takes."""
        accepted = self.keywords()
        unknown = [key for key in options if accepted is not None and key not in accepted]
        if unknown:
            takes = f"it takes {', '.join(accepted)}" if accepted else "it takes none"
            raise ValueError(f"agent spec {label!r}: {self.label!r} has no option {', '.join(map(repr, unknown))} ({takes})")
        build = self._build

        def build_with_options(rules: Rules, seed: int | None) -> Agent:
            return build(rules, seed, **options)

        return AgentFactory(label, build_with_options)


class SB3Agent(Agent):
    """A Stable-Baselines3 model as an agent: ``model.predict`` on the observation vector with the
    action mask, deterministically. The model must have been trained on this preset's spaces
    (e.g. through :class:`five_hundred_env.SingleAgentEnv`)."""

    name = "sb3"

    def __init__(self, rules: Rules | str = "australian", seed: int | None = None, *, model: Any) -> None:
        super().__init__(rules, seed)
        wanted_obs, wanted_actions = (ObservationEncoder(self.rules).size,), len(ActionTable(self.rules))
        obs_shape = tuple(getattr(model.observation_space, "shape", ()) or ())
        num_actions = getattr(model.action_space, "n", None)
        if obs_shape != wanted_obs or num_actions != wanted_actions:
            raise ValueError(f"the SB3 model takes observations {obs_shape} and {num_actions} actions; the "
                             f"{self.rules.preset} preset has {wanted_obs} and {wanted_actions}")
        self.model = model

    def act(self, observation: dict[str, Any]) -> int:
        mask = np.asarray(observation["action_mask"]).astype(bool)
        if not mask.any():
            raise ValueError("no legal action in the mask: is it this agent's turn?")
        action, _state = self.model.predict(observation["observation"], action_masks=mask, deterministic=True)
        return int(action)


def load_sb3_model(path: str | os.PathLike[str], trusted: bool = False) -> Any:
    """A ``MaskablePPO`` ``.zip`` as a model to play: by default its policy read as data
    (:func:`agents.sb3_policy.read_sb3_policy`: the weights with ``weights_only=True``, never the
    file's pickled objects; needs torch only). ``trusted=True`` (the ``trusted:PATH`` spec) loads
    it with ``MaskablePPO.load`` (sb3-contrib, imported now) on the CPU, which runs code pickled
    in the file: only for files the user trusts."""
    if not trusted:
        _neural(f"the SB3 model {str(path)!r}")  # torch, or the message naming the extra
        from agents.sb3_policy import UntrustedModelError, read_sb3_policy

        try:
            return read_sb3_policy(path)
        except UntrustedModelError as e:
            raise ValueError(f"{e}: only if you trust the file, give the agent as {TRUSTED_PREFIX}{path}") from None
    try:
        from sb3_contrib import MaskablePPO
    except ImportError as e:
        raise AgentUnavailableError(f"cannot load the SB3 model {str(path)!r}: sb3-contrib is not installed ({e}); "
                                    "pip install sb3-contrib") from None
    try:
        return MaskablePPO.load(path, device="cpu")
    except Exception as e:  # sb3 raises many types for a foreign or damaged zip
        raise ValueError(f"{path} is not a loadable sb3-contrib MaskablePPO model: {type(e).__name__}: {e}") from None


def _sb3_builder(path: Path, trusted: bool = False) -> BuildAgent:
    model = None  # loaded once, on first use, and shared: predict(deterministic=True) keeps no state

    def build(rules: Rules, seed: int | None) -> Agent:
        nonlocal model
        if model is None:
            model = load_sb3_model(path, trusted)
        return SB3Agent(rules, seed, model=model)

    return build


def _neural(what: str) -> ModuleType:
    """:mod:`agents.neural`, imported now (with torch), to load ``what``."""
    try:
        return importlib.import_module("agents.neural")
    except ImportError as e:  # no torch installed
        raise AgentUnavailableError(f"cannot load {what}: the neural agents are not available ({e}); "
                                    "install the training extra (pip install -e '.[train]')") from e


def _checkpoint_builder(path: Path) -> BuildAgent:
    def build(rules: Rules, seed: int | None) -> Agent:
        _neural(f"the checkpoint {str(path)!r}")  # torch is there, or a clear error
        from agents.dmc import load_checkpoint_agent  # a DMC checkpoint, or the neural agents'

        return load_checkpoint_agent(str(path), rules=rules, seed=seed)

    return build


def _pretrained(rules: Rules, seed: int | None) -> Agent:
    """The shipped network of the rules' preset (:func:`agents.pretrained.load_pretrained`)."""
    _neural(f"the pretrained network of {rules.preset!r}")
    return load_pretrained(rules, seed)


def _scratch(rules: Rules, seed: int | None) -> Agent:
    """The shipped network learned from a random start (:func:`agents.pretrained.load_scratch`)."""
    _neural(f"the scratch network of {rules.preset!r}")
    return load_scratch(rules, seed)


def _path_builder(path: str | os.PathLike[str]) -> BuildAgent:
    """The builder of a checkpoint or SB3 model file (by its suffix), or of ``trusted:PATH.zip``;
    a missing file is refused now."""
    text = os.fspath(path)
    trusted = text.startswith(TRUSTED_PREFIX) and not Path(text).expanduser().is_file()
    file = Path(text[len(TRUSTED_PREFIX):] if trusted else text).expanduser()
    if not file.is_file():
        raise ValueError(f"{text!r} is not a file (expected a trained checkpoint or an SB3 {SB3_SUFFIX})")
    if file.suffix.lower() != SB3_SUFFIX:
        if trusted:
            raise ValueError(f"{text!r}: {TRUSTED_PREFIX} is for SB3 {SB3_SUFFIX} files only (checkpoints never run code)")
        return _checkpoint_builder(file)
    return _sb3_builder(file, trusted)


_REGISTRY: dict[str, AgentFactory] = {
    "random": AgentFactory("random", RandomAgent),
    "heuristic": AgentFactory("heuristic", HeuristicAgent),
    "pimc": AgentFactory("pimc", PIMCAgent),  # search at every kind of decision (agents/search, docs/search.md)
    "pretrained": AgentFactory("pretrained", _pretrained),  # the shipped networks (agents/pretrained, docs/agents.md)
    "scratch": AgentFactory("scratch", _scratch),  # learned from a random start, no heuristic (docs/scratch.md)
}
BUILTIN_AGENTS = ("random", "heuristic", "pimc", "pretrained", "scratch")
"""The names registered from the start (they cannot be unregistered)."""


def register_agent(name: str, factory: BuildAgent | str | os.PathLike[str] | Any, *, replace: bool = False) -> AgentFactory:
    """Register an agent under ``name`` (lower case; letters, digits and ``_ . : + -``), usable
    from then on wherever a spec is taken.

    ``factory`` is an :class:`Agent` subclass or a function ``f(rules, seed) -> Agent``; the path
    of a trained checkpoint or of an SB3 ``.zip``; or a loaded SB3 model (anything with
    ``predict``). A name already registered is refused unless ``replace=True``; a builtin name
    cannot be replaced. Returns the registered factory.
    """
    key = name.strip().lower() if isinstance(name, str) else ""
    if not _NAME.match(key):
        raise ValueError(f"an agent name is letters, digits and _ . : + - (no spaces or slashes), got {name!r}")
    if key in BUILTIN_AGENTS or (key in _REGISTRY and not replace):
        raise ValueError(f"agent {key!r} is already registered (pass replace=True to replace it; "
                         f"{', '.join(BUILTIN_AGENTS)} cannot be)")
    if isinstance(factory, (str, os.PathLike)):
        build = _path_builder(factory)
    elif hasattr(factory, "predict") and not isinstance(factory, type):
        model = factory

        def build(rules: Rules, seed: int | None) -> Agent:
            return SB3Agent(rules, seed, model=model)
    elif callable(factory):
        build = factory
    else:
        raise ValueError(f"cannot register {type(factory).__name__} as agent {key!r}: expected an Agent subclass, "
                         "a function (rules, seed) -> Agent, a checkpoint or SB3 .zip path, or an SB3 model")
    _REGISTRY[key] = AgentFactory(key, build)
    return _REGISTRY[key]


def unregister_agent(name: str) -> None:
    """Forget a name given to :func:`register_agent` (the builtin names stay)."""
    key = name.strip().lower()
    if key in BUILTIN_AGENTS:
        raise ValueError(f"the builtin agent {key!r} cannot be unregistered")
    if _REGISTRY.pop(key, None) is None:
        raise ValueError(f"no agent {name!r} is registered")


def registered_agents() -> list[str]:
    """The registered names, sorted."""
    return sorted(_REGISTRY)


def agent_factory(spec: str) -> AgentFactory:
    """The factory ``f(rules, seed) -> Agent`` of a spec (a registered name, a checkpoint or
    SB3 ``.zip`` path, ``NAME:key=value,...`` or ``SPEC@KINDS``; see the module docstring),
    labelled with the registered name, or with the spec as given.

    Raises ``ValueError`` for a spec that is neither a registered name nor an existing file, or
    whose options or kinds are malformed (one line naming the problem).
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an agent spec must be a name or a checkpoint path, got {spec!r}")
    text = spec.strip()
    if text.lower() in _REGISTRY:
        return _REGISTRY[text.lower()]
    if Path(text).expanduser().is_file() or _is_trusted_file(text):
        return AgentFactory(text, _path_builder(text))
    if "@" in text:
        return _split_factory(text)
    name, colon, options = _registered_prefix(text)
    if not colon:
        raise ValueError(f"unknown agent {spec!r}: expected one of {', '.join(registered_agents())}, "
                         f"or the path of a trained checkpoint or an SB3 {SB3_SUFFIX}")
    return _REGISTRY[name].with_options(text, parse_options(options, text))


set_spec_resolver(agent_factory)  # PIMCAgent's base and rollout take specs too (it cannot import this module)
wrappers.set_spec_builder(lambda spec, rules, seed: make_agent(spec, rules, seed))  # and SingleAgentEnv's opponents


def _is_trusted_file(text: str) -> bool:
    """Whether ``text`` is ``trusted:PATH`` with ``PATH`` an existing file."""
    return text.startswith(TRUSTED_PREFIX) and Path(text[len(TRUSTED_PREFIX):]).expanduser().is_file()


def _registered_prefix(text: str) -> tuple[str, str, str]:
    """``(name, ":", options)`` for the first ``:`` after a registered name (names may hold
    ``:`` themselves), or ``(text, "", "")``."""
    for at in (i for i, char in enumerate(text) if char == ":"):
        if text[:at].strip().lower() in _REGISTRY:
            return text[:at].strip().lower(), ":", text[at + 1:]
    return text, "", ""


def _split_factory(text: str) -> AgentFactory:
    """The factory of ``SPEC@KINDS`` (:class:`agents.split.DecisionSplitAgent`)."""
    inner_spec, _, kinds_text = text.rpartition("@")
    if not inner_spec.strip() or "@" in inner_spec:
        raise ValueError(f"agent spec {text!r}: expected SPEC@KINDS, one agent spec and one @")
    try:
        kinds = parse_kinds(kinds_text)
    except ValueError as e:
        raise ValueError(f"agent spec {text!r}: {e}") from None
    if not kinds:
        raise ValueError(f"agent spec {text!r}: no decision kind after the @")
    inner = agent_factory(inner_spec)

    def build(rules: Rules, seed: int | None) -> Agent:
        return DecisionSplitAgent(rules, seed, inner=inner(rules, seed), kinds=kinds)

    return AgentFactory(text, build)


def parse_value(text: str) -> int | float | bool | str | None:
    """An option's value: an int, a float, ``true``/``false``, ``none`` (any case), else the text."""
    word = text.strip()
    if word.lower() in ("true", "false", "none"):
        return {"true": True, "false": False, "none": None}[word.lower()]
    for number in (int, float):
        try:
            return number(word)
        except ValueError:
            pass
    return word


def parse_options(text: str, spec: str) -> dict[str, Any]:
    """The keyword arguments of ``key=value,key=value`` (``spec``, the whole spec, names the
    problem in the one-line error of anything else)."""
    options: dict[str, Any] = {}
    for item in text.split(","):
        key, equals, value = (part.strip() for part in item.partition("="))
        if not equals or not _KEYWORD.match(key) or not value:
            raise ValueError(f"agent spec {spec!r}: expected NAME:key=value,key=value, got {item.strip()!r}")
        if key in options:
            raise ValueError(f"agent spec {spec!r}: option {key!r} is given twice")
        options[key] = parse_value(value)
    return options


def make_agent(spec: str, rules: Rules | str, seed: int | None = None) -> Agent:
    """The agent a spec names, for these rules and seed: ``agent_factory(spec)(rules, seed)``.

    Raises ``ValueError`` for an unknown spec or a file that does not load, and
    :class:`AgentUnavailableError` (a ``RuntimeError``) when torch or sb3-contrib is missing.
    """
    return agent_factory(spec)(rules, seed)


__all__ = [
    "BUILTIN_AGENTS",
    "AgentFactory",
    "AgentUnavailableError",
    "SB3Agent",
    "agent_factory",
    "load_sb3_model",
    "make_agent",
    "parse_options",
    "parse_value",
    "register_agent",
    "registered_agents",
    "unregister_agent",
]
