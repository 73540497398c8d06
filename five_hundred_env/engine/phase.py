"""The phases of a deal (:class:`Phase`), and the error an illegal action raises."""

from __future__ import annotations

import operator
from enum import IntEnum


class Phase(IntEnum):
    """Where a deal (or game) stands. ``CALL`` (the five-handed partner call, §10.5) comes after
    ``DISCARD`` and before ``NOMINATE`` in a deal; it is numbered after ``DEAL_OVER`` so that the
    phases of the other presets keep their numbers (and their rows of the observation's
    ``phase`` slice, which is one row wider with five players)."""

    BIDDING = 0
    DISCARD = 1
    NOMINATE = 2
    PLAY = 3
    DEAL_OVER = 4
    CALL = 5
    GAME_OVER = 6


class IllegalActionError(ValueError):
    """An action that is not legal here. The message names it and the legal actions."""


def action_id(action: object) -> int:
    """``action`` as a plain ``int`` action id, so that a deal's history holds only plain ints:
    integer types (numpy's included) are converted; ``bool``, floats (even ``3.0``), strings and
    anything else raise :class:`IllegalActionError` naming the value and its type."""
    if not isinstance(action, bool):
        try:
            return operator.index(action)  # type: ignore[arg-type]
        except TypeError:
            pass  # not an integer type: refused below
    raise IllegalActionError(f"action {action!r} is not an integer action id (it is a {type(action).__name__})")
