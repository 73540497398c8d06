"""The batched engine's kernel cache: a cold cache (a new install, changed kernels) is announced
on standard error before the minute of compiling, a warm one is silent."""

from __future__ import annotations

import pytest

pytest.importorskip("numba")

from five_hundred_env.vector._cache import COMPILING_MESSAGE, STAMP_NAME, announce_compile, kernel_hash


def _compiled(cache, stamp: str) -> None:
    (cache / STAMP_NAME).write_text(stamp)
    (cache / "_step.step_games-80.py311.nbi").write_bytes(b"index")
    (cache / "_step.step_games-80.py311.1.nbc").write_bytes(b"code")


def test_a_cold_cache_is_announced_once_compiled_it_is_silent(tmp_path, capsys):
    announce_compile(tmp_path)  # a new install: nothing cached
    captured = capsys.readouterr()
    assert COMPILING_MESSAGE in captured.err and "once per install, about a minute" in captured.err
    assert captured.out == ""
    _compiled(tmp_path, kernel_hash())
    announce_compile(tmp_path)
    assert capsys.readouterr().err == ""


def test_kernels_of_other_sources_are_dropped_and_the_compile_announced(tmp_path, capsys):
    _compiled(tmp_path, "the hash of older kernels")
    announce_compile(tmp_path)
    assert COMPILING_MESSAGE in capsys.readouterr().err
    assert not list(tmp_path.glob("_step.*"))
    assert (tmp_path / STAMP_NAME).read_text() == kernel_hash()


def test_the_compiled_heuristic_announces_its_own_compile(tmp_path, capsys):
    """The heuristic's kernels (entry module ``agent``) say so too, with their own message, and only when cold."""
    from agents.heuristic._kernels import COMPILING_MESSAGE as HEURISTIC_MESSAGE

    sources = (tmp_path / "agent.py",)
    sources[0].write_text("# a kernel source")
    cache = tmp_path / "cache"
    announce_compile(cache, HEURISTIC_MESSAGE, sources, entry="agent")
    assert "compiling the heuristic for batches" in capsys.readouterr().err
    (cache / "agent.play_out_games-165.py311.nbi").write_bytes(b"index")
    announce_compile(cache, HEURISTIC_MESSAGE, sources, entry="agent")
    assert capsys.readouterr().err == ""
