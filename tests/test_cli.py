"""The ``five-hundred`` commands end to end: evaluate (with JSON), play (a human through standard
input), replay (a saved record)."""

from __future__ import annotations

import builtins
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from process_helpers import as_from_a_terminal, as_in_the_background_with_nohup

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
    assert "NAME=VALUE" in capsys.readouterr().err
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


# -- nothing is lost: bad paths are refused before the work, interruptions save and say one line --
def refuse_input(prompt: str = "") -> str:
    raise AssertionError("the game started although --save was refused")


@pytest.mark.parametrize("where", ["missing", "folder"])
def test_play_refuses_a_bad_save_path_before_the_game(tmp_path, capsys, monkeypatch, where):
    monkeypatch.setattr(builtins, "input", refuse_input)
    target = tmp_path / "no_such_folder" / "nor_this" / "g.json" if where == "missing" else tmp_path
    assert main(["play", "--deals", "1", "--save", str(target)]) == 2
    captured = capsys.readouterr()
    assert "--save" in captured.err and len(captured.err.strip().splitlines()) == 1
    assert "you are" not in captured.out  # refused before the game began
    assert list(tmp_path.rglob("*")) == []  # no orphan temporary file


@pytest.mark.parametrize("where", ["missing", "folder"])
def test_evaluate_refuses_a_bad_json_path_before_the_match(tmp_path, capsys, monkeypatch, where):
    from training.evaluation import evaluate

    def no_match(*args, **kwargs):
        raise AssertionError("the match was played although --json was refused")

    monkeypatch.setattr(evaluate, "duplicate_match", no_match)
    target = tmp_path / "nope" / "nor_this" / "r.json" if where == "missing" else tmp_path
    assert main(["evaluate", "random", "random", "--deals", "1", "--json", str(target)]) == 2
    err = capsys.readouterr().err
    assert "--json" in err and len(err.strip().splitlines()) == 1


class InterruptingHuman:
    """Passes (or plays the first legal move) for a few turns, then presses Ctrl-C."""

    def __init__(self, capsys, turns: int) -> None:
        self.capsys, self.turns, self.seen = capsys, turns, ""

    def __call__(self, prompt: str = "") -> str:
        self.seen += self.capsys.readouterr().out
        if self.turns == 0:
            raise KeyboardInterrupt
        self.turns -= 1
        legal = re.findall(r"^legal moves: (.*)$", self.seen, flags=re.MULTILINE)[-1].split()
        return "PASS" if "PASS" in legal else legal[0]


def test_ctrl_c_mid_game_saves_the_game_so_far(tmp_path, capsys, monkeypatch):
    human = InterruptingHuman(capsys, turns=3)
    monkeypatch.setattr(builtins, "input", human)
    record = tmp_path / "g.json"
    assert main(["play", "--opponents", "random", "--seed", "5", "--save", str(record)]) == 130
    captured = capsys.readouterr()
    assert f"saved the game record to {record}" in human.seen + captured.out
    assert captured.err.strip() == "five-hundred: interrupted"
    game = replay(load_record(record))
    you = [a for deal in game.deals for a in deal.history]
    assert len(you) >= 3  # the human's three turns (and the agents' around them) are in the record
    assert [p.name for p in tmp_path.iterdir()] == ["g.json"]


def read_until(proc: subprocess.Popen, text: str, timeout: float = 60.0) -> str:
    """Standard output of ``proc`` up to and including ``text`` (the prompt has no newline)."""
    import os
    import select
    import time

    seen = b""
    deadline = time.monotonic() + timeout
    while text.encode() not in seen:
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise AssertionError(f"no {text!r} within {timeout} s; got {seen[-500:]!r}")
        chunk = os.read(proc.stdout.fileno(), 4096)
        if not chunk:
            raise AssertionError(f"output ended before {text!r}: {seen[-500:]!r}")
        seen += chunk
    return seen.decode()


def _signal_mid_game(tmp_path, signame: str, preexec_fn, ignored: bool = False) -> tuple[subprocess.Popen[bytes], bytes, Path]:
    """``play`` started with ``preexec_fn``'s signal dispositions, sent ``signame`` at its second
    prompt (``ignored``: a signal it should ignore, so it is killed 3 s later); the process
    (ended), its standard error and the record it saves."""
    import signal

    record = tmp_path / "g.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "training.cli", "play", "--seed", "3", "--save", str(record)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=preexec_fn,
    )
    try:
        read_until(proc, "your action> ")
        proc.stdin.write(b"PASS\n")
        proc.stdin.flush()
        read_until(proc, "your action> ")  # the human's PASS and the agents' turns after it are played
        proc.send_signal(getattr(signal, signame))
        if ignored:
            time.sleep(3)  # stdin left open (an end of input would end the game too): still playing?
            err = b"" if proc.poll() is None else proc.stderr.read()
        else:
            _out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    return proc, err, record


@pytest.mark.parametrize(("signame", "status"), [("SIGTERM", 143), ("SIGHUP", 129), ("SIGINT", 130)])
def test_a_signal_mid_game_saves_the_game_and_says_one_line(tmp_path, signame, status):
    proc, err, record = _signal_mid_game(tmp_path, signame, as_from_a_terminal)
    assert proc.returncode == status, err
    message = "interrupted" if signame == "SIGINT" else f"stopped by {signame}"
    assert err.decode().strip() == f"five-hundred: {message}"
    actions = load_record(record)["deals"][0]["actions"]
    assert "PASS" in actions


@pytest.mark.parametrize(("signame", "status"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_command_started_in_the_background_still_stops_on_sigint_and_sigterm(tmp_path, signame, status):
    """``nohup five-hundred ... &`` from a script: SIGINT is inherited ignored, yet ``kill -INT``
    stops the command as Ctrl-C does (and SIGTERM too)."""
    proc, err, record = _signal_mid_game(tmp_path, signame, as_in_the_background_with_nohup)
    assert proc.returncode == status, err
    assert "PASS" in load_record(record)["deals"][0]["actions"]


def test_nohup_keeps_sighup_ignored(tmp_path):
    """What ``nohup`` asks for: a hangup does not stop the command (it is killed here after 3 s)."""
    import signal

    proc, err, _record = _signal_mid_game(tmp_path, "SIGHUP", as_in_the_background_with_nohup, ignored=True)
    assert proc.returncode == -signal.SIGKILL, err


@pytest.mark.parametrize("command", ["replay", "train"])
def test_a_folder_instead_of_a_file_is_one_line(tmp_path, capsys, command):
    assert main([command, str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("five-hundred: error:") and str(tmp_path) in err and len(err.strip().splitlines()) == 1


def test_ctrl_c_during_evaluate_or_start_up_is_one_line(capsys, monkeypatch):
    from training import cli
    from training.evaluation import evaluate

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(evaluate, "duplicate_match", interrupted)
    assert main(["evaluate", "random", "random", "--deals", "1"]) == 130
    assert capsys.readouterr().err.strip() == "five-hundred: interrupted"
    monkeypatch.setattr(cli, "build_parser", interrupted)  # before any command: the imports, the parser
    assert main(["demo"]) == 130
    assert capsys.readouterr().err.strip() == "five-hundred: interrupted"


def test_ctrl_c_in_the_warm_start_says_where_and_exits_130(tmp_path, capsys, monkeypatch):
    """Ctrl-C during the warm start: train() says in which phase and how to go on, the command
    line adds one line and exits 130, with no traceback."""
    pytest.importorskip("torch")
    pytest.importorskip("pydantic")
    from training.algorithms import ppo

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(ppo, "run_warm_starts", interrupted)
    assert main(["train", "configs/ppo_italian_3p.yaml", f"logging.dir={tmp_path}"]) == 130  # a PPO run with a warm start
    out, err = capsys.readouterr()
    assert "interrupted during the warm start" in out and "--overwrite" in out  # no checkpoint yet
    assert err.strip() == "five-hundred: interrupted" and "Traceback" not in out + err


def make_bad_record(path, change) -> None:
    heuristic_game_record(path, deals=1)
    record = load_record(path)
    change(record)
    path.write_text(json.dumps(record))


BAD_RECORDS = {
    "actions not a list": lambda r: r["deals"][0].__setitem__("actions", "PASS"),
    "rules not a mapping": lambda r: r.__setitem__("rules", ["australian"]),
    "deals not a list": lambda r: r.__setitem__("deals", {"dealer": 0}),
    "missing actions": lambda r: r["deals"][0].pop("actions"),
    "actions a number": lambda r: r["deals"][0].__setitem__("actions", 5),
    "missing rules": lambda r: r.pop("rules"),
}


@pytest.mark.parametrize("change", [pytest.param(c, id=k) for k, c in BAD_RECORDS.items()])
def test_a_malformed_record_is_one_line(tmp_path, capsys, change):
    path = tmp_path / "bad.json"
    make_bad_record(path, change)
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("five-hundred: error:") and len(err.strip().splitlines()) == 1


# -- housekeeping ------------------------------------------------------------------------------
def test_version_comes_from_the_package_metadata(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"five-hundred {version('five-hundred-env')}"


def test_help_texts_are_plain_text():
    from training.cli import build_parser

    parser = build_parser()
    subcommands = parser._subparsers._group_actions[0].choices  # argparse keeps them only here
    for text in [parser.format_help(), *(p.format_help() for p in subcommands.values())]:
        assert "``" not in text and ":func:" not in text and ":class:" not in text
    assert "docs/rules.md" not in parser.format_help()  # (the play prompt points there, not the help)


class PassingHuman:
    """Passes whenever it may, else plays the first legal move; records everything printed."""

    def __init__(self, capsys) -> None:
        self.capsys, self.seen = capsys, ""

    def __call__(self, prompt: str = "") -> str:
        self.seen += self.capsys.readouterr().out
        legal = re.findall(r"^legal moves: (.*)$", self.seen, flags=re.MULTILINE)[-1].split()
        return "PASS" if "PASS" in legal else legal[0]


def test_play_never_announces_another_players_no_nomination(tmp_path, capsys, monkeypatch):
    """§7: only the contractor holding the joker decides on a nomination, so announcing its
    NO_NOMINATION would tell the table where the joker is (seed 26: player_3 has that turn)."""
    human = PassingHuman(capsys)
    monkeypatch.setattr(builtins, "input", human)
    record = tmp_path / "g.json"
    assert main(["play", "--rules", "australian", "--seed", "26", "--deals", "1", "--opponents", "random",
                 "--save", str(record)]) == 0
    out = human.seen + capsys.readouterr().out
    actions = load_record(record)["deals"][0]["actions"]
    assert "NO_NOMINATION" in actions  # the turn happened ...
    assert "NO_NOMINATION" not in out  # ... and nobody was told
    assert "Type actions as in docs/rules.md §1" in out
    assert "you are player_0, partner player_2" in out  # §1: seats {0, 2} are partners


def test_public_text_hides_discards_and_no_nomination_but_shows_a_nomination():
    """§5 discards face down; §7 a nomination is public (every observation shows the suit)."""
    from agents.play import Turn
    from five_hundred_env.engine import Phase
    from training.table.terminal import public_text

    env = raw_env(rules="australian")
    env.reset(seed=0)

    def said(phase, text):
        return public_text(env, Turn(0, env.str_to_action(text), phase, env.deal, {}))

    assert said(Phase.DISCARD, "Ah") == "discards a card"
    assert said(Phase.NOMINATE, "NO_NOMINATION") is None
    assert said(Phase.NOMINATE, "NOMINATE_H") == "NOMINATE_H"
    assert said(Phase.PLAY, "Ah") == "Ah" and said(Phase.BIDDING, "7H") == "7H"


def test_exit_hands_its_arguments_to_expert_iteration(capsys):
    """`five-hundred exit ...` is `python -m training.algorithms.expert_iteration ...`: its own usage and errors."""
    with pytest.raises(SystemExit) as e:
        main(["exit", "--help"])
    assert e.value.code == 0 and "five-hundred exit" in capsys.readouterr().out
    assert main(["exit", "no/such/config.yaml"]) == 2
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.parametrize(("preset", "seat"), [("two_handed", 1), ("five_handed", 3), ("six_handed", 4)])
def test_play_watch_evaluate_and_replay_the_new_presets(preset, seat, tmp_path, capsys, monkeypatch):
    """RULES.md §10: the command line plays, watches, evaluates and replays two, five and six seats."""
    human = ScriptedHuman(capsys, bad=["PARTNER_9"])
    monkeypatch.setattr(builtins, "input", human)
    record = tmp_path / "game.json"
    assert main(["play", "--rules", preset, "--seat", str(seat), "--seed", "5", "--deals", "1", "--save", str(record)]) == 0
    out = human.seen + capsys.readouterr().out
    assert f"player_{seat} to act" in out and "saved the game record" in out and "PARTNER_9" in out
    game = replay(load_record(record))
    assert game.rules.preset == preset and game.deals[0].is_over
    assert main(["replay", str(record)]) == 0
    assert "=== deal 1 of 1" in capsys.readouterr().out
    n = {"two_handed": 2, "five_handed": 5, "six_handed": 6}[preset]
    assert main(["watch", *(["heuristic"] * n), "--rules", preset, "--deals", "1", "--seed", "2"]) == 0
    watched = capsys.readouterr().out
    assert "deal over" in watched or "thrown in" in watched
    assert main(["evaluate", "heuristic", "random", "--rules", preset, "--deals", "2", "--no-progress"]) == 0
    assert f"— {preset}, 2 duplicate deals" in capsys.readouterr().out
