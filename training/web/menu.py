"""The agents the web table offers (:class:`AgentMenu`): a fixed list, each with bounded options.

A page (or a saved game, or a hint) names an agent by a spec in the registry's syntax
(docs/agents.md, "Agent specs"), but the server never hands that text to the registry: it reads it
with its own grammar, ``NAME[:key=value,...][@KINDS]``, where ``NAME`` is one of the menu's
choices (``random``, ``heuristic``, ``pretrained`` and ``scratch`` where the preset ships such a
network and torch is installed, ``pimc``), ``key`` one of that choice's options, each a number within its bounds
(:data:`MAX_WORLDS` worlds, :data:`MAX_SECONDS` seconds a decision), and ``KINDS`` decision kinds
(``pretrained@play``); or one of the checkpoints named when the server started
(``serve --agent-file PATH``), exactly as given. Anything else — another path, ``trusted:``,
``cmd:``, an option naming an agent (``pimc:base=...``), a number out of bounds — is refused with
one line naming the problem, so nothing from a request or a saved game loads a file or runs code,
and no agent's thinking or memory grows without bound.

Agents are built by :meth:`AgentMenu.build`, in whichever process they think (the server's
threads or its agent processes, :mod:`training.web.thinkers`): the networks they play with are
loaded once per process and shared by every seat of every game (:func:`shared_network`); what
each agent keeps of its own (its random generator, a search's worlds) is small.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import PackageNotFoundError, version
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from agents.base import DECISION_KINDS, Agent, RandomAgent, parse_kinds
from agents.heuristic import HeuristicAgent
from agents.pretrained import (
    available_presets,
    load_pretrained,
    load_scratch,
    pretrained_path,
    scratch_path,
    scratch_presets,
    strongest_plain_agent,
)
from agents.search import PIMCAgent
from agents.split import DecisionSplitAgent
from five_hundred_env.rules import Rules

MAX_SPEC = 200
"""The longest agent spec read, in characters (a path given with ``--agent-file`` may be long)."""
MAX_WORLDS = 200
"""The most worlds the search may draw for a decision (its default, 80, plays about 0.4 CPU-s a deal)."""
MAX_SECONDS = 2.0
"""The longest the search may think about one decision, in seconds."""
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class Option:
    """A number an agent of the menu takes: ``kind`` (``int`` or ``float``) from ``low`` to ``high``."""

    name: str
    kind: type
    low: float
    high: float
    help: str

    def read(self, text: str, spec: str) -> int | float:
        """The option's value written ``text``; anything else, or out of bounds, is a ``ValueError``."""
        what = "a whole number" if self.kind is int else "a number"
        try:
            value = self.kind(text)
        except ValueError:
            raise ValueError(f"agent {spec!r}: {self.name} must be {what} from {self.low:g} to {self.high:g}, "
                             f"got {text!r}") from None
        if not (math.isfinite(value) and self.low <= value <= self.high):
            raise ValueError(f"agent {spec!r}: {self.name} must be {what} from {self.low:g} to {self.high:g}, got {text}")
        return value

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind.__name__, "min": self.low, "max": self.high, "help": self.help}


@dataclass(frozen=True)
class Choice:
    """One agent of the menu. ``build(rules, seed, **options)`` makes it (a module-level function:
    the menu is sent to the agent processes); ``unable(rules)`` says why it cannot play those rules
    (``None``: it can); ``version(rules)`` identifies what plays (the kept games record it)."""

    name: str
    description: str
    build: Callable[..., Agent]
    options: tuple[Option, ...] = ()
    unable: Callable[[Rules], str | None] | None = None
    version: Callable[[Rules], str] | None = None


# -- the networks, once per process ----------------------------------------------------------------------
_networks: dict[tuple[str, Rules], Agent] = {}
_networks_lock = threading.Lock()


def shared_network(key: str, rules: Rules, load: Callable[[], Agent]) -> Agent:
    """The agent ``load()`` makes for ``key`` and ``rules``, made once in this process: every game's
    seats then play with its network (:func:`with_network`), never a copy of it."""
    with _networks_lock:  # two games starting at once load it once
        agent = _networks.get((key, rules))
        if agent is None:
            agent = _networks[(key, rules)] = load()
        return agent


def with_network(template: Agent, rules: Rules, seed: int | None) -> Agent:
    """An agent of its own for one seat (its own generator and helpers) over ``template``'s network."""
    kwargs = {"greedy": template.greedy} if hasattr(template, "greedy") else {}
    return type(template)(rules, seed, model=template.model, **kwargs)  # type: ignore[call-arg, attr-defined]


def torch_installed() -> bool:
    """Whether the networks can play here (torch is an optional extra, ``train``)."""
    return find_spec("torch") is not None


# -- the builtin choices ------------------------------------------------------------------------------
def _random(rules: Rules, seed: int | None) -> Agent:
    return RandomAgent(rules, seed)


def _heuristic(rules: Rules, seed: int | None) -> Agent:
    return HeuristicAgent(rules, seed)


_SHIPPED = {"pretrained": (available_presets, pretrained_path, load_pretrained),
            "scratch": (scratch_presets, scratch_path, load_scratch)}
"""The networks the package ships, by agent name: the presets that have one, its file, its loader
(which imports torch only when it loads)."""


def _shipped(name: str, rules: Rules, seed: int | None) -> Agent:
    load = _SHIPPED[name][2]
    return with_network(shared_network(name, rules, lambda: load(rules)), rules, seed)


def _shipped_unable(name: str, rules: Rules) -> str | None:
    presets = _SHIPPED[name][0]()
    if rules.preset not in presets:
        return f"no {name} network ships for {rules.preset} (those with one: {', '.join(presets)})"
    if not torch_installed():
        return f"the {name} networks need torch: pip install -e '.[train,web]'"
    return None


def _pimc(rules: Rules, seed: int | None, worlds: int | None = None, seconds: float | None = None) -> Agent:
    base = _shipped("pretrained", rules, seed) if strongest_plain_agent(rules) == "pretrained" and torch_installed() else None
    options: dict[str, Any] = {"seconds": seconds, "base": base}
    if worlds is not None:
        options["worlds"] = worlds
    return PIMCAgent(rules, seed, **options)


def _package_version() -> str:
    try:
        return version("five-hundred-env")
    except PackageNotFoundError:  # a source tree that was never installed
        return "source"


def _plain_version(_rules: Rules) -> str:
    return _package_version()


def _file_digest(path: Any) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def _shipped_version(name: str, rules: Rules) -> str:
    return f"{_package_version()} network {_file_digest(_SHIPPED[name][1](rules.preset))}"


def _pimc_version(rules: Rules) -> str:
    plain = strongest_plain_agent(rules) if torch_installed() else "heuristic"
    return f"{_package_version()} base {_shipped_version('pretrained', rules) if plain == 'pretrained' else 'heuristic'}"


BUILTIN_CHOICES = (
    Choice("heuristic", "the rule-based heuristic", _heuristic, version=_plain_version),
    Choice("pretrained", "the shipped network of the preset", partial(_shipped, "pretrained"),
           unable=partial(_shipped_unable, "pretrained"), version=partial(_shipped_version, "pretrained")),
    Choice("scratch", "the network learned from a random start, no heuristic in its training",
           partial(_shipped, "scratch"), unable=partial(_shipped_unable, "scratch"),
           version=partial(_shipped_version, "scratch")),
    Choice("pimc", "search over sampled deals (stronger, slower)", _pimc,
           options=(Option("worlds", int, 1, MAX_WORLDS, "deals sampled per card played (default 80)"),
                    Option("seconds", float, 0.01, MAX_SECONDS, "the most time a decision may take")),
           version=_pimc_version),
    Choice("random", "a random legal move", _random, version=_plain_version),
)


# -- the checkpoints named at start ----------------------------------------------------------------------
@dataclass(frozen=True)
class AgentFile:
    """A checkpoint the server was given (``--agent-file``): its path as given and its preset."""

    path: str
    preset: str

    @classmethod
    def read(cls, path: str) -> AgentFile:
        """The checkpoint at ``path``, its preset read now (once, at the server's start)."""
        file = Path(path).expanduser()
        if not file.is_file():
            raise ValueError(f"--agent-file {path}: no such file")
        if not torch_installed():
            raise ValueError(f"--agent-file {path}: checkpoints need torch: pip install -e '.[train,web]'")
        import torch

        try:
            data = torch.load(file, map_location="cpu", weights_only=True)
            return cls(str(path), Rules.from_dict(data["rules"]).preset)
        except Exception as e:  # torch raises many types for a damaged or foreign file
            raise ValueError(f"--agent-file {path}: not a readable checkpoint ({type(e).__name__}: {e})") from None

    def build(self, rules: Rules, seed: int | None) -> Agent:
        from agents.dmc import load_checkpoint_agent  # torch, only now

        path = str(Path(self.path).expanduser())
        return with_network(shared_network(self.path, rules, lambda: load_checkpoint_agent(path, rules)), rules, seed)


# -- the menu ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AgentMenu:
    """The agents a server offers: ``choices`` (default :data:`BUILTIN_CHOICES`) and the
    checkpoints ``files`` (:class:`AgentFile`). :meth:`check` reads a spec, :meth:`build` makes it."""

    files: tuple[AgentFile, ...] = ()
    choices: tuple[Choice, ...] = BUILTIN_CHOICES
    _by_name: dict[str, Choice] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for choice in self.choices:
            if not _NAME.match(choice.name):
                raise ValueError(f"an agent of the menu is named in lower-case letters, digits and _, got {choice.name!r}")
        object.__setattr__(self, "_by_name", {choice.name: choice for choice in self.choices})

    @classmethod
    def with_files(cls, paths: Sequence[str], choices: tuple[Choice, ...] = BUILTIN_CHOICES) -> AgentMenu:
        """The menu of a server given the checkpoints ``paths`` (each read once, now)."""
        return cls(tuple(AgentFile.read(path) for path in paths), choices)

    def check(self, spec: Any, rules: Rules) -> str:
        """The spec, written the menu's one way (options in the menu's order, kinds in a deal's), if
        it names an agent of the menu that can play ``rules``; else a ``ValueError`` naming the problem."""
        if not isinstance(spec, str) or not spec.strip():
            raise ValueError(f"an agent is one of {self.names()}, got {spec!r}")
        text = spec.strip()
        if len(text) > MAX_SPEC:
            raise ValueError(f"an agent spec is at most {MAX_SPEC} characters, got {len(text)}")
        file = next((f for f in self.files if f.path == text), None)
        if file is not None:
            if file.preset != rules.preset:
                raise ValueError(f"agent {text!r} plays {file.preset}, not {rules.preset}")
            return text
        head, at, kinds = text.partition("@")
        name, colon, options = head.partition(":")
        choice = self._by_name.get(name.strip().lower())
        if choice is None:
            raise ValueError(f"unknown agent {text!r}: choose one of {self.names()} (no other file, command or "
                             "spec is loaded here)")
        why = choice.unable(rules) if choice.unable else None
        if why:
            raise ValueError(f"agent {choice.name!r} cannot play here: {why}")
        written = choice.name
        if colon:
            written += ":" + ",".join(f"{key}={value}" for key, value in self._options(choice, options, text).items())
        if at:
            try:
                chosen = parse_kinds(kinds)
            except ValueError as e:
                raise ValueError(f"agent {text!r}: {e}") from None
            if not chosen:
                raise ValueError(f"agent {text!r}: no decision kind after the @ (e.g. pretrained@play)")
            written += "@" + "+".join(kind for kind in DECISION_KINDS if kind in chosen)
        return written

    @staticmethod
    def _options(choice: Choice, text: str, spec: str) -> dict[str, int | float]:
        bounds = {option.name: option for option in choice.options}
        given: dict[str, int | float] = {}
        for item in text.split(","):
            key, equals, value = (part.strip() for part in item.partition("="))
            option = bounds.get(key)
            if not equals or option is None:
                takes = f"it takes {', '.join(bounds)}" if bounds else "it takes none"
                raise ValueError(f"agent {spec!r}: {choice.name} has no option {key!r} here ({takes})")
            if key in given:
                raise ValueError(f"agent {spec!r}: option {key!r} is given twice")
            given[key] = option.read(value, spec)
        return {option.name: given[option.name] for option in choice.options if option.name in given}

    def build(self, spec: str, rules: Rules, seed: int | None) -> Agent:
        """The agent of ``spec`` (read again by :meth:`check`) for ``rules``, seeded ``seed``."""
        written = self.check(spec, rules)
        file = next((f for f in self.files if f.path == written), None)
        if file is not None:
            return file.build(rules, seed)
        head, at, kinds = written.partition("@")
        name, _, options = head.partition(":")
        choice = self._by_name[name]
        agent = choice.build(rules, seed, **self._options(choice, options, written)) if options else choice.build(rules, seed)
        if at:
            return DecisionSplitAgent(rules, seed, inner=agent, kinds=parse_kinds(kinds))
        return agent

    def version(self, spec: str, rules: Rules) -> str:
        """What plays as ``spec`` (a checked one): the package's version, and the digest of the network it plays with."""
        file = next((f for f in self.files if f.path == spec), None)
        if file is not None:
            return f"checkpoint {_file_digest(Path(file.path).expanduser())}"
        choice = self._by_name[spec.partition("@")[0].partition(":")[0]]
        return choice.version(rules) if choice.version else _package_version()

    def names(self) -> str:
        return ", ".join([choice.name for choice in self.choices] + [f.path for f in self.files])

    def describe(self, presets: Sequence[Rules]) -> list[dict[str, Any]]:
        """The menu as ``/api/info`` lists it: each agent, its options and bounds, the presets it plays."""
        out = [{"name": c.name, "description": c.description, "options": [o.describe() for o in c.options],
                "presets": [r.preset for r in presets if not (c.unable and c.unable(r))]} for c in self.choices]
        out += [{"name": f.path, "description": "a checkpoint given to the server", "options": [], "presets": [f.preset]}
                for f in self.files]
        return out


__all__ = ["BUILTIN_CHOICES", "MAX_SECONDS", "MAX_SPEC", "MAX_WORLDS", "AgentFile", "AgentMenu", "Choice", "Option",
           "shared_network", "torch_installed", "with_network"]
