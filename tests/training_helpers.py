"""A tiny PPO config for the training tests (tests/test_training*.py)."""

from __future__ import annotations

from training.settings.config import Config, config_from_dict


def tiny(tmp_path, name: str, **sections) -> Config:
    """A run of a few thousand steps with a small network (a couple of seconds on one core)."""
    data = {
        "seed": 7, "torch_threads": 1, "deterministic": True,
        "train": {"total_steps": 2500, "num_envs": 4, "num_steps": 64, "update_epochs": 2, "num_minibatches": 2},
        "network": {"hidden_sizes": [32, 32]},
        "opponents": {"self_play": 0.4, "snapshot": 0.3, "heuristic": 0.0, "random": 0.3,
                      "snapshot_interval": 600, "pool_size": 2},
        "evaluation": {"interval": 0, "final_deals": 0, "opponents": ["random"]},
        "logging": {"dir": str(tmp_path), "run_name": name, "tensorboard": False, "progress": False},
        "checkpoint": {"interval": 1000},
    }
    for section, values in sections.items():
        data[section] = {**data.get(section, {}), **values} if isinstance(values, dict) else values
    return config_from_dict(data)
