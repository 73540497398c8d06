"""The server's games (:class:`GameStore`): a bounded number, kept on disk, expired when idle,
their agents' moves played by worker threads at a person's pace (:class:`Scheduler`).

Each game is a journal ``<folder>/<id>.json`` (:mod:`training.web.saver`), written after its moves
by a writer thread (:class:`~training.web.saver.Saver`, so that no answer waits for the disk);
stopping the server writes what is pending, so a restart finds every game where it was. The agents' moves are played by the
scheduler's worker threads, never on a request's: a slow search agent holds up its own game only;
they think on those threads, or in agent processes (:mod:`training.web.thinkers`), whose exchanges
the server's event loop sends and awaits itself once the store is attached to it (:meth:`GameStore.attach`).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import random
import re
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from five_hundred_env.records import replay
from five_hundred_env.rules import PRESETS, Rules, make_rules
from training.web.agent_moves import Exchange
from training.web.errors import GameError
from training.web.kept import keep_game
from training.web.menu import AgentMenu
from training.web.saver import Saver, private_folder, read_game, read_journal
from training.web.seats import new_token, token_digest
from training.web.session import MAX_PACE, GameSession
from training.web.thinkers import DEFAULT_NICE, AgentProcesses, check_nice

log = logging.getLogger(__name__)
GAME_ID = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
PRESENCE_EVERY = 10.0
"""How often, in seconds, the store looks for people who left their table."""


class Scheduler:
    """Runs jobs at given times (``time.monotonic()``) on a pool of worker threads."""

    def __init__(self, workers: int) -> None:
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="five-hundred-agents")
        self._jobs: list[tuple[float, int, Callable[[], None]]] = []
        self._order = itertools.count()
        self._wake = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="five-hundred-scheduler", daemon=True)
        self._thread.start()

    def at(self, when: float, job: Callable[[], None]) -> None:
        """Run ``job`` on a worker at ``when`` (or as soon as a worker is free after it)."""
        with self._wake:
            if self._stopped:
                return
            if when <= time.monotonic():  # due now: straight to the workers, without waking the timer thread
                self.pool.submit(job)
                return
            heapq.heappush(self._jobs, (when, next(self._order), job))
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._stopped and (not self._jobs or self._jobs[0][0] > time.monotonic()):
                    self._wake.wait(timeout=self._jobs[0][0] - time.monotonic() if self._jobs else None)
                if self._stopped:
                    return
                _when, _order, job = heapq.heappop(self._jobs)
            self.pool.submit(job)

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called (jobs given from then on are dropped)."""
        return self._stopped

    def stop(self) -> None:
        """Drop the jobs not started; wait for those running."""
        with self._wake:
            self._stopped = True
            self._wake.notify()
        self._thread.join()
        self.pool.shutdown(wait=True, cancel_futures=True)


class GameStore:
    """The games of one server. ``folder``: where games are kept (``None``: in memory only);
    ``max_games``: how many may exist at once; ``idle_seconds``: a game nobody has looked at for
    that long is deleted; ``pace``: the default seconds between agents' moves; ``workers``: the
    threads the agents think on; ``agent_processes``: how many processes they think in (0: on the
    worker threads themselves; see :mod:`training.web.thinkers`), ``agent_nice`` steps of niceness
    below the server's priority (0 to 19); ``menu``: the agents a game may have
    (:class:`~training.web.menu.AgentMenu`: no other agent, file or option is ever loaded);
    ``keep``: the folder where finished games with a person in them are kept (``None``: not
    kept; :mod:`training.web.kept`); ``seeds``: where each new game's secret seed is drawn from
    (default: the operating system's cryptographic randomness; a seeded :class:`random.Random`
    makes a test's games the same on every run)."""

    def __init__(self, folder: str | Path | None = None, *, max_games: int = 100, idle_seconds: float = 3600.0,
                 pace: float = 0.8, workers: int = 4, agent_processes: int = 0, agent_nice: int = DEFAULT_NICE,
                 menu: AgentMenu | None = None, keep: str | Path | None = None,
                 seeds: random.Random | None = None) -> None:
        if max_games < 1:
            raise ValueError(f"the number of games must be at least 1, got {max_games}")
        if not 0 < idle_seconds < 1e9:
            raise ValueError(f"the idle time before a game expires must be positive, got {idle_seconds}")
        if not 0 <= pace <= MAX_PACE:
            raise ValueError(f"the pace must be 0 to {MAX_PACE} seconds, got {pace}")
        if workers < 1:
            raise ValueError(f"the agents need at least 1 worker thread, got {workers}")
        if agent_processes < 0:
            raise ValueError(f"the number of agent processes must be 0 or more, got {agent_processes}")
        check_nice(agent_nice)
        self.folder = None if folder is None else Path(folder).expanduser()
        self.keep = None if keep is None else Path(keep).expanduser()
        self.max_games, self.idle_seconds, self.pace = max_games, idle_seconds, pace
        self.menu = AgentMenu() if menu is None else menu
        self._seeds = seeds
        self.games: dict[str, GameSession] = {}
        self.watchers: list[Callable[[str], None]] = []
        """Called with a game's id after each change of it (the app wakes the requests waiting on it)."""
        self._lock = threading.Lock()
        self._moving: set[str] = set()
        """The games whose agents are playing their moves due at once (:meth:`_move`)."""
        self._untold: set[str] = set()
        """Those of them changed meanwhile: the watchers are told when the moves are played."""
        self.scheduler = Scheduler(workers)
        self.loop: asyncio.AbstractEventLoop | None = None
        """The event loop the agent processes' exchanges are driven from (:meth:`attach`), if any."""
        self._loop_thread: int | None = None
        self._loop_stopping = False
        self._tasks: set[asyncio.Task[None]] = set()
        self.processes = AgentProcesses(agent_processes, workers, agent_nice, self.menu) if agent_processes else None
        self.saver: Saver | None = None
        if self.keep is not None:
            private_folder(self.keep)
        if self.folder is not None:
            self.saver = Saver(self.folder, keep=None if self.keep is None else self._keep)
            self._load()
        elif self.keep is not None:
            raise ValueError("games are kept (--keep-games) by a server that writes its games to a folder")
        self.scheduler.at(time.monotonic() + self._sweep_every(), self._sweep_job)
        self.scheduler.at(time.monotonic() + PRESENCE_EVERY, self._presence_job)

    # -- creating and finding games ----------------------------------------------------------------
    def info(self) -> list[dict[str, Any]]:
        """The agents a game may have, with their options' bounds and the presets each can play."""
        return self.menu.describe([make_rules(name) for name in PRESETS])

    def create(self, preset: Any = "australian", *, mode: str = "play", agents: Sequence[Any] = (),
               creator: int | None = None, length: str = "game", pace: float | None = None,
               record: dict[str, Any] | None = None) -> tuple[GameSession, list[str]]:
        """A new game (``record``: a replay of it) and the tokens of its people's seats, in seat
        order (``agents``: each seat's spec, ``None`` for a person). Raises :class:`GameError` for
        a bad request or a full server."""
        if mode == "replay":
            if record is None:
                raise GameError("a replay needs a record (the JSON of a saved game or deal)")
            try:
                rules = replay(record).rules
            except ValueError as e:
                raise GameError(f"the record does not replay: {e}") from None
        else:
            rules = self._rules(preset)
        self.sweep()
        with self._lock:
            if len(self.games) >= self.max_games:
                raise GameError(f"the server already holds its {self.max_games} games: finish or leave one, "
                                f"or wait for an idle one to expire ({self.idle_seconds:g} s)", 429)
            game_id = secrets.token_urlsafe(18)
            tokens = {seat: new_token() for seat, spec in enumerate(agents) if spec is None} if mode == "play" else {}
            try:
                session = GameSession(game_id, rules, mode=mode, agents=agents, creator=creator,
                                      tokens={seat: token_digest(token) for seat, token in tokens.items()},
                                      length=length, seed=self._new_seed(), record=record, menu=self.menu,
                                      pace=self.pace if pace is None else pace)
            except ValueError as e:
                raise GameError(f"cannot start the game: {e}") from None
            self._add(session)
        session.arrive(session.creator)  # the creator is at the table
        self._save(session)
        self._kick(session)
        return session, [tokens[seat] for seat in sorted(tokens)]

    @staticmethod
    def _rules(preset: Any) -> Rules:
        try:
            return make_rules(preset)
        except (ValueError, TypeError) as e:
            raise GameError(str(e)) from None

    def _add(self, session: GameSession) -> None:
        session.on_change = self._changed
        if self.processes is not None:
            session.agents_elsewhere = self.processes.play
        self.games[session.id] = session

    def _changed(self, game_id: str) -> None:
        if game_id in self._moving:  # (under the game's lock) told once its agents' moves due at once are played
            self._untold.add(game_id)
            return
        for watcher in self.watchers:
            watcher(game_id)

    def get(self, game_id: str) -> GameSession:
        """The game of that id (a :class:`GameError` 404 if there is none); it counts as active now."""
        session = self.games.get(game_id) if isinstance(game_id, str) and GAME_ID.match(game_id) else None
        if session is None:
            raise GameError("no such game (it may have expired, or the id is wrong)", 404)
        session.last_active = time.time()
        return session

    def seated(self, game_id: str, token: Any) -> tuple[GameSession, int | None]:
        """The game and the seat of ``token`` in it (``None``: the spectator of a watched game or a
        replay), which is heard from now; a :class:`GameError` 404 or 403 otherwise."""
        session = self.get(game_id)
        seat = session.seat_of(token)
        session.arrive(seat)
        return session, seat

    def delete(self, game_id: str, token: Any = None) -> None:
        """End a game and forget it (its file too): its creator's request (``token``), or anyone's
        at a watched game or a replay."""
        session, seat = self.seated(game_id, token)
        if session.mode == "play" and seat != session.creator:
            raise GameError("only the table's creator may end the game (leave it by closing the page)", 403)
        self._end(session)

    def _end(self, session: GameSession) -> None:
        with self._lock:
            self.games.pop(session.id, None)
        with session.lock:
            session.closed = True
            thinking = session.pending  # then the move's job forgets the agents when it ends
        if not thinking:
            self._forget(session)
        self._remove_file(session.id)
        self._save(session)  # the writer closes its journal (and removes the file again, were it being written)
        self._changed(session.id)  # wakes the requests waiting on it

    def give_seat(self, game_id: str, token: Any, seat: Any, agent: Any) -> GameSession:
        """The creator gives an empty seat to an agent (see :meth:`GameSession.give_seat`)."""
        session, by = self.seated(game_id, token)
        session.give_seat(by, seat, agent)
        self._save(session)
        self._kick(session)
        return session

    def give_name(self, game_id: str, token: Any, name: Any) -> GameSession:
        """A person's name, shown at the table (see :meth:`GameSession.give_name`)."""
        session, seat = self.seated(game_id, token)
        session.give_name(seat, name)
        self._save(session)
        return session

    # -- moves -----------------------------------------------------------------------------------
    def play(self, game_id: str, token: Any, action: Any) -> tuple[GameSession, int | None]:
        """The move of the person whose seat ``token`` opens (see :meth:`GameSession.play`); the
        agents go on after it. Returns the game and that seat."""
        session, seat = self.seated(game_id, token)
        session.play(seat, action)
        self._save(session)
        self._kick(session)
        return session, seat

    def control(self, game_id: str, token: Any, command: Any) -> GameSession:
        """Play, pause or step a watched game or a replay."""
        session, _ = self.seated(game_id, token)
        session.control(command)
        self._save(session)
        self._kick(session)
        return session

    def _kick(self, session: GameSession) -> None:
        """Schedule the next agent move of ``session`` if one is due and none is scheduled (from any thread)."""
        with session.lock:
            if session.pending or not session.agent_to_move():
                return
            session.pending = True
            delay = session.delay()
        if self.loop is None:
            self.scheduler.at(time.monotonic() + delay, lambda: self._move(session))
        elif threading.get_ident() == self._loop_thread:
            self._at_on_loop(session, delay)
        else:
            try:
                self.loop.call_soon_threadsafe(self._at_on_loop, session, delay)
            except RuntimeError:  # the loop has closed: the server is stopping, and the game resumes at its restart
                with session.lock:
                    session.pending = False

    def _move(self, session: GameSession) -> None:
        """Agent moves (on a worker thread), each thought without the game's lock, then applied. The
        moves due at once after it (pace 0, a move the person did not see) follow in the same job, up
        to a round of the table: no hop through the scheduler and another thread for each. Those moves
        are written, and the requests waiting on the game woken, once, after the last of them (a long
        poll would not answer in between: :meth:`GameSession.moving_on`)."""
        self._moves_begin(session)
        try:
            for _ in range(session.rules.num_players):
                prepared = session.prepare_move()
                if prepared is None:
                    break
                revision, think = prepared
                if not session.finish_move(revision, think()) or self._pause_after(session):
                    break
        except Exception as e:  # an agent that fails stops its game with the reason shown, not the server
            self._failed(session, e)
        finally:
            self._moves_end(session)

    # -- moves driven by the event loop (the agents in processes, attach) -------------------------
    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """(On ``loop``'s thread: the server's event loop.) With agent processes, their exchanges
        are sent and awaited on ``loop`` from now on (:meth:`_move_on_loop`) rather than on the
        worker threads: a thread woken by every answer, and the interpreter's lock handed to it and
        back, cost the loop more than the exchange itself. With the agents on the server's threads
        (no processes) nothing changes: their thinking must stay off the loop."""
        if self.processes is not None:
            self._loop_thread, self.loop = threading.get_ident(), loop

    async def finish_moves(self) -> None:
        """(On the attached loop.) Start no more moves there, and stop those in progress: an
        agent still thinking is not waited for (its game resumes from its moves at the restart)."""
        self._loop_stopping = True
        while self._tasks:
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _at_on_loop(self, session: GameSession, delay: float) -> None:
        assert self.loop is not None
        if delay > 0:
            self.loop.call_later(delay, self._start_on_loop, session)
        else:
            self._start_on_loop(session)

    def _start_on_loop(self, session: GameSession) -> None:
        assert self.loop is not None
        if self._loop_stopping:
            return
        task = self.loop.create_task(self._move_on_loop(session))
        self._tasks.add(task)  # the loop keeps only a weak reference to its tasks
        task.add_done_callback(self._tasks.discard)

    async def _move_on_loop(self, session: GameSession) -> None:
        """:meth:`_move` on the event loop: the agents think in their processes, and each exchange
        is awaited on the loop (:meth:`~training.web.thinkers.AgentProcesses.ask`)."""
        assert self.processes is not None
        self._moves_begin(session)
        try:
            for _ in range(session.rules.num_players):
                prepared = session.prepare_move()
                if prepared is None:
                    break
                revision, think = prepared
                moves = await think.ask(self.processes.ask) if isinstance(think, Exchange) else think()
                if not session.finish_move(revision, moves) or self._pause_after(session):
                    break
        except Exception as e:  # as on the threads
            self._failed(session, e)
        finally:
            self._moves_end(session)

    # -- what a move job does before and after its moves -----------------------------------------
    def _moves_begin(self, session: GameSession) -> None:
        with session.lock:
            self._moving.add(session.id)

    def _pause_after(self, session: GameSession) -> bool:
        """Whether the moves stop for now after one: a pause is due, or the server is stopping."""
        with session.lock:
            return session.delay() > 0 or self.scheduler.stopped or self._loop_stopping

    @staticmethod
    def _failed(session: GameSession, e: Exception) -> None:
        log.exception("agent move failed in game %s", session.id)
        session.fail(f"an agent failed: {e}")

    def _moves_end(self, session: GameSession) -> None:
        """The job's moves are played: write them, wake the requests waiting, and go on."""
        with session.lock:
            session.pending = False
            closed = session.closed
            self._moving.discard(session.id)
            untold = session.id in self._untold
            self._untold.discard(session.id)
        self._save(session)
        if untold:
            self._changed(session.id)
        if closed:
            self._forget(session)
        self._kick(session)

    def _forget(self, session: GameSession) -> None:
        """Drop the copy of an ended game, and its agents, from the agent processes, at once."""
        processes = self.processes
        if processes is not None and any(spec is not None for spec in session.specs):
            processes.forget(session.id)
            self.scheduler.at(time.monotonic(), lambda: processes.flush(session.id))

    def _keep(self, session: GameSession) -> None:
        """(On the writer's thread.) Keep a finished game with a person in it (``--keep-games``)."""
        assert self.keep is not None
        keep_game(self.keep, session, self.menu)

    # -- on disk, and expiry ---------------------------------------------------------------------
    def _save(self, session: GameSession) -> None:
        if self.saver is not None:
            self.saver.save(session)

    def flush(self) -> None:
        """Wait until every game is on disk as it is now."""
        if self.saver is not None:
            self.saver.flush()

    def _remove_file(self, game_id: str) -> None:
        if self.saver is not None:
            self.saver.path(game_id).unlink(missing_ok=True)

    def _load(self) -> None:
        """The games of the folder, each checked as a request is (:meth:`GameSession.from_json`):
        a file that is not a regular one, or holds anything a request could not, is skipped."""
        assert self.folder is not None
        for path in sorted(self.folder.glob("*.json")):
            try:
                session = GameSession.from_json(read_game(read_journal(path)), self.menu)
            except (OSError, ValueError) as e:
                log.warning("skipping the saved game %s: %s", path.name, e)
                continue
            if session.id != path.stem or not GAME_ID.match(session.id):
                log.warning("skipping the saved game %s: its id does not match its file name", path)
                continue
            self._add(session)
            self._kick(session)

    def _sweep_every(self) -> float:
        return min(60.0, self.idle_seconds / 2)

    def _sweep_job(self) -> None:
        self.sweep()
        self.scheduler.at(time.monotonic() + self._sweep_every(), self._sweep_job)

    def _presence_job(self) -> None:
        """Now and then: who has left a table (their page closed) is shown away."""
        for session in list(self.games.values()):
            session.check_presence()
        self.scheduler.at(time.monotonic() + PRESENCE_EVERY, self._presence_job)

    def _new_seed(self) -> int:
        """A new game's secret seed (it decides the cards); called under the store's lock."""
        return secrets.randbits(63) if self._seeds is None else self._seeds.getrandbits(63)

    def sweep(self) -> list[str]:
        """Delete the games idle for longer than ``idle_seconds``; returns their ids."""
        cutoff = time.time() - self.idle_seconds
        expired = [session for session in list(self.games.values()) if session.last_active < cutoff]
        for session in expired:
            self._end(session)
        return [session.id for session in expired]

    def close(self) -> None:
        """Stop the agents, then write every game still pending: a restart finds them all where they were."""
        self.scheduler.stop()
        if self.processes is not None:
            self.processes.close()
        if self.saver is not None:
            self.saver.stop()


__all__ = ["GAME_ID", "GameStore", "Scheduler"]
