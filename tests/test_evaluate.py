"""The duplicate evaluator: the hands really are swapped, the luck cancels, the report's schema."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from agents import HeuristicAgent, RandomAgent
from five_hundred_env.env import raw_env
from five_hundred_env.rules import make_rules
from training.evaluation import matches
from training.evaluation.evaluate import (
    BoardDeal,
    board_deals,
    duplicate_match,
    mean_ci95,
    play_board,
    seat_layouts,
    t_quantile_975,
    wilson_ci95,
)

# [AU] seats 0 and 2 hold every trump that matters in hearts and spades, seats 1 and 3 nothing:
# whichever agent sits at {0, 2} scores big on this deal.
UNFAIR_AU = BoardDeal(
    dealer=3,
    hands=(
        tuple("JK Jh Jd Ah Kh Qh Th 9h 8h 7h".split()),
        tuple("5c 6c 7c 8c 4d 5d 6d 7d 8d 9d".split()),
        tuple("Js Jc As Ks Qs Ts 9s 8s Ac Kc".split()),
        tuple("5s 6s 7s 9c Tc Qc Td Qd 4h 5h".split()),
    ),
    kitty=("6h", "Ad", "Kd"),
)

# [IT] seat 0 holds the ten top hearts: whoever sits there makes a slam.
UNFAIR_IT = BoardDeal(
    dealer=2,
    hands=(
        tuple("JK Jh Jd Ah Kh Qh Th 9h 8h 7h".split()),
        tuple("7s 8s 9s Ts Js Qs Ks As 7c 8c".split()),
        tuple("9c Tc Jc Qc Kc Ac 7d 8d 9d Td".split()),
    ),
    kitty=("Qd", "Kd", "Ad"),
)


def test_unfair_deal_is_valid():
    for rules, deal in ((make_rules("australian"), UNFAIR_AU), (make_rules("italian_3p"), UNFAIR_IT)):
        env = raw_env(rules=rules)
        env.reset(seed=0, options=deal.options())


@pytest.mark.parametrize("agent", [HeuristicAgent, RandomAgent])
def test_duplicate_swaps_the_hands_and_cancels_the_luck(agent):
    """Identical agents on a lopsided deal: each single play is far from even, but the two plays of
    the board have the teams swapped, so their differences cancel exactly."""
    env = raw_env(rules="australian")
    results = play_board(env, UNFAIR_AU, agent, agent, seed=5)
    assert [r.seats for r in results] == [("A", "B", "A", "B"), ("B", "A", "B", "A")]
    diffs = [r.diff for r in results]
    if agent is HeuristicAgent:
        assert abs(diffs[0]) >= 150, diffs  # the strong seats win a lot ...
    assert diffs[0] == -diffs[1]  # ... whichever agent holds them
    # the side holding seats 0 and 2 is the same cards each time, so the same contract result
    assert results[0].score_change == results[1].score_change


def test_duplicate_three_players_rotates_every_seat():
    layouts = seat_layouts(make_rules("italian_3p"))
    assert len(layouts) == 6
    for lone in ("A", "B"):
        mine = [lay for lay in layouts if lay.count(lone) == 1]
        assert sorted(lay.index(lone) for lay in mine) == [0, 1, 2]
    env = raw_env(rules="italian_3p")
    results = play_board(env, UNFAIR_IT, HeuristicAgent, HeuristicAgent, seed=1)
    diffs = [r.diff for r in results]
    assert max(abs(d) for d in diffs) >= 150
    assert sum(diffs) == pytest.approx(0.0)


def test_duplicate_match_uses_the_board_deals(monkeypatch):
    """The whole match on the unfair deal: the raw plays are lopsided, the board difference zero."""
    monkeypatch.setattr(matches, "board_deals", lambda rules, deals, seed: [UNFAIR_AU] * deals)
    report = duplicate_match("australian", HeuristicAgent, HeuristicAgent, deals=2, seed=3)
    assert report.board_diffs == [0.0, 0.0]
    assert min(abs(d) for d in report.play_diffs) >= 150
    assert report.to_dict()["score_diff_per_deal"]["mean"] == 0.0


def test_board_deals_are_reproducible_and_varied():
    rules = make_rules("french_46")
    a, b = list(board_deals(rules, 5, seed=1)), list(board_deals(rules, 5, seed=1))
    assert a == b
    assert a != list(board_deals(rules, 5, seed=2))
    assert len({d.hands for d in a}) == 5
    for d in a:
        assert sum(len(h) for h in d.hands) + len(d.kitty) == 46


def test_board_deals_are_made_one_at_a_time():
    """A long match never builds all its boards first: the boards come lazily, and the first ones
    of a long match are those of a short one with the same seed."""
    rules = make_rules("australian")
    boards = board_deals(rules, 10**12, seed=3)  # a list this long could not be built
    first = [next(boards) for _ in range(4)]
    assert first == list(board_deals(rules, 4, seed=3))


def test_report_schema_and_json():
    report = duplicate_match("australian", HeuristicAgent, RandomAgent, deals=6, seed=2, games=2)
    data = json.loads(json.dumps(report.to_dict()))
    assert data["rules"]["preset"] == "australian"
    assert data["deals"] == 6 and data["plays"] == 12
    sd = data["score_diff_per_deal"]
    lo, hi = sd["ci95"]
    assert lo <= sd["mean"] <= hi
    assert sd["mean"] == pytest.approx(sum(report.board_diffs) / 6)
    for side in ("A", "B"):
        for kind in ("suit", "no_trumps", "misere", "open_misere", "all"):
            row = data["contracts"][side][kind]
            assert set(row) == {"bid", "made", "share_of_deals", "made_rate"}
            assert 0 <= row["made"] <= row["bid"]
    total = data["contracts"]["A"]["all"]["bid"] + data["contracts"]["B"]["all"]["bid"] + data["thrown_in"]
    assert total == data["plays"]
    games = data["games"]
    assert games["games"] == 2 and 0 <= games["win_rate_a"] <= 1
    assert games["ci95"][0] <= games["win_rate_a"] <= games["ci95"][1]
    text = report.format_table()
    assert "score difference per deal" in text and "games to 500" in text


def test_report_without_games_has_none():
    data = duplicate_match("italian_3p", RandomAgent, RandomAgent, deals=2, seed=0).to_dict()
    assert data["games"] is None
    assert data["plays"] == 12


def test_match_is_reproducible_from_the_seed():
    one = duplicate_match("australian", RandomAgent, HeuristicAgent, deals=4, seed=11).to_dict()
    two = duplicate_match("australian", RandomAgent, HeuristicAgent, deals=4, seed=11).to_dict()
    other = duplicate_match("australian", RandomAgent, HeuristicAgent, deals=4, seed=12).to_dict()
    assert one == two
    assert one != other


def test_shared_instances_work_like_factories():
    """An agent instance may be passed (it then plays every seat of its side)."""
    rules = make_rules("australian")
    report = duplicate_match(rules, HeuristicAgent(rules), RandomAgent(rules), deals=3, seed=0)
    assert report.agent_a == "heuristic" and report.agent_b == "random"
    assert len(report.board_diffs) == 3


@pytest.mark.parametrize("preset", ["australian", "italian_3p", "french_46"])
def test_heuristic_beats_random(preset):
    report = duplicate_match(preset, HeuristicAgent, RandomAgent, deals=20, seed=0)
    mean, lo, _hi, _se = report.score_diff
    assert mean > 100 and lo > 0


def test_identical_agents_score_zero_on_every_board():
    report = duplicate_match("french_46", HeuristicAgent, HeuristicAgent, deals=5, seed=4)
    assert report.board_diffs == [0.0] * 5


def test_statistics_helpers():
    assert t_quantile_975(1) == pytest.approx(12.706)
    assert t_quantile_975(1000) == pytest.approx(1.962, abs=1e-3)
    mean, _lo, hi, se = mean_ci95([1.0, 2.0, 3.0, 4.0])
    assert mean == 2.5 and se == pytest.approx(math.sqrt(5 / 3 / 4))
    assert hi - mean == pytest.approx(3.182 * se, rel=1e-3)
    lo_w, hi_w = wilson_ci95(0, 10)
    assert lo_w == 0.0 and 0.25 < hi_w < 0.32
    lo_w, hi_w = wilson_ci95(5, 10)
    assert lo_w == pytest.approx(1 - hi_w)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="deals"):
        duplicate_match("australian", RandomAgent, RandomAgent, deals=-1)
    with pytest.raises(ValueError, match="games"):
        duplicate_match("australian", RandomAgent, RandomAgent, deals=1, games=-2)


def test_importing_the_evaluator_does_not_import_torch():
    code = "import sys, training.evaluation.evaluate, agents.registry; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_match_split_over_workers_gives_the_same_report(monkeypatch):
    """Boards in ranges of two and games one by one, played by two worker processes: the report
    of one process, to the last digit (three players: six plays a board, rotating game seats)."""
    from training.evaluation import evaluate_ranges

    monkeypatch.setattr(evaluate_ranges, "BOARDS_PER_JOB", 2)
    monkeypatch.setattr(evaluate_ranges, "GAMES_PER_JOB", 1)
    alone = duplicate_match("italian_3p", HeuristicAgent, RandomAgent, deals=5, seed=6, games=4)
    split = duplicate_match("italian_3p", HeuristicAgent, RandomAgent, deals=5, seed=6, games=4, workers=2)
    assert split.to_dict() == alone.to_dict()
    assert split.board_diffs == alone.board_diffs and len(alone.board_diffs) == 5 and alone.games == 4


def test_agent_specs_are_agents_of_the_registry():
    by_spec = duplicate_match("australian", "heuristic", "random", deals=3, seed=2).to_dict()
    by_class = duplicate_match("australian", HeuristicAgent, RandomAgent, deals=3, seed=2).to_dict()
    assert by_spec == by_class and by_spec["agent_a"] == "heuristic"


def test_an_agent_that_cannot_go_to_a_worker_is_named():
    from training.workers.distributed import WorkerError

    def local_factory(rules, seed):  # a closure: not picklable, so no worker can build it
        return RandomAgent(rules, seed)

    with pytest.raises(WorkerError, match="job 0 cannot be sent to a worker process"):
        duplicate_match("australian", local_factory, RandomAgent, deals=100, workers=2)  # two ranges
    with pytest.raises(ValueError, match="workers must be a whole number >= 1, got 0"):
        duplicate_match("australian", RandomAgent, RandomAgent, deals=2, workers=0)
