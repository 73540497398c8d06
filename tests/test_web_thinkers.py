"""The web table's agent processes (training.web.thinkers): the agents of ``five-hundred serve``
think there, off the server's interpreter lock. They must play the very moves they play on the
server's threads, a failing agent must stop its own game only, and a process that dies must fail
the moves waiting on it rather than hang them."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from five_hundred_env.rules import make_rules
from training.web.app import create_app
from training.web.session import GameSession
from training.web.store import GameStore
from training.web.thinkers import AgentFailed, AgentProcesses


@pytest.fixture(scope="module")
def processes():
    agents = AgentProcesses(1, 2)
    yield agents
    agents.close()


def play_deal(session: GameSession) -> list[int]:
    """The agents' moves in this thread, and a person who bids when they may and plays their first legal card."""
    while not session.finished:
        while (prepared := session.prepare_move()) is not None:
            revision, think = prepared
            assert session.finish_move(revision, think())
        if not session.finished:
            legal = session.view()["legal"]
            bids = [a for a in legal if a != "PASS"]
            session.play(bids[0] if bids else legal[0])
    return session.actions


@pytest.mark.parametrize("preset", ["australian", "five_handed"])
def test_agents_in_a_process_play_the_moves_they_play_on_threads(processes, preset):
    agents = [None] + ["heuristic"] * (make_rules(preset).num_players - 1)
    here = GameSession("here-" + "x" * 20, make_rules(preset), agents=agents, seed=11, length="deal")
    there = GameSession("there-" + "x" * 20, make_rules(preset), agents=agents, seed=11, length="deal")
    there.agents_elsewhere = processes.act
    assert play_deal(there) == play_deal(here)
    processes.forget(there.id)


def test_an_agent_that_fails_in_its_process_is_an_error_and_the_process_goes_on(processes):
    rules = make_rules("australian")
    session = GameSession("fails-" + "x" * 20, rules, agents=[None] + ["heuristic"] * 3, seed=3)
    observation = session.encoder.encode_turn(session.game.deal, session.table, session.game.scores)
    with pytest.raises(AgentFailed, match="no-such-agent"):
        processes.act(session.id, 1, ("no-such-agent", rules, 0), observation)
    assert processes.act(session.id + "2", 1, ("heuristic", rules, 0), observation) >= 0


def test_a_process_that_dies_fails_the_moves_sent_to_it():
    agents = AgentProcesses(1, 1)
    rules = make_rules("australian")
    session = GameSession("dies-" + "x" * 20, rules, agents=[None] + ["heuristic"] * 3, seed=3)
    observation = session.encoder.encode_turn(session.game.deal, session.table, session.game.scores)
    try:
        agents._processes[0].process.kill()
        agents._processes[0].process.join()
        with pytest.raises(AgentFailed, match="stopped"):
            agents.act(session.id, 1, ("heuristic", rules, 0), observation)
    finally:
        agents.close()


def test_a_server_with_agent_processes_plays_a_deal_through_the_api():
    store = GameStore(None, pace=0.0, workers=2, agent_processes=1)
    with TestClient(create_app(store)) as client:
        view = client.post("/api/games", json={"preset": "italian_3p", "agents": ["heuristic"] * 3,
                                               "length": "deal"}).json()
        while not (view["stopped"] or view["over"]):
            if view["legal"]:
                view = client.post(f"/api/games/{view['id']}/action", json={"action": view["legal"][-1]}).json()
            else:
                view = client.get(f"/api/games/{view['id']}", params={"after": view["revision"], "wait": 10}).json()
            assert view["error"] is None, view["error"]
        assert client.delete(f"/api/games/{view['id']}").status_code == 204
