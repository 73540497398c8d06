"""How many threads torch and numba may use in each process the project starts, so that they never
fight over the cores.

torch's intra-op pool spins on every thread it starts and waits for the slowest one at each
operation: on a core taken by another process that thread runs late, and the whole operation
with it. Measured on the project's two-core machine, a [256, 256] network's training step with
two torch threads runs at 6.7 batches/s while one other process is busy, against 155 with one
thread (docs/configs.md). So every process of the project uses **one** intra-op thread unless
told otherwise (the parallelism comes from processes: worker pools, Ray tasks), and ``auto``
counts the cores actually free to it.

:func:`limit_threads` is called early by the command line (before torch is imported), by the
training runs (their ``torch_threads`` setting) and by every worker process and Ray task (one
thread each). It sets torch's and numba's thread counts when they are imported already, and the
environment variables their pools read at import (``OMP_NUM_THREADS`` …), which the processes
started afterwards inherit.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

ThreadsSetting = int | str
"""A thread count: a whole number >= 1, ``"auto"`` (the cores free to this process) or 0 (every
usable core, as torch does on its own: it oversubscribes a shared machine)."""

AUTO = "auto"

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS")
"""What torch's, BLAS's and numba's thread pools read when they start."""


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity, capped by a cgroup CPU quota (a
    container's ``--cpus``) where there is one."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    quota = _cgroup_quota()
    return max(1, min(cores, quota)) if quota else max(1, cores)


def _cgroup_quota() -> int | None:
    """The CPUs of a cgroup v2 quota (``cpu.max``: ``QUOTA PERIOD`` or ``max``), rounded up; ``None`` without one."""
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
    except (OSError, ValueError):
        return None
    if quota == "max":
        return None
    return max(1, math.ceil(int(quota) / int(period)))


def free_cores() -> int:
    """The usable cores not taken by other work: :func:`usable_cores` less the one-minute load
    average (rounded), at least one."""
    try:
        load = os.getloadavg()[0]
    except OSError:  # no load average on this platform
        load = 0.0
    return max(1, usable_cores() - round(load))


def resolve_threads(setting: ThreadsSetting) -> int:
    """The thread count a setting means here and now: ``auto`` -> :func:`free_cores`, 0 ->
    :func:`usable_cores`, a whole number as it is."""
    if setting == AUTO:
        return free_cores()
    if isinstance(setting, bool) or not isinstance(setting, int) or setting < 0:
        raise ValueError(f"a thread count must be a whole number >= 0 or 'auto', got {setting!r}")
    return setting or usable_cores()


def limit_threads(setting: ThreadsSetting = 1) -> int:
    """Make this process (and the processes it starts) use ``setting`` intra-op threads in torch
    and numba (see :func:`resolve_threads`); returns the count. torch's inter-op pool gets one
    thread (it can only be set before its first use: later, it stays as it is)."""
    threads = resolve_threads(setting)
    for name in THREAD_VARIABLES:
        os.environ[name] = str(threads)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:  # inter-op work has run already: its pool is fixed for the process
            pass
    numba_pool = sys.modules.get("numba.np.ufunc.parallel")
    if numba_pool is not None and numba_pool._is_initialized:  # else NUMBA_NUM_THREADS sizes it when it starts
        import numba

        # numba's pool cannot grow past the size it started with (NUMBA_NUM_THREADS at its launch)
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    return threads


__all__ = ["AUTO", "THREAD_VARIABLES", "ThreadsSetting", "free_cores", "limit_threads", "resolve_threads",
           "usable_cores"]
