"""The fixed benchmark boards (training.evaluation.bench): the shipped set's checksums, a damaged
file refused, and the boards being what evaluate and the league play."""

from __future__ import annotations

import gzip
import hashlib
from importlib import resources
from typing import ClassVar

import pytest

from agents.heuristic import HeuristicAgent
from agents.registry import register_agent, unregister_agent
from five_hundred_env.rules import PRESETS, make_rules
from training.evaluation import bench
from training.evaluation.bench import BENCH_SETS, load_bench, manifest, parse_board, write_set
from training.evaluation.evaluate import duplicate_match
from training.evaluation.league import run_league


def test_every_preset_ships_its_boards_and_the_checksums_hold():
    for name in BENCH_SETS:
        data = manifest(name)
        assert data["set"] == name and sorted(data["presets"]) == sorted(PRESETS)
        folder = resources.files("training.evaluation").joinpath("bench", name)
        for preset, entry in data["presets"].items():
            text = gzip.decompress(folder.joinpath(entry["file"]).read_bytes())
            assert hashlib.sha256(text).hexdigest() == entry["sha256"]
            boards = load_bench(name, preset).boards
            rules = make_rules(preset)
            assert len(boards) == entry["boards"] == 2000
            for board in boards[:50]:
                cards = [c for hand in board.hands for c in hand] + list(board.kitty)
                assert len(board.hands) == rules.num_players and len(set(cards)) == len(cards)
                assert len(board.kitty) == rules.kitty_size and 0 <= board.dealer < rules.num_players


def test_a_changed_board_file_is_refused(tmp_path, monkeypatch):
    write_set("v1", tmp_path / "v1", seed=3, count=4, presets=("australian",))
    damaged = gzip.decompress((tmp_path / "v1" / "australian.txt.gz").read_bytes()).decode().replace("|", "| ", 1)
    (tmp_path / "v1" / "australian.txt.gz").write_bytes(gzip.compress(damaged.encode()))
    monkeypatch.setattr(bench, "_folder", lambda name: tmp_path / name)
    bench._load.cache_clear()
    try:
        with pytest.raises(ValueError, match="the file was changed or damaged"):
            load_bench("v1", "australian")
    finally:
        bench._load.cache_clear()


def test_an_unknown_set_and_too_many_boards_are_refused():
    with pytest.raises(ValueError, match="unknown benchmark set 'v0'"):
        load_bench("v0", "australian")
    with pytest.raises(ValueError, match="has 2,000 boards: 2,001 asked for"):
        duplicate_match("australian", "random", "random", 2001, bench="v1")


class Recorder(HeuristicAgent):
    """The heuristic, keeping every hand it is dealt (from the table's deal_start news)."""

    hands: ClassVar[list[tuple[int, tuple[str, ...]]]] = []

    def notify(self, event):
        if event["type"] == "deal_start":
            Recorder.hands.append((event["seat"], tuple(event["hand"])))


@pytest.fixture
def recorder():
    register_agent("test-recorder", Recorder, replace=True)
    Recorder.hands = []
    yield Recorder.hands
    unregister_agent("test-recorder")


@pytest.mark.parametrize("preset", ["australian", "five_handed"])
def test_the_benchmark_boards_are_what_a_match_plays(recorder, preset):
    board_set = load_bench("v1", preset)
    report = duplicate_match(preset, "test-recorder", "random", 3, bench="v1")
    dealt = {hand for hand in recorder}
    wanted = {(seat, hand) for board in board_set.boards[:3] for seat, hand in enumerate(board.hands)}
    assert dealt == wanted  # the recorder sits in every seat of some layout of each board
    assert report.seed == board_set.seed == 500
    assert report.to_dict()["bench"] == {"set": "v1", "sha256": board_set.sha256, "boards": 2000}


def test_the_league_plays_the_benchmark_boards_and_names_the_set(recorder, tmp_path):
    report = run_league("italian_3p", ["test-recorder", "random"], 2, bench="v1", cache=tmp_path)
    wanted = {(seat, hand) for board in load_bench("v1", "italian_3p").boards[:2] for seat, hand in enumerate(board.hands)}
    assert set(recorder) == wanted
    assert report.to_dict()["boards"]["sha256"] == load_bench("v1", "italian_3p").sha256
    assert "bench v1 (italian_3p, 2,000 boards, sha256 " in report.format_table()


def test_a_board_line_reads_back():
    line = "2|4s 5s|6h 7h|JK Ah|Kd"
    board = parse_board(line)
    assert board.dealer == 2 and board.hands[2] == ("JK", "Ah") and board.kitty == ("Kd",)
    assert bench.format_board(board) == line
