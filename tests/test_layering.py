"""Imports run one way: ``five_hundred_env`` ← ``agents`` ← ``training`` (the command line is
``training.cli``), and no modules import each other in a circle, even inside a package. Read with
:mod:`ast`, so the layering holds even where import-linter (the ``[tool.importlinter]`` contracts
in pyproject.toml, run by ``.ci/run``) is not installed; lazy imports inside functions count too."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from collections.abc import Collection, Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("five_hundred_env", "agents", "training")
"""Lowest first: a package may import only the packages before it."""
FORBIDDEN_BELOW = {"five_hundred_env": ("torch",)}
"""Third-party packages a layer must not import either: the engine runs without torch."""


def imported_packages(source: str, package: str) -> set[str]:
    """The top-level package of every import in ``source`` (a module of ``package``; relative
    imports stay inside it)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add(package if node.level else (node.module or "").split(".")[0])
    return found


def layering_violations(source: str, package: str) -> set[str]:
    """The packages ``source`` (a module of ``package``) imports that its layer may not."""
    higher = set(LAYERS[LAYERS.index(package) + 1:]) | set(FORBIDDEN_BELOW.get(package, ()))
    return imported_packages(source, package) & higher


def test_the_checker_sees_every_kind_of_import():
    """The check itself can fail: a lazy import, a from-import and a plain import of a higher layer."""
    lazy = "def f():\n    from training.evaluation.evaluate import duplicate_match\n"
    assert layering_violations(lazy, "agents") == {"training"}
    assert layering_violations("import agents.neural\nimport torch\n", "five_hundred_env") == {"agents", "torch"}
    assert layering_violations("from . import rules\nfrom five_hundred_env.env import raw_env\n", "agents") == set()
    assert layering_violations("import torch\nfrom agents import Agent\n", "training") == set()


@pytest.mark.parametrize("package", LAYERS[:-1])
def test_no_module_imports_a_higher_layer(package):
    modules = sorted((ROOT / package).rglob("*.py"))
    assert modules, f"no modules found under {package}/"
    bad = {str(m.relative_to(ROOT)): sorted(v) for m in modules
           if (v := layering_violations(m.read_text(encoding="utf-8"), package))}
    assert bad == {}


def test_the_command_line_lives_on_the_top_floor():
    assert (ROOT / "training" / "cli.py").is_file()
    assert not (ROOT / "five_hundred_env" / "cli.py").exists()


def module_files(root: Path, packages: Sequence[str]) -> dict[str, Path]:
    """Every module of ``packages`` under ``root`` by dotted name (a package by its ``__init__.py``)."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported_modules(source: str, name: str, is_package: bool, modules: Collection[str]) -> set[str]:
    """The modules of ``modules`` that module ``name`` imports anywhere in ``source``, inside
    functions too (as ``/work/shared/tools/import_circles.py`` reads them): ``import P.Q`` is
    module ``P.Q``, ``from P import X`` is module ``P.X`` if there is one, else ``P``."""
    here = name.split(".") if is_package else name.split(".")[:-1]

    def known(module: str) -> str | None:
        while module and module not in modules:
            module = module.rpartition(".")[0]
        return module or None

    targets = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets.update(known(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = here[:len(here) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}" if base else alias.name
                targets.add(full if full in modules else known(base))
    return targets - {None, name}


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of two or more modules that import each other, directly or through others."""
    def reachable(start: str) -> set[str]:
        seen: set[str] = set()
        todo = [start]
        while todo:
            for module in graph.get(todo.pop(), ()):
                if module not in seen:
                    seen.add(module)
                    todo.append(module)
        return seen

    reach = {module: reachable(module) for module in graph}
    groups = {frozenset(other for other in reach[module] if module in reach[other]) for module in graph}
    return sorted(sorted(group) for group in groups if len(group) > 1)


def import_graph(root: Path, packages: Sequence[str]) -> dict[str, set[str]]:
    modules = module_files(root, packages)
    return {name: imported_modules(path.read_text(encoding="utf-8"), name, path.name == "__init__.py", modules)
            for name, path in modules.items()}


def test_the_circle_finder_sees_lazy_relative_and_package_imports(tmp_path):
    """The check itself can fail: a circle through a lazy import, through a relative import, and
    through a package's ``__init__`` that re-exports (whoever imports the package runs it)."""
    files = {
        "pkg/__init__.py": "from pkg.low import helper\n",
        "pkg/low.py": "def helper():\n    from pkg.high import thing\n",
        "pkg/high.py": "from pkg import helper\nthing = 1\n",
        "pkg/sub/__init__.py": "from .leaf import leaf\n",
        "pkg/sub/leaf.py": "import pkg.sub\nleaf = 2\n",
        "pkg/alone.py": "from pkg import sub\nimport os\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    graph = import_graph(tmp_path, ["pkg"])
    assert graph["pkg.alone"] == {"pkg.sub"} and graph["pkg.high"] == {"pkg"}
    assert import_circles(graph) == [["pkg", "pkg.high", "pkg.low"], ["pkg.sub", "pkg.sub.leaf"]]
    (tmp_path / "pkg/low.py").write_text("def helper():\n    return 0\n", encoding="utf-8")
    (tmp_path / "pkg/sub/leaf.py").write_text("leaf = 2\n", encoding="utf-8")
    assert import_circles(import_graph(tmp_path, ["pkg"])) == []


def test_no_modules_import_each_other_in_a_circle():
    """A circle makes the import order matter and hides which module is the lower one: the shared
    piece belongs in a module both import (as ``training/evaluation/matches.py`` is for ``evaluate`` and
    ``evaluate_ranges``)."""
    graph = import_graph(ROOT, LAYERS)
    evaluation = "training.evaluation"
    assert len(graph) > 50 and graph[f"{evaluation}.evaluate"] >= {f"{evaluation}.matches", f"{evaluation}.evaluate_ranges"}
    circles = {" <-> ".join(group): {module: sorted(graph[module] & set(group)) for module in group}
               for group in import_circles(graph)}
    assert circles == {}


TRAINING_ROOMS = (("settings", "workers"), ("rollouts",), ("records",), ("evaluation",), ("table", "algorithms"),
                  ("web",), ("cli",))
"""Training's rooms, lowest floor first: a room imports only rooms on lower floors (those on one
floor not each other), as the rooms contract in ``[tool.importlinter]`` says."""


def room_violations(graph: dict[str, set[str]], floors: Sequence[Sequence[str]]) -> dict[str, list[str]]:
    """The imports of ``graph`` (a package's modules) that go to a room on the same or a higher floor."""
    floor_of = {room: level for level, rooms in enumerate(floors) for room in rooms}

    def room(module: str) -> str | None:
        parts = module.split(".")
        return parts[1] if len(parts) > 1 else None

    bad = {}
    for module, targets in graph.items():
        if (here := room(module)) is None:
            continue
        wrong = sorted(t for t in targets if (there := room(t)) not in (None, here) and floor_of[there] >= floor_of[here])
        if wrong:
            bad[module] = wrong
    return bad


def test_the_room_checker_sees_an_upward_and_a_sideways_import():
    graph = {"t.low.a": {"t.high.b"}, "t.high.b": {"t.low.a"}, "t.side.c": {"t.low.a", "t.mid.d"}, "t.mid.d": set()}
    assert room_violations(graph, (("low",), ("high",), ("side", "mid"))) == {"t.low.a": ["t.high.b"], "t.side.c": ["t.mid.d"]}


def test_training_rooms_import_one_way():
    graph = import_graph(ROOT, ["training"])
    rooms = {room for floor in TRAINING_ROOMS for room in floor}
    assert {module.split(".")[1] for module in graph if module != "training"} == rooms, "every module sits in a room"
    assert room_violations(graph, TRAINING_ROOMS) == {}


def test_pimc_takes_agent_specs_without_importing_the_registry():
    """``agents.search.pimc`` does not import the registry (which imports it); the registry hands
    it ``agent_factory`` as it is imported, which ``agents/__init__`` does before anything else
    can build an agent: spec strings work from a fresh interpreter that imports the module first."""
    code = ("from agents.search.pimc import PIMCAgent\n"
            "agent = PIMCAgent('australian', seed=1, base='random', rollout='heuristic')\n"
            "print(type(agent.base).__name__, type(agent.rollout).__name__)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["RandomAgent", "HeuristicAgent"]


def test_a_spec_without_a_resolver_is_refused_by_name(monkeypatch):
    from agents.base import RandomAgent
    from agents.search import pimc

    monkeypatch.setattr(pimc, "_spec_resolver", None)
    with pytest.raises(ValueError, match=r"base 'heuristic' is an agent spec, .* import agents.registry, or pass an Agent"):
        pimc.PIMCAgent("australian", base="heuristic", rollout=RandomAgent(seed=0))
    with pytest.raises(ValueError, match=r"rollout 'heuristic' is an agent spec, .* import agents.registry, or pass an Agent"):
        pimc.PIMCAgent("australian", base=RandomAgent(seed=0), rollout="heuristic")


@pytest.mark.skipif(shutil.which("lint-imports") is None, reason="import-linter is not installed")
def test_import_linter_contracts_are_kept():
    proc = subprocess.run(["lint-imports", "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 kept, 0 broken" in proc.stdout
