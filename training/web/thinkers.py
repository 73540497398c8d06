"""Agents that think in other processes (:class:`AgentProcesses`): ``five-hundred serve`` puts its
agents there, so that their thinking does not hold the server's interpreter lock.

In one process, the agents' threads and the event loop that answers the requests take turns
through the interpreter's lock: every millisecond an agent thinks is a millisecond no request is
answered (docs/web.md, "Measured"). Here a process keeps a copy of each game (the same rules, seed
and moves, so the same cards) and its agents, built from their spec and seed as the server would
build them (so they play the same moves). The server sends the moves made since the last exchange
(from a worker thread, :meth:`AgentProcesses.play`, which waits without the lock; or from its event
loop, :meth:`AgentProcesses.ask`, which awaits the answer there) and gets the agents' moves: all those due at once (a
round of the table at pace 0, up to the person's turn) in one exchange. A game always goes to the
same process; each process has one pipe and one thread per worker thread of the server, so one
slow search agent holds up its own game only, as on the server's threads. The processes run at a
lower priority than the server (``nice``): on cores the two share, a person's move is answered
before the agents think, since nobody waits on the agents' thinking (the page shows their moves at
a pace) but a person waits on the answer to their move.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import queue
import random
import signal
import threading
import zlib
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from five_hundred_env.engine import Deal, Game
from five_hundred_env.rules import Rules
from training.web.menu import AgentMenu


@dataclass(frozen=True)
class GameSetup:
    """How a game's copy is made: as :class:`~training.web.session.GameSession` makes its game
    (``first_deal``: the set first deal of tests), and each seat's agent spec (``None``: a person;
    each read again by the process's :class:`~training.web.menu.AgentMenu`)."""

    rules: Rules
    seed: int
    max_deals: int | None
    first_deal: Deal | None
    specs: tuple[str | None, ...]

    def game(self) -> Game:
        if self.first_deal is not None:
            return Game(self.rules, first_deal=self.first_deal, rng=random.Random(self.seed), max_deals=self.max_deals)
        return Game(self.rules, seed=self.seed, max_deals=self.max_deals)


class AgentFailed(RuntimeError):
    """An agent raised while thinking in its process (the message names the error), or the process stopped."""


class _ProcessStopped(Exception):
    """An exchange found its agent process gone (its pipe closed)."""


MAX_NICE = 19
"""The largest niceness a Unix process may have (the lowest priority)."""
DEFAULT_NICE = 10
"""How far below the server's priority its agent processes run by default (``serve --agent-nice``)."""
STOP_SECONDS = 2.0
"""How long a closing server waits for an agent process to end before it kills it."""


class AgentProcesses:
    """``count`` processes thinking for the agents, each answering up to ``threads`` games at once
    (the server's worker threads), ``nice`` steps of niceness below the server's priority
    (:data:`DEFAULT_NICE`; 0: the server's own), building the agents of ``menu`` (default: the
    builtin one) and no other. Each process ends with the server, however the server ends (a
    pipe it watches closes), even while an agent thinks."""

    def __init__(self, count: int, threads: int, nice: int = DEFAULT_NICE, menu: AgentMenu | None = None) -> None:
        if count < 1 or threads < 1:
            raise ValueError(f"agent processes need at least 1 process and 1 thread, got {count} and {threads}")
        check_nice(nice)
        self._context = multiprocessing.get_context("spawn")  # fork would copy the server's threads and locks
        self._threads, self._nice, self._menu = threads, nice, AgentMenu() if menu is None else menu
        self._replacing = threading.Lock()
        self._processes = [_AgentProcess(self._context, threads, number, nice, self._menu) for number in range(count)]

    def play(self, game_id: str, setup: GameSetup | None, base: int, moves: list[int], most: int) -> list[int] | None:
        """The agents' moves (universal ids) in the copy of game ``game_id`` once it has ``moves``
        after its first ``base`` (``setup``: made anew): at most ``most``, up to a person's turn or
        the end. ``None`` when the process has no copy of the game at ``base`` (send ``setup``).
        The calling thread waits without the interpreter's lock; an :class:`AgentFailed` if an
        agent raised. A process found stopped (killed, out of memory) is started anew, with no
        copies: the exchange is sent again when it carries ``setup``, else ``None`` asks for it;
        only a second stop in a row fails the moves."""
        request = (game_id, setup, base, moves, most)
        index = self._index(game_id)
        process = self._processes[index]
        try:
            return process.call(request)
        except _ProcessStopped:
            fresh = self._start_anew(index, process)
        if setup is None:
            return None
        try:
            return fresh.call(request)
        except _ProcessStopped:
            raise AgentFailed("the agents' process stopped") from None

    async def ask(self, game_id: str, setup: GameSetup | None, base: int, moves: list[int],
                  most: int) -> list[int] | None:
        """:meth:`play` from the event loop: the exchange is sent, and its answer awaited, on the
        loop (no thread to wake, nor an interpreter's lock to hand over), over pipes of its own."""
        request = (game_id, setup, base, moves, most)
        index = self._index(game_id)
        process = self._processes[index]
        try:
            return await process.ask(request)
        except _ProcessStopped:
            fresh = self._start_anew(index, process)
        if setup is None:
            return None
        try:
            return await fresh.ask(request)
        except _ProcessStopped:
            raise AgentFailed("the agents' process stopped") from None

    def forget(self, game_id: str) -> None:
        """Drop a game that has ended (none of its moves may still be thinking); never waits: the
        copy goes with the process's next exchange (:meth:`flush` sends one at once)."""
        self._process(game_id).forget(game_id)

    def flush(self, game_id: str) -> None:
        """Send the games forgotten so far to ``game_id``'s process now (their copies and agents go
        at once, not at its next exchange); waits for that exchange, without the interpreter's lock."""
        with contextlib.suppress(_ProcessStopped):  # a process gone has no copies left to drop
            self._process(game_id).call(("", None, 0, [], 0))  # no game has the id "": the process only drops the others

    def _index(self, game_id: str) -> int:
        return zlib.crc32(game_id.encode()) % len(self._processes)

    def _process(self, game_id: str) -> _AgentProcess:
        return self._processes[self._index(game_id)]

    def _start_anew(self, index: int, stopped: _AgentProcess) -> _AgentProcess:
        """The process at ``index`` once ``stopped`` is replaced (once, whichever thread finds it stopped first)."""
        with self._replacing:
            if self._processes[index] is stopped:
                stopped.close()
                self._processes[index] = _AgentProcess(self._context, self._threads, index, self._nice, self._menu)
            return self._processes[index]

    def close(self) -> None:
        """Stop the processes, their agents thinking or not (a game's move still thought is played
        again at the server's restart: every game resumes from its moves)."""
        for process in self._processes:
            process.close()


class _AgentProcess:
    """One agent process and its pipes, each used by one exchange at a time: ``pipes`` for the
    server's threads (:meth:`call`) and as many for its event loop (:meth:`ask`)."""

    def __init__(self, context: Any, pipes: int, number: int, nice: int, menu: AgentMenu) -> None:
        ends = [context.Pipe() for _ in range(2 * pipes)]
        self._lifeline, lifeline = context.Pipe()
        """Never written: the process ends when it closes, with the server however it ends (:func:`_serve`)."""
        self.process = context.Process(target=_serve, args=([child for _, child in ends], nice, menu, lifeline),
                                       name=f"five-hundred-agents-{number}", daemon=True)
        _start_deaf_to_ctrl_c(self.process)
        lifeline.close()
        for _, child in ends:
            child.close()
        self._connections = [ours for ours, _ in ends]
        self._free: queue.SimpleQueue[Connection] = queue.SimpleQueue()
        for ours in self._connections[:pipes]:
            self._free.put(ours)
        self._loop_free = self._connections[pipes:]
        """The event loop's free pipes (the loop's only, so no lock)."""
        self._loop_waiting: deque[asyncio.Future[Connection]] = deque()
        """The loop's exchanges waiting for a pipe, in turn."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pipes, self._closed = pipes, False
        self._forgotten: list[str] = []
        self._lock = threading.Lock()

    def _message(self, request: tuple[Any, ...]) -> tuple[Any, ...]:
        with self._lock:  # the games to forget go with the next exchange (forget itself never waits)
            forgotten, self._forgotten = self._forgotten, []
        return (forgotten, *request)

    def call(self, request: tuple[Any, ...]) -> list[int] | None:
        connection = self._free.get()  # never waits: there are as many pipes as games thinking at once
        try:
            connection.send(self._message(request))
            moves, error = connection.recv()
        except (EOFError, OSError):
            raise _ProcessStopped from None
        finally:
            self._free.put(connection)
        if error is not None:
            raise AgentFailed(error)
        return moves

    async def ask(self, request: tuple[Any, ...]) -> list[int] | None:
        """:meth:`call` on the event loop: the answer is read when its pipe is readable. The loop's
        exchanges beyond its pipes wait their turn, as the threads' jobs wait for a free thread."""
        loop = self._loop = asyncio.get_running_loop()
        try:
            if self._loop_free:
                connection = self._loop_free.pop()
            else:
                waiter = loop.create_future()
                self._loop_waiting.append(waiter)
                connection = await waiter
        except EOFError:  # the process was found stopped while this exchange waited for a pipe
            raise _ProcessStopped from None
        answer: asyncio.Future[Any] = loop.create_future()
        fd = connection.fileno()  # (open: a pipe in use is closed only once its exchange is over)
        try:
            # A few kB at most, into an empty pipe (one exchange at a time on it): the write does not wait.
            connection.send(self._message(request))
            loop.add_reader(fd, _receive, loop, fd, connection, answer)
            moves, error = await answer
        except asyncio.CancelledError:
            loop.remove_reader(fd)
            connection.close()  # its answer, still to come, would go to the next exchange: the pipe goes
            raise
        except (EOFError, OSError):
            self._give_back(connection)
            raise _ProcessStopped from None
        self._give_back(connection)
        if error is not None:
            raise AgentFailed(error)
        return moves

    def _give_back(self, connection: Connection) -> None:
        """(On the loop.) A pipe whose exchange is over: to the next exchange waiting, or closed
        once the process is (:meth:`close` leaves the pipes in use open, so that their exchanges
        see the process's end rather than wait for an answer from a closed pipe)."""
        if self._closed:
            connection.close()
            return
        while self._loop_waiting:
            waiter = self._loop_waiting.popleft()
            if not waiter.done():  # (one whose exchange was cancelled is done)
                waiter.set_result(connection)
                return
        self._loop_free.append(connection)

    def forget(self, game_id: str) -> None:
        with self._lock:
            self._forgotten.append(game_id)

    def close(self) -> None:
        self._closed = True
        for connection in self._connections[:self._pipes] + self._loop_free:
            connection.close()  # the process's threads see the end of their pipes
        self._loop_free = []
        if self._loop is not None:  # (from any thread) the loop's exchanges waiting for a pipe fail
            for waiter in self._loop_waiting:
                self._loop.call_soon_threadsafe(_fail, waiter)
        self._lifeline.close()  # and the process ends, even with an agent thinking
        self.process.join(timeout=STOP_SECONDS)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()


def _receive(loop: asyncio.AbstractEventLoop, fd: int, connection: Connection, answer: asyncio.Future[Any]) -> None:
    """The answer of an exchange, read on the event loop once its pipe is readable (a few bytes,
    written at once by the agent process: the read does not wait); the pipe's end, an error."""
    loop.remove_reader(fd)
    if answer.done():  # cancelled (the pipe is dropped)
        return
    try:
        answer.set_result(connection.recv())
    except (EOFError, OSError) as e:
        answer.set_exception(e)


def _fail(waiter: asyncio.Future[Connection]) -> None:
    if not waiter.done():
        waiter.set_exception(EOFError("the agents' process stopped"))


def _start_deaf_to_ctrl_c(process: Any) -> None:
    """Start ``process`` ignoring Ctrl-C from its first instruction (a new process keeps an
    ignored signal ignored): Ctrl-C reaches the whole process group, and the server, which stops
    the games first and then closes the pipes, ends this process itself. Killed by Ctrl-C, even
    while it imports, it would fail the moves being thought, and so stop their games with an error."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread sets handlers
        process.start()
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        process.start()
    finally:
        signal.signal(signal.SIGINT, previous)


class _Copy:
    """A game's copy in an agent process: the game, and its agents (of ``menu``) as they are needed."""

    def __init__(self, setup: GameSetup, menu: AgentMenu) -> None:
        from five_hundred_env.actions import ActionTable  # in the agent process only
        from five_hundred_env.observation import ObservationEncoder

        self.setup, self.game, self.menu = setup, setup.game(), menu
        self.moves = 0
        self.encoder, self.table = ObservationEncoder(setup.rules), ActionTable(setup.rules)
        self.agents: dict[int, Any] = {}

    def play(self, moves: list[int], most: int) -> list[int]:
        for action in moves:
            self.game.apply_action(action)
        self.moves += len(moves)
        played = []
        game, specs = self.game, self.setup.specs
        while len(played) < most and not (game.is_over or game.dealing_stopped) and game.to_act >= 0:
            seat = game.to_act
            if specs[seat] is None:
                break
            agent = self.agents.get(seat)
            if agent is None:
                agent = self.agents[seat] = self.menu.build(specs[seat], self.setup.rules, (self.setup.seed + seat) % 2**32)
            observation = self.encoder.encode_turn(game.deal, self.table, game.scores)
            action = self.table.universal[int(agent.act(observation))]
            game.apply_action(action)
            played.append(action)
        self.moves += len(played)
        return played


def _end_with(lifeline: Connection) -> None:
    """(In an agent process.) End the process once the server's end of ``lifeline`` closes."""
    try:
        lifeline.recv()
    except (EOFError, OSError):
        pass
    os._exit(0)  # at once: a thread thinking (a search) would otherwise hold the process up


def check_nice(nice: int) -> None:
    """A ``ValueError`` unless ``nice`` is a niceness to add, 0 to :data:`MAX_NICE`."""
    if isinstance(nice, bool) or not isinstance(nice, int) or not 0 <= nice <= MAX_NICE:
        raise ValueError(f"the agent processes' niceness must be 0 to {MAX_NICE}, got {nice!r}")


def _serve(connections: list[Connection], nice: int, menu: AgentMenu, lifeline: Connection) -> None:
    """An agent process, ``nice`` steps below its parent's priority, building the agents of
    ``menu``: a thread per pipe answers ``(forgotten games, game id, setup, base, moves, most)``
    with ``(the agents' moves, None)``, ``(None, None)`` when it has no copy of the game at
    ``base``, or ``(None, error)`` when an agent raised, until the server closes the pipe. The
    process ends at once when ``lifeline`` closes: the server closed it, or ended (even killed
    outright), so that no agent thinks on for a server that is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # see _start_deaf_to_ctrl_c
    threading.Thread(target=_end_with, args=(lifeline,), name="five-hundred-lifeline", daemon=True).start()
    if nice and hasattr(os, "nice"):  # (Unix; elsewhere the agents keep the server's priority)
        # A person's move is answered by the server; the agents' thinking is not awaited by anyone
        # (the page shows their moves at a pace): where the cores are short, the server goes first.
        os.nice(nice)
    copies: dict[str, _Copy] = {}
    lock = threading.Lock()

    def answer(connection: Connection) -> None:
        while True:
            try:
                forgotten, game_id, setup, base, moves, most = connection.recv()
            except (EOFError, OSError):
                return
            with lock:
                for gone in forgotten:
                    copies.pop(gone, None)
                copy = copies.get(game_id)
            reply: tuple[Any, Any] = (None, None)
            try:  # a game's exchanges come one at a time: nobody else uses this copy meanwhile
                if setup is not None:
                    copy = _Copy(setup, menu)
                    with lock:
                        copies[game_id] = copy
                if copy is not None and copy.moves == base:
                    reply = (copy.play(moves, most), None)
            except Exception as e:  # the server stops that game with the reason shown
                with lock:
                    copies.pop(game_id, None)
                reply = (None, f"{type(e).__name__}: {e}")
            connection.send(reply)

    threads = [threading.Thread(target=answer, args=(c,), daemon=True) for c in connections]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


__all__ = ["DEFAULT_NICE", "MAX_NICE", "STOP_SECONDS", "AgentFailed", "AgentProcesses", "GameSetup", "check_nice"]
