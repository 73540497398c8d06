"""Writing files whole or not at all: the one helper behind records, checkpoints and run logs."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import IO


def write_atomic(path: str | os.PathLike[str], write: Callable[[IO[bytes]], object], tag: str | None = None) -> None:
    """Write ``path`` whole or not at all: ``write(f)`` fills ``NAME.<tag>.tmp`` beside it (created
    0666 less the user's umask, like any new file; ``tag`` defaults to a fresh random one), which is
    fsynced and moved into place with ``os.replace``, then the folder is fsynced so the rename
    itself survives a crash. On any error the temporary file goes and an earlier ``path`` stays."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{tag or f'{os.getpid()}-{secrets.token_hex(4)}'}.tmp")
    tmp.unlink(missing_ok=True)  # a leftover keeps its own mode; start from a new file
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise OSError(e.errno, e.strerror, str(path)) from None  # name the file meant, not the temporary one
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def fsync_dir(folder: str | os.PathLike[str]) -> None:
    """Make a rename in ``folder`` durable (where the platform allows opening folders)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
