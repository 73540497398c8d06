"""Hostile and mistaken configs: alias bombs, unsafe folders, non-finite numbers, misplaced blame,
and the one parser of rule options (docs/rules.md §2)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest.importorskip("pydantic")
pytest.importorskip("yaml")

from pydantic import BaseModel

from training.settings.config import MAX_CONFIG_BYTES, Config, ConfigError, config_from_dict, load_config
from training.settings.overrides import parse_override, parse_rule_option
from training.settings.yaml_loader import MAX_YAML_VALUES, YamlError, parse_yaml


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(text)
    return path


def billion_laughs(levels: int = 9) -> str:
    """The classic alias bomb: nine levels of nine aliases, 9**9 strings once expanded."""
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels):
        name, below = chr(ord("a") + level), chr(ord("a") + level - 1)
        lines.append(f"{name}: &{name} [{', '.join([f'*{below}'] * 9)}]")
    return "\n".join(lines) + "\n"


# -- YAML ----------------------------------------------------------------------------------------

def test_an_alias_bomb_fails_fast_with_one_line(tmp_path):
    path = write(tmp_path, billion_laughs())
    start = time.perf_counter()
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert time.perf_counter() - start < 2.0
    message = str(info.value)
    assert message.startswith(f"{path}: ") and "alias" in message and "\n" not in message
    with pytest.raises(ConfigError, match="alias"):  # an override's value is YAML too
        parse_override("seed={" + ", ".join(billion_laughs().splitlines()) + "}")


def test_aliases_within_the_budget_still_work():
    data = parse_yaml("base: &base {hidden_sizes: [64, 64]}\nnetwork: *base\n")
    assert data["network"] == {"hidden_sizes": [64, 64]}
    wide = parse_yaml("x: &x [" + ", ".join(["1"] * 50) + "]\ny: [" + ", ".join(["*x"] * 10) + "]\n")
    assert len(wide["y"]) == 10
    with pytest.raises(YamlError, match=str(MAX_YAML_VALUES)):  # just over: the same shape, more uses
        parse_yaml("x: &x [" + ", ".join(["1"] * 50) + "]\ny: [" + ", ".join(["*x"] * 200) + "]\n")


def test_merge_keys_count_their_expansion():
    # `<<` merges copy key/value pairs at build time: doubling at every level is a bomb too.
    lines = ["l0: &l0 {k: 1}"] + [f"l{i}: &l{i} {{<<: [*l{i - 1}, *l{i - 1}]}}" for i in range(1, 30)]
    with pytest.raises(YamlError, match="alias"):
        parse_yaml("\n".join(lines))


@pytest.mark.parametrize(("text", "words"), [
    ("a: &a [1, *a]\n", "contains it"),  # recursive: its copy would never end
    ("seed: " + "1" * 5000 + "\n", "not a usable YAML value"),
    ("[" * 3000 + "]" * 3000 + "\n", "nested too deeply"),
])
def test_unusable_documents_are_a_config_error(tmp_path, text, words):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=words) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}: ") and "\n" not in str(info.value)


def test_a_huge_file_is_not_read(tmp_path):
    path = write(tmp_path, "# padding\n" * (MAX_CONFIG_BYTES // 10 + 1))
    with pytest.raises(ConfigError, match="too large"):
        load_config(path)


# -- names and folders ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", [".", "..", "...", "", "a/b", "a\\b", "/abs"])
def test_run_name_must_be_a_folder_of_its_own(name):
    with pytest.raises(ConfigError, match=r"logging\.run_name"):
        config_from_dict({"logging": {"run_name": name}})


@pytest.mark.parametrize("folder", ["/", "/..", str(Path.home()), str(Path.home().parent), "~", "~/ckpt"])
def test_checkpoint_dir_is_never_the_root_or_home(folder):
    with pytest.raises(ConfigError, match=r"checkpoint\.dir"):
        config_from_dict({"checkpoint": {"dir": folder}})


def test_an_ordinary_checkpoint_dir_is_kept(tmp_path):
    assert config_from_dict({"checkpoint": {"dir": str(tmp_path / "ckpt")}}).checkpoint.dir == str(tmp_path / "ckpt")


# -- numbers -------------------------------------------------------------------------------------

def _float_keys(model: type[BaseModel] = Config, prefix: str = "") -> list[str]:
    """Every float field of the config, as a dotted key."""
    keys = []
    for name, field in model.model_fields.items():
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            keys += _float_keys(ann, f"{prefix}{name}.")
        elif ann is float or ann == float | None:
            keys.append(prefix + name)
    return keys


def test_the_config_has_float_keys_to_check():
    assert {"env.reward_scale", "train.learning_rate", "pretrain.rollouts.fit.selection_z"} <= set(_float_keys())


@pytest.mark.parametrize("key", _float_keys())
@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf", "1e400"])
def test_no_float_key_takes_a_non_finite_number(key, value):
    with pytest.raises(ConfigError, match=rf"{key}: Input should be a finite number") as info:
        config_from_dict({}, overrides=[f"{key}={value}"])
    assert f"[from the override '{key}={value}']" in str(info.value)


def test_non_finite_numbers_in_a_file_name_the_key(tmp_path):
    with pytest.raises(ConfigError, match=r"env\.reward_scale: Input should be a finite number"):
        load_config(write(tmp_path, "env: {reward_scale: .inf}\n"))
    with pytest.raises(ConfigError, match="misere_value"):  # a rule option: make_rules wants a whole number
        load_config(write(tmp_path, "rules: {options: {misere_value: .nan}}\n"))


@pytest.mark.parametrize(("override", "key"), [
    ("network.hidden_sizes=[1000000, 1000000]", "network.hidden_sizes"),  # terabytes of weights
    ("network.hidden_sizes=[8, 8, 8, 8, 8, 8, 8, 8, 8]", "network.hidden_sizes"),
    ("train.num_envs=1e9", "train.num_envs"),
    ("train.learning_rate=5", "train.learning_rate"),
    ("seed=-1", "seed"),
    ("evaluation.seed=1e30", "evaluation.seed"),
    ("pretrain.rollouts.workers=100000", "pretrain.rollouts.workers"),
    ("pretrain.rollouts.chunk_timeout=0", "pretrain.rollouts.chunk_timeout"),
])
def test_sizes_and_rates_are_bounded(override, key):
    with pytest.raises(ConfigError, match=rf"{key}: "):
        config_from_dict({}, overrides=[override])


# -- who is to blame -----------------------------------------------------------------------------

def test_a_section_error_is_not_blamed_on_an_unrelated_override_of_the_section():
    with pytest.raises(ConfigError) as info:
        config_from_dict({"train": {"num_envs": 2, "num_steps": 2, "num_minibatches": 9}},
                         overrides=["train.learning_rate=0.1"])
    assert "train: num_minibatches (9)" in str(info.value) and "override" not in str(info.value)
    with pytest.raises(ConfigError) as info:  # §2: both_jokers_min_bid needs french_46, whatever slam_bonus is
        config_from_dict({"rules": {"options": {"both_jokers_min_bid": 8}}}, overrides=["rules.options.slam_bonus=false"])
    assert "two-joker deck" in str(info.value) and "override" not in str(info.value)


def test_a_section_error_is_blamed_on_the_override_that_causes_it():
    with pytest.raises(ConfigError, match=r"\[from the override 'train\.num_minibatches=9'\]$"):
        config_from_dict({"train": {"num_envs": 2, "num_steps": 2}},
                         overrides=["train.learning_rate=0.1", "train.num_minibatches=9"])
    with pytest.raises(ConfigError, match=r"two-joker deck.*\[from the override 'rules\.preset=australian'\]$"):
        config_from_dict({"rules": {"preset": "french_46", "options": {"both_jokers_min_bid": 8}}},
                         overrides=["seed=2", "rules.preset=australian"])
    with pytest.raises(ConfigError, match=r"\(top level\): .*\[from the override 'network\.advice=none'\]$"):
        config_from_dict({"network": {"advice": "heuristic"}, "pretrain": {"rollouts": {"deals": 5}}},
                         overrides=["seed=3", "network.advice=none"])


def test_config_from_dict_leaves_its_data_alone():
    data = {"train": {"total_steps": 5}}
    config_from_dict(data, overrides=["train.total_steps=7"])
    assert data == {"train": {"total_steps": 5}}


# -- rule options (docs/rules.md §2) ------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("slam_bonus=false", ("slam_bonus", False)),
    ("slam_bonus = Yes", ("slam_bonus", True)),
    ("rebid_after_pass=off", ("rebid_after_pass", False)),
    ("misere=none", ("misere", "none")),  # a named choice, not "no value"
    ("bidding=single_round", ("bidding", "single_round")),
    ("misere_value=300", ("misere_value", 300)),
    ("losing_score=-1000", ("losing_score", -1000)),
    ("both_jokers_min_bid=off", ("both_jokers_min_bid", None)),
    ("both_jokers_min_bid=8", ("both_jokers_min_bid", 8)),
])
def test_parse_rule_option_reads_the_value_by_the_options_kind(text, expected):
    assert parse_rule_option(text) == expected


@pytest.mark.parametrize(("text", "words"), [
    ("slam_bonus", "expected NAME=VALUE"),
    ("=true", "expected NAME=VALUE"),
    ("jokers=2", "unknown rule option 'jokers'"),
    ("preset=french_46", "unknown rule option 'preset'"),
    ("slam_bonus=maybe", "takes true or false"),
    ("misere_value=2.5e2", "takes a whole number"),
    ("misere_value=none", "takes a whole number"),
    ("target=" + "9" * 5000, "takes a whole number"),
    ("both_jokers_min_bid=eight", "whole number or none"),
])
def test_parse_rule_option_refuses_bad_text(text, words):
    with pytest.raises(ConfigError, match=words) as info:
        parse_rule_option(text)
    assert "\n" not in str(info.value)


def test_rule_option_overrides_use_the_same_parser():
    config = config_from_dict({"rules": {"preset": "french_46", "options": {"both_jokers_min_bid": 8}}},
                              overrides=["rules.options.both_jokers_min_bid=off", "rules.options.slam_bonus=on"])
    rules = config.to_rules()
    assert rules.both_jokers_min_bid is None and rules.slam_bonus is True
    with pytest.raises(ConfigError, match=r"override 'rules\.options\.slam_bonus=maybe': .*true or false"):
        parse_override("rules.options.slam_bonus=maybe")
