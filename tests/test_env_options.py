"""Options for single-agent pipelines and video: ``render_mode="rgb_array"`` (the lead's
:func:`~five_hundred_env.picture.table_image` of the agent to act), ``observation_dtype``,
``SingleAgentEnv(dict_obs=True)`` and the Gymnasium registration ``"FiveHundred-v1"``."""

from __future__ import annotations

import random

import gymnasium
import numpy as np
import pytest
from env_helpers import PRESET_NAMES, make_env, random_action
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test

import five_hundred_env
from five_hundred_env import SingleAgentEnv
from five_hundred_env.picture import table_image

pytest.importorskip("PIL")  # the picture needs Pillow

# api_test's advice on the action-masked Dict observation, as in tests/test_env.py
API_TEST_WARNINGS = ("ignore:ignoring unknown reset options", "ignore:Observation space for each agent probably should be",
                     "ignore:Observation is not a NumPy array")


# -- render_mode="rgb_array" -------------------------------------------------------------------


def test_rgb_array_is_the_picture_of_the_table_seen_by_the_agent_to_act():
    e = make_env("australian", render_mode="rgb_array")
    assert "rgb_array" in e.metadata["render_modes"] and e.metadata["render_fps"] == 2
    e.reset(seed=4)
    rng = random.Random(4)
    u = e.unwrapped
    for _ in range(14):  # into the play
        e.step(random_action(e.observe(e.agent_selection), rng))
    image = e.render()
    assert image.shape == (640, 960, 3) and image.dtype == np.uint8
    seat = u.possible_agents.index(e.agent_selection)
    np.testing.assert_array_equal(image, table_image(u.game, u.possible_agents, viewer=seat, deal=u.deal))
    other = table_image(u.game, u.possible_agents, viewer=(seat + 1) % 4, deal=u.deal)
    assert not np.array_equal(image, other)  # another seat sees another hand face up


def test_rgb_array_after_a_deal_episode_shows_the_deal_just_played():
    e = make_env("italian_3p", render_mode="rgb_array")
    e.reset(seed=2)
    rng = random.Random(2)
    while not e.unwrapped.terminations[e.agent_selection]:
        e.step(random_action(e.observe(e.agent_selection), rng))
    u = e.unwrapped
    seat = u.possible_agents.index(e.agent_selection)
    np.testing.assert_array_equal(e.render(), table_image(u.game, u.possible_agents, viewer=seat, deal=u.deal))


@pytest.mark.filterwarnings("ignore:.*Not able to test alternative render modes")
def test_the_single_agent_env_renders_rgb_arrays_and_passes_check_env():
    env = SingleAgentEnv(team=0, render_mode="rgb_array")
    assert env.metadata["render_modes"] == five_hundred_env.raw_env.metadata["render_modes"]
    check_env(env)  # renders in its render check
    env.reset(seed=0)
    image = env.render()
    assert image.shape == (640, 960, 3) and image.dtype == np.uint8


def test_record_video_writes_a_video(tmp_path):
    pytest.importorskip("moviepy")  # RecordVideo needs it
    from gymnasium.wrappers import RecordVideo

    env = RecordVideo(SingleAgentEnv(seat=0, render_mode="rgb_array"), str(tmp_path), episode_trigger=lambda i: True)
    env.reset(seed=0)
    done = False
    while not done:
        _, _, terminated, truncated, _ = env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
        done = terminated or truncated
    env.close()
    assert list(tmp_path.glob("*.mp4"))


# -- observation_dtype="float32" -----------------------------------------------------------------


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_float32_observations_have_the_int8_values(preset):
    small, wide = make_env(preset, episode="game"), make_env(preset, episode="game", observation_dtype="float32")
    rng = random.Random(1)
    for e in (small, wide):
        e.reset(seed=1)
    space = wide.observation_space("player_0")
    assert space["observation"].dtype == np.float32 and space["action_mask"].dtype == np.int8
    assert wide.unwrapped.state_space.dtype == np.float32
    for _ in range(80):
        if small.unwrapped.terminations[small.agent_selection]:
            break
        for agent in small.possible_agents:
            a, b = small.observe(agent), wide.observe(agent)
            assert b["observation"].dtype == np.float32 and b["action_mask"].dtype == np.int8
            np.testing.assert_array_equal(a["observation"].astype(np.float32), b["observation"])
            np.testing.assert_array_equal(a["action_mask"], b["action_mask"])
            assert space.contains(b)
        state = wide.state()
        assert state.dtype == np.float32 and wide.unwrapped.state_space.contains(state)
        np.testing.assert_array_equal(small.state().astype(np.float32), state)
        action = random_action(small.observe(small.agent_selection), rng)
        for e in (small, wide):
            e.step(action)


@pytest.mark.filterwarnings(*API_TEST_WARNINGS)
def test_float32_observations_pass_api_test():
    api_test(make_env("australian", episode="game", observation_dtype="float32"), num_cycles=60, verbose_progress=False)


def test_float32_single_agent_env_passes_check_env():
    env = SingleAgentEnv(seat=1, observation_dtype="float32")
    check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=0)
    assert obs.dtype == np.float32 and env.observation_space.dtype == np.float32


# -- SingleAgentEnv(dict_obs=True) ---------------------------------------------------------------


@pytest.mark.parametrize("observation_dtype", ["int8", "float32"])
def test_dict_observations_carry_the_action_mask(observation_dtype):
    env = SingleAgentEnv(team=1, dict_obs=True, observation_dtype=observation_dtype)
    check_env(env, skip_render_check=True)
    space = env.observation_space
    assert isinstance(space, gymnasium.spaces.Dict) and set(space.spaces) == {"observation", "action_mask"}
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(30):
        assert space.contains(obs) and obs["observation"].dtype == np.dtype(observation_dtype)
        np.testing.assert_array_equal(obs["action_mask"].astype(bool), env.action_masks())
        np.testing.assert_array_equal(obs["observation"], env.aec_env.observe(info["agent"])["observation"])
        obs, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if terminated or truncated:
            obs, info = env.reset()


def test_dict_obs_must_be_a_bool():
    with pytest.raises(ValueError, match="dict_obs"):
        SingleAgentEnv(dict_obs="yes")


# -- gymnasium.make("FiveHundred-v1") ------------------------------------------------------------


def test_gymnasium_make_gives_the_single_agent_env_with_its_arguments():
    assert five_hundred_env.wrappers.GYMNASIUM_ID in gymnasium.registry  # registered by the import
    env = gymnasium.make("FiveHundred-v1", team=0, rules="italian_3p", dict_obs=True, render_mode="ansi")
    assert isinstance(env.unwrapped, SingleAgentEnv) and env.spec.id == "FiveHundred-v1"
    assert env.unwrapped.aec_env.rules.preset == "italian_3p" and env.unwrapped.learner_agents == ["player_0"]
    obs, _ = env.reset(seed=5)
    assert env.observation_space.contains(obs) and "to act" in env.render()
    obs, *_ = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert env.observation_space.contains(obs)


def test_registering_twice_is_harmless():
    five_hundred_env.wrappers.register_with_gymnasium()
    assert gymnasium.spec("FiveHundred-v1").entry_point == "five_hundred_env.wrappers:SingleAgentEnv"
