"""Writing files only where asked, only to regular files, whole or not at all: the one helper
behind every file the project writes (records, checkpoints, policy files, run logs, reports,
plots, GIFs).

The rules, the same for every command and function that writes:

* a target that exists must be a regular file (or a link to one): a device (``/dev/full``), a
  FIFO, a socket or a folder is refused, never replaced;
* a command never writes over its own input (``export X X``);
* at most one missing folder is created: the one the target goes in, and only when the folder
  above it exists (``--save records/game.json`` creates ``records/``; ``a/b/game.json`` with
  neither ``a`` nor ``a/b`` is refused);
* the file is written beside its target and renamed into place (:func:`write_atomic`), so a crash
  or a full disk leaves the earlier file, never half of one, and a write that fails is an
  ``OSError`` naming the target (also where torch's zip writer hides it behind a ``RuntimeError``).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO


class OutputPathError(ValueError):
    """A target that may not be written (not a regular file, the command's own input, or in a
    folder that cannot be made by the one-missing-folder rule); the message names it."""


def check_output(path: str | os.PathLike[str], what: str = "", inputs: Sequence[str | os.PathLike[str]] = ()) -> Path:
    """``path`` as a :class:`Path` (``~`` expanded) once it is known to be writable under the
    module's rules, checked before any work is done (so nothing is lost to a bad path);
    ``inputs`` are the files the command reads; ``what`` (e.g. ``"--save"``) starts the message
    of the :class:`OutputPathError` raised otherwise. Nothing is created."""
    text = os.fspath(path)
    label = f"{what} {text}" if what else text
    if not text.strip():
        raise OutputPathError(f"{what or 'the output'}: an empty file name; give a file to write")
    target = Path(text).expanduser()
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None  # a dangling link counts as missing: the rename replaces the link itself
    except OSError as e:
        raise OutputPathError(f"{label}: cannot be checked ({e.strerror})") from None
    if mode is not None and not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file (a device, pipe or socket)"
        raise OutputPathError(f"{label}: that is {kind}; give the name of a file to write")
    for source in inputs:
        if mode is not None and os.path.exists(source) and os.path.samefile(target, source):
            raise OutputPathError(f"{label}: that is the input {os.fspath(source)}; write to another file")
    _check_folder(target.parent, label)
    if target.parent.is_dir() and not os.access(target.parent, os.W_OK):
        raise OutputPathError(f"{label}: the folder {target.parent} is not writable")
    return target


def make_folder(folder: str | os.PathLike[str], what: str = "") -> Path:
    """Create ``folder`` if it is missing, when the folder above it exists (the one-missing-folder
    rule); an existing folder is fine, anything else there is an :class:`OutputPathError`."""
    folder = Path(folder).expanduser()
    label = f"{what} {folder}" if what else str(folder)
    _check_folder(folder, label)
    with contextlib.suppress(FileExistsError):  # there already, or made meanwhile by another process
        folder.mkdir()
    _check_folder(folder, label)  # a file made there meanwhile
    return folder


def _check_folder(folder: Path, label: str) -> None:
    """Refuse ``folder`` if something else than a folder is there, or if it is missing and so is
    the folder above it (only the last missing folder is ever created)."""
    if folder.is_dir():
        return
    if folder.exists():
        raise OutputPathError(f"{label}: {folder} is not a folder")
    if not folder.parent.is_dir():
        raise OutputPathError(f"{label}: the folder {folder} does not exist, nor does {folder.parent} "
                              "(only the last missing folder is created)")


def write_atomic(path: str | os.PathLike[str], write: Callable[[IO[bytes]], object], tag: str | None = None,
                 mode: int = 0o666) -> None:
    """Write ``path`` whole or not at all: ``write(f)`` fills ``NAME.<tag>.tmp`` beside it (created
    ``mode`` less the user's umask: 0666 like any new file, 0600 for a file only its owner may
    read; ``tag`` defaults to a fresh random one), which is
    fsynced and moved into place with ``os.replace``, then the folder is fsynced so the rename
    itself survives a crash. On any error the temporary file goes and an earlier ``path`` stays.
    ``path`` is checked first (:func:`check_output`; the one missing folder is then made)."""
    path = check_output(path)
    make_folder(path.parent)
    tmp = path.with_name(f"{path.name}.{tag or f'{os.getpid()}-{secrets.token_hex(4)}'}.tmp")
    tmp.unlink(missing_ok=True)  # a leftover keeps its own mode; start from a new file
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        tmp.unlink(missing_ok=True)
        failed = _failed_write(e)
        if failed is None:
            raise
        raise OSError(failed.errno, failed.strerror, str(path)) from None  # name the file meant, not the temporary one
    fsync_dir(path.parent)


def _failed_write(error: BaseException) -> OSError | None:
    """The ``OSError`` behind ``error``: itself, or one it was raised while handling. torch's zip
    writer finishes its file even after a write failed (a full disk), and that fails in turn with a
    ``RuntimeError`` ("unexpected pos ...") that hides the ``OSError`` saying why. ``None`` for an
    error that no failed system call caused, and for ``KeyboardInterrupt`` and its like."""
    seen: BaseException | None = error
    while isinstance(seen, Exception):
        if isinstance(seen, OSError) and seen.errno is not None:
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def fsync_dir(folder: str | os.PathLike[str]) -> None:
    """Make a rename in ``folder`` durable (where the platform allows opening folders)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
