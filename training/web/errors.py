"""What the web table refuses (:class:`GameError`): a request that would not do, with the HTTP
status that says why; the game it was for is unchanged."""

from __future__ import annotations


class GameError(Exception):
    """A request the game refuses, with the HTTP status that says why (the game is unchanged)."""

    status = 400

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


def conflict(message: str) -> GameError:
    """A request that does not fit the game's state now (409): out of turn, the game over …"""
    return GameError(message, 409)


__all__ = ["GameError", "conflict"]
