"""The league (training.evaluation.league): its ratings' fit on synthetic results with known
ratings, agreement with the pairwise matches, the cache (new agents play only their pairs, a
stopped league resumes), its reports and the command line."""

from __future__ import annotations

import fcntl
import itertools
import json

import numpy as np
import pytest
from agent_helpers import FirstLegal, registered

from five_hundred_env.rules import make_rules
from training.cli import main
from training.evaluation import league
from training.evaluation.evaluate import duplicate_match
from training.evaluation.league import PairCache, run_league, spec_identity
from training.evaluation.ratings import ELO, board_outcomes, fit_ratings, league_points, league_ratings


def synthetic_outcomes(true: np.ndarray, boards: int, seed: int) -> dict[tuple[int, int], np.ndarray]:
    """Per-board results of every pair drawn from the Bradley–Terry model with ratings ``true``:
    a tenth of the boards drawn, the others won with the probability that keeps a draw worth half
    (the model's expected score)."""
    rng = np.random.default_rng(seed)
    outcomes = {}
    for i, j in itertools.combinations(range(len(true)), 2):
        p = 1 / (1 + 10 ** (-(true[i] - true[j]) / 400))
        u = rng.random(boards)
        outcomes[i, j] = np.where(u < 0.1, 0.5, np.where(u < 0.1 + max(p - 0.05, 0.0), 1.0, 0.0))
    return outcomes


def test_the_fit_recovers_known_ratings_within_their_intervals():
    true = np.array([0.0, 120.0, -250.0, 310.0, 40.0, -90.0])
    outcomes = synthetic_outcomes(true, 4000, seed=1)
    ratings, lo, hi = league_ratings(outcomes, len(true), anchor=0, reps=300)
    assert ratings[0] == 0 and lo[0] == hi[0] == 0
    assert np.all(np.abs(ratings - true) < 30)
    assert np.all((lo <= true) & (true <= hi))
    assert np.all(hi - lo < 60)


def test_without_the_anchor_the_mean_rating_is_zero_and_differences_are_the_same():
    true = np.array([0.0, 200.0, -100.0])
    outcomes = synthetic_outcomes(true, 2000, seed=2)
    anchored = fit_ratings(*_counts(outcomes, 3), anchor=0)
    free = fit_ratings(*_counts(outcomes, 3), anchor=None)
    assert abs(free.mean()) < 1e-6
    assert np.allclose(anchored - anchored[0], free - free[0], atol=1e-6)


def _counts(outcomes, k):
    wins, boards = np.zeros((k, k)), np.zeros((k, k))
    for (i, j), o in outcomes.items():
        wins[i, j], wins[j, i] = o.sum(), len(o) - o.sum()
        boards[i, j] = boards[j, i] = len(o)
    return wins, boards


def test_an_agent_that_wins_every_board_gets_a_finite_rating_above_the_rest():
    outcomes = {(0, 1): np.ones(500), (0, 2): np.ones(500), (1, 2): board_outcomes([5.0] * 300 + [-5.0] * 200)}
    ratings, lo, hi = league_ratings(outcomes, 3, anchor=1, reps=100)
    assert np.all(np.isfinite(ratings)) and np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))
    assert ratings[0] > ratings[1] > ratings[2]
    assert ratings[1] - ratings[2] == pytest.approx(ELO * np.log((300 + 0.5) / (200 + 0.5)), abs=0.5)


def test_the_points_fit_is_the_pairs_means_when_they_add_up():
    true = np.array([0.0, 40.0, -300.0, 15.0])
    rng = np.random.default_rng(3)
    diffs = {(i, j): true[i] - true[j] + rng.normal(0, 120, 1000) for i, j in itertools.combinations(range(4), 2)}
    points, lo, hi = league_points(diffs, 4, anchor=0, reps=200)
    assert np.all(np.abs(points - true) < 8) and np.all((lo <= true) & (true <= hi))
    exact = {(i, j): np.full(5, true[i] - true[j]) for i, j in itertools.combinations(range(4), 2)}
    assert np.allclose(league_points(exact, 4, anchor=0, reps=0)[0], true)


def test_ratings_agree_with_every_clear_pairwise_result():
    """A league with a known order (each agent a known strength) and noisy boards: wherever a pair's
    share of boards won has a 95% interval clear of a half, the winner is rated above."""
    true = np.array([-400.0, -120.0, -60.0, 0.0, 15.0, 200.0, 230.0])
    outcomes = synthetic_outcomes(true, 300, seed=5)
    ratings, _lo, _hi = league_ratings(outcomes, len(true), anchor=3, reps=50)
    clear = 0
    for (i, j), o in outcomes.items():
        share, half = o.mean(), 1.96 * o.std(ddof=1) / np.sqrt(len(o))
        if share - half > 0.5:
            assert ratings[i] > ratings[j]
            clear += 1
        elif share + half < 0.5:
            assert ratings[i] < ratings[j]
            clear += 1
    assert clear >= 15
    assert list(np.argsort(-ratings)[:2]) in ([6, 5], [5, 6]) and np.argmin(ratings) == 0


@pytest.fixture(autouse=True, scope="module")
def passer_registered():
    """``test-passer``: passes whenever it may, else plays its first card (between random and the heuristic)."""
    with registered("test-passer", FirstLegal):
        yield


@pytest.fixture
def small_ranges(monkeypatch):
    """Ranges of 10 boards (50 in use): the cache's ranges, resumption and growth on few boards."""
    monkeypatch.setattr(league, "BOARDS_PER_JOB", 10)


def test_a_real_league_orders_its_agents_and_agrees_with_duplicate_match(tmp_path):
    report = run_league("two_handed", ["random", "heuristic", "test-passer"], 40, seed=4, cache=tmp_path)
    assert [report.agents[i] for i in report.order] == ["heuristic", "test-passer", "random"]
    assert report.ratings[report.agents.index("heuristic")] == 0
    match = duplicate_match("two_handed", "heuristic", "random", 40, seed=4)
    assert report.matches[1, 0].board_diffs == match.board_diffs  # "heuristic" sorts before "random": side A
    assert report.versus(0, 1)[0] == pytest.approx(-match.score_diff[0])
    data = report.to_dict()
    assert [r["agent"] for r in data["ratings"]] == ["heuristic", "test-passer", "random"]
    assert all(r["ci95"][0] <= r["rating"] <= r["ci95"][1] for r in data["ratings"])
    assert len(data["matches"]) == 3 and data["boards"] == {"seed": 4}
    table = report.format_table()
    assert table.splitlines()[2].startswith("| 1 | `heuristic` | +0 | [+0, +0] | +0.0 |")
    assert report.points[report.agents.index("random")] < report.points[report.agents.index("test-passer")] < 0


def test_adding_an_agent_plays_only_its_pairs_and_changes_nothing_else(tmp_path, small_ranges):
    first = run_league("two_handed", ["random", "heuristic"], 15, seed=2, cache=tmp_path)
    assert (first.played_boards, first.cached_boards) == (15, 0)
    second = run_league("two_handed", ["heuristic", "test-passer", "random"], 15, seed=2, cache=tmp_path)
    assert (second.played_boards, second.cached_boards) == (30, 15)
    assert second.matches[0, 2].board_diffs == first.matches[1, 0].board_diffs
    again = run_league("two_handed", ["random", "test-passer", "heuristic"], 15, seed=2, cache=tmp_path)
    assert (again.played_boards, again.cached_boards) == (0, 45)
    more = run_league("two_handed", ["random", "heuristic"], 27, seed=2, cache=tmp_path)
    assert more.played_boards == 12
    assert more.matches[1, 0].board_diffs == duplicate_match("two_handed", "heuristic", "random", 27, seed=2).board_diffs
    other_boards = run_league("two_handed", ["random", "heuristic"], 5, seed=3, cache=tmp_path)
    assert other_boards.played_boards == 5


def test_a_stopped_league_resumes_from_what_it_played(tmp_path, monkeypatch, small_ranges):
    agents = ["random", "heuristic", "test-passer"]
    whole = run_league("two_handed", agents, 24, seed=6, cache=None)
    calls = {"n": 0}
    add = PairCache.add

    def stop_after_four(self, job, results):
        add(self, job, results)
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt

    monkeypatch.setattr(PairCache, "add", stop_after_four)
    with pytest.raises(KeyboardInterrupt):
        run_league("two_handed", agents, 24, seed=6, cache=tmp_path)
    monkeypatch.setattr(PairCache, "add", add)
    last = max(tmp_path.glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    last.write_text(last.read_text() + '{"kind": "boards", "start": 10, "stop"')  # a line cut short by the crash
    resumed = run_league("two_handed", agents, 24, seed=6, cache=tmp_path)
    played_before = 10 + 10 + 4 + 10  # the first pair's three ranges, then the second's first
    assert resumed.cached_boards == played_before and resumed.played_boards == 72 - played_before
    for pair, report in whole.matches.items():
        assert resumed.matches[pair].board_diffs == report.board_diffs
    assert np.array_equal(resumed.ratings, whole.ratings)


def test_a_cache_in_use_by_another_league_is_refused(tmp_path):
    tmp_path.joinpath(".lock").touch()
    with tmp_path.joinpath(".lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(ValueError, match="another league is using the cache"):
            run_league("australian", ["random", "heuristic"], 5, cache=tmp_path)


def test_a_changed_checkpoint_is_a_new_agent_for_the_cache(tmp_path):
    from network_helpers import write_checkpoint

    checkpoint = tmp_path / "net.pt"
    write_checkpoint(checkpoint, "two_handed", seed=1)
    cache = tmp_path / "cache"
    assert run_league("two_handed", ["random", str(checkpoint)], 2, cache=cache).played_boards == 2
    assert run_league("two_handed", ["random", str(checkpoint)], 2, cache=cache).played_boards == 0
    write_checkpoint(checkpoint, "two_handed", seed=2)
    assert run_league("two_handed", ["random", str(checkpoint)], 2, cache=cache).played_boards == 2


def test_an_edited_bot_is_a_new_agent_for_the_cache(tmp_path):
    script = tmp_path / "bot.py"
    script.write_text("print('v1')\n")
    spec = f"cmd[timeout=3]:python3 {script} --fast"
    before = spec_identity(spec)
    assert before["spec"] == spec and set(before["files"]) == {str(script)}
    script.write_text("print('v2')\n")
    assert spec_identity(spec) != before
    assert spec_identity("heuristic@play") == {"spec": "heuristic@play", "files": {}}


def test_a_new_shipped_network_is_a_new_agent_for_the_cache(tmp_path, monkeypatch):
    """The registered names that play a network of the package (pretrained, scratch, and pimc, whose
    default base is pretrained) carry its digest: shipping a new network does not reuse old boards."""
    import agents.pretrained

    folder = tmp_path / "networks"
    folder.mkdir()
    (folder / "australian.pt").write_bytes(b"one")
    monkeypatch.setattr(agents.pretrained, "SCRATCH_DIR", folder)
    monkeypatch.setattr(agents.pretrained, "PRETRAINED_DIR", folder)
    rules = make_rules("australian")
    before = {spec: spec_identity(spec, rules) for spec in ("scratch", "pretrained@play", "pimc:worlds=8")}
    assert all(identity["files"] for identity in before.values())
    (folder / "two_handed.pt").write_bytes(b"other")  # another preset's network: the same agents here
    assert all(spec_identity(spec, rules) == identity for spec, identity in before.items())
    assert spec_identity("pretrained") != spec_identity("pretrained", rules)  # without rules: every preset's
    (folder / "australian.pt").write_bytes(b"two")
    assert all(spec_identity(spec, rules) != identity for spec, identity in before.items())


@pytest.mark.parametrize(("agents", "words"), [
    (["heuristic"], "at least two agents"),
    (["heuristic", "random", "heuristic"], "'heuristic' is given twice"),
])
def test_a_bad_league_is_refused(agents, words):
    with pytest.raises(ValueError, match=words):
        run_league("australian", agents, 5)


def test_the_command_line_writes_the_table_the_json_and_the_picture(tmp_path, capsys):
    out, js, png = tmp_path / "table.md", tmp_path / "league.json", tmp_path / "ratings.png"
    code = main(["league", "random", "heuristic", "test-passer", "--rules", "two_handed", "--bench", "v1", "--deals", "30",
                 "--games", "4", "--cache", str(tmp_path / "cache"), "--out", str(out), "--json", str(js), "--plot", str(png)])
    assert code == 0
    printed = capsys.readouterr()
    assert "90 boards (0 from the cache)" in printed.out and "the first 30 boards of bench v1 (two_handed" in printed.out
    data = json.loads(js.read_text())
    assert data["boards"]["bench"] == "v1" and len(data["boards"]["sha256"]) == 64
    assert data["ratings"][0]["agent"] == "heuristic"
    assert all(m["games"]["games"] == 4 for m in data["matches"])
    assert out.read_text().startswith("| rank | agent | rating | 95% interval | points/deal | vs #1 | vs #2 | vs #3 |")
    assert "%)" in out.read_text()  # games won, where --games
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["league", "heuristic", "--no-cache"]) == 2
    assert "at least two agents" in capsys.readouterr().err
