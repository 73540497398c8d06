"""Faults at the edges of the environment and of records: unknown agents, use before reset(),
seeds of any integer type, bad reward settings, players who always pass, malformed records, and
how records are written. Each error is one clear line naming the problem, and the state stays valid."""

from __future__ import annotations

import json
import math
import os
import random
import stat

import numpy as np
import pytest
from env_helpers import PRESET_NAMES, make_env

from five_hundred_env import Game, load_record, make_rules, parse_action, record_of, replay, save_record
from five_hundred_env.actions import PASS
from five_hundred_env.engine import MAX_THROWN_IN_IN_ROW, Phase


# -- agents and reset ------------------------------------------------------------------------
@pytest.mark.parametrize("call", ["observe", "action_space", "observation_space"])
@pytest.mark.parametrize("agent", ["player_9", "nobody", 0, None])
def test_an_unknown_agent_is_named_with_the_known_agents(call, agent):
    env = make_env()
    env.reset(seed=1)
    with pytest.raises(ValueError, match=r"unknown agent .*player_0, player_1, player_2, player_3") as info:
        getattr(env, call)(agent)
    assert repr(agent) in str(info.value)


@pytest.mark.parametrize("call", ["last", "observe"])
def test_use_before_reset_says_to_call_reset(call):
    env = make_env()
    with pytest.raises(RuntimeError, match=r"call reset\(\)"):
        env.last() if call == "last" else env.observe("player_0")


def _first_views(env, seed) -> list[bytes]:
    env.reset(seed=seed)
    return [env.observe(a)["observation"].tobytes() for a in env.possible_agents] + [env.state().tobytes()]


@pytest.mark.parametrize("convert", [np.int64, np.int32, np.uint16])
def test_reset_takes_a_numpy_integer_seed(convert):
    """§3: the seed fixes the dealer and the deal, whatever integer type it comes as."""
    env = make_env()
    assert _first_views(env, convert(7)) == _first_views(make_env(), 7)
    assert env.action_space("player_0").sample() == make_env_sampled(7)


def make_env_sampled(seed: int) -> int:
    env = make_env()
    env.reset(seed=seed)
    return env.action_space("player_0").sample()


@pytest.mark.parametrize("seed", [True, 1.0, 2.5, "3", -1, np.float64(1.0)])
def test_reset_refuses_a_seed_that_is_not_a_non_negative_integer(seed):
    env = make_env()
    env.reset(seed=5)
    before = env.observe(env.agent_selection)["observation"].copy()
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        env.reset(seed=seed)
    assert np.array_equal(env.observe(env.agent_selection)["observation"], before)  # the episode goes on


@pytest.mark.parametrize("scale", [math.nan, math.inf, -math.inf, 0, -1, True, "100"])
def test_a_bad_reward_scale_is_refused_at_construction(scale):
    with pytest.raises(ValueError, match="reward_scale must be a positive finite number"):
        make_env(reward_scale=scale)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, None, "-1"])
def test_a_non_finite_illegal_reward_is_refused_at_construction(value):
    with pytest.raises(ValueError, match="illegal_reward must be a finite number"):
        make_env(illegal_action="terminate", illegal_reward=value)


def test_numpy_reward_settings_are_accepted():
    env = make_env(reward_scale=np.float32(50.0), illegal_reward=np.int64(-2))
    assert env.reward_scale == 50.0 and env.illegal_reward == -2.0


# -- players who always pass -----------------------------------------------------------------
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_a_game_of_players_who_always_pass_is_truncated(preset):
    """§4: a deal everyone passes is thrown in. A "game" episode without ``max_deals`` whose
    players always pass still ends: truncated after MAX_THROWN_IN_IN_ROW thrown-in deals in a row,
    keeping no more deals than that."""
    env = make_env(preset, episode="game")
    env.reset(seed=3)
    steps = 0
    for _agent in env.agent_iter(10 * MAX_THROWN_IN_IN_ROW * env.rules.num_players):
        _, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else env.str_to_action("PASS"))
        steps += 1
    assert not env.agents, "the episode did not end"
    assert all(env.truncations.values()) and not any(env.terminations.values())
    assert len(env.game.deals) == MAX_THROWN_IN_IN_ROW and all(d.thrown_in for d in env.game.deals)
    assert steps == MAX_THROWN_IN_IN_ROW * env.rules.num_players + env.rules.num_players


def test_the_engine_game_stops_dealing_after_thrown_in_deals_in_a_row():
    """§4/§9: Game stops dealing (unfinished, nobody to act) after MAX_THROWN_IN_IN_ROW thrown-in
    deals in a row; a played deal in between starts the count again."""
    game = Game("australian", seed=4)
    while not game.dealing_stopped:
        game.apply_action(PASS)
    assert len(game.deals) == MAX_THROWN_IN_IN_ROW
    assert not game.is_over and game.to_act == -1 and game.legal_actions() == []
    game = Game("australian", seed=4)
    n = game.rules.num_players
    for _ in range(MAX_THROWN_IN_IN_ROW - 1):  # all but one thrown in ...
        for _ in range(n):
            game.apply_action(PASS)
    played = game.deal
    rng = random.Random(1)
    while game.deal is played:  # ... then a cheap contract played out
        game.apply_action(_cheap_action(game, rng))
    assert not played.thrown_in and not game.is_over
    for _ in range(n):
        game.apply_action(PASS)
    assert len(game.deals) == MAX_THROWN_IN_IN_ROW + 2 and not game.dealing_stopped and game.to_act >= 0


def _cheap_action(game: Game, rng: random.Random) -> int:
    """The lowest bid when nobody has bid, a pass after it, then random cards: games that last."""
    deal = game.deal
    legal = game.legal_actions()
    if deal.phase == Phase.BIDDING:
        return PASS if deal.high_bid >= 0 and PASS in legal else legal[PASS in legal]
    return rng.choice(legal)


# -- records ---------------------------------------------------------------------------------
def _game_record(deals: int = 3) -> dict:
    game = Game("australian", seed=11, max_deals=deals)
    rng = random.Random(2)
    while not game.dealing_stopped and not game.is_over:
        game.apply_action(_cheap_action(game, rng))
    return record_of(game)


def _deal_record() -> dict:
    game = Game("italian_3p", seed=5, max_deals=1)
    rng = random.Random(3)
    while game.to_act >= 0:
        game.apply_action(rng.choice(game.legal_actions()))
    return record_of(game.deal)


def _one_line_error(record: dict) -> str:
    with pytest.raises(ValueError) as info:
        replay(record)
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("kind", ["deal", "game"])
def test_a_record_deal_without_actions_is_refused(kind):
    record = _deal_record() if kind == "deal" else _game_record()
    last = len(record["deals"]) - 1
    del record["deals"][last]["actions"]
    assert f"deal {last} of the record has no 'actions' list" in _one_line_error(record)


@pytest.mark.parametrize("actions", ["PASS", {"0": "PASS"}, [0, 1]])
def test_record_actions_must_be_a_list_of_names(actions):
    record = _deal_record()
    record["deals"][0]["actions"] = actions
    assert "deal 0 of the record: 'actions' must be a list of action names" in _one_line_error(record)


@pytest.mark.parametrize("rules", [None, {}, {"num_players": 4}, "australian"])
def test_a_record_without_its_rules_is_refused_not_read_as_australian(rules):
    record = _game_record(1)
    if rules is None:
        del record["rules"]
    else:
        record["rules"] = rules
    assert "the record has no 'rules'" in _one_line_error(record)


def test_a_dealer_out_of_turn_names_the_deal_that_is_wrong():
    """§3: the deal passes to the left; a record whose deal 2 has the wrong dealer says deal 2."""
    record = _game_record(3)
    assert len(record["deals"]) == 3
    wrong = (record["deals"][1]["dealer"] + 2) % 4
    record["deals"][2]["dealer"] = wrong
    message = _one_line_error(record)
    assert message.startswith(f"deal 2 of the record is dealt by seat {wrong}")


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o002])
def test_save_record_creates_files_with_the_users_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        save_record(_deal_record(), tmp_path / "deal.json")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "deal.json").stat().st_mode) == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir()] == ["deal.json"]  # no temporary file left


def test_save_record_flushes_to_disk_before_renaming(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda a, b: (events.append("replace"), real_replace(a, b))[1])
    record = _game_record(2)
    save_record(record, tmp_path / "game.json")
    assert events[:2] == ["fsync", "replace"]
    assert load_record(tmp_path / "game.json") == json.loads(json.dumps(record))
    assert replay(load_record(tmp_path / "game.json")).scores == replay(record).scores


def test_save_record_refused_leaves_no_file(tmp_path):
    with pytest.raises(TypeError):
        save_record({"format": "x", "bad": object()}, tmp_path / "bad.json")
    assert list(tmp_path.iterdir()) == []


def test_replayed_records_keep_plain_int_histories():
    """§1: a record's actions replay to plain int ids (the record can be written again)."""
    record = _game_record(2)
    game = replay(record)
    assert all(type(a) is int for d in game.deals for a in d.history)
    assert record_of(game)["deals"][:2] == record["deals"]  # (the replay has dealt a third deal)
    assert parse_action(record["deals"][0]["actions"][0], make_rules("australian")) == game.deals[0].history[0]


def test_the_single_agent_wrapper_takes_a_numpy_integer_seed():
    """§3: the same seed as a numpy integer gives the same first observation in the Gymnasium wrapper."""
    from five_hundred_env import SingleAgentEnv

    first, _ = SingleAgentEnv(rules="australian").reset(seed=np.int64(9))
    again, _ = SingleAgentEnv(rules="australian").reset(seed=9)
    assert np.array_equal(first, again)
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        SingleAgentEnv(rules="australian").reset(seed=1.5)
