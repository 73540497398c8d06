"""Helpers of the web table's tests: a real server on a free localhost port, in a thread; the test
client of a person at the table; agents for a test's own menu."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from fastapi.testclient import TestClient

from agents.base import Agent
from agents.heuristic import HeuristicAgent
from training.web.app import create_app
from training.web.command import table_server
from training.web.store import GameStore


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_server(store: GameStore) -> Iterator[str]:
    """Serve ``store`` on 127.0.0.1 (only) in a thread, as ``serve`` does; yields the base URL; stops it afterwards."""
    port = free_port()
    server = table_server(create_app(store), "127.0.0.1", port)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def token_of(link: str) -> str:
    """The token of a seat link (its ``token`` query parameter)."""
    return parse_qs(urlsplit(link).query)["token"][0]


def creator_token(created: dict[str, Any]) -> str | None:
    """The creator's token in the answer to ``POST /api/games`` (``None`` for a watched game)."""
    if created.get("seat") is None:
        return None
    people = [s["seat"] for s in created["seats"] if s["person"]]
    return token_of(created["seat_links"][people.index(created["seat"])])


class PersonClient(TestClient):
    """FastAPI's test client as the person who creates each game, as the page is: a request for a
    game this client created carries the creator's seat token, unless it gives a ``token`` itself
    (``None``: none at all). Requests name this machine's host, as a browser's here would."""

    def __init__(self, app: Any, **kwargs: Any) -> None:
        super().__init__(app, base_url="http://127.0.0.1", **kwargs)
        self.tokens: dict[str, str] = {}

    def request(self, method: str, url: Any, *, params: Any = None, **kwargs: Any) -> Any:  # type: ignore[override]
        parts = str(url).split("/")
        params = dict(params or {})
        if len(parts) >= 4 and parts[1:3] == ["api", "games"] and parts[3] in self.tokens:
            params.setdefault("token", self.tokens[parts[3]])
        params = {k: v for k, v in params.items() if v is not None}
        response = super().request(method, url, params=params, **kwargs)
        if method == "POST" and str(url) in ("/api/games", "/api/replays") and response.status_code == 201:
            created = response.json()
            token = creator_token(created)
            if token is not None:
                self.tokens[created["id"]] = token
        return response


class Waiting(Agent):
    """An agent that thinks until ``event`` is set (a slow search), then plays as the heuristic."""

    def __init__(self, rules, seed, event: threading.Event) -> None:
        super().__init__(rules, seed)
        self.event, self.inner = event, HeuristicAgent(rules, seed=seed)

    def act(self, observation):
        assert self.event.wait(timeout=60)
        return self.inner.act(observation)


SLEEPING = "FIVE_HUNDRED_TEST_SLEEPING"
"""The environment variable naming a file :class:`Sleeper` creates once it thinks."""


class Sleeper(Agent):
    """An agent that thinks for a minute, then plays as the heuristic: one still thinking when its
    server stops (importable, so that it can think in an agent process). Once it thinks it
    creates the file named by :data:`SLEEPING`, when that is set."""

    def act(self, observation):
        if os.environ.get(SLEEPING):
            Path(os.environ[SLEEPING]).touch()
        time.sleep(60)
        return HeuristicAgent(self.rules, 0).act(observation)


