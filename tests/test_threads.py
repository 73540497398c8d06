"""Thread counts that cannot oversubscribe the cores (training.workers.threads): one intra-op thread per
process by default, ``auto`` counting the cores free to it, the training processes applying
their config's ``torch_threads`` and every worker process using one."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import worker_faults

from training.settings.config import ConfigError, config_from_dict
from training.workers import threads
from training.workers.threads import THREAD_VARIABLES, free_cores, limit_threads, resolve_threads
from training.workers.worker_pool import run_jobs

torch = pytest.importorskip("torch")

ROOT = Path(__file__).parent.parent


@pytest.fixture(autouse=True)
def threads_restored(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process's torch threads and thread variables as they were, after each test."""
    before = torch.get_num_threads()
    for name in THREAD_VARIABLES:
        monkeypatch.setenv(name, os.environ.get(name, "1"))  # monkeypatch puts the old value (or none) back
    yield
    torch.set_num_threads(before)


def _machine(monkeypatch: pytest.MonkeyPatch, cores: int, load: float) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)))
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(threads, "_cgroup_quota", lambda: None)


@pytest.mark.parametrize(("cores", "load", "free"), [(2, 0.1, 2), (2, 2.0, 1), (8, 3.2, 5), (4, 9.0, 1), (16, 0.0, 16)])
def test_auto_counts_the_cores_free_to_this_process(monkeypatch, cores, load, free):
    _machine(monkeypatch, cores, load)
    assert free_cores() == free
    assert resolve_threads("auto") == free


def test_a_cgroup_quota_caps_the_cores(monkeypatch):
    _machine(monkeypatch, 16, 0.0)
    monkeypatch.setattr(threads, "_cgroup_quota", lambda: 3)
    assert free_cores() == 3


@pytest.mark.parametrize("bad", [-1, "many", 1.5, True])
def test_a_bad_thread_count_is_refused(bad):
    with pytest.raises(ValueError, match="thread count"):
        resolve_threads(bad)


def test_limit_threads_sets_torch_and_what_child_processes_inherit():
    assert limit_threads(3) == 3
    assert torch.get_num_threads() == 3
    assert all(os.environ[name] == "3" for name in THREAD_VARIABLES)
    assert limit_threads(1) == 1 and torch.get_num_threads() == 1


def test_zero_means_every_usable_core_as_torch_would_pick(monkeypatch):
    _machine(monkeypatch, 3, 2.5)
    assert limit_threads(0) == 3 and torch.get_num_threads() == 3


def test_the_configs_take_a_count_or_auto():
    assert config_from_dict({}).torch_threads == 1  # the default: never more threads than a core's worth
    assert config_from_dict({"torch_threads": "auto"}).torch_threads == "auto"
    for bad in ("many", -1, 2000):
        with pytest.raises(ConfigError, match="torch_threads"):
            config_from_dict({"torch_threads": bad})


def test_a_training_process_uses_its_configs_threads(monkeypatch):
    from training.algorithms.ppo import _torch_device

    _torch_device(config_from_dict({"torch_threads": 2}))
    assert torch.get_num_threads() == 2
    _machine(monkeypatch, 4, 1.0)
    _torch_device(config_from_dict({"torch_threads": "auto"}))
    assert torch.get_num_threads() == 3
    _torch_device(config_from_dict({}))
    assert torch.get_num_threads() == 1


def test_every_pool_worker_uses_one_thread_whatever_the_parent_uses():
    limit_threads(2)  # the parent trains on two threads; its workers (and what they start) get one each
    assert run_jobs(worker_faults.torch_threads, [0, 1], workers=2, timeout=120) == [(1, "1"), (1, "1")]


def test_the_command_line_starts_with_one_thread():
    """Whatever the environment says, a five-hundred process uses one torch thread (train and exit
    then apply their config's)."""
    code = ("import sys, torch; from training import cli; from unittest import mock\n"
            "with mock.patch.object(cli, '_run', lambda argv: print(torch.get_num_threads())):\n"
            "    cli.main(['demo'])\n")
    env = {**os.environ, "OMP_NUM_THREADS": "2", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "1"
