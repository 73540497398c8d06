"""Jobs for the tests of ``training.workers.worker_pool.run_jobs``: module-level, so that spawned
worker processes can import them (this module imports nothing heavy)."""

from __future__ import annotations

import os
import time
from pathlib import Path


def square(job: int) -> int:
    """A job that works."""
    return job * job


def exit_on_three(job: int) -> int:
    """A worker that dies hard (no exception, no clean-up) on job 3, as a crash or the OOM killer would."""
    if job == 3:
        os._exit(7)
    return job


def fail_on_two(job: int) -> int:
    """A job that raises."""
    if job == 2:
        raise ValueError("no rollouts for job 2")
    return job


def stall_on_one(job: int) -> int:
    """A job that never finishes."""
    if job == 1:
        time.sleep(3600)
    return job


def record_pid_then_work(job: tuple[str, int]) -> int:
    """Write this worker's pid into the folder ``job[0]``, then keep busy for a while."""
    folder, index = job
    Path(folder, f"{os.getpid()}.pid").touch()
    end = time.monotonic() + 60
    while time.monotonic() < end:
        pass
    return index


def exit_once_on_one(job: tuple[str, int]) -> int:
    """A worker that dies hard on job 1 the first time only (a marker file in the folder ``job[0]``
    remembers it): a retry succeeds."""
    folder, index = job
    marker = Path(folder, "died-once")
    if index == 1 and not marker.exists():
        marker.touch()
        os._exit(7)
    return index * index


def unpicklable_result_on_one(job: int) -> object:
    """Job 1's result cannot be sent back (a lambda)."""
    return (lambda: job) if job == 1 else job


def arange(job: int) -> object:
    """A job whose result is a numpy array (what Ray would hand back in shared memory)."""
    import numpy as np

    return np.arange(job)


def torch_threads(job: int) -> tuple[int, str | None]:
    """The worker's torch intra-op threads and its ``OMP_NUM_THREADS`` (what processes it starts inherit)."""
    import torch

    return torch.get_num_threads(), os.environ.get("OMP_NUM_THREADS")
