"""The web table's agent processes (training.web.thinkers): the agents of ``five-hundred serve``
think there, on a copy of each game, off the server's interpreter lock. They must play the very
moves they play on the server's threads, a copy gone astray must be made anew, a failing agent
must stop its own game only, and a process that dies must fail the moves waiting on it rather
than hang them."""

from __future__ import annotations

import asyncio
import os
import random
import signal

import pytest
from web_helpers import PersonClient

from five_hundred_env.rules import make_rules
from training.web.app import create_app
from training.web.session import GameSession
from training.web.store import GameStore
from training.web.thinkers import MAX_NICE, AgentFailed, AgentProcesses, GameSetup


@pytest.fixture(scope="module")
def processes():
    agents = AgentProcesses(1, 2)
    yield agents
    agents.close()


def play_deal(session: GameSession, astray: bool = False) -> list[int]:
    """The agents' moves in this thread, and a person who bids when they may and plays their first
    legal card; ``astray``: once, the copy elsewhere is taken for one at another move."""
    while not session.finished:
        while (prepared := session.prepare_move()) is not None:
            revision, think = prepared
            assert session.finish_move(revision, think())
        if not session.finished:
            if astray and (session._told or 0) > 1:
                session._told, astray = 1, False
            legal = session.view(0)["legal"]
            bids = [a for a in legal if a != "PASS"]
            session.play(0, bids[0] if bids else legal[0])
    return session.actions


def two_sessions(preset: str, processes: AgentProcesses, name: str) -> tuple[GameSession, GameSession]:
    agents = [None] + ["heuristic"] * (make_rules(preset).num_players - 1)
    here = GameSession(f"{name}-here-" + "x" * 20, make_rules(preset), agents=agents, seed=11, length="deal")
    there = GameSession(f"{name}-there-" + "x" * 20, make_rules(preset), agents=agents, seed=11, length="deal")
    there.agents_elsewhere = processes.play
    return here, there


@pytest.mark.parametrize("preset", ["australian", "five_handed"])
def test_agents_in_a_process_play_the_moves_they_play_on_threads(processes, preset):
    here, there = two_sessions(preset, processes, "same")
    assert play_deal(there) == play_deal(here)
    processes.forget(there.id)


def test_a_copy_gone_astray_is_made_anew(processes):
    here, there = two_sessions("australian", processes, "astray")
    assert play_deal(there, astray=True) == play_deal(here)


def test_an_agent_that_fails_in_its_process_is_an_error_and_the_process_goes_on(processes):
    rules = make_rules("australian")
    broken = GameSetup(rules, 3, None, None, ("no-such-agent",) * 4)
    with pytest.raises(AgentFailed, match="no-such-agent"):
        processes.play("fails-" + "x" * 20, broken, 0, [], 4)
    working = GameSetup(rules, 3, None, None, ("heuristic",) * 4)
    assert len(processes.play("works-" + "x" * 20, working, 0, [], 4)) == 4


def test_a_process_that_dies_is_started_anew_and_the_copies_are_made_again():
    agents = AgentProcesses(1, 1)
    setup = GameSetup(make_rules("australian"), 3, None, None, (None, "heuristic", "heuristic", "heuristic"))
    game_id = "dies-" + "x" * 20

    def kill() -> None:
        process = agents._processes[0].process
        process.kill()
        process.join()

    try:
        person = setup.game().legal_actions()[0]  # seat 0, the person, bids first
        before = agents.play(game_id, setup, 0, [person], 3)
        kill()
        # The exchange carries the setup: the new process makes the copy and answers the same moves.
        assert agents.play(game_id, setup, 0, [person], 3) == before
        kill()
        # Moves since an earlier exchange only: the new process has no copy and asks for the setup.
        assert agents.play(game_id, None, 1, before, 1) is None
        assert agents._processes[0].process.is_alive()
    finally:
        agents.close()


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="niceness is a Unix process's")
@pytest.mark.parametrize("nice", [0, 7])
def test_the_agent_processes_run_at_the_niceness_asked_below_the_server(nice):
    agents = AgentProcesses(1, 1, nice)
    try:
        setup = GameSetup(make_rules("australian"), 3, None, None, ("heuristic",) * 4)
        assert len(agents.play("nice-" + "x" * 20, setup, 0, [], 4)) == 4  # it answers: past its start
        pid = agents._processes[0].process.pid
        assert os.getpriority(os.PRIO_PROCESS, pid) == min(MAX_NICE, os.getpriority(os.PRIO_PROCESS, 0) + nice)
    finally:
        agents.close()


@pytest.mark.parametrize("nice", [-1, 20, 2.5, True])
def test_a_niceness_out_of_range_is_refused(nice):
    with pytest.raises(ValueError, match="niceness must be 0 to 19"):
        AgentProcesses(1, 1, nice)
    with pytest.raises(ValueError, match="niceness must be 0 to 19"):
        GameStore(None, agent_processes=1, agent_nice=nice)


def test_exchanges_asked_from_an_event_loop_play_the_moves_asked_from_threads(processes):
    """More exchanges at once than the loop has pipes (2): those beyond wait their turn."""
    rules = make_rules("australian")
    setups = [GameSetup(rules, seed, None, None, ("heuristic",) * 4) for seed in range(5)]
    by_threads = [processes.play(f"thread-{seed}-" + "x" * 20, setup, 0, [], 4) for seed, setup in enumerate(setups)]

    async def all_at_once() -> list[list[int] | None]:
        return await asyncio.gather(*(processes.ask(f"loop-{seed}-" + "x" * 20, setup, 0, [], 4)
                                      for seed, setup in enumerate(setups)))

    assert asyncio.run(all_at_once()) == by_threads
    assert len(processes._processes[0]._loop_free) == 2  # every pipe given back


def test_an_agent_that_fails_asked_from_an_event_loop_is_an_error(processes):
    broken = GameSetup(make_rules("australian"), 3, None, None, ("no-such-agent",) * 4)
    with pytest.raises(AgentFailed, match="no-such-agent"):
        asyncio.run(processes.ask("fails-loop-" + "x" * 20, broken, 0, [], 4))


def test_a_process_that_dies_under_an_event_loops_exchange_is_started_anew():
    agents = AgentProcesses(1, 1)
    setup = GameSetup(make_rules("australian"), 3, None, None, (None, "heuristic", "heuristic", "heuristic"))
    game_id = "dies-loop-" + "x" * 20
    try:
        person = setup.game().legal_actions()[0]
        before = asyncio.run(agents.ask(game_id, setup, 0, [person], 3))
        agents._processes[0].process.kill()
        agents._processes[0].process.join()
        assert asyncio.run(agents.ask(game_id, setup, 0, [person], 3)) == before
        agents._processes[0].process.kill()
        agents._processes[0].process.join()
        assert asyncio.run(agents.ask(game_id, None, 1, before, 1)) is None  # no copy: the setup is asked for
    finally:
        agents.close()


def test_a_process_killed_under_the_event_loops_exchanges_fails_none_of_them():
    """Two exchanges sent (the loop's two pipes) and three waiting for a pipe when the process dies:
    each is sent again to the new process (the pipes in use stay open until their exchange has
    seen the process's end: a pipe closed under its reader would never wake it)."""
    agents = AgentProcesses(1, 2)
    rules = make_rules("australian")
    setups = [GameSetup(rules, seed, None, None, ("heuristic",) * 4) for seed in range(5)]
    try:
        expected = [agents.play(f"before-{seed}-" + "x" * 20, setup, 0, [], 4) for seed, setup in enumerate(setups)]
        process = agents._processes[0].process
        os.kill(process.pid, signal.SIGSTOP)  # the exchanges are sent, and none is answered

        async def killed_meanwhile() -> list[list[int] | None]:
            asks = [asyncio.create_task(agents.ask(f"during-{seed}-" + "x" * 20, setup, 0, [], 4))
                    for seed, setup in enumerate(setups)]
            await asyncio.sleep(0.05)
            process.kill()
            process.join()
            return await asyncio.wait_for(asyncio.gather(*asks), 60)

        assert asyncio.run(killed_meanwhile()) == expected
        assert agents._processes[0].process is not process
    finally:
        agents.close()


def play_to_the_end(client: PersonClient, view: dict) -> dict:
    """Play a game through the API to its end (the person's last legal move each turn, long polls
    for the agents'); no view may carry an error. The last view."""
    while not (view["stopped"] or view["over"]):
        if view["legal"]:
            view = client.post(f"/api/games/{view['id']}/action", json={"action": view["legal"][-1]}).json()
        else:
            view = client.get(f"/api/games/{view['id']}", params={"after": view["revision"], "wait": 10}).json()
        assert view["error"] is None, view["error"]
    return view


def test_a_server_with_agent_processes_drives_their_exchanges_from_its_event_loop(monkeypatch):
    """The exchanges go through the loop's ``ask``: the worker threads' ``play`` is never called."""
    store = GameStore(None, pace=0.0, workers=2, agent_processes=1, seeds=random.Random(0))
    assert store.processes is not None

    def no_threads(*_args: object) -> None:
        raise AssertionError("an exchange was sent from a worker thread")

    monkeypatch.setattr(store.processes, "play", no_threads)
    with PersonClient(create_app(store)) as client:
        view = client.post("/api/games", json={"preset": "australian", "agents": ["heuristic"] * 4,
                                               "length": "deal", "seat": 3}).json()  # seat 3: the agents begin
        play_to_the_end(client, view)
    assert not store._tasks  # the app's end waited for the moves in progress


def test_a_server_with_agent_processes_plays_a_deal_through_the_api():
    store = GameStore(None, pace=0.0, workers=2, agent_processes=1, seeds=random.Random(0))
    with PersonClient(create_app(store)) as client:
        view = client.post("/api/games", json={"preset": "italian_3p", "agents": ["heuristic"] * 3,
                                               "length": "deal"}).json()
        view = play_to_the_end(client, view)
        assert client.delete(f"/api/games/{view['id']}").status_code == 204
