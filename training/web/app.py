"""The HTTP API and the page (FastAPI): :func:`create_app` over a :class:`~training.web.store.GameStore`.

==========================================  ================================================================
``GET  /``                                  the page (static files under ``/static``, package data)
``GET  /api/info``                          the presets (seats, sides), the agents and their options' bounds, the defaults
``POST /api/games``                         start a game: ``{"preset", "mode": "play"|"watch", "seats": ["human"
                                            or an agent spec per seat], "seat" (the creator's), "length":
                                            "game"|"deal", "pace"}`` (or ``"seat"`` and ``"agents"``, one
                                            spec per seat, for one person); answers the creator's view and
                                            ``"seat_links"``, one per person's seat
``POST /api/replays``                       replay a record: ``{"record": {...}}``
``GET  /api/games/{id}?token=T``            the view of the token's seat; ``&after=R&wait=S``: wait up to S s
                                            for a view whose ``revision`` is not R (long polling)
``POST /api/games/{id}/action?token=T``     that seat's move: ``{"action": "7H"}``
``POST /api/games/{id}/hint?token=T``       what an agent would play there: ``{"agent": "pretrained"}``
``POST /api/games/{id}/name?token=T``       that person's name at the table: ``{"name": "Ann"}``
``POST /api/games/{id}/seat?token=T``       the creator gives an empty seat to an agent: ``{"seat": 2, "agent": "heuristic"}``
``POST /api/games/{id}/control``            ``{"command": "play"|"pause"|"step"}`` (watch, replay)
``GET  /api/games/{id}/record?token=T``     the game's record (a finished game's, for a person)
``DELETE /api/games/{id}?token=T``          end the game (the creator)
==========================================  ================================================================

A watched game or a replay needs no token (its id is its secret); at a table of people every
request for a seat carries that seat's token, and a view holds the hand of that seat alone.
Every refusal is a 4xx with ``{"error": "one line saying why"}`` and changes nothing: 400 a bad
action or value, or a ``Host`` header the server does not answer to; 403 a missing or wrong
token, or a cross-site request; 404 an unknown game; 409 out of turn or after the end; 413 a body
over :data:`MAX_BODY`; 415 a body that is not JSON; 422 a malformed body or query; 429 a full
server. Every answer tells the browser to send no referrer and to sniff no type.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Awaitable, Iterable
from contextlib import asynccontextmanager
from importlib.resources import files
from typing import Annotated, Any
from urllib.parse import parse_qsl, quote, urlsplit

import orjson
from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StringConstraints, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from five_hundred_env.rules import PRESETS, make_rules
from training.web.changes import Changes
from training.web.errors import GameError
from training.web.menu import MAX_SPEC
from training.web.seats import MAX_NAME
from training.web.session import MAX_PACE, GameSession
from training.web.store import GameStore

MAX_BODY = 1 << 20
"""The largest request body accepted, in bytes (a record of a long game is some 100 kB)."""
MAX_WAIT = 25.0
"""The longest a view request waits for a change, in seconds."""
STATIC = files("training.web").joinpath("static")
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
"""The host names a server answers to by default: this machine's (a page elsewhere that points a
name of its own at 127.0.0.1, DNS rebinding, is refused by its ``Host`` header)."""
PERSON = "human"
"""A person's seat in ``"seats"``."""
SAFE_HEADERS = [(b"referrer-policy", b"no-referrer"), (b"x-content-type-options", b"nosniff")]
"""Sent with every answer: a page's links carry seat tokens, which no referrer may take elsewhere."""
Spec = Annotated[str, StringConstraints(max_length=MAX_SPEC)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NewGame(_Body):
    preset: str = Field(default="australian", max_length=32)
    mode: str = Field(default="play", max_length=16)
    seats: list[Spec] | None = Field(default=None, max_length=16)
    seat: StrictInt | None = None
    agents: list[Spec | None] = Field(default_factory=list, max_length=16)
    length: str = Field(default="game", max_length=16)
    pace: float | None = Field(default=None, ge=0, le=MAX_PACE, allow_inf_nan=False)

    def seat_agents(self) -> tuple[list[str | None], int | None]:
        """Each seat's agent (``None``: a person) and the creator's seat, from ``seats`` or from
        the one person's ``seat`` and ``agents``."""
        if self.seats is not None:
            if self.agents:
                raise GameError("give the seats (a person or an agent each) or the agents, not both", 422)
            return [None if spec == PERSON else spec for spec in self.seats], self.seat
        if self.mode != "play":
            return list(self.agents), None
        seat = 0 if self.seat is None else self.seat
        if not 0 <= seat < len(self.agents):
            n = make_rules(self.preset).num_players if self.preset in PRESETS else len(self.agents)
            raise GameError(f"seat must be one of the seats 0..{n - 1} of {self.preset}, got {seat}")
        return [None if s == seat else spec for s, spec in enumerate(self.agents)], seat


class NewReplay(_Body):
    record: dict[str, Any]
    pace: float | None = Field(default=None, ge=0, le=MAX_PACE, allow_inf_nan=False)


class Move(_Body):
    action: str = Field(max_length=32)


class Hint(_Body):
    agent: Spec = "heuristic"


class Control(_Body):
    command: str = Field(max_length=16)


class Name(_Body):
    name: str = Field(max_length=4 * MAX_NAME)


class GiveSeat(_Body):
    seat: StrictInt
    agent: Spec


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


def _headers(scope: Any) -> dict[bytes, bytes]:
    return dict(scope.get("headers", []))


def host_name(host: str) -> str:
    """The name in a ``Host`` header (``[::1]:8000`` → ``::1``, ``Example.org:443`` → ``example.org``)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    name, colon, port = host.rpartition(":")
    return name if colon and port.isdigit() else host


class Guard:
    """ASGI, in front of everything: a request must name a host the server answers to (``Host``),
    and a request that changes something (any but ``GET`` and ``HEAD``) must come from the
    server's own pages (no foreign ``Origin``, no ``Sec-Fetch-Site: cross-site``) with a JSON
    body, so that no other site's page can act through a visitor's browser. Every answer gets
    :data:`SAFE_HEADERS`. :meth:`close` tells the routes behind it that the server stops."""

    def __init__(self, app: MoveRoutes, allowed_hosts: Iterable[str]) -> None:
        self.app = app
        self.hosts = {host_name(h) for h in allowed_hosts}
        self.any_host = "*" in allowed_hosts

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope)
        if refusal is not None:
            await _send_json(send, refusal.status, orjson.dumps({"error": refusal.message}), SAFE_HEADERS)
            return

        async def safe(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *SAFE_HEADERS]}
            await send(message)

        await self.app(scope, receive, safe)

    def close(self) -> None:
        """The server stops: the views waiting for a change are answered now (:meth:`MoveRoutes.close`)."""
        self.app.close()

    def refusal(self, scope: Any) -> GameError | None:
        """Why the request is refused (``None``: it is not)."""
        headers = _headers(scope)
        host = headers.get(b"host", b"").decode("latin-1")
        if not self.any_host and host_name(host) not in self.hosts:
            return GameError(f"this server does not answer to the host {host!r} (serve --allowed-host names the "
                             "hosts it answers to behind a proxy)", 400)
        if scope["method"] in ("GET", "HEAD"):
            return None
        origin = headers.get(b"origin")
        if (origin is not None and urlsplit(origin.decode("latin-1")).netloc.lower() != host.lower()) or \
                headers.get(b"sec-fetch-site") == b"cross-site":
            return GameError("a request from another site's page is refused", 403)
        kind = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
        if scope["method"] == "POST" and kind != b"application/json":
            return GameError("the request's body must be JSON (Content-Type: application/json)", 415)
        return None


async def _send_json(send: Any, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body)), *(extra or ())]})
    await send({"type": "http.response.body", "body": body})


class MoveRoutes:
    """ASGI, in front of the FastAPI ``app``: the two requests of every move, the view (``GET
    /api/games/{id}``, a long poll with ``?after=R&wait=S``) and the move (``POST
    /api/games/{id}/action``), answered here; every other request goes on to ``app``. FastAPI's
    middleware, routing and request and response objects took as long as these requests' own work
    (docs/notes/2026-12-06-web-measurements.md). Their inputs are checked, and refusals answered,
    as FastAPI would. :meth:`close` ends the waiting views at once (the server is stopping)."""

    def __init__(self, app: FastAPI, store: GameStore, changes: Changes) -> None:
        self.app, self.store, self.changes = app, store, changes

    def close(self) -> None:
        self.changes.close()

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
        await _send_json(send, status, body)

    async def _view(self, scope: Any, game_id: str) -> bytes:
        query = dict(parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True))
        after, wait = _number(query, "after", int), _number(query, "wait", float) or 0.0
        session, seat = self.store.seated(game_id, query.get("token"))
        deadline = time.monotonic() + min(max(wait, 0.0), MAX_WAIT)
        session.arrive(seat, +1)  # here while the page waits
        try:
            # Waits on the event loop (no thread held) until woken by a change; a change the viewer
            # cannot see (another player's hidden turn) leaves the view's revision as it was, so the wait
            # goes on, and so does a view that the agents' next move, due at once, is about to replace:
            # the agents' moves that come together are sent together (one view, not one per move).
            while not session.closed and not self.changes.closing:
                seen = session.revision
                if not session.moving_on() and session.view_json(seat)[0] != after:
                    break
                if (left := deadline - time.monotonic()) <= 0:
                    break
                await self.changes.wait(session, seen, left)
            return session.view_json(seat)[1]
        finally:
            session.arrive(seat, -1)

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
        token = dict(parse_qsl(scope["query_string"].decode("latin-1"))).get("token")
        session, seat = self.store.play(game_id, token, move.action)
        return session.view_json(seat)[1]


def _number(query: dict[str, str], name: str, kind: type[int] | type[float]) -> Any:
    """The query parameter ``name`` as a finite ``kind`` (``None`` when absent or blank); a
    malformed one is a 422."""
    text = query.get(name)
    try:
        value = None if text is None or not text.strip() else kind(text)
    except ValueError:
        value = math.nan
    if value is not None and not math.isfinite(value):
        raise GameError(f"malformed request: {name}: {text!r} is not {'an integer' if kind is int else 'a number'}", 422)
    return value


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


def create_app(store: GameStore, allowed_hosts: Iterable[str] = LOCAL_HOSTS) -> Guard:
    """The web table's app over ``store`` (closed with the app's lifespan), answering to the hosts
    ``allowed_hosts`` (``"*"``: any): an ASGI app, whose :meth:`~Guard.close` ends the waiting
    views when the server begins to stop (before its connections are cut)."""
    changes = Changes()

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        changes.start(asyncio.get_running_loop())
        store.watchers.append(changes.notify)
        store.attach(asyncio.get_running_loop())
        yield
        changes.close()
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
        return {"presets": _presets(), "agents": store.info(), "pace": store.pace, "max_games": store.max_games,
                "idle_seconds": store.idle_seconds, "max_name": MAX_NAME}

    _add_game_routes(app, store)
    return Guard(MoveRoutes(app, store, changes), allowed_hosts)


def seat_link(game_id: str, token: str) -> str:
    """The secret link of a seat: the page, opening the game as that seat."""
    return f"/?game={quote(game_id)}&token={quote(token)}"


def _add_game_routes(app: FastAPI, store: GameStore) -> None:
    """The routes of ``/api/games`` and ``/api/replays``."""

    def created(session: GameSession, tokens: list[str]) -> Response:
        viewer = session.creator if session.mode == "play" else None
        links = b",".join(orjson.dumps(seat_link(session.id, token)) for token in tokens)
        return _json(b'%s,"seat_links":[%s]}' % (session.view_json(viewer)[1][:-1], links), status=201)

    @app.post("/api/games")
    def new_game(body: NewGame) -> Response:
        agents, creator = body.seat_agents()
        return created(*store.create(body.preset, mode=body.mode, agents=agents, creator=creator,
                                     length=body.length, pace=body.pace))

    @app.post("/api/replays")
    def new_replay(body: NewReplay) -> Response:
        return created(*store.create(mode="replay", record=body.record, pace=body.pace))

    @app.post("/api/games/{game_id}/hint")
    async def hint(game_id: str, body: Hint, token: str | None = None) -> dict[str, str]:
        session, seat = store.seated(game_id, token)
        return await run_in_threadpool(session.hint, seat, body.agent)

    @app.post("/api/games/{game_id}/name")
    def name(game_id: str, body: Name, token: str | None = None) -> Response:
        session = store.give_name(game_id, token, body.name)
        return _json(session.view_json(session.seat_of(token))[1])

    @app.post("/api/games/{game_id}/seat")
    def give_seat(game_id: str, body: GiveSeat, token: str | None = None) -> Response:
        session = store.give_seat(game_id, token, body.seat, body.agent)
        return _json(session.view_json(session.seat_of(token))[1])

    @app.post("/api/games/{game_id}/control")
    def control(game_id: str, body: Control, token: str | None = None) -> Response:
        return _json(store.control(game_id, token, body.command).view_json()[1])

    @app.get("/api/games/{game_id}/record")
    def record(game_id: str, token: str | None = None) -> JSONResponse:
        session, _seat = store.seated(game_id, token)
        name = f"five-hundred-{session.rules.preset}-{time.strftime('%Y%m%d-%H%M')}.json"
        return JSONResponse(session.record_json(), headers={"Content-Disposition": f'attachment; filename="{name}"'})

    @app.delete("/api/games/{game_id}")
    def end(game_id: str, token: str | None = None) -> Response:
        store.delete(game_id, token)
        return Response(status_code=204)


__all__ = ["LOCAL_HOSTS", "MAX_BODY", "PERSON", "Guard", "MoveRoutes", "create_app", "host_name", "seat_link"]
