"""The games on disk (:class:`Saver`): one journal per game, written by a thread of its own.

Each game is a file ``<folder>/<id>.json`` of JSON lines: the first is the game
(:meth:`GameSession.to_json`: its settings, seed and moves, and the digests of its seats' tokens),
written whole or not at all (:func:`five_hundred_env.files.write_atomic`); each next line is what
changed since (the new moves, and the pause, the error and the last activity as they are now),
appended and flushed to disk in one write. A game's file is so never rewritten whole while the
server runs (each write is a few hundred bytes and two system calls, not the whole game and a
dozen), and a line cut short by a crash is ignored on reading it back (:func:`read_game`: the game
as it stood at the line before). A restart writes each game's file whole again at its first change.

The files hold each game's secret seed, which decides every hidden card: they are written 0600,
in a folder made 0700 (:func:`private_folder`), and read back only as regular files of a bounded
size (:func:`read_journal`: not a link, a FIFO or a device). A finished game with a person in it
is also kept, once, as a record in the ``keep`` folder (``serve --keep-games``, :mod:`training.web.kept`).
"""

from __future__ import annotations

import logging
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from five_hundred_env.files import write_atomic
from training.web.session import GameSession

log = logging.getLogger(__name__)
PRIVATE = 0o600
"""The mode of the files the server writes: its owner's alone."""
MAX_JOURNAL = 64 << 20
"""The largest game file read back, in bytes (a long game's journal is a few hundred kB)."""


def private_folder(folder: Path) -> Path:
    """``folder``, made if missing (with its parents), readable by its owner alone: 0700."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if stat.S_IMODE(folder.stat().st_mode) & 0o077:
        log.warning("%s could be read by other users: made 0700 (it holds the games' secret seeds)", folder)
        folder.chmod(0o700)
    return folder


def read_journal(path: Path) -> bytes:
    """The bytes of a game's file, if it is a regular file (not a link, FIFO or device, which could
    hang or mislead the start) of at most :data:`MAX_JOURNAL` bytes; else an ``OSError`` or ``ValueError``."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as file:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise ValueError("not a regular file")
        if status.st_size > MAX_JOURNAL:
            raise ValueError(f"over {MAX_JOURNAL} bytes")
        return file.read(MAX_JOURNAL + 1)


def read_game(data: bytes) -> dict[str, Any]:
    """The saved game of a journal (what :meth:`GameSession.from_json` takes), its changes applied;
    a damaged game (its first line) is a ``ValueError``."""
    first, *changes = data.split(b"\n")
    game = orjson.loads(first)
    if not isinstance(game, dict) or not isinstance(game.get("actions"), list):
        raise ValueError("not a saved web game")
    for line in filter(None, changes):
        try:
            change = orjson.loads(line)
            if not isinstance(change["actions"], list):
                raise TypeError
            game["actions"].extend(change["actions"])
            game.update({key: change[key] for key in ("paused", "error", "last_active", "kept")})
        except (ValueError, KeyError, TypeError):  # cut short by a crash: the game as it stood at the line before
            break
    return game


class Saver:
    """Writes games to ``folder`` on its own thread, always the game's latest state, so that a
    move's answer never waits for the disk (a game is on disk milliseconds after its move).
    ``keep(session)``, when given, keeps a finished game with a person in it, once.
    :meth:`flush` waits until everything pending is written."""

    def __init__(self, folder: Path, keep: Callable[[GameSession], None] | None = None) -> None:
        self.folder = private_folder(folder)
        self.keep = keep
        self._pending: dict[str, GameSession] = {}
        self._journals: dict[str, tuple[BinaryIO, int]] = {}
        """Each game's open journal and the number of its moves in it (the writer thread's only)."""
        self._writing = False
        self._wake = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="five-hundred-saver", daemon=True)
        self._thread.start()

    def path(self, game_id: str) -> Path:
        return self.folder / f"{game_id}.json"

    def save(self, session: GameSession) -> None:
        """Write ``session`` soon (once, however often it is asked before the write); a closed
        (deleted) session's file goes."""
        with self._wake:
            self._pending[session.id] = session
            self._wake.notify_all()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._pending and not self._stopped:
                    self._wake.wait()
                if not self._pending:
                    break
                _game_id, session = self._pending.popitem()
                self._writing = True
            try:
                self._keep(session)
                self._write(session)
            except OSError as e:
                log.error("could not save game %s: %s", session.id, e)
                self._close(session.id)  # written whole at its next change
            finally:
                with self._wake:
                    self._writing = False
                    self._wake.notify_all()
        for game_id in list(self._journals):
            self._close(game_id)

    def _keep(self, session: GameSession) -> None:
        """Keep ``session`` if it is finished, had a person in it and is not kept yet (then its
        journal says so, and a restart does not keep it again)."""
        with session.lock:
            due = (self.keep is not None and session.finished and not session.kept and not session.closed
                   and any(entry["agent"] is None for seat in session.history for entry in seat))
        if due:
            assert self.keep is not None
            self.keep(session)
            with session.lock:
                session.kept = True

    def _write(self, session: GameSession) -> None:
        journal = self._journals.get(session.id)
        with session.lock:  # a snapshot: the game may go on while it is written
            closed, moves = session.closed, len(session.actions)
            if closed:
                text = b""
            elif journal is None:
                text = orjson.dumps(session.to_json()) + b"\n"
            else:
                text = orjson.dumps({"actions": session.actions[journal[1]:], "paused": session.paused,
                                     "error": session.error, "last_active": session.last_active,
                                     "kept": session.kept}) + b"\n"
        if closed:
            self._close(session.id)
            self.path(session.id).unlink(missing_ok=True)
        elif journal is None:
            write_atomic(self.path(session.id), lambda f: f.write(text), mode=PRIVATE)
            self._journals[session.id] = (open(self.path(session.id), "ab"), moves)
        else:
            file = journal[0]
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
            self._journals[session.id] = (file, moves)

    def _close(self, game_id: str) -> None:
        journal = self._journals.pop(game_id, None)
        if journal is not None:
            journal[0].close()

    def flush(self) -> None:
        """Wait until every pending write is done."""
        with self._wake:
            while self._pending or self._writing:
                self._wake.wait()

    def stop(self) -> None:
        """Write what is pending, then stop the thread."""
        with self._wake:
            self._stopped = True
            self._wake.notify_all()
        self._thread.join()


__all__ = ["MAX_JOURNAL", "PRIVATE", "Saver", "private_folder", "read_game", "read_journal"]
