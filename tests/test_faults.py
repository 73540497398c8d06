"""Fault injection for training runs: kills at random moments, a full disk, damaged files,
non-finite training, and the run folder's rules (the manifest, --overwrite, resume)."""

from __future__ import annotations

import csv
import errno
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from disk_helpers import disk_fills_up, needs_proc

torch = pytest.importorskip("torch")
pytest.importorskip("pydantic")
yaml = pytest.importorskip("yaml")

from network_helpers import flip_a_byte  # noqa: E402

from agents.neural import ActorCritic  # noqa: E402
from agents.weights_files import TENSORS_DIGEST, CheckpointError  # noqa: E402
from training.algorithms import warmstart  # noqa: E402
from training.algorithms.ppo import train  # noqa: E402
from training.cli import main  # noqa: E402
from training.records import runs  # noqa: E402
from training.records.runlog import CSV_COLUMNS  # noqa: E402
from training.records.runs import DiskFullError, Manifest, NonFiniteError, RunFolderError  # noqa: E402
from training.settings.config import config_from_dict  # noqa: E402

torch.set_num_threads(1)
REPO = Path(__file__).resolve().parents[1]
QUIET = {"log": lambda _: None}


def settings(tmp_path: Path, name: str, **sections) -> dict:
    """A run of ~1,300 learner steps with a tiny network (about a second on one core)."""
    data = {
        "seed": 3, "torch_threads": 1, "deterministic": True,
        "train": {"total_steps": 1300, "num_envs": 2, "num_steps": 64, "update_epochs": 1, "num_minibatches": 2},
        "network": {"hidden_sizes": [16]},
        "opponents": {"self_play": 0.5, "snapshot": 0.2, "heuristic": 0.0, "random": 0.3,
                      "snapshot_interval": 300, "pool_size": 2},
        "evaluation": {"interval": 0, "final_deals": 0, "opponents": ["random"]},
        "logging": {"dir": str(tmp_path), "run_name": name, "tensorboard": False, "progress": False},
        "checkpoint": {"interval": 300, "keep": 2},
    }
    for section, values in sections.items():
        data[section] = {**data.get(section, {}), **values} if isinstance(values, dict) else values
    return data


def tiny(tmp_path: Path, name: str, **sections):
    return config_from_dict(settings(tmp_path, name, **sections))


def rows(path: Path) -> list[dict[str, str]]:
    with path.open() as f:
        return [{k: v for k, v in r.items() if k not in ("time_s", "steps_per_s")} for r in csv.DictReader(f)]


def same_weights(a: Path, b: Path) -> bool:
    x, y = (torch.load(p, weights_only=True)["model"] for p in (a, b))
    return x.keys() == y.keys() and all(torch.equal(x[k], y[k]) for k in x)


def one_line(e: pytest.ExceptionInfo) -> str:
    message = str(e.value)
    assert "\n" not in message, message
    return message


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """An uninterrupted run: what every interrupted run must end up as."""
    tmp = tmp_path_factory.mktemp("reference")
    train(tiny(tmp, "whole"), **QUIET)
    return tmp / "whole"


# -- killed at random moments ------------------------------------------------------------------

def _start(config_path: Path, *flags: str) -> subprocess.Popen:
    code = "import sys; from training.cli import main; sys.exit(main(sys.argv[1:]))"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", code, "train", str(config_path), *flags], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def test_killed_at_random_moments_the_resumed_run_loses_nothing(tmp_path, reference):
    # SIGKILL gives no chance to clean up: whatever moment it hits (start-up, a rollout, a
    # checkpoint write), --resume (or --overwrite, before the first checkpoint) must end in the
    # very run that was never killed, with every file listed in the manifest and no temporaries.
    config_path = tmp_path / "tiny.yaml"
    config_path.write_text(yaml.safe_dump(settings(tmp_path, "killed")))
    run = tmp_path / "killed"
    chance = random.Random(os.getpid())
    delays = [chance.uniform(1.0, 4.0) for _ in range(3)]  # in the failure messages: to replay a failure
    for delay in delays:
        flags = ("--resume",) if (run / "checkpoints" / "latest.pt").exists() else ("--overwrite",)
        proc = _start(config_path, *flags)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    flags = ("--resume",) if (run / "checkpoints" / "latest.pt").exists() else ("--overwrite",)
    proc = _start(config_path, *flags)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, (delays, err)
    assert rows(run / "progress.csv") == rows(reference / "progress.csv"), delays
    assert same_weights(run / "final.pt", reference / "final.pt"), delays
    assert not list(run.rglob("*.tmp"))
    manifest = Manifest.load(run)
    assert manifest is not None
    on_disk = {p for p in run.rglob("*") if p.is_file() and p.name != "manifest.json"}
    assert on_disk == {p for p in manifest.listed(runs.OUTPUT, runs.CONFIG) if p.exists()}


# -- a full disk -------------------------------------------------------------------------------

def _disk_full_on(monkeypatch, name: str, after: int = 0) -> None:
    """``os.fsync`` of a file whose name contains ``name`` fails with ENOSPC after ``after`` calls."""
    real, seen = os.fsync, []

    def fsync(fd: int) -> None:
        target = os.readlink(f"/proc/self/fd/{fd}")
        if name in target:
            seen.append(target)
            if len(seen) > after:
                raise OSError(errno.ENOSPC, "No space left on device")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)



@needs_proc
@pytest.mark.parametrize(("victim", "after"), [("latest.pt", 1), ("step_", 1), ("progress.csv", 4)])
def test_a_full_disk_stops_with_one_line_and_keeps_the_last_good_checkpoint(tmp_path, monkeypatch, reference,
                                                                            victim, after):
    config = tiny(tmp_path, "full")
    _disk_full_on(monkeypatch, victim, after)
    with pytest.raises(DiskFullError) as e:
        train(config, **QUIET)
    message = one_line(e)
    assert "no space left" in message and "--resume" in message and "latest.pt (step" in message
    assert f"writing {tmp_path / 'full'}" in message and victim in message.split(" at step")[0]
    monkeypatch.undo()
    latest = tmp_path / "full" / "checkpoints" / "latest.pt"
    step = torch.load(latest, weights_only=True)["counters"]["global_step"]
    assert f"step {step})" in message  # the message names the checkpoint that is really there
    assert not list((tmp_path / "full").rglob("*.tmp"))
    train(config, resume=True, **QUIET)  # once there is room again, nothing is lost
    assert rows(tmp_path / "full" / "progress.csv") == rows(reference / "progress.csv")
    assert same_weights(tmp_path / "full" / "final.pt", reference / "final.pt")


@needs_proc
def test_a_full_disk_in_the_train_command_is_one_line_not_a_traceback(tmp_path, monkeypatch, capsys):
    config_path = tmp_path / "full.yaml"
    config_path.write_text(yaml.safe_dump(settings(tmp_path, "full")))
    _disk_full_on(monkeypatch, "latest.pt", 1)
    assert main(["train", str(config_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("five-hundred: error: no space left") and "\n" not in err and "--resume" in err, err


@needs_proc
def test_a_full_disk_inside_torchs_zip_writer_stops_a_fresh_run_in_one_line_and_keeps_the_checkpoint(
        tmp_path, monkeypatch, capsys):
    # torch reports the failed write as a RuntimeError of its zip writer, not an OSError
    config_path = tmp_path / "full.yaml"
    config_path.write_text(yaml.safe_dump(settings(tmp_path, "full")))
    disk_fills_up(monkeypatch, "latest.pt", room=50_000, after=1)
    assert main(["train", str(config_path)]) == 2
    err = capsys.readouterr().err.strip()
    latest = tmp_path / "full" / "checkpoints" / "latest.pt"
    monkeypatch.undo()
    step = torch.load(latest, weights_only=True)["counters"]["global_step"]
    assert err.startswith(f"five-hundred: error: no space left on the device writing {latest} at step ") and \
        "\n" not in err and err.endswith(f"the last good checkpoint is {latest} (step {step}); free some space, "
                                          "then --resume"), err
    assert not list((tmp_path / "full").rglob("*.tmp"))


@needs_proc
def test_resume_never_rewrites_progress_csv_in_place(tmp_path, monkeypatch):
    # A resume that must drop rows (past the checkpoint) and hits a full disk doing it leaves the
    # old log whole: the new one is written beside it and only then moved into place.
    config = tiny(tmp_path, "keep")
    train(config, stop_after_updates=4, **QUIET)
    log = tmp_path / "keep" / "progress.csv"
    with log.open("a") as f:
        f.write(",".join(["update", str(10**6), "99"] + [""] * (len(CSV_COLUMNS) - 3)) + "\n")  # past the checkpoint
    before = log.read_bytes()
    _disk_full_on(monkeypatch, "progress.csv")
    with pytest.raises(DiskFullError):
        train(config, resume=True, **QUIET)
    assert log.read_bytes() == before


# -- damaged files -----------------------------------------------------------------------------

def test_a_torn_last_row_is_dropped_with_a_warning(tmp_path, reference):
    config = tiny(tmp_path, "torn")
    train(config, stop_after_updates=4, **QUIET)
    log = tmp_path / "torn" / "progress.csv"
    with log.open("a") as f:
        f.write("update,93,1,2")  # the crash cut the row short: no newline, too few columns
    messages: list[str] = []
    train(config, resume=True, log=messages.append)
    assert any("torn last row" in m for m in messages)
    assert rows(log) == rows(reference / "progress.csv")


def test_a_corrupt_latest_checkpoint_points_at_the_intact_periodic_one(tmp_path):
    config = tiny(tmp_path, "corrupt", train={"total_steps": 500})
    train(config, stop_after_updates=3, **QUIET)
    ckpt = tmp_path / "corrupt" / "checkpoints"
    periodic = sorted(ckpt.glob("step_*.pt"))[-1]
    (ckpt / "latest.pt").write_bytes((ckpt / "latest.pt").read_bytes()[:1000])
    with pytest.raises(CheckpointError) as e:
        train(config, resume=True, **QUIET)
    message = one_line(e)
    assert f"cp {periodic} {ckpt / 'latest.pt'}" in message and "--resume" in message
    os.replace(periodic, ckpt / "latest.pt")  # what the message says to do (cp) works
    assert train(config, resume=True, **QUIET).global_step >= 500


def test_a_byte_flipped_in_latest_pts_optimiser_state_points_at_the_intact_periodic_one(tmp_path):
    config = tiny(tmp_path, "flipped", train={"total_steps": 500})
    train(config, stop_after_updates=3, **QUIET)
    ckpt = tmp_path / "flipped" / "checkpoints"
    periodic = sorted(ckpt.glob("step_*.pt"))[-1]
    latest = ckpt / "latest.pt"
    flip_a_byte(latest, torch.load(latest, weights_only=True)["optimizer"]["state"][0]["exp_avg"])
    with pytest.raises(CheckpointError) as e:
        train(config, resume=True, **QUIET)
    message = one_line(e)
    assert message.startswith(f"{latest}: its tensors do not match the sha256") and f"cp {periodic} {latest}" in message


def test_resuming_a_final_checkpoint_is_refused_in_one_line(tmp_path):
    config = tiny(tmp_path, "final", train={"total_steps": 300})
    train(config, **QUIET)
    run = tmp_path / "final"
    os.replace(run / "final.pt", run / "checkpoints" / "latest.pt")
    with pytest.raises(CheckpointError) as e:
        train(config, resume=True, **QUIET)
    assert "not a training checkpoint" in one_line(e) and "pretrain.init_from" in str(e.value)


@pytest.mark.parametrize("damage", ["garbage", "middle row"])
def test_a_damaged_progress_csv_is_an_error_naming_it(tmp_path, damage):
    config = tiny(tmp_path, "badlog")
    train(config, stop_after_updates=3, **QUIET)
    log = tmp_path / "badlog" / "progress.csv"
    lines = log.read_text().splitlines(keepends=True)
    log.write_bytes(b"\x00\xff\xfe garbage\n" if damage == "garbage" else "".join([lines[0], "update,x\n", *lines[1:]]).encode())
    with pytest.raises(RunFolderError) as e:
        train(config, resume=True, **QUIET)
    assert str(log) in one_line(e)


@pytest.mark.parametrize("content", ["{not json", '{"format": "other"}', '["a list"]'])
def test_a_damaged_manifest_is_an_error_naming_it(tmp_path, content):
    config = tiny(tmp_path, "badmanifest", train={"total_steps": 300})
    train(config, **QUIET)
    (tmp_path / "badmanifest" / "manifest.json").write_text(content)
    for how in ({"resume": True}, {"overwrite": True}):
        with pytest.raises(RunFolderError) as e:
            train(config, **how, **QUIET)
        assert "manifest.json is not a readable run manifest" in one_line(e)


def _config_error(tmp_path, capsys) -> str:
    bad = tmp_path / "bad.yaml"
    bad.write_text("train: {total_steps: [unclosed\n")
    assert main(["train", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("five-hundred: error:") and str(bad) in err.splitlines()[0]
    return err


def test_a_damaged_config_is_an_error_naming_it(tmp_path, capsys):
    _config_error(tmp_path, capsys)


def test_a_damaged_config_is_an_error_in_one_line(tmp_path, capsys):
    assert "\n" not in _config_error(tmp_path, capsys)


# -- the run folder: refusal, --overwrite, checkpoint.dir, temporaries -------------------------

@pytest.mark.parametrize("leftover", ["final.pt", "final_eval.json", "progress.csv", "tb", "step"])
def test_a_fresh_run_refuses_a_folder_with_any_output(tmp_path, leftover):
    config = tiny(tmp_path, "used", train={"total_steps": 300}, logging={"tensorboard": leftover == "tb"},
                  evaluation={"final_deals": 2})
    train(config, **QUIET)
    run = tmp_path / "used"
    keep = {"final.pt": [run / "final.pt"], "final_eval.json": [run / "final_eval.json"],
            "progress.csv": [run / "progress.csv"], "tb": list((run / "tb").glob("events.*")),
            "step": list((run / "checkpoints").glob("step_*.pt"))}[leftover]
    assert keep
    for path in [p for p in run.rglob("*") if p.is_file() and p.name not in ("manifest.json", "config.yaml")]:
        if path not in keep:
            path.unlink()  # latest.pt too: before manifests, only latest.pt made a run refuse
    with pytest.raises(RunFolderError, match="already holds a run") as e:
        train(config, **QUIET)
    assert str(keep[0]) in one_line(e)
    train(config, overwrite=True, **QUIET)  # listed in the manifest: --overwrite may delete it


def test_overwrite_deletes_only_what_the_run_wrote(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    precious = shared / "precious_agent.pt"
    precious.write_bytes(b"not ours")
    config = tiny(tmp_path, "sharing", train={"total_steps": 300}, checkpoint={"dir": str(shared)})
    train(config, **QUIET)
    train(config, overwrite=True, **QUIET)
    assert precious.read_bytes() == b"not ours"
    # Another run's checkpoint in the shared folder: refused, never deleted or overwritten.
    other = tiny(tmp_path, "other", train={"total_steps": 300}, checkpoint={"dir": str(shared)})
    before = (shared / "latest.pt").read_bytes()
    for how in ({}, {"overwrite": True}):
        with pytest.raises(RunFolderError) as e:
            train(other, **how, **QUIET)
        assert str(shared / "latest.pt") in one_line(e)
    assert (shared / "latest.pt").read_bytes() == before and precious.exists()


def test_a_changed_checkpoint_dir_is_caught(tmp_path):
    config = tiny(tmp_path, "moved", train={"total_steps": 600})
    train(config, stop_after_updates=2, **QUIET)
    elsewhere = tiny(tmp_path, "moved", train={"total_steps": 600}, checkpoint={"dir": str(tmp_path / "elsewhere")})
    with pytest.raises(RunFolderError, match="already holds a run") as e:
        train(elsewhere, **QUIET)
    assert "not " + str(tmp_path / "elsewhere") in one_line(e)
    with pytest.raises(RunFolderError, match="keeps its checkpoints in") as e:
        train(elsewhere, resume=True, **QUIET)
    assert "checkpoint.dir=" in one_line(e)
    assert (tmp_path / "moved" / "progress.csv").exists()


def test_only_the_runs_own_leftover_temporaries_are_cleaned(tmp_path):
    config = tiny(tmp_path, "tmp", train={"total_steps": 600})
    train(config, stop_after_updates=1, **QUIET)
    ckpt = tmp_path / "tmp" / "checkpoints"
    run_id = Manifest.load(tmp_path / "tmp").run_id
    ours = ckpt / f"latest.pt.{run_id}.tmp"
    foreign = ckpt / "latest.pt.abc123.tmp"
    for p in (ours, foreign):
        p.write_bytes(b"half a checkpoint")
    messages: list[str] = []
    train(config, resume=True, log=messages.append)
    assert not ours.exists() and foreign.exists()
    assert any(str(ours) in m for m in messages)


@needs_proc
def test_checkpoints_and_final_files_are_fsynced_with_the_users_umask(tmp_path, monkeypatch):
    synced: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(Path(os.readlink(f"/proc/self/fd/{fd}")).name)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    old_umask = os.umask(0o022)
    try:
        train(tiny(tmp_path, "modes", train={"total_steps": 300}, evaluation={"final_deals": 2}), **QUIET)
    finally:
        os.umask(old_umask)
    run = tmp_path / "modes"
    for name in ("latest.pt", "final.pt", "final_eval.json"):
        assert any(s.startswith(name + ".") and s.endswith(".tmp") for s in synced), name
    for path in (run / "checkpoints" / "latest.pt", run / "final.pt", run / "final_eval.json", run / "manifest.json"):
        assert path.stat().st_mode & 0o777 == 0o644, path


# -- non-finite training -----------------------------------------------------------------------

def test_a_non_finite_loss_stops_training_naming_the_step(tmp_path, monkeypatch):
    calls = {"n": 0}
    real = ActorCritic.evaluate_actions

    def poisoned(self, *args, **kwargs):
        calls["n"] += 1
        logp, entropy, value = real(self, *args, **kwargs)
        return logp, entropy, value * float("nan") if calls["n"] > 12 else value  # from the 7th update on

    monkeypatch.setattr(ActorCritic, "evaluate_actions", poisoned)
    with pytest.raises(NonFiniteError) as e:
        train(tiny(tmp_path, "nan"), **QUIET)
    message = one_line(e)
    assert "training stopped at step" in message and "loss" in message and "not legal" not in message
    latest = torch.load(tmp_path / "nan" / "checkpoints" / "latest.pt", weights_only=True)
    assert all(torch.isfinite(v).all() for v in latest["model"].values())
    assert f"(step {latest['counters']['global_step']})" in message


def test_non_finite_starting_weights_are_refused(tmp_path):
    train(tiny(tmp_path, "src", train={"total_steps": 300}), **QUIET)
    data = torch.load(tmp_path / "src" / "final.pt", weights_only=True)
    del data[TENSORS_DIGEST]  # as a file from before digests were recorded: its weights are checked all the same
    next(iter(data["model"].values())).fill_(float("inf"))
    torch.save(data, tmp_path / "inf.pt")
    with pytest.raises(CheckpointError, match="non-finite weights") as e:
        train(tiny(tmp_path, "dst", pretrain={"init_from": str(tmp_path / "inf.pt")}), **QUIET)
    one_line(e)
    assert not (tmp_path / "dst" / "checkpoints" / "latest.pt").exists()


# -- Ctrl-C during the warm start and the final evaluation -------------------------------------

def test_ctrl_c_in_the_warm_start_eval_resumes_without_losing_or_repeating_rows(tmp_path, monkeypatch):
    pytest.importorskip("training.evaluation.evaluate")
    warm = {"pretrain": {"deals": 6, "epochs": 2, "batch_size": 64}, "evaluation": {"interval": 10_000, "deals": 2},
            "train": {"total_steps": 300}}
    whole = train(tiny(tmp_path, "whole", **warm), **QUIET).run_dir
    real = warmstart.evaluate_policy

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(warmstart, "evaluate_policy", interrupted)
    messages: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        train(tiny(tmp_path, "cut", **warm), log=messages.append)
    assert "interrupted during the warm start" in messages[-1] and "--resume" in messages[-1]
    monkeypatch.setattr(warmstart, "evaluate_policy", real)
    train(tiny(tmp_path, "cut", **warm), resume=True, **QUIET)
    assert rows(tmp_path / "cut" / "progress.csv") == rows(whole / "progress.csv")
    assert same_weights(tmp_path / "cut" / "final.pt", whole / "final.pt")


def test_a_run_stopped_right_after_the_warm_start_keeps_it_and_resume_goes_on_from_there(tmp_path, monkeypatch):
    """The quickstart's promise: the imitation warm start is checkpointed as soon as it ends, so a
    run stopped at the first PPO rollout keeps it, and --resume starts PPO without imitating again;
    it ends as the uninterrupted run does."""
    from training.algorithms import ppo

    warm = {"pretrain": {"deals": 6, "epochs": 2, "batch_size": 64}, "train": {"total_steps": 300}}
    whole = train(tiny(tmp_path, "whole", **warm), **QUIET).run_dir
    real_collector = ppo.make_collector

    def stopped_at_the_first_rollout(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(ppo, "make_collector", stopped_at_the_first_rollout)
    messages: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        train(tiny(tmp_path, "cut", **warm), log=messages.append)
    latest = tmp_path / "cut" / "checkpoints" / "latest.pt"
    assert "interrupted during training" in messages[-1] and f"--resume continues from {latest}" in messages[-1]
    assert "imitation" in torch.load(latest, weights_only=True)["counters"]["warm_starts_done"]
    monkeypatch.setattr(ppo, "make_collector", real_collector)
    monkeypatch.setattr(warmstart, "imitation", lambda *a, **k: pytest.fail("the resume imitated again"))
    train(tiny(tmp_path, "cut", **warm), resume=True, **QUIET)
    assert same_weights(tmp_path / "cut" / "final.pt", whole / "final.pt")


def test_ctrl_c_in_the_final_evaluation_then_resume_finishes_it(tmp_path, monkeypatch):
    pytest.importorskip("training.evaluation.evaluate")
    config = tiny(tmp_path, "end", train={"total_steps": 300}, evaluation={"final_deals": 2})
    monkeypatch.setattr(warmstart, "score_ci", lambda report: (_ for _ in ()).throw(KeyboardInterrupt))
    messages: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        train(config, log=messages.append)
    assert "interrupted during the final evaluation" in messages[-1] and "--resume" in messages[-1]
    monkeypatch.undo()
    messages.clear()
    result = train(config, resume=True, log=messages.append)
    assert "random" in result.evaluations and (tmp_path / "end" / "final_eval.json").is_file()
    assert any(m.startswith("final.pt (A) vs random (B)") for m in messages)  # as `evaluate` names it
    assert [r["kind"] for r in rows(tmp_path / "end" / "progress.csv")].count("final_eval") == 1
