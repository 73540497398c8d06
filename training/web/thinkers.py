"""Agents that think in other processes (:class:`AgentProcesses`): ``five-hundred serve`` puts its
agents there, so that their thinking does not hold the server's interpreter lock.

In one process, the agents' threads and the event loop that answers the requests take turns
through the interpreter's lock: every millisecond an agent thinks is a millisecond no request is
answered (docs/web.md, "Measured"). Here the server's worker thread sends the agent's observation
to a process and waits, without the lock, for its move; the process keeps each game's agents,
built from their spec and seed as the server would build them (so they play the same moves). A
game always goes to the same process; each process has one pipe and one thread per worker thread
of the server, so one slow search agent holds up its own game only, as on the server's threads.
"""

from __future__ import annotations

import multiprocessing
import queue
import signal
import threading
import zlib
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from five_hundred_env.rules import Rules

AgentBuild = tuple[str, Rules, int]
"""How an agent is made: its spec, the rules and its seed (``agent_factory(spec)(rules, seed)``)."""


class AgentFailed(RuntimeError):
    """An agent raised while thinking in its process (the message names the error), or the process stopped."""


class AgentProcesses:
    """``count`` processes thinking for the agents, each answering up to ``threads`` moves at once
    (the server's worker threads)."""

    def __init__(self, count: int, threads: int) -> None:
        if count < 1 or threads < 1:
            raise ValueError(f"agent processes need at least 1 process and 1 thread, got {count} and {threads}")
        context = multiprocessing.get_context("spawn")  # fork would copy the server's threads and locks
        self._processes = [_AgentProcess(context, threads, number) for number in range(count)]

    def act(self, game_id: str, seat: int, build: AgentBuild, observation: dict[str, Any]) -> int:
        """The compact action the agent of ``seat`` in game ``game_id`` chooses (this thread waits,
        without the interpreter's lock, while it thinks); an :class:`AgentFailed` if it raised."""
        return self._process(game_id).act((game_id, seat), build, observation)

    def forget(self, game_id: str) -> None:
        """Drop the agents of a game that has ended (none of its moves may still be thinking); never waits."""
        self._process(game_id).forget(game_id)

    def _process(self, game_id: str) -> _AgentProcess:
        return self._processes[zlib.crc32(game_id.encode()) % len(self._processes)]

    def close(self) -> None:
        """Stop the processes (once no move is thinking)."""
        for process in self._processes:
            process.close()


class _AgentProcess:
    """One agent process and its pipes, each used by one move at a time."""

    def __init__(self, context: Any, pipes: int, number: int) -> None:
        ends = [context.Pipe() for _ in range(pipes)]
        self.process = context.Process(target=_serve, args=([child for _, child in ends],),
                                       name=f"five-hundred-agents-{number}", daemon=True)
        _start_deaf_to_ctrl_c(self.process)
        self._free: queue.SimpleQueue[Connection] = queue.SimpleQueue()
        for ours, child in ends:
            child.close()
            self._free.put(ours)
        self._connections = [ours for ours, _ in ends]
        self._forgotten: list[str] = []
        self._built: set[tuple[str, int]] = set()
        """The agents the process has been told how to build (each is told once)."""
        self._lock = threading.Lock()

    def act(self, key: tuple[str, int], build: AgentBuild, observation: dict[str, Any]) -> int:
        connection = self._free.get()  # never waits: there are as many pipes as moves thinking at once
        try:
            with self._lock:  # the games to forget go with the next move (forget itself never waits)
                forgotten, self._forgotten = self._forgotten, []
                told = key in self._built
                self._built.add(key)
            # Raw bytes: a tenth of the time of pickling the arrays, on either side.
            arrays = {name: (array.tobytes(), array.dtype.str) for name, array in observation.items()}
            connection.send((forgotten, key, None if told else build, arrays))
            action, error = connection.recv()
        except (EOFError, OSError):
            raise AgentFailed("the agents' process stopped") from None
        finally:
            self._free.put(connection)
        if error is not None:
            raise AgentFailed(error)
        return action

    def forget(self, game_id: str) -> None:
        with self._lock:
            self._forgotten.append(game_id)
            self._built = {key for key in self._built if key[0] != game_id}

    def close(self) -> None:
        for connection in self._connections:
            connection.close()  # the process's threads see the end of their pipes, and it exits
        self.process.join(timeout=10)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()


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


def _serve(connections: list[Connection]) -> None:
    """An agent process: a thread per pipe answers ``(forgotten games, (game id, seat), build (the
    first time), observation as bytes)`` with ``(action, None)``, or ``(None, error)`` when the agent raised, until the
    server closes the pipe."""
    from agents.registry import agent_factory  # here, not in the server's import of this module

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # see _start_deaf_to_ctrl_c

    agents: dict[tuple[str, int], Any] = {}
    lock = threading.Lock()

    def answer(connection: Connection) -> None:
        while True:
            try:
                forgotten, key, build, arrays = connection.recv()
            except (EOFError, OSError):
                return
            with lock:
                for game_id in forgotten:
                    for stale in [k for k in agents if k[0] == game_id]:
                        del agents[stale]
                agent = agents.get(key)
            try:
                if agent is None:  # a game's moves come one at a time: nobody else builds this key meanwhile
                    spec, rules, seed = build
                    agent = agent_factory(spec)(rules, seed)
                    with lock:
                        agents[key] = agent
                observation = {name: np.frombuffer(data, dtype) for name, (data, dtype) in arrays.items()}
                reply = (int(agent.act(observation)), None)
            except Exception as e:  # the server stops that game with the reason shown
                reply = (None, f"{type(e).__name__}: {e}")
            connection.send(reply)

    threads = [threading.Thread(target=answer, args=(c,), daemon=True) for c in connections]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


__all__ = ["AgentBuild", "AgentFailed", "AgentProcesses"]
