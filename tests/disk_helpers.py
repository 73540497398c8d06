"""A disk that fills up, for the tests of what a full disk does to the project's writes
(five_hundred_env.files.write_atomic opens every file it writes with ``os.fdopen``)."""

from __future__ import annotations

import errno
import io
import os
from pathlib import Path

import pytest

needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
"""The helper finds a file's name from its descriptor in /proc/self/fd."""


class _FillingFile(io.FileIO):
    """A file on a disk with ``room`` bytes free, written as the kernel writes to a full disk: the
    write that crosses the limit is cut short, the next one fails with ENOSPC (so Python's buffered
    writer on top of it, and torch's zip writer on top of that, meet the fault as they would)."""

    def __init__(self, fd: int, room: int) -> None:
        super().__init__(fd, "wb")
        self.room = room

    def write(self, data) -> int:  # type: ignore[override]
        if not self.room:
            raise OSError(errno.ENOSPC, "No space left on device")
        chunk = memoryview(data).cast("B")[:self.room]
        self.room -= len(chunk)
        return super().write(chunk)


def disk_fills_up(monkeypatch: pytest.MonkeyPatch, name: str, room: int = 0, after: int = 0) -> None:
    """Files opened for writing with ``os.fdopen`` whose path contains ``name`` find ``room``
    bytes free, except the first ``after`` of them, which are written whole."""
    real, seen = os.fdopen, []

    def fdopen(fd: int, mode: str = "r", *args, **kwargs):
        if "w" not in mode or name not in os.readlink(f"/proc/self/fd/{fd}"):
            return real(fd, mode, *args, **kwargs)
        seen.append(fd)
        if len(seen) <= after:
            return real(fd, mode, *args, **kwargs)
        return io.BufferedWriter(_FillingFile(fd, room))

    monkeypatch.setattr(os, "fdopen", fdopen)
