"""Bad input is a clear error naming the problem (never a bare OverflowError, TypeError,
AttributeError or RecursionError, never a silent no-op), and numpy integers are taken wherever
Python's are: the engine, the environment, the batched engine, configs, records, the command line."""

from __future__ import annotations

import numpy as np
import pytest

import five_hundred_env
from five_hundred_env.engine import Deal, Game
from five_hundred_env.records import load_record
from training.cli import main
from training.settings.yaml_loader import YamlError, parse_yaml

FULL_DEAL = (
    [["9S", "TS", "JS", "QS", "KS", "AS", "9C", "TC", "JC", "QC"],
     ["KC", "AC", "9D", "TD", "JD", "QD", "KD", "AD", "9H", "TH"],
     ["JH", "QH", "KH", "AH", "8S", "8C", "8D", "8H", "7S", "7C"],
     ["7D", "7H", "6S", "6C", "6D", "6H", "5S", "5C", "5D", "5H"]],
    ["4D", "4H", "JK"],
)


# -- the engine and the environment ---------------------------------------------------------------

def test_a_game_takes_a_numpy_seed_and_deals_as_with_the_same_int():
    assert Game("australian", seed=np.int64(3)).deal.hands == Game("australian", seed=3).deal.hands


@pytest.mark.parametrize("seed", [1.5, "3", True])
def test_a_game_refuses_a_seed_that_is_not_a_whole_number(seed):
    with pytest.raises(ValueError, match="seed must be whole numbers"):
        Game("australian", seed=seed)


def test_a_game_takes_numpy_integer_scores_as_plain_ints():
    game = Game("australian", scores=[np.int64(120), np.int32(-40)])
    assert game.scores == [120, -40] and all(type(v) is int for v in game.scores)


@pytest.mark.parametrize("max_deals", [0, -1, True, 1.0])
def test_a_game_refuses_max_deals_that_is_not_a_positive_whole_number(max_deals):
    with pytest.raises(ValueError, match="max_deals"):
        Game("australian", max_deals=max_deals)


@pytest.mark.parametrize("max_deals", [True, 0, 2.0])
def test_the_environment_refuses_max_deals_that_is_not_a_positive_whole_number(max_deals):
    with pytest.raises(ValueError, match="max_deals must be a positive integer"):
        five_hundred_env.env(max_deals=max_deals)


def test_the_environment_takes_a_numpy_max_deals():
    assert five_hundred_env.env(episode="game", max_deals=np.int64(2)).unwrapped.max_deals == 2


def test_a_deal_from_card_names_takes_a_preset_name():
    hands, kitty = FULL_DEAL
    by_name = Deal.from_cards("australian", hands, kitty, dealer=1)
    assert by_name.rules == five_hundred_env.make_rules("australian") and by_name.dealer == 1
    assert by_name.hands == Deal.from_cards(five_hundred_env.make_rules("australian"), hands, kitty, 1).hands


def test_a_deal_from_card_names_refuses_other_rules_objects_clearly():
    with pytest.raises(ValueError, match="rules must be a Rules object or a preset name"):
        Deal.from_cards(42, *FULL_DEAL)  # type: ignore[arg-type]


# -- configs and records ----------------------------------------------------------------------------

def test_a_key_given_twice_in_a_yaml_mapping_is_refused_naming_it_and_its_line():
    with pytest.raises(YamlError, match=r"the key 'lr' is given twice .*line 3"):
        parse_yaml("train:\n  lr: 1\n  lr: 2\n")


def test_a_yaml_merge_may_still_be_overridden_by_an_explicit_key():
    assert parse_yaml("base: &b {lr: 1, epochs: 2}\nrun:\n  <<: *b\n  lr: 3\n")["run"] == {"lr": 3, "epochs": 2}


@pytest.mark.parametrize(("name", "text"), [
    ("array", "[" * 100_000 + "]" * 100_000),
    ("object", '{"a":' * 100_000 + "1" + "}" * 100_000),
])
def test_a_record_nested_100000_deep_is_one_line_in_replay(tmp_path, capsys, name, text):
    path = tmp_path / f"{name}.json"
    path.write_text(text)
    with pytest.raises(ValueError, match="nested too deeply"):
        load_record(path)
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"five-hundred: error: {path} is not a record (JSON nested too deeply)"


def test_a_record_that_is_not_utf8_is_an_error_naming_the_file(tmp_path):
    path = tmp_path / "binary.json"
    path.write_bytes(b"\xa5\x00\xff")
    with pytest.raises(ValueError, match=f"{path} is not a record"):
        load_record(path)


# -- the command line names the user's options ------------------------------------------------------

@pytest.mark.parametrize(("argv", "message"), [
    (["evaluate", "random", "random", "--seed", "-1"], "--seed must be at least 0, got -1"),
    (["play", "--deals", "0"], "--deals must be at least 1, got 0"),
    (["play", "--seed", "-5"], "--seed must be at least 0, got -5"),
    (["watch", "random", "random", "--seed", "-1"], "--seed must be at least 0, got -1"),
    (["demo", "--seed", "-2"], "--seed must be at least 0, got -2"),
])
def test_bad_counts_and_seeds_on_the_command_line_name_the_users_option(capsys, argv, message):
    assert main(argv) == 2
    assert capsys.readouterr().err == f"five-hundred: error: {message}\n"


# -- the batched engine -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def vector():
    pytest.importorskip("numba")
    from five_hundred_env import vector

    return vector


@pytest.mark.parametrize("scale", [float("nan"), float("inf"), -float("inf")])
def test_the_batched_engine_refuses_a_reward_scale_that_is_not_finite(vector, scale):
    with pytest.raises(ValueError, match="reward_scale must be a positive finite number"):
        vector.BatchEngine("australian", 2, reward_scale=scale)


def test_the_batched_engine_refuses_uint64_actions_beyond_int64_and_changes_nothing(vector):
    engine = vector.BatchEngine("australian", 2, seed=0)
    before = engine.state().copy()
    legal = engine.legal_actions(1)[0]
    with pytest.raises(ValueError, match="game 0: action 9223372036854775808 is out of range"):
        engine.step(np.array([2**63, legal], dtype=np.uint64))  # int64 would read it as -2**63: "leave it"
    np.testing.assert_array_equal(engine.state(), before)


@pytest.mark.parametrize(("scores", "match"), [
    ([10**30, 0], "scores must lie within"),
    ([2**63, 0], "scores must lie within"),
    ([1.5, 0], "scores must be whole numbers"),
    ([None, 0], "scores must be whole numbers"),
    (7, "scores must be a list of numbers"),
])
def test_the_batched_engine_names_bad_scores_and_changes_nothing(vector, scores, match):
    engine = vector.BatchEngine("australian", 2, seed=0)
    before = engine.state().copy()
    with pytest.raises(ValueError, match=match):
        engine.set_scores(0, scores)
    with pytest.raises(ValueError, match=match):
        engine.set_deal(0, *FULL_DEAL, scores=scores)
    np.testing.assert_array_equal(engine.state(), before)


def test_the_batched_engine_takes_numpy_integer_scores(vector):
    engine = vector.BatchEngine("australian", 2, seed=0)
    engine.set_scores(1, [np.int64(120), np.int32(-40)])
    assert engine.scores[1].tolist()[:2] == [120, -40]


@pytest.mark.parametrize("seed", [-1, 1.5, "x", True])
def test_the_batched_engine_names_a_bad_seed(vector, seed):
    engine = vector.BatchEngine("australian", 2, seed=0)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        engine.reset(seed)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        vector.BatchEngine("australian", 2, seed=seed)


def test_the_single_agent_vector_env_refuses_a_negative_learner_action(vector):
    env = vector.SingleAgentVectorEnv("australian", 2, seed=0)
    obs, _info = env.reset(seed=0)
    with pytest.raises(ValueError, match="game 1: action -1 is negative"):
        env.step(np.array([int(np.flatnonzero(env.action_masks()[0])[0]), -1]))
    np.testing.assert_array_equal(env.engine.obs, obs)  # nothing moved
