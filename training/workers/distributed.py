"""Independent jobs on one of two backends: a local process pool (the default) or Ray tasks.

:func:`run_jobs` is ``[function(job) for job in jobs]``, in job order, whichever backend runs
it, so results never depend on the backend or the number of workers (every unit of work carries
its own seed). The backends fail the same way: a job that raises, a worker that dies and a job
past its time-out each raise :class:`WorkerError` naming the job, and ``KeyboardInterrupt``
propagates once every job still running has been stopped.

* ``local`` (:mod:`training.workers.worker_pool`): ``workers`` processes on this machine, no extra
  install. A worker that dies stops the run.
* ``ray``: one Ray task per job (one CPU each) on the cluster at ``address`` (``None``: a Ray
  instance started on this machine for the run). As many jobs are in flight as the cluster has
  CPUs; ``workers`` is the local pool's and is not used. A task whose worker process or node dies
  is run again, up to ``max_retries`` times, then the run stops; a job that raises is not retried
  (it would raise again). The project's packages (and the job function's) are shipped to the
  cluster with the tasks, so the nodes need only the dependencies (``pip install
  five-hundred-env[ray]`` and, for neural agents, torch). Ray is imported only here, only when
  the backend is used: ``pip install 'five-hundred-env[ray]'``.

On Ray, the PPO collector's shards are jobs too (:class:`training.rollouts.selfplay.ShardedCollector`);
:func:`connected` keeps one connection for a whole training run.
"""

from __future__ import annotations

import importlib
import logging
import pickle
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from itertools import islice
from types import ModuleType
from typing import Any, Literal

from training.workers.threads import limit_threads
from training.workers.worker_pool import POLL_S, WorkerError
from training.workers.worker_pool import run_jobs as run_local_jobs

BackendKind = Literal["local", "ray"]

CONNECT_S = 10.0
"""How long a cluster's address may take to accept a connection (``ray.init`` itself retries for minutes)."""

SHIPPED_PACKAGES = ("five_hundred_env", "agents", "training")
"""The project's packages, sent to a Ray cluster with the tasks (the driver's copy is what runs)."""


@dataclass(frozen=True)
class Backend:
    """Where :func:`run_jobs` runs its jobs (see the module docstring)."""

    kind: BackendKind = "local"
    address: str | None = None
    """Ray only: the cluster (``host:6379`` as ``ray start`` prints it, ``auto``, or
    ``ray://host:10001``); ``None``: a Ray instance of this machine, started for the run."""
    max_retries: int = 2
    """Ray only: how many more times a job whose worker died is run before the run stops."""

    def __post_init__(self) -> None:
        if self.kind not in ("local", "ray"):
            raise ValueError(f"the backend must be 'local' or 'ray', got {self.kind!r}")
        if self.kind == "local" and self.address is not None:
            raise ValueError(f"a Ray address ({self.address!r}) needs the ray backend")
        if not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise ValueError(f"max_retries must be a whole number >= 0, got {self.max_retries!r}")

    @classmethod
    def from_config(cls, config: Any) -> Backend:
        """The backend of a config's ``distributed`` section (:class:`training.settings.config.DistributedConfig`)."""
        return cls(config.backend, config.address, config.max_retries)

    def describe(self) -> str:
        """A few words for logs: ``local processes`` or ``Ray at ADDRESS``."""
        if self.kind == "local":
            return "local processes"
        return f"Ray at {self.address}" if self.address else "Ray on this machine"


LOCAL = Backend()
"""The default: worker processes of this machine."""


def run_jobs(function: Callable[[Any], Any], jobs: list[Any], workers: int, timeout: float,
             on_done: Callable[[int], None] | None = None, backend: Backend = LOCAL,
             on_result: Callable[[int, Any], None] | None = None) -> list[Any]:
    """``[function(job) for job in jobs]``, in order, on ``backend``: ``workers`` local processes
    (in this process when 1), or Ray tasks. ``on_done(i)`` is called as job ``i`` finishes, in
    any order, after ``on_result(i, result)``. A job that raises, runs more than ``timeout`` seconds (on Ray: since it was handed
    to the cluster) or loses its worker (on Ray: more than ``backend.max_retries`` times) raises
    :class:`WorkerError` naming it. ``function`` must be a module-level function and the jobs
    and results picklable."""
    if backend.kind == "local":
        return run_local_jobs(function, jobs, workers, timeout, on_done, on_result)
    if not jobs:
        return []
    ray = _import_ray()
    with _ray_connected(ray, backend, function):
        return _RayRun(ray, function, jobs, timeout, backend.max_retries).collect(on_done, on_result)


def connected(backend: Backend, function: Callable[[Any], Any]) -> AbstractContextManager[None]:
    """A block in which every :func:`run_jobs` on ``backend`` uses one connection to the cluster
    (made with ``function``'s package shipped, closed at the end), instead of one per call:
    nothing to do for the local backend."""
    if backend.kind == "local":
        return nullcontext()
    return _ray_connected(_import_ray(), backend, function)


def _call(function: Callable[[Any], Any], job: Any) -> bytes:
    """The body of every Ray task (module-level, so that workers import it): the result pickled
    here, so that the driver gets a copy of its own, not arrays in Ray's shared memory, which
    would outlive the connection that maps them. One torch thread: the task has one CPU."""
    limit_threads(1)
    return pickle.dumps(function(job))


class _RayRun:
    """The driver's side of a Ray run: as many tasks in flight as the cluster has CPUs, results
    gathered as they come, the clock watched; every task still in flight is cancelled (its
    worker killed) when the run ends early, whatever the reason."""

    def __init__(self, ray: ModuleType, function: Callable[[Any], Any], jobs: list[Any], timeout: float,
                 max_retries: int) -> None:
        self.ray, self.function, self.jobs, self.timeout = ray, function, jobs, timeout
        self.max_retries = max_retries
        self.task = ray.remote(_call).options(num_cpus=1, max_retries=max_retries, retry_exceptions=False)
        self.feed = iter(enumerate(jobs))
        self.in_flight: dict[Any, tuple[int, float]] = {}  # task -> (job, when it was handed out)
        self.results: dict[int, Any] = {}

    def collect(self, on_done: Callable[[int], None] | None,
                on_result: Callable[[int, Any], None] | None = None) -> list[Any]:
        try:
            self._hand_out(max(1, int(self.ray.cluster_resources().get("CPU", 1))))
            while self.in_flight:
                ready, _ = self.ray.wait(list(self.in_flight), num_returns=1, timeout=POLL_S)
                for ref in ready:
                    index, _since = self.in_flight.pop(ref)
                    self.results[index] = self._result(index, ref)
                    self._hand_out(1)
                    if on_result:
                        on_result(index, self.results[index])
                    if on_done:
                        on_done(index)
                self._check_clock()
        finally:
            for ref in self.in_flight:
                self.ray.cancel(ref, force=True)
        return [self.results[i] for i in range(len(self.jobs))]

    def _hand_out(self, n: int) -> None:
        for index, job in islice(self.feed, n):
            try:
                ref = self.task.remote(self.function, job)
            except Exception as e:  # Ray's own serialisation error (a TypeError), or the cluster gone
                raise WorkerError(f"job {index} cannot be sent to Ray: {type(e).__name__}: {e}") from None
            self.in_flight[ref] = (index, time.monotonic())

    def _result(self, index: int, ref: Any) -> Any:
        exceptions = self.ray.exceptions
        try:
            return pickle.loads(self.ray.get(ref))
        except exceptions.RayTaskError as e:  # the job raised: its own error, named
            cause = e.cause if e.cause is not None else e
            raise WorkerError(f"job {index} failed in a worker: {type(cause).__name__}: {cause}") from None
        except (exceptions.WorkerCrashedError, exceptions.NodeDiedError, exceptions.OutOfMemoryError,
                exceptions.LocalRayletDiedError) as e:
            raise WorkerError(f"job {index} lost its worker {1 + self.max_retries} times (max_retries "
                              f"{self.max_retries}), the last time: {_first_line(e)}") from None
        except exceptions.RayError as e:
            raise WorkerError(f"job {index} failed on Ray: {type(e).__name__}: {_first_line(e)}") from None

    def _check_clock(self) -> None:
        now = time.monotonic()
        late = [index for index, since in self.in_flight.values() if now - since > self.timeout]
        if late:
            raise WorkerError(f"job {min(late)} has run for more than its time-out of {self.timeout:g} s: "
                              "a worker is stuck, or the cluster too busy for the time-out")


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _import_ray() -> ModuleType:
    try:
        return importlib.import_module("ray")
    except ImportError as e:
        raise ValueError(f"the ray backend needs Ray ({e}): pip install 'five-hundred-env[ray]'") from None


def _shipped_modules(function: Callable[[Any], Any]) -> list[ModuleType]:
    """The project's packages and the top-level package (or module) of the job function."""
    names = dict.fromkeys([*SHIPPED_PACKAGES, function.__module__.partition(".")[0]])
    return [importlib.import_module(name) for name in names if name != "__main__"]


@contextmanager
def _ray_connected(ray: ModuleType, backend: Backend, function: Callable[[Any], Any]) -> Iterator[None]:
    """Connected to the cluster for the duration: a connection made by the caller is used as it
    is (and kept); otherwise one is made here, with the code shipped, and closed afterwards."""
    if ray.is_initialized():
        yield
        return
    if backend.address is not None:
        _check_answers(backend.address)
    own_instance = {"include_dashboard": False} if backend.address is None else {}  # refused for a cluster
    if backend.address is not None:
        _use_token_if_any()
    with _sigterm_handler_kept():
        ray.init(address=backend.address, runtime_env={"py_modules": _shipped_modules(function)},
                 logging_level=logging.WARNING, log_to_driver=False, **own_instance)
    try:
        yield
    finally:
        ray.shutdown()


def _check_answers(address: str) -> None:
    """A ``ConnectionError`` at once for a ``host:port`` where nothing listens (other addresses,
    ``auto`` and ``ray://``, are Ray's to check: it fails fast on those)."""
    host, _, port = address.rpartition(":")
    if "://" in address or not host or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_S).close()
    except OSError as e:
        raise ConnectionError(f"no Ray cluster answers at {address} ({e.strerror or e}): is 'ray start --head' "
                              "running there, and the port open to this machine?") from None


def _use_token_if_any() -> None:
    """Token authentication on when this machine has a Ray token and ``RAY_AUTH_MODE`` is unset,
    as ``ray start --head`` decides it: since Ray 2.60 a head started where a token exists (``~/.ray/auth_token``,
    written by any ``ray.init()`` of a local instance, or ``RAY_AUTH_TOKEN``) requires it, but
    ``ray.init(address=HOST:PORT)`` looks for a token only for ``auto``, so the documented
    ``--ray-address HOST:6379`` would fail to connect. ``RAY_AUTH_MODE=disabled`` opts out."""
    try:
        from ray._private.authentication.authentication_token_setup import maybe_enable_token_auth_if_token_available
    except ImportError:  # a Ray without token authentication
        return
    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)


@contextmanager
def _sigterm_handler_kept() -> Iterator[None]:
    """SIGTERM's handler as it was, after the block: ``ray.init`` installs its own (``sys.exit``),
    which would take SIGTERM from the command line's clean stop (only the main thread has handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        if before is not None:
            signal.signal(signal.SIGTERM, before)


__all__ = ["LOCAL", "Backend", "WorkerError", "connected", "run_jobs"]
