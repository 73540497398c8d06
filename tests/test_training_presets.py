"""PPO and expert iteration on the two-, five- and six-player presets (RULES.md section 10): tiny
runs complete and their networks play (PPO on the batched engine, which plays every preset)."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("pydantic")

from training_helpers import tiny  # noqa: E402

import five_hundred_env  # noqa: E402
from agents.central import central_size  # noqa: E402
from agents.neural import NeuralAgent, load_agent  # noqa: E402
from five_hundred_env.rules import make_rules  # noqa: E402
from training.algorithms.expert_iteration import load_exit_config  # noqa: E402
from training.algorithms.expert_iteration import main as exit_main  # noqa: E402
from training.algorithms.ppo import train  # noqa: E402
from training.settings.config import load_config  # noqa: E402

torch.set_num_threads(1)
NEW_PRESETS = ("two_handed", "five_handed", "six_handed")
CONFIGS = Path(__file__).resolve().parent.parent / "configs"
EXIT_TINY = CONFIGS / "exit_tiny.yaml"


def play_one_deal(agent: NeuralAgent, preset: str, seed: int) -> int:
    """Play a deal of ``preset`` with ``agent`` in every seat; the number of its decisions (each legal)."""
    env = five_hundred_env.env(rules=preset)
    env.reset(seed=seed)
    decisions = 0
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = agent.act(obs)
        assert obs["action_mask"][action] == 1
        env.step(action)
        decisions += 1
    return decisions


def test_the_configs_of_the_new_presets_load_and_switch_preset_by_override():
    # configs/ppo_six_handed.yaml documents rules.preset=... for the two- and five-player presets.
    assert load_config(CONFIGS / "ppo_six_handed.yaml").to_rules().preset == "six_handed"
    for preset in NEW_PRESETS:
        config = load_config(CONFIGS / "ppo_six_handed.yaml", [f"rules.preset={preset}"])
        assert config.to_rules() == make_rules(preset)
    assert load_exit_config(CONFIGS / "pretrained_six_handed.yaml").rules.to_rules() == make_rules("six_handed")


@pytest.mark.parametrize("preset", NEW_PRESETS)
def test_a_tiny_ppo_run_completes_and_its_network_plays(tmp_path, preset):
    config = tiny(tmp_path, preset, rules={"preset": preset}, network={"critic": "central", "hidden_sizes": [16]},
                  train={"total_steps": 300, "num_envs": 2, "num_steps": 32, "update_epochs": 1, "num_minibatches": 1},
                  opponents={"self_play": 0.4, "snapshot": 0.0, "heuristic": 0.3, "random": 0.3})
    result = train(config)
    assert result.global_step >= 300 and result.final_checkpoint.is_file()
    agent = load_agent(result.final_checkpoint, seed=0)
    assert agent.rules.preset == preset and agent.model.critic_extra == central_size(make_rules(preset))
    assert play_one_deal(agent, preset, seed=1) > 0


@pytest.mark.parametrize("preset", NEW_PRESETS)
def test_a_tiny_expert_iteration_run_completes_and_its_network_plays(tmp_path, preset):
    assert exit_main([str(EXIT_TINY), f"rules.preset={preset}", "iterations=1", f"logging.dir={tmp_path}",
                      f"logging.run_name={preset}"]) == 0
    agent = load_agent(tmp_path / preset / "final.pt", seed=0)
    assert agent.rules.preset == preset and agent.model.critic_extra == central_size(make_rules(preset))
    assert play_one_deal(agent, preset, seed=2) > 0
