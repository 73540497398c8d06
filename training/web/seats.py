"""Who sits at a web table: the people's seats, reached by secret tokens (kept as their digests:
:func:`new_token`, :func:`token_digest`), the names the people give, whether each is here, away or
awaited, and an empty seat given to an agent (:class:`TableSeats`, a part of
:class:`~training.web.session.GameSession`)."""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from collections.abc import Mapping
from typing import Any

from training.web.errors import GameError, conflict

AWAY_SECONDS = 45.0
"""A person not seen for this long (a page long-polls every 20 s at most) is shown away."""
MAX_NAME = 24
"""The longest name a person may give, in characters."""
TOKEN_BYTES = 24
"""A seat's secret token: 192 bits of the system's randomness, sent as 32 URL-safe characters."""
_NAME = re.compile(r"^[^\x00-\x1f\x7f<>&\"']+$")
_DIGEST = re.compile(r"^[0-9a-f]{64}$")


def new_token() -> str:
    """A fresh secret seat token (only its digest, :func:`token_digest`, is ever kept)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_digest(token: str) -> str:
    """What a session keeps of a token: its SHA-256, so that neither its files nor its memory hold
    a token that would let their reader act for a seat."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class TableSeats:
    """The people at a :class:`~training.web.session.GameSession` (a base of it, working on its
    seats, tokens, names and public table under its lock): who a token seats, who is here, a name
    given, an empty seat given to an agent."""

    def _checked_tokens(self, tokens: Mapping[int, str]) -> dict[int, str]:
        if sorted(tokens) != self.people or not all(isinstance(d, str) and _DIGEST.match(d) for d in tokens.values()):
            raise GameError(f"each person's seat ({self.people}) needs the digest of its token")
        return dict(tokens)

    def viewers(self) -> list[int | None]:
        """Who is sent views: each person's seat, or the spectator (``None``) when nobody plays."""
        return list(self.people) if self.mode == "play" else [None]

    def seat_of(self, token: Any) -> int | None:
        """The seat whose token ``token`` is (watched games and replays need none: ``None``, the
        spectator); any other token, or none at a table of people, is a :class:`GameError` (403)."""
        if self.mode != "play":
            return None
        if not isinstance(token, str) or not token:
            raise GameError("this table's seats are reached by their links: the request has no seat token", 403)
        digest = token_digest(token)
        with self.lock:
            for seat, kept in self.tokens.items():
                if secrets.compare_digest(kept, digest):
                    return seat
        raise GameError("this seat link is not valid here (or its seat was given to an agent)", 403)

    def arrive(self, seat: int | None, polling: int = 0) -> None:
        """``seat`` was heard from now (a request with its token); ``polling`` (+1, -1) counts its
        long polls waiting, during which it is here too."""
        if seat is None:
            return
        with self.lock:
            self._seen[seat] = time.monotonic()
            self._polls[seat] = self._polls.get(seat, 0) + polling
            self.check_presence()

    def check_presence(self) -> None:
        """Update who is here, awaited or away (the store calls this now and then: people leave
        without a word); a change is a change of every view."""
        with self.lock:
            now, changed = time.monotonic(), False
            for seat in self.people:
                seen = self._seen.get(seat)
                presence = ("awaited" if seen is None else
                            "here" if self._polls.get(seat, 0) > 0 or now - seen < AWAY_SECONDS else "away")
                if self.public.presence[seat] != presence:
                    self.public.presence[seat], changed = presence, True
            if changed:
                self._changed()

    def give_seat(self, by: int | None, seat: Any, spec: Any) -> None:
        """The creator (``by``) gives the empty seat ``seat`` (its person awaited or away) to the
        agent ``spec``: its token no longer works, and the agents play on."""
        with self.lock:
            if by is None or by != self.creator:
                raise GameError("only the table's creator may give a seat to an agent", 403)
            if isinstance(seat, bool) or seat not in self.people:
                raise GameError(f"seat must be one of the people's seats {self.people}, got {seat!r}")
            try:
                spec = self.menu.check(spec, self.rules)
            except ValueError as e:
                raise GameError(str(e)) from None
            if self.public.presence[seat] == "here":
                raise conflict(f"{self.public.names[seat]} is at the table: only an empty seat (awaited or away) "
                               "goes to an agent")
            self.specs[seat] = self.public.agents[seat] = spec
            self.public.presence[seat] = None
            self.people.remove(seat)
            del self.tokens[seat]
            self._heard.pop(seat, None)
            self._view_cache.pop(seat, None)
            self.history[seat].append({"from_move": len(self.actions), "agent": spec})
            self._told = None  # the copy elsewhere is made anew with this seat's agent
            self._changed()

    def give_name(self, seat: int | None, name: Any) -> None:
        """The person at ``seat`` gives their name (shown to the table, kept with a kept game)."""
        if not isinstance(name, str) or not 0 < len(name.strip()) <= MAX_NAME or not _NAME.match(name.strip()):
            raise GameError(f"a name is 1 to {MAX_NAME} characters, without <, >, &, quotes or control characters")
        if seat is None or seat not in self.people:
            raise conflict("a name is for a person at the table")
        name = name.strip()
        with self.lock:
            if name in (n for s, n in enumerate(self.public.names) if s != seat):
                raise conflict(f"{name!r} is already the name of another seat")
            self.given_names[seat] = self.public.names[seat] = name
            self._changed()


__all__ = ["AWAY_SECONDS", "MAX_NAME", "TableSeats", "new_token", "token_digest"]
