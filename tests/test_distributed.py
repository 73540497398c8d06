"""The backends of training.workers.distributed: the local pool (the default) and Ray tasks on a local
cluster started here (``ray start --head`` on 127.0.0.1): the same results whatever runs them,
and a clear error or a retry, never a hang, when a worker dies; Ctrl-C stops everything.

The Ray tests skip where Ray is not installed (``pip install 'five-hundred-env[ray]'``)."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import numpy as np
import pytest
import worker_faults
from process_helpers import as_from_a_terminal

from training.cli import main
from training.evaluation import evaluate_ranges, league
from training.evaluation.evaluate import duplicate_match
from training.settings.config import ConfigError, config_from_dict
from training.workers.distributed import LOCAL, SHIPPED_PACKAGES, Backend, WorkerError, run_jobs

TESTS = Path(__file__).parent
ROOT = TESTS.parent


# -- the backend choice, whatever is installed -------------------------------------------------
def test_the_local_pool_is_the_default_and_keeps_job_order():
    assert Backend() == LOCAL and LOCAL.kind == "local"
    jobs = list(range(7))
    assert run_jobs(worker_faults.square, jobs, 3, timeout=60) == [j * j for j in jobs]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"kind": "dask"}, "'local' or 'ray'"),
    ({"kind": "local", "address": "10.0.0.1:6379"}, "needs the ray backend"),
    ({"kind": "ray", "max_retries": -1}, "max_retries"),
])
def test_a_bad_backend_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Backend(**kwargs)


def test_the_ray_backend_without_ray_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError, as when not installed
    with pytest.raises(ValueError, match=r"pip install 'five-hundred-env\[ray\]'"):
        run_jobs(worker_faults.square, [1, 2], 1, timeout=60, backend=Backend("ray"))


def test_an_address_where_nothing_listens_is_an_error_at_once():
    pytest.importorskip("ray")
    port = _free_ports(1)[0]  # closed again: nothing listens there
    start = time.monotonic()
    with pytest.raises(ConnectionError, match=f"no Ray cluster answers at 127.0.0.1:{port}"):
        run_jobs(worker_faults.square, [1, 2], 1, timeout=60, backend=Backend("ray", f"127.0.0.1:{port}"))
    assert time.monotonic() - start < 15  # ray.init alone would retry for minutes


def test_the_config_section_chooses_the_backend():
    assert Backend.from_config(config_from_dict({}).distributed) == LOCAL
    cfg = config_from_dict({"distributed": {"backend": "ray", "address": "head:6379", "max_retries": 1}})
    assert Backend.from_config(cfg.distributed) == Backend("ray", "head:6379", 1)
    with pytest.raises(ConfigError, match=r"distributed.*needs backend: ray"):
        config_from_dict({"distributed": {"address": "head:6379"}})
    with pytest.raises(ConfigError, match="max_retries"):
        config_from_dict({"distributed": {"backend": "ray", "max_retries": -1}})


def test_evaluate_with_workers_prints_the_same_report(capsys, monkeypatch):
    monkeypatch.setattr(evaluate_ranges, "BOARDS_PER_JOB", 2)  # three ranges of boards (cut in this process)
    reports = []
    for workers in ("1", "3"):
        assert main(["evaluate", "heuristic", "random", "--deals", "5", "--seed", "4", "--json", "-",
                     "--workers", workers, "--no-progress"]) == 0
        out = capsys.readouterr().out
        reports.append(json.loads(out[out.index("{"):]))
    assert reports[0] == reports[1] and reports[0]["plays"] == 10


@pytest.mark.parametrize("argv", [
    ["evaluate", "random", "random", "--workers", "2", "--ray-address", "head:6379"],
    ["evaluate", "random", "random", "--workers", "0"],
    ["train", "configs/ppo_italian_3p.yaml", "--workers", "2", "--ray-address", "head:6379"],
    ["train", "configs/ppo_italian_3p.yaml", "train.total_steps=0", "--workers", "two"],
    ["train", "configs/ppo_italian_3p.yaml", "--ray-address"],
])
def test_contradictory_or_bad_worker_options_are_one_line(argv, capsys):
    assert main([*argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("five-hundred: error: --") and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(("options", "expected"), [
    (["--workers", "3"], ("local", None, 3)),
    (["seed=2", "--workers=4"], ("local", None, 4)),
    (["--ray-address", "10.0.0.1:6379", "--resume"], ("ray", "10.0.0.1:6379", 1)),  # the config's workers: 1
    (["--ray-address=ray://head:10001"], ("ray", "ray://head:10001", 1)),
])
def test_train_worker_options_become_config_keys(options, expected, monkeypatch):
    pytest.importorskip("torch")
    from training.algorithms import ppo

    seen = []
    monkeypatch.setattr(ppo, "train", lambda config, resume, overwrite: seen.append(config))
    assert main(["train", str(ROOT / "configs" / "ppo_italian_3p.yaml"), *options]) == 0  # a PPO config
    d = seen[0].distributed
    assert (d.backend, d.address, seen[0].pretrain.rollouts.workers) == expected


# -- a local Ray cluster -----------------------------------------------------------------------
def _free_ports(n: int) -> list[int]:
    with ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(n)]
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]


@contextmanager
def _ray_head(num_cpus: int, **env_changes: str) -> Iterator[str]:
    """``ray start --head --block`` on 127.0.0.1 with ``num_cpus`` CPUs, its own free ports and
    temporary folder (so that it meets no other cluster of this machine), without the project
    on its PYTHONPATH, and ``env_changes`` in its environment; yields its address and ends its
    processes as a group at the end."""
    port, client, metrics, agent, agent_grpc, runtime_env = _free_ports(6)
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "RAY_AUTH_MODE")}
    env |= {"RAY_USAGE_STATS_ENABLED": "0", **env_changes}
    head = subprocess.Popen(
        [str(Path(sys.executable).with_name("ray")), "start", "--head", "--block", f"--port={port}",
         "--node-ip-address=127.0.0.1", f"--num-cpus={num_cpus}", "--include-dashboard=false",
         "--disable-usage-stats", f"--ray-client-server-port={client}", f"--metrics-export-port={metrics}",
         f"--dashboard-agent-listen-port={agent}", f"--dashboard-agent-grpc-port={agent_grpc}",
         f"--runtime-env-agent-port={runtime_env}", f"--temp-dir={temp}"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and head.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        assert head.poll() is None, "ray start --head failed"
        yield f"127.0.0.1:{port}"
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        try:
            head.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        try:  # whatever of ray start's group is left
            os.killpg(head.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        head.wait()
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    """A one-node Ray cluster of two CPUs, started for this module and stopped at the end. The
    cluster cannot import the project: the code reaches it only as the runs ship it. This
    process stays connected (as run_jobs ships the code) so that the tests share warm workers.
    Token authentication is off here (``RAY_AUTH_MODE=disabled``, for the cluster and this
    process): Ray's token loader keeps the first token a process reads, which would tie this
    process to one cluster's token; the documented path with a token is tested in processes of
    its own (:func:`test_the_documented_recipe_works_under_token_authentication`)."""
    ray = pytest.importorskip("ray")
    with _ray_head(2, RAY_AUTH_MODE="disabled") as address:
        shipped = [importlib.import_module(name) for name in (*SHIPPED_PACKAGES, "worker_faults")]
        try:
            ray.init(address=address, runtime_env={"py_modules": shipped}, log_to_driver=False)
            yield address
        finally:
            ray.shutdown()


def test_the_documented_recipe_works_under_token_authentication(tmp_path):
    """docs/distributed.md as a user runs it with Ray's defaults: a token in ~/.ray/auth_token
    (any earlier local ``ray.init`` writes one), ``ray start --head`` (which then requires it),
    and ``five-hundred evaluate ... --ray-address HOST:PORT`` with no RAY_AUTH_* variable set.
    A one-CPU head of its own (about ten seconds): the module's cluster has authentication off."""
    pytest.importorskip("ray")
    import secrets

    home = tmp_path / "home"
    (home / ".ray").mkdir(parents=True)
    (home / ".ray" / "auth_token").write_text(secrets.token_hex(32))
    clean = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    with _ray_head(1, HOME=str(home)) as address:
        env = {**clean, "HOME": str(home), "PYTHONPATH": str(ROOT), "RAY_USAGE_STATS_ENABLED": "0"}
        args = ["evaluate", "heuristic", "random", "--deals", "2", "--no-progress", "--json", "-"]
        proc = subprocess.run([sys.executable, "-m", "training.cli", *args, "--ray-address", address], env=env,
                              capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert json.loads(out[out.index("{"):]) == duplicate_match("australian", "heuristic", "random", deals=2).to_dict()


def test_a_match_on_ray_gives_the_report_of_one_process(ray_address, monkeypatch, capsys):
    """1 process, 3 local workers and Ray tasks: the very same report (board ranges of 2, games
    one by one: four ranges of boards, three of games), from Python and from the command line."""
    monkeypatch.setattr(evaluate_ranges, "BOARDS_PER_JOB", 2)
    monkeypatch.setattr(evaluate_ranges, "GAMES_PER_JOB", 1)
    args = ("australian", "heuristic", "random")
    alone = duplicate_match(*args, deals=7, seed=9, games=3).to_dict()
    assert duplicate_match(*args, deals=7, seed=9, games=3, workers=3).to_dict() == alone
    assert duplicate_match(*args, deals=7, seed=9, games=3, backend=Backend("ray", ray_address)).to_dict() == alone
    assert main(["evaluate", "heuristic", "random", "--deals", "7", "--seed", "9", "--games", "3", "--json", "-",
                 "--no-progress", "--ray-address", ray_address]) == 0
    out = capsys.readouterr().out
    assert json.loads(out[out.index("{"):]) == alone


def test_a_league_on_ray_or_local_workers_is_the_league_of_one_process(ray_address, monkeypatch, tmp_path):
    """Every pair's ranges as one batch of jobs, on the benchmark boards (shipped to the cluster
    with the package): the same matches and ratings as in one process, and each range cached."""
    monkeypatch.setattr(league, "BOARDS_PER_JOB", 2)
    args = ("italian_3p", ["heuristic", "random", "heuristic@play"], 5)
    alone = league.run_league(*args, bench="v1", cache=None).to_dict()
    for run in ({"workers": 3}, {"backend": Backend("ray", ray_address)}):
        report = league.run_league(*args, bench="v1", cache=tmp_path / next(iter(run)), **run).to_dict()
        assert (report["ratings"], report["matches"]) == (alone["ratings"], alone["matches"])
        assert report["played_boards"] == 15


# A Ray worker imports the shipped copy of the code, whose numba cache is cold: its first use of the
# batched engine compiles it (about 100 CPU-seconds in each of the cluster's two workers), so the
# tests of the batched rollouts on Ray are long runs (``-m full``); this module's other Ray tests never compile it.
@pytest.mark.full
def test_the_rollout_warm_start_on_ray_has_the_data_of_one_process(ray_address):
    pytest.importorskip("torch")
    import torch

    from agents.neural import ActorCritic
    from five_hundred_env.rules import make_rules
    from training.rollouts.exit_data import heuristic_rollouts
    from training.settings.improvement_config import RolloutsConfig, SampleConfig

    torch.manual_seed(0)
    model, rules = ActorCritic(1399, 80, [16], advice="heuristic"), make_rules("australian")
    cfg = RolloutsConfig(deals=6, chunk_deals=2, sample=SampleConfig(bid=1, discard=1, nominate=1, play=0.2))
    alone = heuristic_rollouts(rules, model, cfg, [3, 4, 5])
    on_ray = heuristic_rollouts(rules, model, cfg, [3, 4, 5], backend=Backend("ray", ray_address))
    assert alone.keys() == on_ray.keys()
    for key in alone:
        assert np.array_equal(alone[key], on_ray[key]), key


@pytest.mark.full
def test_expert_iteration_data_on_ray_are_the_data_of_one_process(ray_address):
    pytest.importorskip("torch")
    import torch

    from agents.neural import ActorCritic
    from five_hundred_env.rules import make_rules
    from training.rollouts.exit_data import ChunkJob, generate

    torch.manual_seed(0)
    model = ActorCritic(1399, 80, [16], advice="heuristic")
    weights = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    jobs = [ChunkJob(make_rules("australian"), seed, 1, model.spec(), weights, (0.5, 0.5, 1.0, 0.1), 0.5, 2, 3)
            for seed in (1, 2)]
    alone, on_ray = generate(jobs, 1, 600), generate(jobs, 1, 600, backend=Backend("ray", ray_address))
    assert alone.keys() == on_ray.keys()
    for key in alone:
        assert np.array_equal(alone[key], on_ray[key]), key


def test_a_failing_ray_task_is_named_and_not_retried(ray_address):
    with pytest.raises(WorkerError, match="job 2 failed in a worker: ValueError: no rollouts for job 2"):
        run_jobs(worker_faults.fail_on_two, list(range(4)), 1, timeout=120, backend=Backend("ray", ray_address))


def test_a_ray_task_that_kills_its_worker_is_retried(ray_address, tmp_path):
    jobs = [(str(tmp_path), i) for i in range(3)]
    # Two retries, where one is needed: on a loaded machine Ray's replacement worker itself may
    # fail to connect ("connection error code 2"), a second loss that is not the job's.
    assert run_jobs(worker_faults.exit_once_on_one, jobs, 1, timeout=120,
                    backend=Backend("ray", ray_address, max_retries=2)) == [0, 1, 4]
    assert (tmp_path / "died-once").exists()  # it did die once


def test_a_ray_task_that_always_kills_its_worker_stops_the_run(ray_address):
    start = time.monotonic()
    with pytest.raises(WorkerError, match=r"job 3 lost its worker 2 times \(max_retries 1\)"):
        run_jobs(worker_faults.exit_on_three, list(range(5)), 1, timeout=120,
                 backend=Backend("ray", ray_address, max_retries=1))
    assert time.monotonic() - start < 60


def test_a_stuck_ray_task_overruns_its_time_out_and_is_killed(ray_address, tmp_path):
    with pytest.raises(WorkerError, match=r"job 0 has run for more than its time-out of 10 s"):
        run_jobs(worker_faults.record_pid_then_work, [(str(tmp_path), 0)], 1, timeout=10,
                 backend=Backend("ray", ray_address))
    pids = [int(p.stem) for p in tmp_path.glob("*.pid")]
    assert len(pids) == 1
    assert _gone(pids, within=10), "the stuck task's worker was left running"


def _driver(script: str) -> subprocess.Popen[str]:
    """Another process running ``script``, which connects to the cluster itself (this one is
    connected already), in a process group of its own."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(TESTS)]), "RAY_AUTH_MODE": "disabled"}
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=as_from_a_terminal)


def test_a_run_connects_ships_the_code_and_keeps_its_results(ray_address):
    """A run that makes its own connection: the cluster gets the code from it, the arrays it
    returns are still there after it has disconnected, and SIGTERM's handler is the caller's."""
    proc = _driver(f"""
        import signal
        import worker_faults
        from training.workers.distributed import Backend, run_jobs
        def on_sigterm(signum, frame):
            pass
        signal.signal(signal.SIGTERM, on_sigterm)
        arrays = run_jobs(worker_faults.arange, [3, 1000, 5], 1, 120, backend=Backend("ray", {ray_address!r}))
        print([int(a.sum()) for a in arrays], signal.getsignal(signal.SIGTERM) is on_sigterm)
    """)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert out.split() == ["[3,", "499500,", "10]", "True"]  # and ray.init took no SIGTERM handler away


def test_ctrl_c_stops_the_ray_tasks_and_propagates(ray_address, tmp_path):
    proc = _driver(f"""
        import worker_faults
        from training.workers.distributed import Backend, run_jobs
        run_jobs(worker_faults.record_pid_then_work, [({str(tmp_path)!r}, i) for i in range(4)], 1, 600,
                 backend=Backend("ray", {ray_address!r}))
    """)
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("*.pid"))) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    pids = [int(p.stem) for p in tmp_path.glob("*.pid")]
    assert len(pids) == 2, "the tasks did not start"
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C
    start = time.monotonic()
    _out, err = proc.communicate(timeout=60)
    assert time.monotonic() - start < 15  # the tasks had a minute left
    assert proc.returncode != 0 and err.rstrip().endswith("KeyboardInterrupt") and err.count("Traceback") == 1
    assert _gone(pids, within=10), "a task outlived the interrupted run"


def _gone(pids: list[int], within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not [pid for pid in pids if _alive(pid)]:
            return True
        time.sleep(0.2)
    return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
