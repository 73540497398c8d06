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

from agents.registry import AgentUnavailableError, agent_factory, registered_agents
from five_hundred_env.records import replay
from five_hundred_env.rules import Rules, make_rules
from training.web.saver import Saver, read_game
from training.web.session import Exchange, GameError, GameSession
from training.web.thinkers import DEFAULT_NICE, AgentProcesses, check_nice

log = logging.getLogger(__name__)
GAME_ID = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
MAX_PACE = 5.0


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
    below the server's priority (0 to 19); ``agent_files``: checkpoint paths
    the page may name as agents (no other file is ever loaded on a page's request); ``seeds``:
    where each new game's secret seed is drawn from (default: the operating system's cryptographic
    randomness; a seeded :class:`random.Random` makes a test's games the same on every run)."""

    def __init__(self, folder: str | Path | None = None, *, max_games: int = 100, idle_seconds: float = 3600.0,
                 pace: float = 0.8, workers: int = 4, agent_processes: int = 0, agent_nice: int = DEFAULT_NICE,
                 agent_files: Sequence[str] = (), seeds: random.Random | None = None) -> None:
        if max_games < 1:
            raise ValueError(f"the number of games must be at least 1, got {max_games}")
        if idle_seconds <= 0:
            raise ValueError(f"the idle time before a game expires must be positive, got {idle_seconds}")
        if not 0 <= pace <= MAX_PACE:
            raise ValueError(f"the pace must be 0 to {MAX_PACE} seconds, got {pace}")
        if workers < 1:
            raise ValueError(f"the agents need at least 1 worker thread, got {workers}")
        if agent_processes < 0:
            raise ValueError(f"the number of agent processes must be 0 or more, got {agent_processes}")
        check_nice(agent_nice)
        self.folder = None if folder is None else Path(folder).expanduser()
        self.max_games, self.idle_seconds, self.pace = max_games, idle_seconds, pace
        self._seeds = seeds
        self.agent_files = []
        for path in agent_files:
            if not Path(path).expanduser().is_file():
                raise ValueError(f"--agent-file {path}: no such file")
            self.agent_files.append(str(path))
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
        self.processes = AgentProcesses(agent_processes, workers, agent_nice) if agent_processes else None
        self.saver: Saver | None = None
        if self.folder is not None:
            self.folder.mkdir(parents=True, exist_ok=True)
            self.saver = Saver(self.folder)
            self._load()
        self.scheduler.at(time.monotonic() + self._sweep_every(), self._sweep_job)

    # -- creating and finding games ----------------------------------------------------------------
    def agent_names(self) -> list[str]:
        """The agent names the page offers: the registered ones and the server's checkpoint files."""
        return [*registered_agents(), *self.agent_files]

    def check_spec(self, spec: Any) -> str:
        """An agent spec the page may use: built on a registered name, or one of the server's
        checkpoint files (never another path); otherwise a :class:`GameError`."""
        if not isinstance(spec, str) or not spec.strip():
            raise GameError(f"an agent is named by a spec such as heuristic, pretrained or pimc:worlds=8, got {spec!r}")
        spec = spec.strip()
        if spec in self.agent_files:
            return spec
        if re.search(r"(?<![a-z0-9_])cmd\s*[\[:]", spec, re.IGNORECASE):  # anywhere: pimc:base=cmd:... too
            raise GameError(f"agent spec {spec!r}: bots that run a command (cmd:) are not served to the page; "
                            "only the server's own agents and checkpoints play here")
        base = re.split(r"[:@]", spec, maxsplit=1)[0].strip().lower()
        if base not in registered_agents():
            raise GameError(f"unknown agent {spec!r}: use one of {', '.join(self.agent_names())} "
                            "(with options as in pimc:worlds=8, or @play to use it for the card play only)")
        try:
            agent_factory(spec)
        except ValueError as e:
            raise GameError(str(e)) from None
        options = spec.partition("@")[0].partition(":")[2]
        for item in filter(None, options.split(",")):  # an option may name an agent (pimc:rollout=...): no file but ours
            value = item.partition("=")[2].strip()
            if value not in self.agent_files and (re.search(r"[/\\~]", value) or Path(value).exists()):
                raise GameError(f"agent spec {spec!r}: {value!r} is a file; only the checkpoints given to the server "
                                "(--agent-file) may be loaded")
        return spec

    def create(self, preset: Any = "australian", *, mode: str = "play", seat: int | None = 0,
               agents: Sequence[Any] = (), length: str = "game", pace: float | None = None,
               record: dict[str, Any] | None = None) -> GameSession:
        """A new game (``record``: a replay of it); its agents are built now, so that a spec that
        does not load is refused at once. Raises :class:`GameError` for a bad request or a full server."""
        if mode == "replay":
            if record is None:
                raise GameError("a replay needs a record (the JSON of a saved game or deal)")
            try:
                rules = replay(record).rules
            except ValueError as e:
                raise GameError(f"the record does not replay: {e}") from None
        else:
            rules = self._rules(preset)
        pace = self.pace if pace is None else pace
        if isinstance(pace, bool) or not isinstance(pace, (int, float)) or not 0 <= pace <= MAX_PACE:
            raise GameError(f"pace must be 0 to {MAX_PACE} seconds between the agents' moves, got {pace!r}")
        specs = [None if s == seat and mode == "play" else self.check_spec(a) for s, a in enumerate(agents)]
        self.sweep()
        with self._lock:
            if len(self.games) >= self.max_games:
                raise GameError(f"the server already holds its {self.max_games} games: finish or leave one, "
                                f"or wait for an idle one to expire ({self.idle_seconds:g} s)", 429)
            game_id = secrets.token_urlsafe(18)
            try:
                session = GameSession(game_id, rules, mode=mode, seat=seat, agents=specs, length=length,
                                      seed=self._new_seed(), pace=float(pace), record=record)
                for s in range(rules.num_players):
                    if session.specs[s] is not None:
                        session._agent(s)  # fail now on a spec that does not load
            except (ValueError, AgentUnavailableError) as e:
                raise GameError(f"cannot start the game: {e}") from None
            self._add(session)
        self._save(session)
        self._kick(session)
        return session

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

    def delete(self, game_id: str) -> None:
        """End a game and forget it (its file too)."""
        session = self.get(game_id)
        with self._lock:
            self.games.pop(game_id, None)
        with session.lock:
            session.closed = True
            thinking = session.pending  # then the move's job forgets the agents when it ends
        if not thinking:
            self._forget(session)
        self._remove_file(game_id)
        self._save(session)  # the writer closes its journal (and removes the file again, were it being written)
        self._changed(game_id)  # wakes the requests waiting on it

    # -- moves -----------------------------------------------------------------------------------
    def play(self, game_id: str, action: Any) -> GameSession:
        """The person's move in that game (see :meth:`GameSession.play`); the agents go on after it."""
        session = self.get(game_id)
        session.play(action)
        self._save(session)
        self._kick(session)
        return session

    def control(self, game_id: str, command: Any) -> GameSession:
        """Play, pause or step a watched game or a replay."""
        session = self.get(game_id)
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
        """(On the attached loop.) Start no more moves there, and wait for those in progress."""
        self._loop_stopping = True
        while self._tasks:
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
        """Drop the agents of an ended game from the agent processes."""
        if self.processes is not None and any(spec is not None for spec in session.specs):
            self.processes.forget(session.id)

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
        assert self.folder is not None
        for path in sorted(self.folder.glob("*.json")):
            try:
                session = GameSession.from_json(read_game(path.read_bytes()))
            except (OSError, ValueError) as e:
                log.warning("skipping the saved game %s: %s", path, e)
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

    def _new_seed(self) -> int:
        """A new game's secret seed (it decides the cards); called under the store's lock."""
        return secrets.randbits(63) if self._seeds is None else self._seeds.getrandbits(63)

    def sweep(self) -> list[str]:
        """Delete the games idle for longer than ``idle_seconds``; returns their ids."""
        cutoff = time.time() - self.idle_seconds
        expired = [game_id for game_id, session in list(self.games.items()) if session.last_active < cutoff]
        for game_id in expired:
            self.delete(game_id)
        return expired

    def close(self) -> None:
        """Stop the agents, then write every game still pending: a restart finds them all where they were."""
        self.scheduler.stop()
        if self.processes is not None:
            self.processes.close()
        if self.saver is not None:
            self.saver.stop()


__all__ = ["GAME_ID", "GameStore", "Scheduler"]
