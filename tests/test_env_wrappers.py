"""The single-agent Gymnasium wrapper (issue 3 item 9): a learner plays one seat or one team
against given opponent policies, with the mask exposed the way sb3-contrib's ``MaskablePPO``
expects; Gymnasium's ``check_env`` passes, and ``MaskablePPO`` trains on it."""

from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pytest
from env_helpers import PRESET_NAMES, fill_deal, forced_hands
from gymnasium.utils.env_checker import check_env

import five_hundred_env
from five_hundred_env import IllegalActionError, SingleAgentEnv


def first_legal(obs):
    return int(np.flatnonzero(obs["action_mask"])[0])


def play(env, rng, seed=None, options=None):
    """One episode with random legal learner actions: (agent, reward) per step and the total."""
    obs, info = env.reset(seed=seed, options=options)
    steps = []
    while True:
        mask = env.action_masks()
        assert mask.dtype == bool and mask.any() and np.array_equal(mask, info["action_mask"])
        assert env.observation_space.contains(obs)
        np.testing.assert_array_equal(obs, env.aec_env.observe(info["agent"])["observation"])
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        steps.append((info["agent"], reward))
        if terminated or truncated:
            return steps, sum(r for _, r in steps)


@pytest.mark.filterwarnings("ignore:.*Not able to test alternative render modes")  # no gymnasium registry spec
@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("kwargs", [{}, {"seat": 1}, {"team": 1}, {"team": 0, "episode": "game", "render_mode": "ansi"}])
def test_gymnasium_check_env_passes(preset, kwargs):
    check_env(SingleAgentEnv(rules=preset, **kwargs), skip_render_check="render_mode" not in kwargs)


def test_spaces_are_the_aec_observation_box_and_discrete_actions():
    env = SingleAgentEnv(rules="french_46")
    aec = five_hundred_env.env(rules="french_46")
    assert env.observation_space == aec.observation_space("player_0")["observation"]
    assert env.action_space == aec.action_space("player_0") and env.action_space.n == 82
    assert env.learner_agents == ["player_0"]


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_a_seat_learner_acts_only_for_its_seat_and_gets_its_sides_result(preset):
    env = SingleAgentEnv(seat=1, rules=preset)
    rng = np.random.default_rng(0)
    for seed in range(8):
        steps, total = play(env, rng, seed=seed)
        assert {agent for agent, _ in steps} == {"player_1"}
        assert all(r == 0 for _, r in steps[:-1])  # rewards only at the end of the deal
        aec = env.aec_env
        assert total == pytest.approx(aec._cumulative_rewards["player_1"])  # the AEC reward of its seat


def test_a_team_learner_acts_for_both_partners_and_counts_the_result_once():
    """Issue 3 item 9: the learner may play one team: it acts for both partners' seats."""
    env = SingleAgentEnv(team=1, rules="australian", reward="score", reward_scale=1)
    rng = np.random.default_rng(1)
    agents = set()
    for seed in range(10):
        steps, total = play(env, rng, seed=seed)
        agents |= {agent for agent, _ in steps}
        assert total == env.aec_env.scores["player_1"] == env.aec_env.scores["player_3"]
    assert agents == {"player_1", "player_3"}


def test_a_team_of_one_with_three_players():
    env = SingleAgentEnv(team=2, rules="italian_3p")
    assert env.learner_agents == ["player_2"]


def test_game_episodes_give_per_deal_rewards_that_add_up_to_the_score():
    env = SingleAgentEnv(seat=0, rules="italian_3p", episode="game", reward="score", reward_scale=1,
                         opponents=lambda obs: first_legal(obs))
    _, total = play(env, np.random.default_rng(2), seed=3)
    assert total == env.aec_env.scores["player_0"]
    assert env.aec_env.game.is_over and env.aec_env.winners


def test_a_truncated_game_episode_is_truncated_not_terminated():
    env = SingleAgentEnv(seat=0, rules="australian", episode="game", max_deals=1,
                         opponents=lambda obs: 0 if obs["action_mask"][0] else first_legal(obs))
    env.reset(seed=0, options={"scores": [100, 100, 100, 100]})
    terminated = truncated = False
    while not (terminated or truncated):
        _, _, terminated, truncated, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))  # PASS when it may
    assert truncated and not terminated and not env.aec_env.game.is_over


def test_the_end_of_a_game_from_the_scores_option():
    """``reset`` options go to the AEC env: seat 0 holds the ten top hearts, bids 6H and takes every
    trick (docs/rules.md §6); from 480 its team reaches 500 and wins the game (§9)."""
    opponents = lambda obs: 0 if obs["action_mask"][0] else first_legal(obs)  # noqa: E731 - pass, else anything
    env = SingleAgentEnv(team=0, rules="australian", episode="game", reward="win", opponents=opponents)
    options = {**forced_hands("australian", holder=0, dealer=3), "scores": [480, 0, 480, 0]}
    aec = env.aec_env
    env.reset(seed=0, options=options)
    kitty = [aec.str_to_action(name) for name in options["kitty"]]
    total, terminated = 0.0, False
    while not terminated:
        legal = np.flatnonzero(env.action_masks()).tolist()
        if aec.str_to_action("6H") in legal:
            action = aec.str_to_action("6H")
        elif aec.deal.phase == five_hundred_env.Phase.DISCARD:
            action = next(a for a in kitty if a in legal)  # throw the kitty back
        else:
            action = legal[0]
        _, reward, terminated, _, _ = env.step(action)
        total += reward
    assert aec.winners == ["player_0", "player_2"] and total == 1.0


def test_opponent_policies_per_seat_and_for_all():
    calls: dict[str, int] = {}

    def counting(name):
        def policy(obs):
            calls[name] = calls.get(name, 0) + 1
            assert obs["action_mask"].any()  # called on its own turn, with its own observation
            return first_legal(obs)
        return policy

    env = SingleAgentEnv(seat=0, opponents={1: counting("one"), "player_3": counting("three")})
    play(env, np.random.default_rng(3), seed=1)
    assert calls.get("one", 0) > 0 and calls.get("three", 0) > 0  # seat 2 plays at random
    calls.clear()
    env = SingleAgentEnv(seat=0, opponents=counting("all"))
    play(env, np.random.default_rng(3), seed=1)
    assert calls["all"] >= 3


@pytest.mark.parametrize("kwargs, message", [
    ({"seat": 4}, "seat"), ({"seat": True}, "seat"), ({"team": 2}, "team"), ({"seat": 0, "team": 0}, "either"),
    ({"opponents": {0: first_legal}}, "not an opponent"), ({"opponents": {1: 42}}, "callable"),
    ({"opponents": [first_legal]}, "mapping"), ({"rules": "bridge"}, "preset"),
])
def test_bad_arguments_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SingleAgentEnv(**kwargs)


def test_an_opponent_choosing_an_illegal_action_raises():
    env = SingleAgentEnv(seat=0, opponents=lambda obs: 79, rules="australian")  # a card during the auction
    with pytest.raises(IllegalActionError, match="player_"):
        env.reset(seed=0, options={"dealer": 0})


def test_seeded_resets_reproduce_episodes_with_random_opponents():
    runs = []
    for _ in range(2):
        env = SingleAgentEnv(team=0, rules="french_46")
        rng = np.random.default_rng(4)
        runs.append([play(env, rng, seed=9), play(env, rng), play(env, rng, seed=10)])
    assert runs[0] == runs[1]
    assert runs[0][0] != runs[0][1]


def test_opponents_with_a_seed_method_are_reseeded():
    class Seeded:
        def __init__(self):
            self.rng = random.Random()

        def seed(self, seed):
            self.rng = random.Random(seed)

        def __call__(self, obs):
            return int(self.rng.choice(np.flatnonzero(obs["action_mask"])))

    runs = []
    for _ in range(2):
        env = SingleAgentEnv(seat=3, opponents=Seeded(), rules="australian")
        runs.append(play(env, np.random.default_rng(5), seed=6))
    assert runs[0] == runs[1]


def test_illegal_learner_actions_end_the_episode_with_the_penalty_by_default():
    env = SingleAgentEnv(seat=0, illegal_reward=-2.0)
    env.reset(seed=1)
    bad = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, terminated, truncated, _ = env.step(bad)
    assert (reward, terminated, truncated) == (-2.0, True, False)
    assert not env.action_masks().any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_illegal_learner_actions_raise_in_raise_mode():
    env = SingleAgentEnv(seat=0, illegal_action="raise")
    env.reset(seed=1)
    with pytest.raises(IllegalActionError, match="player_0"):
        env.step(int(np.flatnonzero(~env.action_masks())[0]))
    env.step(int(np.flatnonzero(env.action_masks())[0]))  # unchanged: the learner may go on


def test_render_goes_to_the_aec_env():
    env = SingleAgentEnv(seat=0, render_mode="ansi")
    env.reset(seed=0)
    assert "player_0 to act" in env.render()


def test_the_explicit_deal_options_reach_the_aec_env():
    hands, kitty = fill_deal("australian", {})
    env = SingleAgentEnv(seat=1)
    env.reset(seed=0, options={"dealer": 0, "hands": hands, "kitty": kitty})
    assert env.aec_env.deal.dealer == 0 and env.aec_env.agent_selection == "player_1"


def test_the_wrapper_module_does_not_import_torch():
    code = "import sys, five_hundred_env.wrappers; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_maskable_ppo_trains_a_few_hundred_steps():
    """Issue 3 item 9: a test trains MaskablePPO for a few hundred steps (skipped without sb3-contrib)."""
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from sb3_contrib.common.maskable.utils import get_action_masks

    env = SingleAgentEnv(team=0, rules="australian")
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=2, seed=0, device="cpu",
                                    policy_kwargs={"net_arch": [32]}, verbose=0)
    model.learn(total_timesteps=256)
    assert model.num_timesteps >= 256
    obs, _ = env.reset(seed=1)
    for _ in range(20):  # the trained policy, masked, only ever picks legal actions
        masks = get_action_masks(env)
        action, _ = model.predict(obs, action_masks=masks, deterministic=True)
        assert masks[int(action)]
        obs, _, terminated, truncated, _ = env.step(int(action))
        if terminated or truncated:
            obs, _ = env.reset()
