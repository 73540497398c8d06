"""The HTTP API and the page (FastAPI): :func:`create_app` over a :class:`~training.web.store.GameStore`.

==========================================  ================================================================
``GET  /``                                  the page (static files under ``/static``, package data)
``GET  /api/info``                          the presets (seats, sides), the agent names, the defaults
``POST /api/games``                         start a game: ``{"preset", "mode": "play"|"watch", "seat",
                                            "agents": [spec per seat], "length": "game"|"deal", "pace"}``
``POST /api/replays``                       replay a record: ``{"record": {...}}``
``GET  /api/games/{id}``                    the view; ``?after=R&wait=S``: wait up to S s for a view whose
                                            ``revision`` is not R (long polling)
``POST /api/games/{id}/action``             the person's move: ``{"action": "7H"}``
``POST /api/games/{id}/hint``               what an agent would play: ``{"agent": "pretrained"}``
``POST /api/games/{id}/control``            ``{"command": "play"|"pause"|"step"}`` (watch, replay)
``GET  /api/games/{id}/record``             the game's record (a finished game's, for a player)
``DELETE /api/games/{id}``                  end the game
==========================================  ================================================================

Every refusal is a 4xx with ``{"error": "one line saying why"}`` and changes nothing: 400 a bad
action or value, 404 an unknown game, 409 out of turn or after the end, 413 a body over
:data:`MAX_BODY`, 422 a malformed body or query, 429 a full server.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from importlib.resources import files
from typing import Any
from urllib.parse import parse_qsl

import orjson
from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from five_hundred_env.rules import PRESETS, make_rules
from training.web.session import GameError, GameSession
from training.web.store import MAX_PACE, GameStore

MAX_BODY = 1 << 20
"""The largest request body accepted, in bytes (a record of a long game is some 100 kB)."""
MAX_WAIT = 25.0
"""The longest a view request waits for a change, in seconds."""
STATIC = files("training.web").joinpath("static")


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NewGame(_Body):
    preset: str = "australian"
    mode: str = "play"
    seat: int | None = 0
    agents: list[str | None] = Field(default_factory=list, max_length=16)
    length: str = "game"
    pace: float | None = Field(default=None, ge=0, le=MAX_PACE)


class NewReplay(_Body):
    record: dict[str, Any]
    pace: float | None = Field(default=None, ge=0, le=MAX_PACE)


class Move(_Body):
    action: str = Field(max_length=32)


class Hint(_Body):
    agent: str = Field(default="heuristic", max_length=200)


class Control(_Body):
    command: str = Field(max_length=16)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class BodyLimit:
    """An ASGI middleware refusing request bodies over ``limit`` bytes with a 413 (declared or streamed)."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if declared_too_big(scope, self.limit):
            await self.too_big()(scope, receive, send)
            return
        seen = 0

        async def limited() -> Any:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise _TooBig
            return message

        try:
            await self.app(scope, limited, send)
        except _TooBig:
            await self.too_big()(scope, receive, send)

    def too_big(self) -> JSONResponse:
        """The 413 answer (made only when needed: most requests are far under the limit)."""
        return _error(413, too_big_message(self.limit))


class _TooBig(Exception):
    pass


def declared_too_big(scope: Any, limit: int) -> bool:
    """Whether a request declares a body over ``limit`` bytes (or a malformed length)."""
    declared = dict(scope.get("headers", [])).get(b"content-length")
    return declared is not None and (not declared.isdigit() or int(declared) > limit)


def too_big_message(limit: int) -> str:
    return f"the request body is over {limit} bytes"


def malformed_message(errors: Any) -> str:
    """The one line of a 422 for a body that does not validate (pydantic's ``errors()``)."""
    problems = []
    for item in errors:
        where = ".".join(str(part) for part in item.get("loc", ()) if part != "body")
        problems.append(f"{where}: {item.get('msg')}" if where else str(item.get("msg")))
    return "malformed request: " + "; ".join(problems)


class Changes:
    """Wakes the requests waiting for a game to change; :meth:`notify` may be called from any thread."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._waiting: dict[str, set[asyncio.Future[None]]] = {}

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """(On ``loop``'s thread.) Wake the waiting requests on ``loop``."""
        self.loop, self._loop_thread = loop, threading.get_ident()

    def notify(self, game_id: str) -> None:
        if self.loop is not None and game_id in self._waiting:
            if threading.get_ident() == self._loop_thread:  # on the loop already: no hop through its wake-up pipe
                self._wake(game_id)
            else:
                self.loop.call_soon_threadsafe(self._wake, game_id)

    def _wake(self, game_id: str) -> None:
        for future in self._waiting.pop(game_id, ()):
            if not future.done():
                future.set_result(None)

    async def wait(self, session: GameSession, seen: int, timeout: float) -> None:
        """Return once ``session`` has changed since its revision ``seen`` (or after ``timeout`` seconds)."""
        assert self.loop is not None
        future = self.loop.create_future()
        self._waiting.setdefault(session.id, set()).add(future)
        try:
            if session.revision == seen:  # registered first, so a change from now on wakes it
                await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            pass
        finally:
            waiting = self._waiting.get(session.id)
            if waiting is not None:
                waiting.discard(future)
                if not waiting:
                    del self._waiting[session.id]


class MoveRoutes:
    """ASGI, in front of the FastAPI ``app``: the two requests of every move, the view (``GET
    /api/games/{id}``, a long poll with ``?after=R&wait=S``) and the move (``POST
    /api/games/{id}/action``), answered here; every other request goes on to ``app``. FastAPI's
    middleware, routing and request and response objects took as long as these requests' own work
    (docs/web.md, "Measured"). Their inputs are checked, and refusals answered, as FastAPI would."""

    def __init__(self, app: FastAPI, store: GameStore, changes: Changes) -> None:
        self.app, self.store, self.changes = app, store, changes

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            parts = scope["path"].split("/")  # "", "api", "games", id[, "action"]
            if 4 <= len(parts) <= 5 and parts[1] == "api" and parts[2] == "games" and parts[3]:
                if len(parts) == 4 and scope["method"] == "GET":
                    await self._answer(send, self._view(scope, parts[3]))
                    return
                if len(parts) == 5 and parts[4] == "action" and scope["method"] == "POST":
                    await self._answer(send, self._act(scope, receive, parts[3]))
                    return
        await self.app(scope, receive, send)

    @staticmethod
    async def _answer(send: Any, answer: Awaitable[bytes]) -> None:
        try:
            status, body = 200, await answer
        except GameError as e:
            status, body = e.status, orjson.dumps({"error": e.message})
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]})
        await send({"type": "http.response.body", "body": body})

    async def _view(self, scope: Any, game_id: str) -> bytes:
        query = dict(parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True))
        after, wait = _number(query, "after", int), _number(query, "wait", float) or 0.0
        session = self.store.get(game_id)
        deadline = time.monotonic() + min(max(wait, 0.0), MAX_WAIT)
        # Waits on the event loop (no thread held) until woken by a change; a change the viewer
        # cannot see (another player's hidden turn) leaves the view's revision as it was, so the wait
        # goes on, and so does a view that the agents' next move, due at once, is about to replace:
        # the agents' moves that come together are sent together (one view, not one per move).
        while not session.closed:
            seen = session.revision
            if not session.moving_on() and session.view_json()[0] != after:
                break
            if (left := deadline - time.monotonic()) <= 0:
                break
            await self.changes.wait(session, seen, left)
        return session.view_json()[1]

    # On the event loop too: a move takes well under a millisecond, less than a hop to a thread.
    async def _act(self, scope: Any, receive: Any, game_id: str) -> bytes:
        if declared_too_big(scope, MAX_BODY):
            raise GameError(too_big_message(MAX_BODY), 413)
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > MAX_BODY:
                raise GameError(too_big_message(MAX_BODY), 413)
        try:
            move = Move.model_validate_json(body)
        except ValidationError as e:
            raise GameError(malformed_message(e.errors()), 422) from None
        return self.store.play(game_id, move.action).view_json()[1]


def _number(query: dict[str, str], name: str, kind: type[int] | type[float]) -> Any:
    """The query parameter ``name`` as a ``kind`` (``None`` when absent); a malformed one is a 422."""
    text = query.get(name)
    try:
        return None if text is None else kind(text)
    except ValueError:
        raise GameError(f"malformed request: {name}: {text!r} is not {'an integer' if kind is int else 'a number'}",
                        422) from None


def _json(body: bytes, status: int = 200) -> Response:
    return Response(content=body, status_code=status, media_type="application/json")


def _presets() -> dict[str, Any]:
    out = {}
    for name in PRESETS:
        rules = make_rules(name)
        out[name] = {"players": rules.num_players, "sides": rules.num_sides, "partners": rules.has_partners,
                     "side_of": [rules.side_of(s) for s in range(rules.num_players)], "target": rules.target,
                     "rules": rules.describe()}
    return out


def create_app(store: GameStore) -> MoveRoutes:
    """The web table's app over ``store`` (closed with the app's lifespan): an ASGI app."""
    changes = Changes()

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        changes.start(asyncio.get_running_loop())
        store.watchers.append(changes.notify)
        store.attach(asyncio.get_running_loop())
        yield
        await store.finish_moves()
        store.watchers.remove(changes.notify)
        store.close()

    app = FastAPI(title="Five Hundred", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.store = store
    app.add_middleware(BodyLimit, limit=MAX_BODY)

    @app.exception_handler(GameError)
    async def refused(_request: Request, e: GameError) -> JSONResponse:
        return _error(e.status, e.message)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, e: StarletteHTTPException) -> JSONResponse:
        message = f"no such page or API route: {request.url.path}" if e.status_code == 404 else str(e.detail)
        return _error(e.status_code, message)

    @app.exception_handler(RequestValidationError)
    async def malformed(_request: Request, e: RequestValidationError) -> JSONResponse:
        return _error(422, malformed_message(e.errors()))

    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(str(STATIC.joinpath("index.html")))

    @app.get("/api/info")
    def info() -> dict[str, Any]:
        return {"presets": _presets(), "agents": store.agent_names(), "pace": store.pace, "max_games": store.max_games,
                "idle_seconds": store.idle_seconds}

    _add_game_routes(app, store)
    return MoveRoutes(app, store, changes)


def _add_game_routes(app: FastAPI, store: GameStore) -> None:
    """The routes of ``/api/games`` and ``/api/replays``."""

    def created(session: GameSession) -> Response:
        return _json(session.view_json()[1], status=201)

    @app.post("/api/games")
    def new_game(body: NewGame) -> Response:
        return created(store.create(body.preset, mode=body.mode, seat=body.seat, agents=body.agents,
                                    length=body.length, pace=body.pace))

    @app.post("/api/replays")
    def new_replay(body: NewReplay) -> Response:
        return created(store.create(mode="replay", record=body.record, pace=body.pace, seat=None))

    @app.post("/api/games/{game_id}/hint")
    async def hint(game_id: str, body: Hint) -> dict[str, str]:
        session = store.get(game_id)
        spec = store.check_spec(body.agent)
        return await run_in_threadpool(session.hint, spec)

    @app.post("/api/games/{game_id}/control")
    def control(game_id: str, body: Control) -> Response:
        return _json(store.control(game_id, body.command).view_json()[1])

    @app.get("/api/games/{game_id}/record")
    def record(game_id: str) -> JSONResponse:
        session = store.get(game_id)
        name = f"five-hundred-{session.rules.preset}-{game_id[:8]}.json"
        return JSONResponse(session.record_json(), headers={"Content-Disposition": f'attachment; filename="{name}"'})

    @app.delete("/api/games/{game_id}")
    def end(game_id: str) -> Response:
        store.delete(game_id)
        return Response(status_code=204)


__all__ = ["MAX_BODY", "create_app"]
