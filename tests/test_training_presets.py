"""PPO and expert iteration on the two-, five- and six-player presets (RULES.md section 10): tiny
runs complete and their networks play; PPO's scalar stand-in for the batched engine
(training/rollouts/scalar_batch.py) keeps the engine's meaning of rewards, scores and deal ends."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("pydantic")

import numpy as np  # noqa: E402
from training_helpers import tiny  # noqa: E402

import five_hundred_env  # noqa: E402
from agents.neural import NeuralAgent, central_size, load_agent  # noqa: E402
from five_hundred_env.rules import make_rules  # noqa: E402
from five_hundred_env.vector.batch import VECTOR_PRESETS  # noqa: E402
from training.algorithms.expert_iteration import load_exit_config  # noqa: E402
from training.algorithms.expert_iteration import main as exit_main  # noqa: E402
from training.algorithms.ppo import train  # noqa: E402
from training.rollouts.scalar_batch import ScalarBatch  # noqa: E402
from training.rollouts.selfplay import zero_sum_points  # noqa: E402
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


@pytest.mark.parametrize("preset", [p for p in NEW_PRESETS if p not in VECTOR_PRESETS] or ["australian"])
def test_the_scalar_batch_ends_deals_as_the_batched_engine(preset):
    # RULES.md §8/§10.6: each seat's reward is its side's zero-sum result; §9: the deal starts from the set scores.
    rules = make_rules(preset)
    batch = ScalarBatch(rules, 3, reward_scale=100.0, seed=5)
    starting = [30 * (side + 1) for side in range(rules.num_sides)]
    batch.set_scores(1, starting)
    scores_at = batch.envs[1].encoder.layout["scores"][0]
    assert batch.obs[1, scores_at] == starting[rules.side_of(int(batch.seat[1]))] // 10  # the acting seat's side first
    ended = 0
    while ended < 4:
        step = batch.step(batch.sample_actions())
        for game in np.flatnonzero(step.deal_done):
            ended += 1
            points = zero_sum_points(batch.score_change[game], rules.num_sides)
            expected = [points[rules.side_of(seat)] / 100 for seat in range(rules.num_players)]
            assert step.rewards[game] == pytest.approx(expected, abs=1e-5)
            if game == 1:  # the next deal starts from the set scores again
                assert list(batch.envs[1].game.scores) == starting
        assert all(np.flatnonzero(batch.masks[g]).size > 0 for g in range(3))  # every game has a deal to play
    seats = np.array([0, 1, 0])
    assert np.array_equal(batch.state(seats=seats)[1], batch.envs[1].state(batch.agents[1]))
