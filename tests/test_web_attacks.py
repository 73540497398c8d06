"""The web table probed as an attacker would (issue 37's second half), over real HTTP.

Each route of the API, with no seat token, a wrong one, or another seat's: none acts for a seat
or shows its cards. No request, saved game or option makes the server load a file, run code or
grow past its bound: the agents come from the server's fixed menu (training.web.menu), with
bounded options, whatever a page, a hint or a saved game names; the server builds no agent of
its own when its agents think in a process, and the networks are loaded once per process; a
deleted game's agents go; the agent process ends with the server, however it ends. Saved games
are checked as requests are and are their owner's alone. The Host, Origin and Content-Type of a
request are checked, and no malformed query or body is a 500.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import httpx
import pytest
from web_helpers import SLEEPING, Sleeper, creator_token, free_port, running_server, token_of

import agents.registry
from agents.pretrained import pretrained_path
from five_hundred_env.rules import make_rules
from training.web.menu import BUILTIN_CHOICES, MAX_SECONDS, MAX_WORLDS, AgentMenu, Choice
from training.web.saver import read_game
from training.web.session import GameSession
from training.web.store import GameStore

SLEEPER_MENU = AgentMenu(choices=(*BUILTIN_CHOICES, Choice("sleeper", "thinks for a minute", Sleeper)))
HOSTILE_SPECS = [
    "pimc:base=trusted:evil.zip", "trusted:evil.zip", "evil.zip", "final.pt", "./final.pt", "pimc:rollout=final.pt",
    "pimc:base=final.pt", "heuristic@play,trusted:evil.zip", "cmd:touch MARKER", "cmd:python -c 'open(\"MARKER\", \"w\")'",
    "pretrained:path=final.pt", "/etc/passwd", "~/.bashrc", "pimc:worlds=100000000", f"pimc:worlds={MAX_WORLDS + 1}",
    "pimc:seconds=1e9", f"pimc:seconds={MAX_SECONDS * 2}", "pimc:worlds=nan", "pimc:seconds=inf", "pimc:worlds=8,worlds=9",
    "x" * 300, "heuristic@play@bid", "",
]
"""Agent specs a page may send: files (an SB3 zip that runs its pickled code, a checkpoint), commands,
an option naming an agent, numbers past their bounds. Each must be refused, loading nothing."""


@pytest.fixture(scope="module")
def server():
    """A real server in a thread (agents on its threads), for the module; its store."""
    store = GameStore(None, pace=0.0, workers=2, seeds=random.Random(0), max_games=1000)
    with running_server(store) as url:
        yield url, store


@pytest.fixture(scope="module")
def http():
    with httpx.Client(timeout=60) as client:
        yield client


@pytest.fixture
def table(server, http):
    """A game of two people (seats 0 and 2) and two agents on the module's server: ``(base url,
    game id, the creator's token, seat 2's token, the store)``."""
    url, store = server
    created = http.post(f"{url}/api/games", json={"preset": "australian", "length": "deal",
                                                  "seats": ["human", "heuristic", "human", "heuristic"]}).json()
    tokens = [token_of(link) for link in created["seat_links"]]
    session = store.games[created["id"]]
    deadline = time.monotonic() + 60
    while session.pending or session.agent_to_move() or session.game.to_act != 0:  # until seat 0 is to act, and stays
        assert time.monotonic() < deadline
        if session.pending or session.agent_to_move():
            time.sleep(0.01)
        else:  # seat 2 bids first (a bid: the auction goes on to seat 0)
            legal = session.view(2)["legal"]
            store.play(session.id, tokens[1], next((a for a in legal if a != "PASS"), legal[0]))
    yield url, created["id"], tokens[0], tokens[1], store
    if created["id"] in store.games:
        store._end(store.games[created["id"]])


def hand(view: dict, seat: int) -> set[str]:
    return {card["name"] for card in view["seats"][seat]["hand"] or ()}


# -- no request without a seat's token acts for it or shows its cards ----------------------------------------
ROUTES = [("GET", "", None), ("POST", "/action", {"action": "PASS"}), ("POST", "/hint", {"agent": "heuristic"}),
          ("POST", "/name", {"name": "Mallory"}), ("POST", "/seat", {"seat": 2, "agent": "heuristic"}),
          ("POST", "/control", {"command": "play"}), ("GET", "/record", None), ("DELETE", "", None)]


@pytest.mark.parametrize(("method", "route", "body"), ROUTES)
@pytest.mark.parametrize("token", [None, "", "wrong", "A" * 32])
def test_no_route_answers_a_request_without_a_seats_token(table, method, route, body, token, http):
    url, game_id, creator, _partner, store = table
    session = store.games[game_id]
    before = (session.revision, list(session.actions))
    params = {} if token is None else {"token": token}
    response = http.request(method, f"{url}/api/games/{game_id}{route}", params=params, json=body)
    assert response.status_code == 403, response.text
    assert set(response.json()) == {"error"}
    assert (session.revision, list(session.actions)) == before and game_id in store.games
    view = http.get(f"{url}/api/games/{game_id}", params={"token": creator}).json()
    assert view["seats"][0]["name"] == "player_0" and view["seats"][2]["person"]  # nothing renamed, no seat given away


@pytest.mark.parametrize(("method", "route", "body", "status"), [
    ("POST", "/action", {"action": "PASS"}, 409), ("POST", "/hint", {"agent": "heuristic"}, 409),
    ("POST", "/seat", {"seat": 0, "agent": "heuristic"}, 403), ("POST", "/control", {"command": "play"}, 409),
    ("GET", "/record", None, 409), ("DELETE", "", None, 403)])
def test_another_seats_token_acts_only_for_its_own_seat(table, method, route, body, status, http):
    """Seat 2's person, while seat 0 is to act: no move, hint, seat, record or end for them."""
    url, game_id, _creator, partner, store = table
    session = store.games[game_id]
    assert session.game.to_act == 0
    http.get(f"{url}/api/games/{game_id}", params={"token": partner})  # at the table: a change of every view
    before = (session.revision, list(session.actions))
    response = http.request(method, f"{url}/api/games/{game_id}{route}", params={"token": partner}, json=body)
    assert response.status_code == status, response.text
    assert (session.revision, list(session.actions)) == before and game_id in store.games


def test_a_view_holds_its_own_seats_hand_alone_and_no_token(table, caplog, http):
    url, game_id, creator, partner, _store = table
    mine = http.get(f"{url}/api/games/{game_id}", params={"token": creator}).json()
    theirs = http.get(f"{url}/api/games/{game_id}", params={"token": partner}).json()
    assert len(hand(mine, 0)) == 10 and len(hand(theirs, 2)) == 10 and not hand(mine, 0) & hand(theirs, 2)
    assert [s["seat"] for s in mine["seats"] if s["hand"]] == [0] and [s["seat"] for s in theirs["seats"] if s["hand"]] == [2]
    assert mine["kitty"] == [] and theirs["kitty"] == []
    text = json.dumps(mine) + json.dumps(theirs)
    assert creator not in text and partner not in text
    assert creator not in caplog.text and partner not in caplog.text


def test_seat_tokens_are_long_secret_and_kept_as_digests_only(tmp_path, http):
    store = GameStore(tmp_path / "games", pace=0.0, seeds=random.Random(0), keep=tmp_path / "kept")
    with running_server(store) as url:
        created = http.post(f"{url}/api/games", json={"preset": "italian_3p", "seats": ["human", "human", "human"],
                                                       "length": "deal"}).json()
        tokens = [token_of(link) for link in created["seat_links"]]
        assert len(tokens) == 3 and len(set(tokens)) == 3
        assert all(len(t) >= 22 for t in tokens)  # 22 URL-safe characters: 132 bits; these are 192
        game_id = created["id"]
        view = {}
        while not view.get("stopped"):  # everyone passes or plays their first card, in turn
            for token in tokens:
                view = http.get(f"{url}/api/games/{game_id}", params={"token": token}).json()
                if view["legal"]:
                    http.post(f"{url}/api/games/{game_id}/action", params={"token": token},
                               json={"action": "PASS" if "PASS" in view["legal"] else view["legal"][0]})
        record = http.get(f"{url}/api/games/{game_id}/record", params={"token": tokens[0]}).text
        store.flush()
        saved = (tmp_path / "games" / f"{game_id}.json").read_text()
    kept = [p.read_text() for p in (tmp_path / "kept").iterdir()]
    assert len(kept) == 1
    for text in (record, saved, *kept):
        assert not any(token in text for token in tokens)
    assert game_id not in kept[0]


# -- no request, saved game or option loads a file, runs code, or grows without bound --------------------------
@pytest.fixture
def files_that_would_load(tmp_path, monkeypatch):
    """A working folder holding what a spec could name (a checkpoint, an SB3 zip), and a record of
    every file the agent registry is asked to load."""
    shutil.copy(pretrained_path("australian"), tmp_path / "final.pt")
    (tmp_path / "evil.zip").write_bytes(b"PK\x05\x06" + b"\0" * 18)
    monkeypatch.chdir(tmp_path)
    loaded: list[str] = []
    real = agents.registry._path_builder

    def spy(path):
        loaded.append(str(path))
        return real(path)

    monkeypatch.setattr(agents.registry, "_path_builder", spy)
    return loaded


@pytest.mark.parametrize("spec", HOSTILE_SPECS)
def test_no_agent_spec_from_a_request_loads_a_file_or_runs_a_command(table, files_that_would_load, spec, http):
    url, game_id, creator, _partner, store = table
    games = len(store.games)
    answers = [
        http.post(f"{url}/api/games", json={"preset": "australian", "agents": ["heuristic", spec, "heuristic", "heuristic"]}),
        http.post(f"{url}/api/games", json={"preset": "australian", "seats": ["human", "human", spec, "heuristic"]}),
        http.post(f"{url}/api/games/{game_id}/hint", params={"token": creator}, json={"agent": spec}),
        http.post(f"{url}/api/games/{game_id}/seat", params={"token": creator}, json={"seat": 2, "agent": spec}),
    ]
    for response in answers:
        assert response.status_code in (400, 422), response.text
        assert "\n" not in response.json()["error"]
    assert files_that_would_load == [] and not Path("MARKER").exists()
    assert len(store.games) == games and store.games[game_id].people == [0, 2]


def test_a_saved_game_is_checked_as_a_request_is(tmp_path, files_that_would_load, caplog):
    """A file in the games folder that names a file as an agent, a pace that is not a number or
    one too long for the scheduler, a seat that is not a person's, or that is no file at all (a
    FIFO): skipped with a line in the log, and the server starts and plays."""
    folder = tmp_path / "games"
    folder.mkdir()
    good = GameSession("G" * 24, make_rules("australian"), agents=[None, "heuristic", "heuristic", "heuristic"], seed=1)
    for name, change in [("A", {"agents": [None, "trusted:evil.zip", "heuristic", "heuristic"]}),
                         ("B", {"agents": [None, "pimc:base=trusted:evil.zip", "heuristic", "heuristic"]}),
                         ("C", {"agents": [None, "final.pt", "heuristic", "heuristic"]}), ("D", {"pace": "fast"}),
                         ("E", {"pace": 1e308}), ("F", {"creator": 1}), ("H", {"seed": -1}), ("I", {"tokens": {"0": "x"}})]:
        (folder / f"{name * 24}.json").write_bytes(json.dumps({**good.to_json(), **change, "id": name * 24}).encode())
    os.mkfifo(folder / ("J" * 24 + ".json"))
    (folder / ("G" * 24 + ".json")).write_text(json.dumps(good.to_json()))
    started: list[GameStore] = []
    thread = threading.Thread(target=lambda: started.append(GameStore(folder, pace=0.0, seeds=random.Random(0))), daemon=True)
    thread.start()
    thread.join(timeout=30)
    assert started, "the start hung (on the FIFO?)"
    store = started[0]
    try:
        assert list(store.games) == ["G" * 24]
        assert files_that_would_load == []
        for name in "ABCDEFHIJ":
            assert f"{name * 24}.json" in caplog.text
        assert store.scheduler._thread.is_alive()
        session, _tokens = store.create("italian_3p", mode="watch", agents=["heuristic"] * 3)
        store.control(session.id, None, "play")  # the scheduler still plays
        deadline = time.monotonic() + 30
        while not session.actions and time.monotonic() < deadline:
            time.sleep(0.01)
        assert session.actions
    finally:
        store.close()


def test_the_games_and_kept_games_are_their_owners_alone(tmp_path):
    games, kept = tmp_path / "games", tmp_path / "kept"
    store = GameStore(games, pace=0.0, seeds=random.Random(0), keep=kept)
    try:
        session, _ = store.create("italian_3p", agents=[None, "heuristic", "heuristic"], length="deal")
        while not session.finished:
            while (prepared := session.prepare_move()) is not None:
                session.finish_move(prepared[0], prepared[1]())
            if not session.finished:
                legal = session.view(0)["legal"]
                session.play(0, "PASS" if "PASS" in legal else legal[0])
            store._save(session)
        store.flush()
    finally:
        store.close()
    for folder in (games, kept):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        files = list(folder.iterdir())
        assert files and all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    assert read_game((games / f"{session.id}.json").read_bytes())["kept"] is True


def rss_mib(pid: int) -> float:
    """A process's resident memory in MiB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_networks_are_loaded_once_per_process_and_never_by_the_server(monkeypatch, http):
    """Ten six-handed tables of five pretrained agents: the server builds none (its menu's build
    fails if called), the agent process loads the network once (some 22 MiB each, 1.1 GiB were
    it loaded per seat, as before)."""
    monkeypatch.setattr(AgentMenu, "build", lambda *_: pytest.fail("an agent was built in the server process"))
    store = GameStore(None, pace=0.0, workers=2, agent_processes=1, agent_nice=0, seeds=random.Random(0))
    assert store.processes is not None
    with running_server(store) as url:
        seats = ["pretrained"] * 5 + ["human"]  # the dealer is seat 5: the agents bid first

        def new_table() -> None:
            """A table, its person's first move, and every agent's after it (their networks built)."""
            created = http.post(f"{url}/api/games", json={"preset": "six_handed", "seats": seats}).json()
            view, token, game = created, creator_token(created), f"{url}/api/games/{created['id']}"
            for move in range(2):
                while not view["legal"] and not view["over"]:  # (a deal may end the game: an open misère)
                    assert view["error"] is None, view["error"]
                    view = http.get(game, params={"token": token, "after": view["revision"], "wait": 20}, timeout=60).json()
                if move == 0 and view["legal"]:
                    view = http.post(f"{game}/action", params={"token": token}, json={"action": view["legal"][0]}).json()

        new_table()  # torch and the network, once
        pid = store.processes._processes[0].process.pid
        server, agents_before = rss_mib(os.getpid()), rss_mib(pid)
        for _ in range(10):
            new_table()
        assert rss_mib(pid) - agents_before < 150, (agents_before, rss_mib(pid))
        assert rss_mib(os.getpid()) - server < 100


def test_a_stopping_server_does_not_wait_for_an_agent_thinking(http, tmp_path, monkeypatch):
    """An agent thinking for a minute in the agent process when the server is told to stop (what
    Ctrl-C does): the server stops within seconds, and so does the agent process."""
    sleeping = tmp_path / "sleeping"
    monkeypatch.setenv(SLEEPING, str(sleeping))  # (before the agent process starts)
    store = GameStore(None, pace=0.0, workers=2, agent_processes=1, agent_nice=0, menu=SLEEPER_MENU, seeds=random.Random(0))
    assert store.processes is not None
    process = store.processes._processes[0].process
    with running_server(store) as url:
        created = http.post(f"{url}/api/games", json={"preset": "italian_3p", "seats": ["sleeper", "human", "sleeper"]})
        assert created.status_code == 201, created.text
        deadline = time.monotonic() + 120
        while not sleeping.exists():  # until the sleeper thinks, in the agent process
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert store.games[created.json()["id"]].pending
        began = time.monotonic()
    assert time.monotonic() - began < 10
    process.join(timeout=5)
    assert not process.is_alive()


SERVER_SCRIPT = textwrap.dedent("""
    import random, sys

    if __name__ == "__main__":  # (the agent process imports this file again)
        sys.path.insert(0, sys.argv[2])
        from test_web_attacks import SLEEPER_MENU
        from training.web.app import create_app
        from training.web.command import table_server
        from training.web.store import GameStore
        store = GameStore(None, pace=0.0, agent_processes=1, agent_nice=0, menu=SLEEPER_MENU, seeds=random.Random(0))
        print(store.processes._processes[0].process.pid, flush=True)
        table_server(create_app(store), "127.0.0.1", int(sys.argv[1])).run()
""")


def test_the_agent_process_ends_with_a_server_killed_outright(tmp_path, http):
    port = free_port()
    script = tmp_path / "server.py"
    script.write_text(SERVER_SCRIPT)
    sleeping = tmp_path / "sleeping"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1]), str(Path(__file__).parent)]),
           SLEEPING: str(sleeping)}
    server = subprocess.Popen([sys.executable, str(script), str(port), str(Path(__file__).parent)], stdout=subprocess.PIPE,
                              text=True, env=env)
    try:
        agent_pid = int(server.stdout.readline())
        for _ in range(600):
            try:
                created = http.post(f"http://127.0.0.1:{port}/api/games",
                                     json={"preset": "italian_3p", "seats": ["sleeper", "human", "sleeper"]})
                break
            except httpx.TransportError:
                time.sleep(0.05)
        assert created.status_code == 201, created.text
        deadline = time.monotonic() + 120
        while not sleeping.exists():  # until the sleeper thinks, in the agent process
            assert time.monotonic() < deadline
            time.sleep(0.05)
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=10)
        deadline = time.monotonic() + 30  # (the sleeper would think for 60 s)
        while Path(f"/proc/{agent_pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not Path(f"/proc/{agent_pid}").exists() or "Z" in Path(f"/proc/{agent_pid}/stat").read_text().split()[2]
    finally:
        server.kill()
        server.wait()


# -- what a request says of itself: its host, its origin, its type; malformed queries and bodies -------------------
def test_a_request_for_another_host_is_refused(table, http):
    url, game_id, creator, _partner, _store = table
    for host in ("evil.example", "evil.example:80", "127.0.0.1.evil.example"):
        response = http.get(f"{url}/api/games/{game_id}", params={"token": creator}, headers={"Host": host})
        assert response.status_code == 400 and "host" in response.json()["error"], response.text
    assert http.get(f"{url}/api/info", headers={"Host": "localhost:1234"}).status_code == 200


def test_a_move_from_another_sites_page_is_refused(table, http):
    url, game_id, creator, _partner, store = table
    session = store.games[game_id]
    before = list(session.actions)
    refused = [
        http.post(f"{url}/api/games/{game_id}/action", params={"token": creator}, content=b'{"action": "PASS"}',
                   headers={"Content-Type": "text/plain"}),
        http.post(f"{url}/api/games/{game_id}/action", params={"token": creator}, json={"action": "PASS"},
                   headers={"Origin": "http://evil.example"}),
        http.post(f"{url}/api/games/{game_id}/action", params={"token": creator}, json={"action": "PASS"},
                   headers={"Sec-Fetch-Site": "cross-site"}),
        http.delete(f"{url}/api/games/{game_id}", params={"token": creator}, headers={"Origin": "null"}),
    ]
    assert [r.status_code for r in refused] == [415, 403, 403, 403]
    assert session.actions == before and game_id in store.games
    same_site = http.post(f"{url}/api/games/{game_id}/action", params={"token": creator}, json={"action": "PASS"},
                           headers={"Origin": url})
    assert same_site.status_code == 200 and session.actions != before


@pytest.mark.parametrize("query", [{"wait": "nan"}, {"wait": "inf"}, {"wait": "-inf"}, {"after": "nan"},
                                   {"after": "1e999"}, {"wait": "1" * 400}])
def test_a_malformed_query_is_a_422(table, query, http):
    url, game_id, creator, _partner, _store = table
    response = http.get(f"{url}/api/games/{game_id}", params={"token": creator, **query})
    assert response.status_code == 422, response.text


@pytest.mark.parametrize("body", [{"seat": True}, {"seat": 1.0}, {"seats": [True, "human", "human", "human"]},
                                  {"pace": float("nan")}, {"agents": ["heuristic", "x" * 300, "heuristic", "heuristic"]},
                                  {"preset": "x" * 300}, {"seats": ["human"] * 100}])
def test_a_malformed_new_game_is_a_4xx_and_never_a_500(table, body, http):
    url, *_ = table
    full = {"preset": "australian", "agents": ["heuristic"] * 4, **body}
    if "seats" in body:
        full.pop("agents")
    response = http.post(f"{url}/api/games", content=json.dumps(full, allow_nan=True),
                          headers={"Content-Type": "application/json"})
    assert response.status_code in (400, 422), response.text


def test_every_answer_keeps_the_address_to_itself(table, http):
    url, game_id, creator, _partner, _store = table
    for response in (http.get(url), http.get(f"{url}/api/info"), http.get(f"{url}/api/games/{game_id}"),
                     http.get(f"{url}/api/games/{game_id}", params={"token": creator})):
        assert response.headers["referrer-policy"] == "no-referrer"
