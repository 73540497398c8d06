"""Independent jobs run by worker processes, in a way that never hangs and stops at one Ctrl-C.

``multiprocessing.Pool`` replaces a worker that dies and waits forever for the job it lost, and
a Ctrl-C there reaches every worker, each printing its own traceback. :func:`run_jobs` instead
watches its workers: a dead worker, a job that raises and a job that runs past its time-out
each raise :class:`WorkerError` within a second or so; the workers ignore SIGINT, and the
parent's ``KeyboardInterrupt`` (or any other exit) terminates and reaps them before it
propagates. Results come back in job order, so they never depend on the number of workers.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import queue
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import islice
from typing import Any

from training.workers.threads import limit_threads

STARTUP_S = 120.0
"""How long workers may take to start and take their first job (they import the job's module:
with torch, seconds on a loaded machine)."""

POLL_S = 0.5
"""How often the parent checks its workers and the clock while it waits."""

_CONTEXT = multiprocessing.get_context("spawn")
"""Fresh worker processes: nothing of the parent's threads or state (say, torch's thread pools)
is inherited, so a worker cannot deadlock on a lock forked mid-use; the same on every platform."""


UNGUARDED_EXIT = 86
"""The exit status of a worker that found itself re-running an unguarded script (see :func:`_refuse_unguarded_main`)."""

UNGUARDED_MESSAGE = (
    "the worker processes could not start: the script that calls run_jobs has no "
    "'if __name__ == \"__main__\":' guard. Each worker imports the main script (the spawn start method), "
    "so its top level ran again in every worker, calling run_jobs there; put the script's work "
    "under 'if __name__ == \"__main__\":'")


class WorkerError(RuntimeError):
    """The workers failed: one died or raised, a job overran its time-out, or none started."""


def run_jobs(function: Callable[[Any], Any], jobs: list[Any], workers: int, timeout: float,
             on_done: Callable[[int], None] | None = None,
             on_result: Callable[[int, Any], None] | None = None) -> list[Any]:
    """``[function(job) for job in jobs]``, in order, computed by ``workers`` processes (in this
    process, without a time-out, when ``workers`` is 1); ``on_done(i)`` is called as job ``i``
    finishes, in any order, after ``on_result(i, result)`` (which can keep each result as it comes:
    a run stopped midway keeps those). A job that runs more than ``timeout`` seconds, a worker that dies
    and a job that raises each raise :class:`WorkerError` naming it; ``KeyboardInterrupt``
    propagates after the workers are terminated. ``function`` must be a module-level function
    (the workers import it) and the jobs and results picklable: one that is not is a
    :class:`WorkerError` naming it, never a wait."""
    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a whole number >= 1, got {workers!r}")
    if workers == 1 or len(jobs) <= 1:
        results = []
        for i, job in enumerate(jobs):
            results.append(function(job))
            if on_result:
                on_result(i, results[-1])
            if on_done:
                on_done(i)
        return results
    _refuse_unguarded_main()
    _check_picklable(function, "the job function")
    todo, done = _CONTEXT.Queue(), _CONTEXT.Queue()
    procs = [_CONTEXT.Process(target=_serve, args=(function, todo, done), daemon=True)
             for _ in range(min(workers, len(jobs)))]
    try:
        with _sigint_held():
            for proc in procs:
                proc.start()
        return _Run(jobs, todo, procs, timeout).collect(done, on_done, on_result)
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
        for proc in procs:
            if proc.pid is not None:
                proc.join()
        todo.cancel_join_thread()  # jobs never taken must not keep this process from exiting
        todo.close()
        done.close()


class _Run:
    """The parent's side of :func:`run_jobs`: two jobs per worker queued at a time (not all of
    them: a full pipe would block), the results gathered, the workers and the clock watched."""

    def __init__(self, jobs: list[Any], todo: Any, procs: list[Any], timeout: float) -> None:
        self.jobs, self.todo, self.procs, self.timeout = jobs, todo, procs, timeout
        self.feed = iter(enumerate(jobs))
        self.results: dict[int, Any] = {}
        self.running: dict[int, float] = {}  # job -> when a worker took it
        self.started = time.monotonic()
        self.any_taken = False

    def collect(self, done: Any, on_done: Callable[[int], None] | None,
                on_result: Callable[[int, Any], None] | None = None) -> list[Any]:
        self._hand_out(2 * len(self.procs))
        while len(self.results) < len(self.jobs):
            try:
                kind, index, payload = done.get(timeout=POLL_S)
            except queue.Empty:
                kind, index, payload = "wait", -1, None
            if kind == "wait":
                self._check()
            elif kind == "took":
                self.running[index] = time.monotonic()
                self.any_taken = True
            elif kind == "failed":
                raise WorkerError(f"job {index} failed in a worker: {payload}")
            else:
                self.results[index] = pickle.loads(payload)
                self.running.pop(index, None)
                self._hand_out(1)
                if on_result:
                    on_result(index, self.results[index])
                if on_done:
                    on_done(index)
        return [self.results[i] for i in range(len(self.jobs))]

    def _hand_out(self, n: int) -> None:
        # Pickled here, not in the queue's feeder thread, which would only print the error and
        # drop the job, leaving the run to wait for it.
        for index, job in islice(self.feed, n):
            self.todo.put((index, _check_picklable(job, f"job {index}")))

    def _check(self) -> None:
        # Workers never stop on their own (they are terminated once every result is in): an exit is a death.
        missing = len(self.jobs) - len(self.results)
        dead = [p.exitcode for p in self.procs if p.exitcode is not None]
        if UNGUARDED_EXIT in dead and not self.any_taken:
            raise WorkerError(UNGUARDED_MESSAGE)
        if dead:
            raise WorkerError(f"a worker died (exit code {dead[0]}; a negative code is the signal that killed it, "
                              f"-9 when out of memory) with {missing} of {len(self.jobs)} jobs unfinished")
        now = time.monotonic()
        late = [i for i, since in self.running.items() if now - since > self.timeout]
        if late:
            raise WorkerError(f"job {late[0]} has run for more than its time-out of {self.timeout:g} s: "
                              "a worker is stuck, or the machine too loaded for the time-out")
        if not self.any_taken and now - self.started > STARTUP_S:
            raise WorkerError(f"no worker took a job within {STARTUP_S:g} s of starting")


def _refuse_unguarded_main() -> None:
    """In a worker that is importing the main script when the script calls
    :func:`run_jobs`: the script has no ``if __name__ == "__main__":`` guard. Said on standard
    error and ended with :data:`UNGUARDED_EXIT`, which the parent turns into
    :data:`UNGUARDED_MESSAGE` (multiprocessing's own error, in the worker, leaves the parent with
    a worker dead for no visible reason)."""
    # _inheriting: set while a spawned child prepares (imports the main script), as multiprocessing's own check reads it
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        print(f"five-hundred worker: {UNGUARDED_MESSAGE}", file=sys.stderr, flush=True)
        os._exit(UNGUARDED_EXIT)


def _check_picklable(thing: Any, what: str) -> bytes:
    """``thing`` pickled, or a :class:`WorkerError` saying that ``what`` cannot go to a worker."""
    try:
        return pickle.dumps(thing)
    except Exception as e:  # PicklingError, TypeError or AttributeError, depending on the object
        raise WorkerError(f"{what} cannot be sent to a worker process: {type(e).__name__}: {e}") from None


@contextmanager
def _sigint_held() -> Iterator[None]:
    """SIGINT held back (blocked, not lost) while workers start: they inherit the blocked
    signal, so none can be interrupted before it ignores SIGINT; a Ctrl-C meanwhile reaches
    this process as soon as the block ends."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _serve(function: Callable[[Any], Any], todo: Any, done: Any) -> None:
    """A worker: run jobs from ``todo`` and report on ``done`` (``took``, then ``done`` with
    the pickled result or ``failed`` with the error), until the parent terminates it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it terminates us
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    limit_threads(1)  # the pool's parallelism is its processes: one thread each, never fighting over cores
    while True:
        index, job = todo.get()
        done.put(("took", index, None))
        try:  # the result is pickled here too, so that one that cannot be is reported, not dropped
            done.put(("done", index, pickle.dumps(function(pickle.loads(job)))))
        except Exception as e:  # reported to the parent, which stops the run and names the job
            done.put(("failed", index, f"{type(e).__name__}: {e}"))
