"""The ``five-hundred`` commands end to end: evaluate (with JSON), play (a human through standard
input), replay (a saved record)."""

from __future__ import annotations

import builtins
import json
import re
import subprocess
import sys

import pytest

from agents import HeuristicAgent
from five_hundred_env import load_record, replay, save_record
from five_hundred_env.env import raw_env
from training.cli import main


def test_evaluate_prints_a_table_and_writes_json(tmp_path, capsys):
    path = tmp_path / "report.json"
    assert main(["evaluate", "heuristic", "random", "--deals", "3", "--seed", "1", "--json", str(path),
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "score difference per deal (A − B)" in out and f"wrote {path}" in out
    data = json.loads(path.read_text())
    assert data["rules"]["preset"] == "australian"
    assert data["deals"] == 3
    assert data["agent_a"] == "heuristic" and data["agent_b"] == "random"
    assert set(data["score_diff_per_deal"]) >= {"mean", "ci95"} and len(data["score_diff_per_deal"]["ci95"]) == 2


def test_evaluate_rules_options_and_games(tmp_path, capsys):
    path = tmp_path / "r.json"
    assert main(["evaluate", "random", "heuristic", "--rules", "italian_3p", "--option", "misere=none",
                 "--deals", "2", "--games", "1", "--json", str(path), "--no-progress"]) == 0
    data = json.loads(path.read_text())
    assert data["rules"]["preset"] == "italian_3p" and data["rules"]["misere"] == "none"
    assert data["games"]["games"] == 1
    assert "games to 500" in capsys.readouterr().out


def test_evaluate_refuses_unknown_agents(capsys):
    assert main(["evaluate", "heuristic", "grandmaster", "--deals", "1"]) == 2
    assert "unknown agent 'grandmaster'" in capsys.readouterr().err


def test_evaluate_refuses_bad_options(capsys):
    assert main(["evaluate", "random", "random", "--option", "slam_bonus"]) == 2
    assert "KEY=VALUE" in capsys.readouterr().err
    assert main(["evaluate", "random", "random", "--option", "no_such_rule=1"]) == 2
    assert "unknown rule option" in capsys.readouterr().err


class ScriptedHuman:
    """Stands in for ``input()``: reads what the CLI printed (the legal moves) and answers, after
    first trying some bad input that must be refused without losing anything."""

    def __init__(self, capsys, bad: list[str], turns: int | None = None) -> None:
        self.capsys = capsys
        self.bad = list(bad)
        self.turns = turns
        self.seen = ""
        self.answers: list[str] = []

    def __call__(self, prompt: str = "") -> str:
        self.seen += self.capsys.readouterr().out
        if self.bad:
            return self.bad.pop(0)
        if self.turns is not None and len(self.answers) >= self.turns:
            raise EOFError
        legal = re.findall(r"^legal moves: (.*)$", self.seen, flags=re.MULTILINE)[-1].split()
        self.answers.append(legal[-1])
        return self.answers[-1]


def test_play_through_standard_input(tmp_path, capsys, monkeypatch):
    """A whole deal played by a scripted human: bad input gets a clear message and another try,
    the table and the legal moves are shown, and the record is saved and replays."""
    human = ScriptedHuman(capsys, bad=["", "nonsense", "Zz", "help"])
    monkeypatch.setattr(builtins, "input", human)
    record = tmp_path / "game.json"
    assert main(["play", "--seat", "1", "--seed", "4", "--deals", "1", "--save", str(record)]) == 0
    out = human.seen + capsys.readouterr().out
    assert "unknown action 'nonsense'" in out and "try again" in out
    assert "legal moves:" in out and "player_1 to act, hand:" in out
    assert "deal over" in out or "deal thrown in" in out
    assert f"saved the game record to {record}" in out
    assert human.answers
    game = replay(load_record(record))
    assert len(game.deals) >= 1 and game.deals[0].is_over


def test_play_illegal_but_well_formed_input_is_refused(capsys, monkeypatch):
    # A card during the auction is a real action, but not a legal one now.
    human = ScriptedHuman(capsys, bad=["Ah", "10s"], turns=0)
    monkeypatch.setattr(builtins, "input", human)
    assert main(["play", "--seed", "2"]) == 0
    out = human.seen + capsys.readouterr().out
    assert "Ah is not legal now" in out and "Ts is not legal now" in out
    assert "game stopped." in out


def test_play_end_of_input_stops_cleanly_and_saves(tmp_path):
    """As a subprocess fed a few lines: PASS while it is legal, then the input ends."""
    record = tmp_path / "g.json"
    proc = subprocess.run(
        [sys.executable, "-m", "training.cli", "play", "--rules", "italian_3p", "--seat", "2",
         "--opponents", "random", "--seed", "1", "--save", str(record)],
        input="PASS\nPASS\nPASS\n", capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "game stopped." in proc.stdout
    assert "you are player_2" in proc.stdout
    data = load_record(record)
    assert data["kind"] == "game" and data["rules"]["preset"] == "italian_3p"
    replay(data)


def test_play_refuses_a_bad_seat(capsys):
    assert main(["play", "--rules", "italian_3p", "--seat", "3"]) == 2
    assert "--seat" in capsys.readouterr().err


def heuristic_game_record(path, preset: str = "australian", deals: int = 2) -> None:
    env = raw_env(rules=preset, episode="game", max_deals=deals)
    env.reset(seed=9)
    agents = [HeuristicAgent(env.rules, seed=s) for s in range(env.rules.num_players)]
    for name in env.agent_iter():
        obs, _r, term, trunc, _i = env.last()
        env.step(None if term or trunc else agents[int(name[-1])].act(obs))
    save_record(env.game, path)


def test_replay_prints_the_table_after_each_action(tmp_path, capsys):
    path = tmp_path / "game.json"
    heuristic_game_record(path)
    record = load_record(path)
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    actions = [a for d in record["deals"] for a in d["actions"]]
    assert out.count("Five Hundred (australian)") == len(actions)
    assert "=== deal 1 of" in out
    assert "deal over" in out or "thrown in" in out


def test_replay_step_waits_for_enter(tmp_path, capsys, monkeypatch):
    path = tmp_path / "game.json"
    heuristic_game_record(path, "french_46", deals=1)
    presses = []

    def enter(prompt=""):
        presses.append(prompt)
        if len(presses) == 5:
            raise EOFError
        return ""

    monkeypatch.setattr(builtins, "input", enter)
    assert main(["replay", str(path), "--step"]) == 0
    assert len(presses) == 5
    assert "replay stopped." in capsys.readouterr().out


def test_replay_of_a_deal_record(tmp_path, capsys):
    env = raw_env(rules="italian_3p")
    env.reset(seed=3)
    agents = [HeuristicAgent(env.rules, seed=s) for s in range(3)]
    for name in env.agent_iter():
        obs, _r, term, trunc, _i = env.last()
        env.step(None if term or trunc else agents[int(name[-1])].act(obs))
    path = tmp_path / "deal.json"
    save_record(env.deal, path)
    assert main(["replay", str(path)]) == 0
    assert "=== deal 1 of 1" in capsys.readouterr().out


@pytest.mark.parametrize("content", ["{not json", json.dumps({"format": "something else"})])
def test_replay_refuses_bad_files(tmp_path, capsys, content):
    path = tmp_path / "bad.json"
    path.write_text(content)
    assert main(["replay", str(path)]) == 2
    assert "five-hundred: error:" in capsys.readouterr().err


def test_replay_missing_file(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "nope.json")]) == 2
