"""What agents score against people: the games ``serve --keep-games DIR`` keeps, and
``five-hundred human-results DIR`` (training.web.kept), whose figures are ``evaluate``'s
(training.evaluation.statistics) over the deals and games each agent played against people."""

from __future__ import annotations

import json
import random
import time

import pytest

from five_hundred_env.records import replay
from five_hundred_env.rules import make_rules
from training.cli import main
from training.evaluation.statistics import mean_ci95, wilson_ci95
from training.web.kept import human_results, keep_game
from training.web.menu import AgentMenu
from training.web.session import GameSession
from training.web.store import GameStore


def play_out(session: GameSession, give_at_deal: tuple[int, int, str] | None = None, bid: bool = True) -> None:
    """The agents' moves here, the people bidding whenever they may (games end sooner; ``bid``
    false: passing) and playing their first legal card; ``give_at_deal``: at the start of that
    deal, the creator gives that seat to that agent."""
    while not session.finished:
        if give_at_deal and len(session.game.deals) == give_at_deal[0] and give_at_deal[1] in session.people:
            session.give_seat(session.creator, give_at_deal[1], give_at_deal[2])
        if (prepared := session.prepare_move()) is not None:
            assert session.finish_move(prepared[0], prepared[1]())
            continue
        seat = session.game.to_act
        legal = session.view(seat)["legal"]
        bids = [a for a in legal if a != "PASS"] if bid or "PASS" not in legal else []
        session.play(seat, bids[0] if bids else "PASS" if "PASS" in legal else legal[0])


def test_the_report_is_each_agents_points_and_games_against_the_people(tmp_path):
    """Two people as partners (seats 0 and 2) against the heuristic (1) and random (3): every deal
    counts for both agents, each against the people's side."""
    rules = make_rules("australian")
    session = GameSession("K" * 24, rules, agents=[None, "heuristic", None, "random"], seed=5)
    play_out(session)
    keep_game(tmp_path, session, AgentMenu())
    results, skipped = human_results(tmp_path)
    assert skipped == [] and results["files"] == 1
    rows = {row["agent"]: row for row in results["agents"]}
    assert set(rows) == {"heuristic", "random"}
    changes = [deal.score_change for deal in session.game.deals]
    for row in rows.values():
        assert row["preset"] == "australian" and row["deals"] == len(changes)
        mean, lo, hi, _ = mean_ci95([c[1] for c in changes])
        assert row["points_per_deal"]["mean"] == pytest.approx(mean, abs=1e-3)
        if len(changes) > 1:
            assert row["points_per_deal"]["ci95"] == pytest.approx([lo, hi], abs=1e-3)
        assert row["diff_per_deal"]["mean"] == pytest.approx(mean_ci95([c[1] - c[0] for c in changes])[0], abs=1e-3)
        won = int(1 in session.game.winners)
        assert row["games"]["games"] == 1 and row["games"]["wins"] == won
        assert row["games"]["ci95"] == pytest.approx(list(wilson_ci95(won, 1)))
        assert row["versions"]


def test_a_seat_given_to_an_agent_counts_from_the_next_whole_deal(tmp_path):
    """Seat 2's person leaves after the first deal and the creator gives the seat to random:
    random then partners a person (not against people: none of its deals count), the heuristic
    counts every deal (a person is still on the other side), and no game counts for random."""
    rules = make_rules("australian")
    session = GameSession("L" * 24, rules, agents=[None, "heuristic", None, "heuristic"], seed=3)
    play_out(session, give_at_deal=(2, 2, "random"), bid=False)
    assert session.specs[2] == "random" and len(session.game.deals) > 1
    keep_game(tmp_path, session, AgentMenu())
    rows = {row["agent"]: row for row in human_results(tmp_path)[0]["agents"]}
    assert set(rows) == {"heuristic"}
    assert rows["heuristic"]["deals"] == len(session.game.deals)


def test_what_is_kept_is_the_record_and_the_seats_and_nothing_secret(tmp_path):
    games, kept = tmp_path / "games", tmp_path / "kept"
    store = GameStore(games, pace=0.0, seeds=random.Random(0), keep=kept)
    try:
        watched, _ = store.create("italian_3p", mode="watch", agents=["heuristic"] * 3, length="deal")
        store.control(watched.id, None, "play")
        session, tokens = store.create("italian_3p", agents=[None, "heuristic", None], length="deal")
        store.give_name(session.id, tokens[1], "Ann")
        deadline = time.monotonic() + 60
        while not (session.finished and watched.finished) and time.monotonic() < deadline:
            seat = session.game.to_act
            if not session.finished and seat in session.people and not session.pending:
                legal = session.view(seat)["legal"]
                store.play(session.id, tokens[session.people.index(seat)], "PASS" if "PASS" in legal else legal[0])
            time.sleep(0.005)
        store.flush()
    finally:
        store.close()
    files = list(kept.iterdir())
    assert len(files) == 1  # the watched game had nobody in it
    data = json.loads(files[0].read_text())
    assert replay(data["record"]).deals[0].history == session.game.deals[0].history
    assert [[{k: e[k] for k in ("agent", "name")} for e in seat] for seat in data["seats"]] == [
        [{"agent": None, "name": None}], [{"agent": "heuristic", "name": None}], [{"agent": None, "name": "Ann"}]]
    assert data["seats"][1][0]["version"]
    text = files[0].read_text()
    assert session.id not in text and not any(token in text for token in tokens) and str(session.seed) not in text


def test_the_command_prints_the_report_and_names_what_it_skips(tmp_path, capsys):
    session = GameSession("M" * 24, make_rules("italian_3p"), agents=[None, "heuristic", "heuristic"], seed=2)
    play_out(session)
    keep_game(tmp_path, session, AgentMenu())
    (tmp_path / "broken.json").write_text("{not json")
    assert main(["human-results", str(tmp_path), "--json", str(tmp_path / "out" / "results.json")]) == 0
    out, err = capsys.readouterr()
    assert "heuristic against people — italian_3p" in out and "score difference per deal (agent − people)" in out
    assert "games: won" in out and "skipped broken.json" in err
    assert json.loads((tmp_path / "out" / "results.json").read_text())["agents"][0]["agent"] == "heuristic"
    assert main(["human-results", str(tmp_path / "nowhere")]) == 2
    assert "no such folder" in capsys.readouterr().err
