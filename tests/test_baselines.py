"""The baselines command (benchmarks/baselines.py, docs/baselines.md) at a tiny budget: each
algorithm's run from a random start completes, and its checkpoint beats what a random start plays
against ``random``.

A random start is a freshly initialised policy: nearly uniform over the legal actions, i.e. the
``random`` agent, whose duplicate score against ``random`` over the same boards is the reference
each run must clearly pass (on ``australian`` every algorithm first learns to stop bidding into
failed contracts, worth several hundred points per deal against random: docs/baselines.md).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("numba")

ROOT = Path(__file__).resolve().parent.parent
DEALS = 24
SEED = 9001  # the evaluation seed of a run with seed 1 (9000 + seed)


def load_baselines():
    spec = importlib.util.spec_from_file_location("baselines", ROOT / "benchmarks" / "baselines.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def baselines():
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the command runs: the budget is one thread's CPU time
    yield load_baselines()
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def no_ray_left_running():
    """RLlib's run starts a Ray of its own in this process (one per command, as the command keeps
    it): shut it after each test, or later tests that start their own Ray would meet this one."""
    yield
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        ray.shutdown()


@pytest.fixture(scope="module")
def random_start_score(baselines) -> list[float]:
    """What a random start scores against ``random`` on the boards every run is evaluated on."""
    return baselines.evaluate("random", "australian", DEALS, SEED)["random"]


# PPO learns in the default run; the other algorithms' runs (about a CPU-minute each with their
# evaluations, RLlib's start-up included) under ``-m full``. In the default run DMC's tiny run must beat
# its random start too (tests/test_dmc.py); MaskablePPO and RLlib's PPO train there without a strength
# check (tests/test_sb3_vector.py, tests/test_env_wrappers.py, tests/test_rllib.py).
LONG_RUNS = [pytest.param(name, marks=pytest.mark.full) for name in ("dmc", "scratch", "maskable_ppo", "rllib_ppo")]


@pytest.mark.parametrize("algorithm", ["ppo", *LONG_RUNS])
def test_each_algorithm_completes_and_improves_over_its_random_start(baselines, random_start_score, algorithm, tmp_path) -> None:
    if algorithm == "maskable_ppo":
        pytest.importorskip("sb3_contrib")
    if algorithm == "rllib_ppo":
        pytest.importorskip("ray.rllib")
    logged: list[str] = []
    # MaskablePPO steps the slowest (an AEC env per step): at 0.2 CPU-minutes a slower machine gave it
    # too few updates to learn (+22 against random once), so it gets twice the budget
    minutes = 0.4 if algorithm == "maskable_ppo" else 0.2
    run = baselines.train_and_evaluate(algorithm, "australian", seed=1, minutes=minutes, points=2, deals=DEALS,
                                       folder=tmp_path, log=logged.append)
    assert [p["cpu_minutes"] >= 0.1 * k for k, p in enumerate(run["curve"], start=1)] == [True, True]
    # a first chunk may overshoot the first point's share (a cold numba cache compiles inside it): then the
    # second point evaluates the same state again
    assert 0 < run["curve"][0]["steps"] <= run["curve"][1]["steps"]
    assert len(logged) == 2 and logged[-1].startswith(f"{algorithm} australian seed 1:")
    final, start = run["curve"][-1]["random"], random_start_score
    assert final[0] > start[0] + 150, f"{algorithm} scores {final[0]:+.0f} against random, a random start {start[0]:+.0f}"
    assert final[1] > start[2], "the final score's interval lies above the random start's"


def test_the_command_writes_the_table_the_json_and_the_plot(baselines, tmp_path) -> None:
    out = tmp_path / "baselines.md"
    assert baselines.main(["--minutes", "0.05", "--algorithms", "dmc", "--points", "1", "--eval-deals", "4",
                           "--pimc-deals", "2", "--out", str(out)]) == 0
    data = json.loads(out.with_suffix(".json").read_text())
    assert [r["algorithm"] for r in data["runs"]] == ["dmc"]
    assert {(r["agent"], r["deals"]) for r in data["references"]} == {("heuristic", 4), ("pretrained", 4), ("pimc", 2)}
    table = out.read_text()
    dmc_row = next(line for line in table.splitlines() if line.startswith("| dmc | australian |"))
    assert f"{data['runs'][0]['curve'][-1]['random'][0]:+.0f}" in dmc_row
    assert "| *pimc* (reference, 2 boards) | australian |" in table
    assert (tmp_path / "baselines_australian.png").stat().st_size > 0
    again = tmp_path / "again.md"
    assert baselines.main(["--from-json", str(out.with_suffix(".json")), "--out", str(again)]) == 0
    assert again.read_text() == table, "the report is written again, figure for figure, from the run's JSON"

    # a second process's run (another preset, as the full run makes them side by side) joins the same table
    other = {**data, "command": data["command"] + " --presets italian_3p", "wall_s": data["wall_s"] + 60,
             "runs": [{**r, "preset": "italian_3p"} for r in data["runs"]],
             "references": [{**r, "preset": "italian_3p"} for r in data["references"]]}
    (tmp_path / "other.json").write_text(json.dumps(other))
    both = tmp_path / "both.md"
    assert baselines.main(["--from-json", str(out.with_suffix(".json")), str(tmp_path / "other.json"), "--out", str(both)]) == 0
    merged = both.read_text()
    assert "these 2 commands, run side by side" in merged and other["command"] in merged
    assert dmc_row in merged and dmc_row.replace("| australian |", "| italian_3p |") in merged
    assert f"It took {(data['wall_s'] + 60) / 60:.0f} minutes" in merged, "the longer process's wall-clock"
    (tmp_path / "odd.json").write_text(json.dumps({**other, "command": other["command"] + " --eval-deals 8"}))
    with pytest.raises(SystemExit):
        baselines.main(["--from-json", str(out.with_suffix(".json")), str(tmp_path / "odd.json"), "--out", str(both)])


def test_too_few_boards_for_an_interval_is_refused(baselines, capsys) -> None:
    with pytest.raises(SystemExit):
        baselines.main(["--pimc-deals", "1"])
    assert "--pimc-deals 0 or at least 2" in capsys.readouterr().err


def test_rows_are_kept_as_runs_finish_and_the_same_command_resumes(baselines, tmp_path, monkeypatch, capsys) -> None:
    """A failed algorithm costs its own row; the finished ones are on disk at once; the command run again
    trains only what is missing."""
    trained: list[str] = []

    def fake_run(algorithm, preset, seed, minutes, points, deals, folder, log):
        trained.append(algorithm)
        if algorithm == "rllib_ppo":
            raise RuntimeError("Ray did not start")
        point = {"cpu_minutes": minutes, "steps": 10, "random": [500.0, 490.0, 510.0], "heuristic": [-90.0, -99.0, -80.0]}
        return {"algorithm": algorithm, "preset": preset, "seed": seed, "curve": [point]}

    monkeypatch.setattr(baselines, "train_and_evaluate", fake_run)
    monkeypatch.setattr(baselines, "reference_rows", lambda presets, deals, pimc_deals, log: [])
    out = tmp_path / "b.md"
    argv = ["--algorithms", "ppo", "rllib_ppo", "dmc", "--out", str(out), "--pimc-deals", "0"]
    assert baselines.main(argv) == 1
    assert "rllib_ppo on australian, seed 1 failed (RuntimeError: Ray did not start); the others go on" in capsys.readouterr().out
    data = json.loads(out.with_suffix(".json").read_text())
    assert [r["algorithm"] for r in data["runs"]] == ["ppo", "dmc"]
    assert "| dmc | australian | +500 | -90 |" in out.read_text()
    assert str(tmp_path) not in data["command"], "the report names the file, not the machine's folder"

    trained.clear()
    def ray_starts_now(algorithm, *rest):
        return fake_run(algorithm, *rest) if algorithm != "rllib_ppo" else {**fake_run("ppo", *rest), "algorithm": algorithm}

    monkeypatch.setattr(baselines, "train_and_evaluate", ray_starts_now)
    assert baselines.main(argv) == 0
    assert trained == ["ppo"], "only the missing run is trained again (ppo stands in for rllib_ppo here)"
    assert [r["algorithm"] for r in json.loads(out.with_suffix(".json").read_text())["runs"]] == ["ppo", "dmc", "rllib_ppo"]

    with pytest.raises(SystemExit):  # another command's JSON is not resumed
        baselines.main([*argv, "--minutes", "3"])


def test_help_names_the_default_output_and_the_smallest_budget(baselines, capsys) -> None:
    with pytest.raises(SystemExit):
        baselines.main(["--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "default: runs/baselines.md" in shown and "the smallest that runs every phase: 0.2" in shown
