"""Bots in any language: the cmd: agent spec and its JSON-lines protocol (agents.command,
docs/protocol.md), with the example bots of examples/bots/ in real matches."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from agent_helpers import FirstLegal, registered

from agents.command import BotError, CommandAgent, ObservationText
from agents.registry import agent_factory
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import make_rules
from training.cli import main
from training.evaluation.evaluate import duplicate_match
from training.evaluation.matches import forfeit_points

ROOT = Path(__file__).resolve().parents[1]
PYTHON_BOT = ROOT / "examples" / "bots" / "first_legal.py"
C_BOT = ROOT / "examples" / "bots" / "first_legal.c"


@pytest.fixture(autouse=True, scope="module")
def first_legal_registered():
    with registered("test-first-legal", FirstLegal):
        yield


def bot(tmp_path: Path, body: str, name: str = "bot.py") -> str:
    """A Python bot written to ``tmp_path`` from ``body`` (its loop over messages), as a cmd: spec."""
    path = tmp_path / name
    path.write_text("import json, sys, time, os\n" + textwrap.dedent(body))
    return f"cmd:{sys.executable} {path}"


def diffs(rules, a, b, deals, **options):
    return duplicate_match(rules, a, b, deals, seed=3, **options).board_diffs


@pytest.mark.parametrize("preset", ["australian", "five_handed"])
def test_the_python_example_bot_plays_a_real_match_as_its_in_process_twin(preset):
    spec = f"cmd:{sys.executable} {PYTHON_BOT}"
    assert diffs(preset, spec, "random", 4) == diffs(preset, "test-first-legal", "random", 4)


def test_the_c_example_bot_compiles_and_plays_a_real_match(tmp_path):
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler")
    binary = tmp_path / "first_legal"
    subprocess.run([compiler, "-O2", "-Wall", "-Werror", "-o", str(binary), str(C_BOT)], check=True)
    assert diffs("italian_3p", f"cmd:{binary}", "heuristic", 4) == diffs("italian_3p", "test-first-legal", "heuristic", 4)


def test_every_message_of_the_protocol_reaches_the_bot(tmp_path):
    log = tmp_path / "heard.jsonl"
    spec = bot(tmp_path, f"""
        with open({str(log)!r}, "a") as out:
            for line in sys.stdin:
                out.write(line)
                out.flush()
                message = json.loads(line)
                if "legal_actions" in message:
                    print(json.dumps({{"action": message["legal_actions"][0]}}), flush=True)
        """)
    rules = make_rules("australian")
    agent = agent_factory(spec)(rules, 5)
    from agents import HeuristicAgent
    from agents.play import play_game
    from five_hundred_env.env import raw_env

    env = raw_env(rules=rules, episode="game", max_deals=2)
    play_game(env, [agent, *(HeuristicAgent(rules, s) for s in (1, 2, 3))], seed=7)
    agent.close()
    heard = [json.loads(line) for line in log.read_text().splitlines()]
    kinds = [m["type"] for m in heard]
    assert kinds[0] == "start" and kinds[1] == "deal_start" and kinds[-1] == "game_end"
    assert kinds.count("deal_start") == kinds.count("deal_end") == 2
    start = heard[0]
    assert start["protocol"] == 1 and start["preset"] == "australian" and start["rules"] == rules.to_dict()
    assert len(start["action_names"]) == 80
    encoder = ObservationEncoder(rules)
    decisions = [m for m in heard if m["type"] == "decision"]
    assert decisions and all(m["seat"] == 0 for m in decisions)
    for m in decisions:
        assert len(m["vector"]) == encoder.size
        assert set(m["observation"]) == set(encoder.layout)
        decoded = encoder.decode(np.asarray(m["vector"], dtype=np.int8))
        assert all(np.array_equal(np.asarray(m["observation"][name]), part) for name, part in decoded.items())
        assert m["legal_names"] == [start["action_names"][a] for a in m["legal_actions"]]
        assert m["kind"] in ("bid", "discard", "nominate", "play")
    assert [m["decision"] for m in decisions if m["deal"] == 1] == list(range(1, sum(m["deal"] == 1 for m in decisions) + 1))
    first_deal = heard[1]
    assert first_deal["seat"] == 0 and first_deal["side"] == 0 and len(first_deal["hand"]) == 10
    ends = [m for m in heard if m["type"] == "deal_end"]
    assert all(len(m["score_change"]) == 2 for m in ends)


@pytest.mark.parametrize("preset", ["australian", "five_handed"])
def test_the_fast_observation_text_is_the_json_of_the_slices_and_the_vector(preset):
    rules = make_rules(preset)
    text, encoder = ObservationText(rules), ObservationEncoder(rules)
    rng = np.random.default_rng(0)
    offset = encoder.layout["scores"][0]
    for trial in range(20):
        vector = rng.integers(0, 2, encoder.size).astype(np.int8)
        vector[offset:offset + rules.num_sides] = rng.integers(-127, 128, rules.num_sides)
        if trial == 19:
            vector[0] = 3  # not 0/1 outside the scores: written the slow way, the same JSON
        named, flat = text.encode(vector)
        assert json.loads(flat) == vector.tolist()
        assert json.loads(named) == {name: part.tolist() for name, part in encoder.decode(vector).items()}


LATE = """
    for line in sys.stdin:
        message = json.loads(line)
        if "legal_actions" in message:
            if message["decision"] == 2:
                time.sleep(5)
            print(json.dumps({"action": message["legal_actions"][0]}), flush=True)
    """
ILLEGAL = """
    for line in sys.stdin:
        if "legal_actions" in line:
            print('{"action": 999}', flush=True)
    """
GARBAGE = """
    for line in sys.stdin:
        if "legal_actions" in line:
            print("I pass", flush=True)
    """
CHATTY = """
    for line in sys.stdin:
        message = json.loads(line)
        if "legal_actions" in message:
            print(json.dumps({"action": message["legal_actions"][0]}), flush=True)
        if message["type"] == "deal_start":
            print("hello", flush=True)
    """
DEAD = """
    for line in sys.stdin:
        if "legal_actions" in line:
            sys.exit(3)
    """


@pytest.mark.parametrize(("body", "reason", "words"), [
    (LATE, "late", "did not answer decision 2 of deal 1 (seat 0, play) within 0.5 s"),
    (ILLEGAL, "illegal", "answered the illegal action 999 to decision 1 of deal 1 (seat 0, bid); legal: 0 (PASS)"),
    (GARBAGE, "garbage", "answered 'I pass' to decision 1 of deal 1 (seat 0, bid): expected a line {\"action\": ID}"),
    (DEAD, "dead", "died (exit status 3) at decision 1 of deal 1 (seat 0, bid)"),
    (CHATTY, "garbage", "'hello"),  # unasked, or taken for the answer if it comes late: garbage either way
])
def test_a_failing_bot_is_a_clear_error_naming_the_bot_and_the_decision(tmp_path, body, reason, words):
    spec = bot(tmp_path, body).replace("cmd:", "cmd[timeout=0.5,startup=20]:", 1)
    started = time.monotonic()
    with pytest.raises(BotError) as caught:
        duplicate_match("australian", spec, "heuristic", 1, seed=0)
    assert time.monotonic() - started < 15  # a time-out, never a hang
    assert caught.value.reason == reason
    assert str(caught.value).startswith(f"bot {spec!r} ")
    assert words in str(caught.value)


def test_a_bot_that_cannot_start_is_refused_by_name():
    with pytest.raises(BotError, match="bot 'cmd:/nonexistent/bot' could not start"):
        duplicate_match("australian", "cmd:/nonexistent/bot", "heuristic", 1)


def test_forfeit_scores_the_board_as_a_loss_and_goes_on_with_a_fresh_bot(tmp_path):
    """The bot dies at its first decision of the second deal it hears; the fresh process that
    replaces it plays on (each process counts its own deals)."""
    spec = bot(tmp_path, """
        deals = 0
        for line in sys.stdin:
            message = json.loads(line)
            if message["type"] == "deal_start":
                deals += 1
            if "legal_actions" in message:
                if deals == 2 and message["seat"] == 0:
                    sys.exit(1)
                print(json.dumps({"action": message["legal_actions"][0]}), flush=True)
        """)
    rules = make_rules("australian")
    report = duplicate_match(rules, spec, "random", 3, seed=3, on_bot_error="forfeit")
    reference = diffs(rules, "test-first-legal", "random", 3)
    forfeited = [i for i, d in enumerate(report.board_diffs) if d == -forfeit_points(rules)]
    assert report.forfeits == {"A": len(forfeited), "B": 0} and forfeited
    assert all(report.board_diffs[i] == reference[i] for i in range(3) if i not in forfeited)
    assert forfeit_points(rules) == 520
    assert report.to_dict()["forfeits"]["A"] == len(forfeited)
    dead = duplicate_match(rules, bot(tmp_path, DEAD, "dead.py"), "random", 2, seed=3, on_bot_error="forfeit")
    assert dead.board_diffs == [-520, -520] and dead.forfeits == {"A": 2, "B": 0} and dead.thrown_in == 0
    with pytest.raises(BotError):
        duplicate_match(rules, spec, "random", 3, seed=3)


@pytest.mark.parametrize(("spec", "words"), [
    ("cmd:", "no command after cmd:"),
    ("cmd:'unclosed", "does not split"),
    ("cmd[depth=3]:./bot", "cmd has no option 'depth'"),
    ("cmd[timeout=0]:./bot", "timeout must be a positive number"),
])
def test_bad_cmd_specs_are_refused(spec, words):
    with pytest.raises(ValueError, match=words):
        agent_factory(spec)("australian", 0)


def test_a_cmd_spec_keeps_its_command_whole():
    factory = agent_factory("cmd[timeout=2.5]:python3 -c 'print(1)' --x=a:b@c,d")
    agent = factory("australian", 0)
    assert isinstance(agent, CommandAgent)
    assert agent.argv == ["python3", "-c", "print(1)", "--x=a:b@c,d"] and agent.timeout == 2.5
    assert factory.label == "cmd[timeout=2.5]:python3 -c 'print(1)' --x=a:b@c,d"


def test_the_command_line_takes_cmd_bots_and_reports_their_failure_in_one_line(tmp_path, capsys):
    spec = f"cmd:{sys.executable} {PYTHON_BOT}"
    assert main(["watch", spec, "heuristic", "--deals", "1", "--delay", "0"]) == 0
    assert main(["evaluate", spec, "random", "--deals", "2", "--on-bot-error", "forfeit"]) == 0
    capsys.readouterr()
    dead = bot(tmp_path, DEAD)
    assert main(["evaluate", dead, "random", "--deals", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"five-hundred: error: bot '{dead}' died")
