"""Worker processes that never hang: dead workers, failing and stuck jobs, and Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import worker_faults
from process_helpers import as_from_a_terminal

from training.workers.worker_pool import WorkerError, run_jobs

TESTS = Path(__file__).parent


def test_results_come_back_in_job_order_whatever_the_workers():
    done: list[int] = []
    expected = [worker_faults.square(j) for j in range(9)]
    assert run_jobs(worker_faults.square, list(range(9)), 3, timeout=60, on_done=done.append) == expected
    assert sorted(done) == list(range(9))
    assert run_jobs(worker_faults.square, list(range(9)), 1, timeout=60) == expected


def test_no_workers_is_refused_at_once():
    with pytest.raises(ValueError, match="workers must be a whole number >= 1, got 0"):
        run_jobs(worker_faults.square, [1, 2], 0, timeout=60)


def test_a_dead_worker_is_an_error_within_seconds():
    start = time.monotonic()
    with pytest.raises(WorkerError, match=r"a worker died \(exit code 7"):
        run_jobs(worker_faults.exit_on_three, list(range(8)), 2, timeout=600)
    assert time.monotonic() - start < 30  # not the 600 s time-out: the death itself is noticed


def test_a_worker_killed_from_outside_mid_job_is_an_error(tmp_path):
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            run_jobs(worker_faults.record_pid_then_work, [(str(tmp_path), i) for i in range(4)], 2, timeout=600)
        except BaseException as e:  # handed to the test's thread
            outcome.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob("*.pid")) and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(int(next(tmp_path.glob("*.pid")).stem), signal.SIGKILL)  # as the out-of-memory killer would
    killed = time.monotonic()
    thread.join(timeout=30)
    assert not thread.is_alive() and time.monotonic() - killed < 10  # the busy jobs had a minute left
    assert len(outcome) == 1 and isinstance(outcome[0], WorkerError) and "exit code -9" in str(outcome[0])


def test_a_failing_job_is_named():
    with pytest.raises(WorkerError, match="job 2 failed in a worker: ValueError: no rollouts for job 2"):
        run_jobs(worker_faults.fail_on_two, list(range(6)), 2, timeout=600)


def test_a_job_that_cannot_be_sent_is_named_at_once():
    """An unpicklable job is refused by the parent, not dropped by a queue's feeder thread (which
    would leave the run waiting for it)."""
    start = time.monotonic()
    with pytest.raises(WorkerError, match=r"job 1 cannot be sent to a worker process: .*lambda"):
        run_jobs(worker_faults.square, [2, lambda: 3, 4], 2, timeout=600)
    with pytest.raises(WorkerError, match="the job function cannot be sent"):
        run_jobs(lambda job: job, [1, 2], 2, timeout=600)
    assert time.monotonic() - start < 30


def test_a_result_that_cannot_be_sent_back_is_named():
    with pytest.raises(WorkerError, match=r"job 1 failed in a worker: .*lambda"):
        run_jobs(worker_faults.unpicklable_result_on_one, [0, 1, 2], 2, timeout=600)


def test_a_stuck_job_overruns_its_time_out():
    start = time.monotonic()
    with pytest.raises(WorkerError, match=r"job 1 has run for more than its time-out of 1 s"):
        run_jobs(worker_faults.stall_on_one, list(range(6)), 2, timeout=1)
    assert time.monotonic() - start < 30


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _interrupted_run(tmp_path: Path, whole_group: bool) -> tuple[subprocess.CompletedProcess[str], list[int]]:
    """Start a run of two busy workers in a fresh process group, wait until both work, then send
    SIGINT to the parent alone or to the whole group (as a terminal's Ctrl-C does)."""
    script = textwrap.dedent(f"""
        import worker_faults
        from training.workers.worker_pool import run_jobs
        if __name__ == "__main__":
            run_jobs(worker_faults.record_pid_then_work, [({str(tmp_path)!r}, i) for i in range(4)], 2, timeout=600)
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS.parent), str(TESTS)])}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, preexec_fn=as_from_a_terminal)
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("*.pid"))) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    pids = [int(p.stem) for p in tmp_path.glob("*.pid")]
    assert len(pids) == 2, "the workers did not start"
    if whole_group:
        os.killpg(proc.pid, signal.SIGINT)
    else:
        os.kill(proc.pid, signal.SIGINT)
    start = time.monotonic()
    out, err = proc.communicate(timeout=30)
    assert time.monotonic() - start < 10  # the first Ctrl-C stops it: the jobs had a minute left
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), pids


@pytest.mark.parametrize("whole_group", [False, True])
def test_ctrl_c_stops_the_workers_and_propagates(tmp_path, whole_group):
    result, pids = _interrupted_run(tmp_path, whole_group)
    assert result.returncode != 0
    assert result.stderr.count("Traceback") == 1 and result.stderr.rstrip().endswith("KeyboardInterrupt")
    assert "worker_faults" not in result.stderr  # the traceback is the parent's, not a worker's
    time.sleep(0.2)
    assert not [pid for pid in pids if _alive(pid)], "a worker outlived the interrupted run"


def test_an_unguarded_script_says_what_is_missing(tmp_path):
    """A script that runs a pool without ``if __name__ == "__main__":``: every spawned worker
    imports it and would run it again; the error says so, not that a worker died (of memory?)."""
    script = tmp_path / "unguarded.py"
    script.write_text("import worker_faults\nfrom training.workers.worker_pool import run_jobs\n"
                      "print(run_jobs(worker_faults.square, [1, 2, 3], 2, timeout=60))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS.parent), str(TESTS)])}
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("training.workers.worker_pool.WorkerError:") and 'if __name__ == "__main__":' in last
    assert "memory" not in result.stderr
