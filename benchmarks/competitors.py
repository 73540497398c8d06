"""Busy competitor processes, for measuring how a job fares on a machine that others share.

    from competitors import busy_competitors
    with busy_competitors(2):
        ...   # two processes spin on a core each for the duration of the block
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

BUSY_LOOP = "while True: pass"


@contextmanager
def busy_competitors(n: int) -> Iterator[None]:
    """``n`` processes spinning on a core each (a Python loop), for the duration of the block."""
    procs = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(n)]
    try:
        time.sleep(1.0)  # they are running before the measurement starts
        yield
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()
