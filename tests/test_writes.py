"""Writes go only where asked and only to regular files (five_hundred_env/files.py): a device, a
FIFO or a folder is refused and left as it was, a command never writes over its own input, at
most one missing folder is made, and every command prints the path it really wrote."""

from __future__ import annotations

import csv
import errno
import os
import stat
from pathlib import Path

import pytest
from disk_helpers import disk_fills_up, needs_proc

from five_hundred_env import Game, save_record
from five_hundred_env.files import OutputPathError, check_output, write_atomic
from training.cli import main

DEV_FULL = Path("/dev/full")
needs_dev_full = pytest.mark.skipif(not DEV_FULL.exists() or not stat.S_ISCHR(os.stat(DEV_FULL).st_mode),
                                    reason="needs the /dev/full device")
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


def fifo(tmp_path: Path, name: str = "pipe") -> Path:
    path = tmp_path / name
    os.mkfifo(path)
    return path


def still_a_fifo(path: Path) -> bool:
    return stat.S_ISFIFO(os.lstat(path).st_mode)


# -- the one helper ---------------------------------------------------------------------------------

@needs_dev_full
def test_a_device_is_refused_and_stays_a_device():
    with pytest.raises(OutputPathError, match="/dev/full: that is not a regular file"):
        write_atomic(DEV_FULL, lambda f: f.write(b"x"))
    assert stat.S_ISCHR(os.stat(DEV_FULL).st_mode)


@needs_fifo
def test_a_fifo_is_refused_and_stays_a_fifo(tmp_path):
    pipe = fifo(tmp_path)
    with pytest.raises(OutputPathError, match="not a regular file"):
        write_atomic(pipe, lambda f: f.write(b"x"))
    assert still_a_fifo(pipe)


def test_a_folder_is_refused_and_a_link_to_one_too(tmp_path):
    (tmp_path / "folder").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "folder")
    for target in ("folder", "link"):
        with pytest.raises(OutputPathError, match="that is a folder"):
            check_output(tmp_path / target, "--out")
    assert (tmp_path / "folder").is_dir() and list((tmp_path / "folder").iterdir()) == []


def test_the_commands_own_input_is_refused_also_through_a_link(tmp_path):
    source = tmp_path / "in.json"
    source.write_text("{}")
    (tmp_path / "alias.json").symlink_to(source)
    for target in (source, tmp_path / "alias.json", tmp_path / "." / "in.json"):
        with pytest.raises(OutputPathError, match="that is the input"):
            check_output(target, "OUT", inputs=[source])


def test_one_missing_folder_is_made_and_two_are_refused(tmp_path):
    write_atomic(tmp_path / "new" / "a.txt", lambda f: f.write(b"a"))
    assert (tmp_path / "new" / "a.txt").read_text() == "a"
    with pytest.raises(OutputPathError, match="only the last missing folder is created"):
        write_atomic(tmp_path / "x" / "y" / "b.txt", lambda f: f.write(b"b"))
    assert not (tmp_path / "x").exists()


def test_an_empty_name_is_refused():
    with pytest.raises(OutputPathError, match="an empty file name"):
        check_output("", "--gif")


@needs_proc
@pytest.mark.parametrize("room", [0, 700, 50_000])
def test_a_full_disk_under_torchs_zip_writer_is_an_os_error_naming_the_file_and_the_old_one_stays(
        tmp_path, monkeypatch, room):
    # torch's zip writer meets the failed write, then fails finishing the file with a RuntimeError
    # ("unexpected pos ...") that hides why: the caller must see the disk is full, as for any write.
    torch = pytest.importorskip("torch")
    target = tmp_path / "weights.pt"
    target.write_bytes(b"the earlier file")
    disk_fills_up(monkeypatch, "weights.pt", room)
    with pytest.raises(OSError) as e:
        write_atomic(target, lambda f: torch.save({"w": torch.zeros(100_000)}, f))
    assert e.value.errno == errno.ENOSPC and e.value.filename == str(target)
    assert target.read_bytes() == b"the earlier file" and os.listdir(tmp_path) == ["weights.pt"]


def test_an_error_of_the_writer_itself_stays_as_it_was(tmp_path):
    def write(f):
        try:
            raise KeyError("inside")
        except KeyError:
            raise ValueError("the writer's own fault") from None

    with pytest.raises(ValueError, match="the writer's own fault"):
        write_atomic(tmp_path / "x.bin", write)
    assert os.listdir(tmp_path) == []


@needs_fifo
def test_a_record_is_never_written_into_a_fifo(tmp_path):
    pipe = fifo(tmp_path)
    with pytest.raises(OutputPathError):
        save_record(Game("australian", seed=1), pipe)  # would block forever if it opened the FIFO
    assert still_a_fifo(pipe)


# -- the commands -----------------------------------------------------------------------------------

def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("five-hundred: error:") and err.count("\n") == 1, err
    return err


@needs_fifo
@pytest.mark.parametrize("command", [
    ["evaluate", "random", "random", "--deals", "1", "--no-progress", "--json"],
    ["play", "--deals", "1", "--save"],
    ["watch", "random", "random", "--gif"],
    ["plot", "RUN", "--out"],
])
def test_every_writing_command_refuses_a_fifo_before_its_work(tmp_path, capsys, monkeypatch, command):
    monkeypatch.setattr("builtins.input", lambda prompt="": pytest.fail("the game started"))
    run = write_progress(tmp_path / "run")
    pipe = fifo(tmp_path, "pipe.png")  # plot adds .png to a bare name
    argv = [str(run) if word == "RUN" else word for word in command] + [str(pipe)]
    assert main(argv) == 2
    assert "not a regular file" in one_error_line(capsys)
    assert still_a_fifo(pipe)


def test_watch_refuses_an_empty_gif_name(capsys):
    assert main(["watch", "random", "random", "--gif", ""]) == 2
    assert "--gif: an empty file name" in one_error_line(capsys)


def test_evaluate_refuses_to_write_its_report_over_an_agent_file(tmp_path, capsys):
    agent = tmp_path / "agent.pt"
    agent.write_bytes(b"not really a network")
    assert main(["evaluate", str(agent), "random", "--deals", "1", "--json", str(agent)]) == 2
    assert "that is the input" in one_error_line(capsys)
    assert agent.read_bytes() == b"not really a network"


def write_progress(run: Path) -> Path:
    """A run folder whose progress.csv holds two updates (enough to draw the curves)."""
    from training.records.runlog import CSV_COLUMNS

    run.mkdir()
    with (run / "progress.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, CSV_COLUMNS)
        writer.writeheader()
        for update in (1, 2):
            writer.writerow({"kind": "update", "global_step": 100 * update, "update": update, "policy_loss": 0.1,
                             "value_loss": 1.0 / update, "entropy": 2.0, "learning_rate": 3e-4})
    return run


def test_plot_to_a_bare_name_writes_name_png_and_says_so(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    run = write_progress(tmp_path / "run")
    (tmp_path / "figures").mkdir()
    assert main(["plot", str(run), "--out", str(tmp_path / "figures")]) == 0  # a folder's name, no suffix
    assert capsys.readouterr().out.strip() == f"wrote {tmp_path / 'figures.png'}"
    assert (tmp_path / "figures.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert list((tmp_path / "figures").iterdir()) == []
    assert main(["plot", str(run), "--out", str(run / "progress.csv")]) == 2
    assert "that is the input" in one_error_line(capsys)


# -- export ------------------------------------------------------------------------------------------

@pytest.fixture
def checkpoint(tmp_path):
    torch = pytest.importorskip("torch")
    from agents.neural import ActorCritic
    from agents.weights_files import save_checkpoint
    from five_hundred_env import make_rules

    def write(name: str = "final.pt", scale: dict[str, float] | None = None) -> Path:
        torch.manual_seed(0)
        rules = make_rules("australian")
        import five_hundred_env

        env = five_hundred_env.env(rules="australian")
        model = ActorCritic(env.unwrapped.encoder.size, int(env.action_space("player_0").n), [16])
        with torch.no_grad():
            for name_, value in (scale or {}).items():
                dict(model.named_parameters())[name_].view(-1)[:3] = value
        path = tmp_path / name
        save_checkpoint(path, {"rules": rules.to_dict(), "model_spec": model.spec(), "model": model.state_dict()})
        return path

    return write


def test_export_never_writes_over_its_own_checkpoint(checkpoint, capsys):
    source = checkpoint()
    before = source.read_bytes()
    assert main(["export", str(source), str(source)]) == 2
    assert "that is the input" in one_error_line(capsys)
    assert source.read_bytes() == before


@needs_dev_full
def test_export_refuses_a_device(checkpoint, capsys):
    assert main(["export", str(checkpoint()), str(DEV_FULL)]) == 2
    assert "not a regular file" in one_error_line(capsys)
    assert stat.S_ISCHR(os.stat(DEV_FULL).st_mode)


def test_export_refuses_weights_too_large_for_float16_naming_the_largest(checkpoint, capsys, tmp_path):
    source = checkpoint(scale={"actor.0.weight": 1e6})
    assert main(["export", str(source), str(tmp_path / "p.pt")]) == 2
    err = one_error_line(capsys)
    assert "the largest weight, 1e+06 (in actor.0.weight), does not fit float16" in err and "--dtype float32" in err
    assert not (tmp_path / "p.pt").exists()
    assert main(["export", str(source), str(tmp_path / "p.pt"), "--dtype", "float32"]) == 0


def test_export_reports_the_weights_flushed_to_zero(checkpoint, capsys, tmp_path):
    from agents.neural import read_checkpoint

    source = checkpoint(scale={"actor.0.weight": 1e-9})  # below float16's smallest subnormal (6e-8)
    assert main(["export", str(source), str(tmp_path / "p.pt")]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"wrote {tmp_path / 'p.pt'} ") and "3 weights too small for float16 stored as 0" in out
    assert read_checkpoint(tmp_path / "p.pt")["provenance"]["flushed_to_zero"] == 3
    assert main(["export", str(source), str(tmp_path / "p32.pt"), "--dtype", "float32"]) == 0
    assert "0 weights too small for float32" in capsys.readouterr().out


# -- run folders ----------------------------------------------------------------------------------

def test_a_run_makes_its_logging_dir_but_not_a_chain_of_folders(tmp_path):
    pytest.importorskip("torch")
    from training.records.runs import open_run
    from training.settings.config import config_from_dict

    def config(logging_dir: Path):
        return config_from_dict({"logging": {"dir": str(logging_dir), "run_name": "r", "tensorboard": False}})

    run = open_run(config(tmp_path / "runs"), resume=False, overwrite=False, log=lambda _: None)
    assert run.run_dir == tmp_path / "runs" / "r" and (run.run_dir / "manifest.json").is_file()
    with pytest.raises(OutputPathError, match="only the last missing folder is created"):
        open_run(config(tmp_path / "a" / "b"), resume=False, overwrite=False, log=lambda _: None)
    assert not (tmp_path / "a").exists()


@needs_proc
def test_export_on_a_full_disk_is_one_line_and_keeps_the_earlier_file(checkpoint, capsys, tmp_path, monkeypatch):
    out = tmp_path / "policy.pt"
    assert main(["export", str(checkpoint()), str(out)]) == 0
    before = out.read_bytes()
    capsys.readouterr()
    disk_fills_up(monkeypatch, "policy.pt", room=20_000)
    assert main(["export", str(checkpoint()), str(out), "--dtype", "float32"]) == 2
    assert one_error_line(capsys) == f"five-hundred: error: {out}: No space left on device\n"
    assert out.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["final.pt", "policy.pt"]
