"""Smoke test of the CLI demo: a whole random game ends with winners (docs/rules.md §9)."""

from training.cli import main


def test_demo_plays_a_whole_game(capsys):
    assert main(["demo", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "game over after" in out
