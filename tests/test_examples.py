"""The runnable examples of docs/examples run (tiny budgets) and do what their docs say."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def test_sb3_example_trains_and_evaluates_the_model_as_an_agent(capsys) -> None:
    pytest.importorskip("sb3_contrib")
    from agents.registry import unregister_agent

    try:
        mean = _load("sb3_maskable_ppo").main(["--steps", "256", "--deals", "4"])
    finally:
        unregister_agent("my_ppo")  # the example registers its model: leave the registry as it was
    assert math.isfinite(mean)
    assert "my_ppo (A) vs heuristic (B)" in capsys.readouterr().out


def test_openspiel_ismcts_example_plays_duplicate_boards(capsys) -> None:
    pytest.importorskip("pyspiel")
    mean, low, high = _load("openspiel_ismcts").main(["--boards", "2", "--simulations", "4"])
    assert math.isfinite(mean) and low <= mean <= high
    assert "IS-MCTS (4 simulations, random roll-outs) vs heuristic, 2 boards x 2" in capsys.readouterr().out


def test_behaviour_cloning_example_learns_the_dataset_agent_and_evaluates_it(tmp_path, capsys) -> None:
    pytest.importorskip("pyarrow")
    import numpy as np

    from five_hundred_env.dataset import open_dataset
    from five_hundred_env.rules import make_rules
    from training.rollouts.datasets import generate_dataset

    generate_dataset("heuristic", make_rules("australian"), 300, tmp_path / "data", seed=0)
    accuracy, report = _load("behaviour_cloning").main([str(tmp_path / "data"), "--epochs", "3", "--boards", "4", "--lr", "0.003",
                                                         "--batch-size", "128", "--hidden", "64"])
    chance = np.mean([np.mean(1 / b.mask.sum(axis=1)) for b in open_dataset(tmp_path / "data").batches(10_000)])
    assert accuracy > chance + 0.07  # it learned the heuristic's choices, beyond a uniform pick's agreement
    assert report.deals == 4 and math.isfinite(report.score_diff[0])
    out = capsys.readouterr().out
    assert "epoch 3: " in out and "cloned heuristic (A) vs heuristic (B)" in out
