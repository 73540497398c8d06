"""Training configs: typed validation whose errors name the file and the key; CLI overrides."""

from __future__ import annotations

import itertools

import pytest

pytest.importorskip("pydantic")
pytest.importorskip("yaml")

from training.cli import main
from training.settings.config import Config, ConfigError, config_from_dict, load_config, save_config
from training.settings.overrides import parse_override


def write(tmp_path, text: str, name: str = "run.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_empty_config_takes_the_defaults(tmp_path):
    config = load_config(write(tmp_path, "{}\n"))
    assert config == Config(logging={"run_name": "run"})
    assert config.to_rules().preset == "australian"
    assert config.logging.run_name == "run"  # named after the file


@pytest.mark.parametrize(("text", "key", "words"), [
    ("train:\n  lerning_rate: 0.1\n", "train.lerning_rate", "unknown key"),
    ("trian:\n  total_steps: 10\n", "trian", "unknown key"),
    ("train:\n  num_envs: many\n", "train.num_envs", "valid integer"),
    ("train:\n  total_steps: 2.5\n", "train.total_steps", "integer"),
    ("train:\n  gamma: 1.5\n", "train.gamma", "less than or equal to 1"),
    ("train:\n  total_steps: -3\n", "train.total_steps", "greater than or equal to 0"),
    ("network:\n  hidden_sizes: [64, 0]\n", "network.hidden_sizes", "positive"),
    ("opponents: {self_play: 0, snapshot: 0, heuristic: 0, random: 0}\n", "opponents", "at least one"),
    ("rules:\n  preset: bridge\n", "rules.preset", "australian"),
    ("rules:\n  options: {slam_bonus: 3}\n", "rules", "slam_bonus"),
    ("rules:\n  options: {jokers: 2}\n", "rules", "unknown rule option 'jokers'"),
    ("device: tpu\n", "device", "cpu, cuda"),
    ("evaluation:\n  opponents: [random, grandmaster]\n", "evaluation.opponents.1", "random"),
    ("train: {num_envs: 2, num_steps: 2, num_minibatches: 9}\n", "train", "num_minibatches"),
])
def test_errors_name_the_file_and_the_key(tmp_path, text, key, words):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert f"{path}: {key}:" in message
    assert words in message


def test_unknown_key_lists_the_known_ones(tmp_path):
    with pytest.raises(ConfigError, match=r"known keys of train: .*learning_rate"):
        load_config(write(tmp_path, "train:\n  lerning_rate: 0.1\n"))


def test_every_error_is_reported_at_once(tmp_path):
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, "seed: x\ntrain: {gamma: 2, bogus: 1}\n"))
    message = str(info.value)
    assert "seed:" in message and "train.gamma:" in message and "train.bogus:" in message


def test_not_a_mapping_or_not_yaml(tmp_path):
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        load_config(write(tmp_path, "- a\n- b\n"))
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(write(tmp_path, "train: [1, 2\n"))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_config(tmp_path / "missing.yaml")


def test_scientific_numbers_read_as_numbers(tmp_path):
    config = load_config(write(tmp_path, "train:\n  total_steps: 2e6\n  learning_rate: 3e-4\n"))
    assert config.train.total_steps == 2_000_000
    assert config.train.learning_rate == pytest.approx(3e-4)


def test_command_line_overrides(tmp_path):
    path = write(tmp_path, "train:\n  total_steps: 1000\nrules:\n  preset: australian\n")
    config = load_config(path, [
        "train.total_steps=2e6", "network.hidden_sizes=[64, 64]", "train.anneal_lr=false",
        "rules.preset=italian_3p", "rules.options.misere_value=150", "logging.run_name=other", "seed=9",
    ])
    assert config.train.total_steps == 2_000_000
    assert config.network.hidden_sizes == [64, 64]
    assert config.train.anneal_lr is False
    assert config.to_rules().preset == "italian_3p" and config.to_rules().misere_value == 150
    assert config.logging.run_name == "other" and config.seed == 9


def test_override_errors_name_the_override(tmp_path):
    path = write(tmp_path, "")
    with pytest.raises(ConfigError, match=r"train\.total_stepz: unknown key .*override 'train\.total_stepz=5'"):
        load_config(path, ["train.total_stepz=5"])
    with pytest.raises(ConfigError, match=r"train\.gamma: .*override 'train\.gamma=7'"):
        load_config(path, ["train.gamma=7"])
    with pytest.raises(ConfigError, match=r"expected key\.sub=value"):
        parse_override("train.total_steps")
    with pytest.raises(ConfigError, match="is a value, not a section"):
        config_from_dict({"seed": 3}, overrides=["seed.value=1"])


def test_resolved_config_round_trips(tmp_path):
    config = load_config(write(tmp_path, "train: {total_steps: 5000}\nrules: {options: {slam_bonus: false}}\n"))
    save_config(config, tmp_path / "resolved.yaml")
    again = load_config(tmp_path / "resolved.yaml")
    assert again == config


def test_cli_reports_config_errors(tmp_path, capsys):
    path = write(tmp_path, "train:\n  bogus: 1\n")
    assert main(["train", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: train.bogus: unknown key" in err


@pytest.mark.parametrize(("name", "model"), [("quickstart", "DmcConfig"), ("ppo_australian", "Config"),
                                           ("ppo_italian_3p", "Config"), ("ppo_french_46", "Config"),
                                           ("ppo_six_handed", "Config"), ("distill_australian", "DistillConfig"),
                                           ("distill_two_handed", "DistillConfig"),
                                           ("distill_two_handed_dagger1", "DistillConfig"),
                                           ("distill_two_handed_dagger2", "DistillConfig"),
                                           ("distill_australian_dagger1", "DistillConfig"),
                                           ("distill_five_handed", "DistillConfig"),
                                           ("scratch_search_australian", "DistillConfig"),
                                           ("scratch_dagger_australian", "DistillConfig"),
                                           ("distill_french_46_dagger1", "DistillConfig")])
def test_shipped_configs_are_valid_and_read_with_their_algorithms_model(name, model):
    from pathlib import Path

    from training.settings.run_configs import load_training_config

    path = Path(__file__).parent.parent / "configs" / f"{name}.yaml"
    config = load_training_config(path)
    assert type(config).__name__ == model
    assert config.logging.run_name == name
    assert config.to_rules().preset == {"quickstart": "australian", "ppo_australian": "australian",
                                        "ppo_italian_3p": "italian_3p", "ppo_french_46": "french_46",
                                        "ppo_six_handed": "six_handed", "distill_australian": "australian",
                                        "distill_two_handed": "two_handed", "distill_two_handed_dagger1": "two_handed",
                                        "distill_two_handed_dagger2": "two_handed", "distill_five_handed": "five_handed",
                                        "distill_australian_dagger1": "australian",
                                        "scratch_search_australian": "australian",
                                        "scratch_dagger_australian": "australian",
                                        "distill_french_46_dagger1": "french_46"}[name]


@pytest.mark.parametrize("steps", [("distill_two_handed", "distill_two_handed_dagger1", "distill_two_handed_dagger2"),
                                   ("distill_australian", "distill_australian_dagger1")])
def test_each_round_of_a_recipe_starts_from_the_step_before_and_keeps_its_deals(steps):
    """configs/distill_<preset>_dagger<N>.yaml: the network of the step before plays (the search only values its
    candidates: min_gain above any score), its weights start the refit, and every earlier round's deals are fitted again."""
    from pathlib import Path

    from training.settings.run_configs import load_training_config

    folder = Path(__file__).parent.parent / "configs"
    configs = [load_training_config(folder / f"{name}.yaml") for name in steps]
    for before, after in itertools.pairwise(configs):
        assert after.network.init == f"runs/{before.logging.run_name}/final.pt"
        assert after.network.model_dump(exclude={"init"}) == before.network.model_dump(exclude={"init"})
        assert after.data.more_search[:-1] == before.data.more_search
        assert after.data.more_search[-1].agent.startswith(f"pimc:base={after.network.init},min_gain=100000")
        assert (after.fit.imitation_decisions, after.fit.soft_weight) == (0, 1.0)


def test_the_french_46_round_refits_the_step_before_on_its_own_play_anchored_by_its_own_choices():
    """configs/distill_french_46_dagger1.yaml: the step before's network plays the search's deals (never
    overridden) and its own choices (the anchor mixed into every batch); its bids are not refitted."""
    from pathlib import Path

    from training.settings.run_configs import load_training_config

    before, after = (load_training_config(Path(__file__).parent.parent / "configs" / f"{name}.yaml")
                     for name in ("distill_french_46", "distill_french_46_dagger1"))
    assert after.network.init == f"runs/{before.logging.run_name}/final.pt"
    assert after.network.model_dump(exclude={"init"}) == before.network.model_dump(exclude={"init"})
    assert after.data.search.agent == f"pimc:base={after.network.init},min_gain=100000"
    assert after.data.imitation.agent == after.network.init and after.fit.mix == 1
    assert (after.fit.imitation_decisions, after.fit.soft_weight, after.fit.kinds) == (0, 1.0, ["discard", "nominate", "play"])


def test_an_empty_file_is_refused_not_run_at_full_length(tmp_path):
    with pytest.raises(ConfigError, match=r"the file is empty; write \{\} in it for every default"):
        load_config(write(tmp_path, "# nothing yet\n\n"))


def test_a_folder_given_as_the_config_is_named_a_folder(tmp_path):
    with pytest.raises(IsADirectoryError, match="is a folder, not a file"):
        load_config(tmp_path)


def test_an_unknown_algorithm_names_both_and_says_got_once(tmp_path):
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, "train:\n  algorithm: DMC\n"))
    assert "'dmc' (Deep Monte-Carlo) or 'distill' (search distillation), got 'DMC'" in str(caught.value)
    assert str(caught.value).count("got") == 1
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, "logging:\n  run_name: a/b\n"))
    assert str(caught.value).count("got 'a/b'") == 1


@pytest.mark.parametrize("key", ["checkpoint.dir", "logging.dir"])
@pytest.mark.parametrize("folder", ["/dev", "/proc/self", "/sys", "/etc/x"])
def test_system_folders_are_refused_for_a_runs_files(tmp_path, key, folder):
    with pytest.raises(ConfigError, match=f"{key}: dir '{folder}' is inside the system folder /"):
        load_config(write(tmp_path, "{}\n"), [f"{key}={folder}"])
    assert load_config(write(tmp_path, "{}\n"), [f"{key}={tmp_path / 'mine'}"])  # a folder of one's own is taken
