"""``five-hundred evaluate --help`` tells a newcomer every builtin agent and the spec syntax."""

from __future__ import annotations

import pytest

from agents.registry import BUILTIN_AGENTS
from training.cli import main


def test_evaluate_help_lists_the_builtin_agents_and_the_spec_syntax(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["evaluate", "--help"])
    assert stop.value.code == 0
    text = capsys.readouterr().out
    for name in BUILTIN_AGENTS:
        assert f"  {name}" in text or f", {name}" in text, f"{name} is not listed"
    for syntax in ("SPEC@KINDS", "NAME:key=value", "pimc:worlds=8", "pretrained@play", "PATH.pt", "PATH.zip"):
        assert syntax in text, syntax
    for option in ("worlds", "bid_worlds", "kitty_worlds", "seconds", "solver_tricks", "min_gain", "rollout"):
        assert option in text.split("(pimc:")[1].split(")")[0], option
