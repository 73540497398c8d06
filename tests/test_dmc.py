"""Deep Monte-Carlo (training.algorithms.dmc, agents.dmc): Monte-Carlo returns per seat, a tiny run that
completes, resumes and beats its random start, its checkpoint played through make_agent, the
config's checks and the train command's dispatch."""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")
pytest.importorskip("torch")
import torch
import yaml
from disk_helpers import disk_fills_up, needs_proc
from network_helpers import flip_a_byte

from agents.dmc import DMCAgent
from agents.registry import make_agent
from agents.weights_files import CheckpointError
from training.algorithms.dmc import Decisions, train_dmc
from training.algorithms.dmc_networks import build_baseline, build_q_network, load_init
from training.algorithms.warmstart import score_ci
from training.evaluation.dmc_evaluation import evaluate
from training.settings.config import ConfigError, config_algorithm, config_from_dict, load_config
from training.settings.dmc_config import DmcConfig


def test_each_decision_gets_its_seats_rewards_from_then_to_its_episodes_end() -> None:
    decisions = Decisions(num_games=2, obs_size=3)
    obs = np.zeros((2, 3), dtype=np.int8)
    decisions.add(obs, np.array([5, 6]), np.array([0, 1]))
    decisions.add(obs, np.array([7, 8]), np.array([1, 2]))
    rewards = np.array([[1.0, -1.0, 1.0, -1.0], [0.5, -0.5, 0.5, -0.5]], dtype=np.float32)
    # a deal of game 0 ends, its game goes on (a "game" episode); game 1 is untouched
    decisions.credit(rewards, np.array([True, False]), np.array([False, False]))
    decisions.add(obs, np.array([9, 10]), np.array([2, 3]))
    decisions.credit(rewards, np.array([True, True]), np.array([True, False]))  # game 0's episode ends
    batch = decisions.take_finished()
    # game 0: seat 0 (action 5) got +1 twice, seat 1 (action 7) -1 twice, seat 2 (action 9, after the first deal) +1 once
    assert dict(zip(batch["actions"].tolist(), batch["returns"].tolist(), strict=True)) == {5: 2.0, 7: -2.0, 9: 1.0}
    # game 1's decisions stay open, with their returns so far, renumbered
    assert decisions.size == 3 and decisions.open[0] == []
    assert decisions.actions[decisions.open[1]].tolist() == [6, 8, 10]
    assert decisions.returns[decisions.open[1]].tolist() == [-0.5, 0.5, -0.5]


def tiny_config(tmp_path: Path, **train: object) -> DmcConfig:
    return config_from_dict({
        "train": {"algorithm": "dmc", "total_steps": 16000, "num_envs": 32, "batch_size": 2000, "minibatch_size": 500,
                  "epsilon_decay_steps": 10000, **train},
        "network": {"hidden_sizes": [64]},
        "evaluation": {"interval": 0, "final_deals": 100, "opponents": ["random"]},
        "logging": {"dir": str(tmp_path), "run_name": "dmc", "tensorboard": False, "progress": False},
        "checkpoint": {"interval": 4000},
    }, model=DmcConfig)


def test_a_tiny_run_completes_resumes_and_beats_its_random_start_against_random(tmp_path: Path) -> None:
    config = tiny_config(tmp_path)
    stopped = train_dmc(config, stop_after_updates=3, log=lambda _: None)
    assert 6000 <= stopped.global_step < 16000 and stopped.final_checkpoint.name == "latest.pt"
    result = train_dmc(config, resume=True, log=lambda _: None)
    assert result.global_step >= 16000
    rows = list(csv.DictReader((result.run_dir / "progress.csv").open()))
    steps = [int(r["global_step"]) for r in rows if r["kind"] == "dmc"]
    assert steps == sorted(steps) and len(steps) == len(set(steps)) >= 8  # the resumed log goes on, no step twice
    trained = score_ci(evaluate(make_agent(str(result.final_checkpoint), "australian").model, config.to_rules(),
                                "random", 100, 12345))
    torch.manual_seed(config.seed)
    start = score_ci(evaluate(build_q_network(config, config.to_rules()), config.to_rules(), "random", 100, 12345))
    assert trained[1] > start[2], f"trained {trained} is not above its random start {start}"
    assert result.evaluations["random"]["score_diff_per_deal"]["mean"] == pytest.approx(trained[0])


def test_the_train_command_runs_dmc_and_its_checkpoint_plays_through_make_agent(tmp_path: Path) -> None:
    from training.cli import main

    path = tmp_path / "tiny_dmc.yaml"
    path.write_text(yaml.safe_dump(tiny_config(tmp_path, total_steps=2000).to_dict()))
    assert main(["train", str(path), "evaluation.final_deals=10"]) == 0
    final = tmp_path / "dmc" / "final.pt"
    agent = make_agent(str(final), "australian", seed=0)
    assert isinstance(agent, DMCAgent)
    import five_hundred_env

    env = five_hundred_env.env()
    env.reset(seed=1)
    view = env.observe(env.agent_selection)
    assert view["action_mask"][agent.act(view)] == 1
    with pytest.raises(ValueError, match="preset"):
        make_agent(str(final), "italian_3p")


@pytest.mark.parametrize(("settings", "message"), [
    ({"env": {"reward": "win"}}, "needs episode: game"),
    ({"env": {"reward": "zero_sum", "win_shaping": 0.5}}, "win_shaping"),
    ({"train": {"algorithm": "dmc", "clip_coef": 0.2}}, "clip_coef"),
    ({"env": {"episode": "game", "reward": "win"}, "train": {"epsilon_end": 0}}, "epsilon"),
])
def test_bad_dmc_configs_are_refused_naming_the_key(settings: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        config_from_dict(settings, model=DmcConfig)


def test_the_train_command_picks_dmc_by_train_algorithm(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text("train:\n  algorithm: dmc\n")
    assert config_algorithm(path) == "dmc"
    assert config_algorithm(path, ["train.algorithm=ppo"]) == "ppo"
    path.write_text("seed: 3\n")
    assert config_algorithm(path) == "ppo"
    shipped = Path(__file__).parent.parent / "configs" / "dmc_australian.yaml"
    assert config_algorithm(shipped) == "dmc"
    assert load_config(shipped, model=DmcConfig).logging.run_name == "dmc_australian"


def test_resume_over_an_unsafe_latest_pt_is_one_plain_line(tmp_path: Path) -> None:
    """torch's refusal of a pickled callable is a page of text with terminal colours and advice to allowlist it;
    the run says in one line which file and why, as PPO's loader does."""
    import torch

    config = tiny_config(tmp_path)
    train_dmc(config, stop_after_updates=1, log=lambda _: None)
    latest = tmp_path / "dmc" / "checkpoints" / "latest.pt"
    if not latest.exists():
        latest = next((tmp_path / "dmc").rglob("latest.pt"))
    torch.save({"format": "x", "hook": eval}, latest)
    with pytest.raises(ConfigError) as caught:
        train_dmc(config, resume=True, log=lambda _: None)
    message = str(caught.value)
    assert "\n" not in message and "\x1b" not in message and len(message) < 300, repr(message)
    assert str(latest) in message and "eval" in message and "allowlist" not in message


@needs_proc
def test_a_full_disk_stops_a_run_in_one_line_and_keeps_the_last_checkpoint(tmp_path: Path, monkeypatch, capsys) -> None:
    """torch's zip writer reports a full disk as a RuntimeError: the train command still says it in one line."""
    from training.cli import main

    path = tmp_path / "full.yaml"
    path.write_text(yaml.safe_dump(tiny_config(tmp_path, total_steps=10000).to_dict()))
    disk_fills_up(monkeypatch, "latest.pt", room=50_000, after=1)
    assert main(["train", str(path), "evaluation.final_deals=0"]) == 2
    err = capsys.readouterr().err.strip()
    latest = tmp_path / "dmc" / "checkpoints" / "latest.pt"
    monkeypatch.undo()
    step = torch.load(latest, weights_only=True)["counters"]["global_step"]
    assert 0 < step < 10000 and "\n" not in err, err
    assert err.startswith(f"five-hundred: error: no space left on the device writing {latest} at step ") and \
        err.endswith(f"the last good checkpoint is {latest} (step {step}); free some space, then --resume"), err


def test_a_byte_flipped_in_a_dmc_checkpoints_weights_is_refused_to_play_and_to_resume(tmp_path: Path) -> None:
    config = tiny_config(tmp_path)
    train_dmc(config, stop_after_updates=1, log=lambda _: None)
    latest = tmp_path / "dmc" / "checkpoints" / "latest.pt"
    assert isinstance(make_agent(str(latest), "australian"), DMCAgent)
    flip_a_byte(latest, max(torch.load(latest, weights_only=True)["model"].values(), key=torch.numel))
    with pytest.raises(CheckpointError, match=f"^{latest}: its tensors do not match the sha256"):
        make_agent(str(latest), "australian")
    with pytest.raises(CheckpointError, match=f"^{latest}: its tensors do not match the sha256"):
        train_dmc(config, resume=True, log=lambda _: None)


def test_network_init_starts_from_a_checkpoint_or_policy_file_and_refuses_another_shape(tmp_path: Path) -> None:
    """``network.init``: the run starts from the file's Q-network (its start.pt is that network, so
    the run's `start` opponent and learning line measure what training added), a checkpoint's
    baseline with it; a network of another shape is refused before the run folder is made."""
    from agents.dmc import export_dmc_policy

    first = tiny_config(tmp_path / "a", total_steps=2000)
    first = first.model_copy(update={"network": first.network.model_copy(update={"baseline": "central"})})
    latest = train_dmc(first, stop_after_updates=1, log=lambda _: None).final_checkpoint
    saved = torch.load(latest, weights_only=True)
    policy = tmp_path / "policy.pt"
    export_dmc_policy(latest, policy, dtype="float32")
    rules = first.to_rules()
    for source, baseline_taken in ((latest, True), (policy, False)):
        config = first.model_copy(update={
            "network": first.network.model_copy(update={"init": str(source)}),
            "logging": first.logging.model_copy(update={"dir": str(tmp_path / source.stem)})})
        model, baseline = build_q_network(config, rules), build_baseline(config, rules)
        load_init(config, rules, model, baseline)
        same_baseline = all(torch.equal(baseline.state_dict()[k], saved["baseline"][k]) for k in saved["baseline"])
        assert same_baseline == baseline_taken
        train_dmc(config, stop_after_updates=1, log=lambda _: None)
        start = torch.load(tmp_path / source.stem / "dmc" / "start.pt", weights_only=True)
        assert all(torch.equal(start["model"][k], saved["model"][k]) for k in saved["model"])
    # the file exported from the run started from the policy file names that file and where it came from
    second = export_dmc_policy(tmp_path / "policy" / "dmc" / "checkpoints" / "latest.pt", tmp_path / "second.pt")
    first_provenance = torch.load(policy, weights_only=True)["provenance"]
    assert second["init"]["file"] == str(policy) and second["init"]["provenance"] == first_provenance
    assert second["init"]["sha256"] == hashlib.sha256(policy.read_bytes()).hexdigest()
    assert first_provenance["budget"]["global_step"] > 0 and "init" not in first_provenance
    wider = first.model_copy(update={"network": first.network.model_copy(update={"init": str(policy), "hidden_sizes": [32]}),
                                     "logging": first.logging.model_copy(update={"dir": str(tmp_path / "wider")})})
    with pytest.raises(ConfigError, match=r"network.init .*policy.pt: its Q-network differs from the config's in hidden_sizes"):
        train_dmc(wider, log=lambda _: None)
    assert not (tmp_path / "wider").exists()


def test_the_oracle_reads_each_hidden_card_kept_and_nothing_at_keep_zero() -> None:
    """Oracle guiding (``network.oracle_steps``): the hidden part of the global state (every hand,
    the kitty) enters the first layer entry by entry, each kept with probability ``keep``."""
    from five_hundred_env import make_rules
    from five_hundred_env.observation import ObservationEncoder
    from training.algorithms.dmc_networks import OracleInput, build_oracle, oracle_keep

    config = tiny_config(Path("unused"))
    assert build_oracle(config, config.to_rules()) is None and oracle_keep(config, 0) == 0.0
    config = config.model_copy(update={"network": config.network.model_copy(update={"oracle_steps": 1000})})
    assert [oracle_keep(config, s) for s in (0, 250, 1000, 5000)] == [1.0, 0.75, 0.0, 0.0]
    encoder = ObservationEncoder(make_rules("australian"))
    oracle = build_oracle(config, config.to_rules())
    assert isinstance(oracle, OracleInput) and oracle.hidden_size == encoder.state_size - encoder.size
    states = np.zeros((3, encoder.state_size), dtype=np.int8)
    states[0, [2, 40]] = 1
    states[1, oracle.hidden_size + 5] = 1  # the seat's own observation: never the oracle's
    rng = np.random.default_rng(0)
    with torch.no_grad():
        full = oracle.features(states, 1.0, rng)
        assert torch.allclose(full[0], oracle.table.weight[2] + oracle.table.weight[40])
        assert not full[1:].any()
        assert not oracle.features(states, 0.0, rng).any()
        states[:] = 0
        states[:, :oracle.hidden_size] = 1
        kept = np.mean([float(oracle.features(states[:1], 0.5, rng)[0, 0]) for _ in range(400)])
        assert abs(kept - 0.5 * float(oracle.table.weight[:, 0].sum())) < 0.15 * float(oracle.table.weight[:, 0].abs().sum())


def test_an_oracle_guided_run_resumes_with_its_oracle_and_exports_a_network_without_it(tmp_path: Path) -> None:
    from agents.dmc import export_dmc_policy

    config = tiny_config(tmp_path, total_steps=8000)
    config = config.model_copy(update={"network": config.network.model_copy(update={"oracle_steps": 6000})})
    stopped = train_dmc(config, stop_after_updates=1, log=lambda _: None)
    assert "oracle" in torch.load(stopped.final_checkpoint, weights_only=True)
    result = train_dmc(config, resume=True, log=lambda _: None)
    final = torch.load(result.final_checkpoint, weights_only=True)
    assert "oracle" not in final and not any(k.startswith("oracle") for k in final["model"])
    policy = tmp_path / "policy.pt"
    export_dmc_policy(result.final_checkpoint, policy)
    agent = make_agent(str(policy), "australian", seed=0)
    assert isinstance(agent, DMCAgent) and agent.model.spec()["obs_size"] == 1399
    plain = config.model_copy(update={"network": config.network.model_copy(update={"oracle_steps": 0})})
    with pytest.raises(ConfigError, match="network"):
        train_dmc(plain, resume=True, log=lambda _: None)
