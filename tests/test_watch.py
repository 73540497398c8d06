"""``five-hundred watch``: agents play while a spectator sees every hand (training.table.watch)."""

from __future__ import annotations

import re
import sys

import pytest

from training.cli import main

ACTION_LINE = re.compile(r"^player_\d \([^)]*\): ", flags=re.MULTILINE)


def watched(capsys, *args: str) -> str:
    assert main(["watch", *args]) == 0
    return capsys.readouterr().out


def test_a_deal_is_shown_with_every_hand_the_actions_the_trick_winners_and_the_result(capsys):
    out = watched(capsys, "heuristic", "random", "--seed", "1")
    assert "A spectator sees every hand" in out
    assert "player_0 (heuristic), player_1 (random), player_2 (heuristic), player_3 (random)" in out
    assert "the hands as dealt:" in out and "  kitty: " in out
    for seat, agent in enumerate(["heuristic", "random"] * 2):
        assert f"\n  player_{seat} ({agent}): " in out
    assert "picks up the kitty: " in out
    assert len(re.findall(r": discards \S+$", out, flags=re.MULTILINE)) == 3  # face up for a spectator (§5)
    assert len(re.findall(r"^trick \d+ won by player_\d with \S+, the ", out, flags=re.MULTILINE)) == 10
    assert "trick 10, the hands:" in out  # the hands again before every trick
    assert "deal over: " in out and out.rstrip().splitlines()[-1].startswith(("game over", "stopped after 1 deal"))


def test_one_agent_per_seat_and_three_players(capsys):
    out = watched(capsys, "random", "heuristic", "random", "--rules", "italian_3p", "--seed", "2", "--deals", "2")
    assert "player_0 (random), player_1 (heuristic), player_2 (random)" in out
    assert out.count("=== deal ") == 2 and "=== deal 2, dealer " in out


def test_a_whole_game(capsys):
    out = watched(capsys, "random", "random", "--game", "--seed", "3")
    assert "game over; winners: " in out.splitlines()[-1]


def test_the_gif_has_one_frame_per_action(tmp_path, capsys):
    from PIL import Image

    gif = tmp_path / "deal.gif"
    out = watched(capsys, "heuristic", "heuristic", "--seed", "4", "--gif", str(gif), "--viewer", "1")
    actions = len(ACTION_LINE.findall(out))
    assert actions > 4 and f"wrote {gif} ({actions} frames)" in out
    with Image.open(gif) as image:
        assert image.n_frames == actions
        assert image.size[0] == 960


def test_delay_waits_between_actions(capsys, monkeypatch):
    waits: list[float] = []
    monkeypatch.setattr("time.sleep", waits.append)
    out = watched(capsys, "random", "random", "--seed", "5", "--delay", "0.25")
    assert waits == [0.25] * len(ACTION_LINE.findall(out))
    watched(capsys, "random", "random", "--seed", "5")  # not a terminal: no waiting by default
    assert len(waits) == len(ACTION_LINE.findall(out))


@pytest.mark.parametrize(("args", "message"), [
    (["heuristic", "random", "random"], "watch needs 2 or 4 agents for australian"),
    (["heuristic", "random", "--rules", "italian_3p"], "watch needs 3 agents for italian_3p"),
    (["heuristic", "nobody"], "unknown agent 'nobody'"),
    (["random", "random", "--viewer", "4"], "--viewer must be a seat 0..3"),
    (["random", "random", "--deals", "0"], "--deals must be at least 1"),
    (["random", "random", "--delay", "-1"], "--delay must be 0 or more"),
    (["random", "random", "--gif", "/nonexistent/deeper/x.gif"], "--gif /nonexistent/deeper/x.gif: the folder"),
])
def test_bad_arguments_are_one_line(capsys, args, message):
    assert main(["watch", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_deals_and_game_do_not_mix(capsys):
    with pytest.raises(SystemExit):
        main(["watch", "random", "random", "--deals", "2", "--game"])
    assert "not allowed with argument" in capsys.readouterr().err


def test_a_gif_without_pillow_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)  # as if Pillow were not installed
    assert main(["watch", "random", "random", "--gif", str(tmp_path / "x.gif")]) == 2
    assert "--gif needs Pillow" in capsys.readouterr().err
    assert not (tmp_path / "x.gif").exists()
