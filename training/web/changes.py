"""The requests waiting for a game to change (:class:`Changes`): a view's long poll waits on the
event loop, holding no thread, until a change of its game, made on any thread, wakes it."""

from __future__ import annotations

import asyncio
import threading

from training.web.session import GameSession


class Changes:
    """Wakes the requests waiting for a game to change; :meth:`notify` may be called from any thread."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._waiting: dict[str, set[asyncio.Future[None]]] = {}
        self.closing = False
        """Set when the server stops: every wait ends at once, and no new one starts."""

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """(On ``loop``'s thread.) Wake the waiting requests on ``loop``."""
        self.loop, self._loop_thread = loop, threading.get_ident()

    def notify(self, game_id: str) -> None:
        if self.loop is not None and game_id in self._waiting:
            if threading.get_ident() == self._loop_thread:  # on the loop already: no hop through its wake-up pipe
                self._wake(game_id)
            else:
                self.loop.call_soon_threadsafe(self._wake, game_id)

    def close(self) -> None:
        """(On the loop.) The server stops: answer every waiting request now (with the view as it
        is), rather than be cut off by the server's shutdown with an error."""
        self.closing = True
        for game_id in list(self._waiting):
            self._wake(game_id)

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
            if session.revision == seen and not self.closing:  # registered first, so a change from now on wakes it
                await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            pass
        finally:
            waiting = self._waiting.get(session.id)
            if waiting is not None:
                waiting.discard(future)
                if not waiting:
                    del self._waiting[session.id]


__all__ = ["Changes"]
