"""The README's quickstart block still says what the quickstart prints: a tiny run of the same config
(benchmarks/readme_quickstart.py, TINY_OVERRIDES) prints the tables stored beside the block's digest
when the block was last regenerated (tests/quickstart_tiny.txt). A change of the code that moves the
tables fails here, with the command that regenerates both."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("numba")

ROOT = Path(__file__).resolve().parent.parent
REGENERATE = "python benchmarks/readme_quickstart.py (it reruns the quickstart, rewrites the block and the stored tables)"


def load_script():
    sys.path.insert(0, str(ROOT / "benchmarks"))  # the script imports its neighbour competitors.py
    spec = importlib.util.spec_from_file_location("readme_quickstart", ROOT / "benchmarks" / "readme_quickstart.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def script():
    return load_script()


def stored(script) -> tuple[str, str]:
    digest_line, tables = script.STORED_TINY.read_text().split("\n", 1)
    return digest_line.removeprefix("readme-block-sha256: "), tables.rstrip("\n")


def test_the_block_is_the_one_the_stored_tables_were_made_with(script):
    """A hand edit of the block, or tables stored without the block, breaks the pair."""
    digest, _ = stored(script)
    assert script.block_digest((ROOT / "README.md").read_text()) == digest, (
        f"README.md's quickstart block is not the one tests/quickstart_tiny.txt was made with: run {REGENERATE}")


def test_the_block_shows_the_command_and_every_opponent(script):
    block = (ROOT / "README.md").read_text().split(script.START, 1)[1].split(script.END, 1)[0]
    assert f"$ {' '.join(script.COMMAND)}" in block
    for opponent in ("random", "heuristic", "start"):
        assert f"final.pt vs {opponent} ==" in block
    assert "learning:" in block and "measured " in block


def test_a_tiny_run_prints_the_stored_tables(script):
    _, tables = stored(script)
    now = script.tiny_run_tables()
    assert now == tables, f"the quickstart's tables moved under the README's block: run {REGENERATE}"


def test_the_summary_keeps_the_lines_a_reader_compares(script):
    tables = ("== a vs b ==\nfinal.pt (A) vs b\nscore difference per deal (A − B): +1.0  95% CI [0, 2]\n"
              "contracts  A bid\nlearning: +1 points: stronger\n\ntrained 10 steps in 3 s")
    assert script.summary(tables).splitlines() == [
        "== a vs b ==", "score difference per deal (A − B): +1.0  95% CI [0, 2]", "learning: +1 points: stronger",
        "trained 10 steps in 3 s"]
