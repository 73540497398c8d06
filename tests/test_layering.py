"""Imports run one way: ``five_hundred_env`` ← ``agents`` ← ``training`` (the command line is
``training.cli``). Read with :mod:`ast`, so the layering holds even where import-linter (the
``[tool.importlinter]`` contracts in pyproject.toml, run by ``.ci/run``) is not installed; lazy
imports inside functions count too."""

from __future__ import annotations

import ast
import shutil
import subprocess
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
    lazy = "def f():\n    from training.evaluate import duplicate_match\n"
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


@pytest.mark.skipif(shutil.which("lint-imports") is None, reason="import-linter is not installed")
def test_import_linter_contracts_are_kept():
    proc = subprocess.run(["lint-imports", "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 kept, 0 broken" in proc.stdout
