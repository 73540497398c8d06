"""Illegal actions (issue 3 item 7): not in the mask, out of range, not an integer, or stepping a
finished agent or episode wrongly raise :class:`IllegalActionError` naming the action, the agent
and the legal actions, and leave the environment unchanged; ``illegal_action="terminate"`` is the
penalty mode in the style of PettingZoo's ``TerminateIllegalWrapper``."""

from __future__ import annotations

import random

import numpy as np
import pytest
from env_helpers import (
    PRESET_NAMES,
    act,
    assert_same_snapshot,
    bid_and_pass,
    discard_kitty,
    forced_hands,
    make_env,
    random_action,
    snapshot,
)

from five_hundred_env import IllegalActionError


def bad_actions(env):
    """Every kind of illegal action for the agent to act now."""
    u = env.unwrapped
    n = u.action_space(env.agent_selection).n
    mask = env.observe(env.agent_selection)["action_mask"]
    not_in_mask = [int(a) for a in np.flatnonzero(mask == 0)]
    legal = int(np.flatnonzero(mask)[0])
    return [
        (not_in_mask[0], "not legal"), (not_in_mask[-1], "not legal"), (np.int64(not_in_mask[0]), "not legal"),
        (-1, "out of range"), (n, "out of range"), (10**12, "out of range"),
        (float(legal), "not an integer"), (np.float32(legal), "not an integer"), (str(legal), "not an integer"),
        (u.action_to_str(legal), "not an integer"), (True, "not an integer"), (np.bool_(False), "not an integer"),
        (None, "not an integer"), ([legal], "not an integer"), (np.array([legal]), "not an integer"),
    ]


def check_illegal(env):
    before = snapshot(env)
    agent = env.agent_selection
    legal_names = [env.unwrapped.action_to_str(a) for a in np.flatnonzero(env.observe(agent)["action_mask"])]
    for action, what in bad_actions(env):
        with pytest.raises(IllegalActionError) as info:
            env.step(action)
        message = str(info.value)
        assert agent in message and what in message, message
        named = repr(action) if what == "not an integer" else str(int(action))
        assert named in message, message
        assert "legal actions" in message and all(name in message for name in legal_names), message
        assert_same_snapshot(before, snapshot(env))


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_illegal_actions_raise_naming_action_agent_and_legal_actions_and_change_nothing(preset):
    """Checked in every phase: bidding, the kitty, the nomination, leads and follows."""
    e = make_env(preset)
    n = e.unwrapped.rules.num_players
    e.reset(seed=1, options=forced_hands(preset, holder=0, dealer=n - 1))
    check_illegal(e)  # the first bid
    bid_and_pass(e, "6NT", bidder=0)
    check_illegal(e)  # the first discard
    discard_kitty(e)
    if e.unwrapped.deal.phase == 2:
        check_illegal(e)  # the nomination [AU]
        act(e, "NO_NOMINATION")
    rng = random.Random(0)
    for _ in range(2 * n):  # leads (with a suitless joker in NT: JK:x) and follows
        check_illegal(e)
        e.step(random_action(e.observe(e.agent_selection), rng))


def test_an_illegal_action_is_reported_by_name():
    e = make_env("australian")
    e.reset(seed=1, options={"dealer": 3})
    with pytest.raises(IllegalActionError, match=r"action 29 \(6s\) is not legal now for player_0; legal actions: 0 \(PASS\)"):
        e.step(e.unwrapped.str_to_action("6s"))


def test_legal_numpy_integers_are_accepted():
    e = make_env()
    e.reset(seed=2)
    legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
    e.step(legal[0])  # np.int64, as np.flatnonzero gives it
    e.step(np.int32(0))  # PASS


def _finish_deal(env, rng):
    while not env.unwrapped.terminations[env.agent_selection]:
        env.step(random_action(env.observe(env.agent_selection), rng))


def test_stepping_a_terminated_agent_with_an_action_raises_and_changes_nothing():
    e = make_env("italian_3p")
    e.reset(seed=3)
    _finish_deal(e, random.Random(1))
    agent = e.agent_selection
    before = snapshot(e)
    for action in (0, np.int64(1), "PASS", 0.0):
        with pytest.raises(IllegalActionError) as info:
            e.step(action)
        assert agent in str(info.value) and repr(action) in str(info.value) and "None" in str(info.value)
        assert_same_snapshot(before, snapshot(e))
    e.step(None)  # the one legal step of a finished agent
    assert agent not in e.agents


def test_stepping_after_the_episode_is_over_raises_and_changes_nothing():
    e = make_env("australian")
    e.reset(seed=4)
    _finish_deal(e, random.Random(2))
    while e.agents:
        e.step(None)
    before = snapshot(e)
    for action in (None, 0, 5):
        with pytest.raises(IllegalActionError, match="reset"):
            e.step(action)
        assert_same_snapshot(before, snapshot(e))


def test_using_the_env_before_reset_is_an_error():
    e = make_env()
    for call in (lambda: e.step(0), lambda: e.observe("player_0"), e.state, e.unwrapped.legal_actions):
        with pytest.raises(RuntimeError, match="reset"):
            call()


# -- the penalty mode ---------------------------------------------------------------------------------


@pytest.mark.parametrize("episode", ["deal", "game"])
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_terminate_mode_punishes_the_offender_and_ends_the_episode(preset, episode):
    e = make_env(preset, episode=episode, illegal_action="terminate", illegal_reward=-3.0)
    rng = random.Random(5)
    e.reset(seed=5)
    for _ in range(2):  # into the auction
        e.step(random_action(e.observe(e.agent_selection), rng))
    offender = e.agent_selection
    bad = int(np.flatnonzero(e.observe(offender)["action_mask"] == 0)[0])
    e.step(bad)
    u = e.unwrapped
    assert all(u.terminations.values()) and not any(u.truncations.values())
    seen = {}
    for agent in e.agent_iter():
        obs, reward, term, _, _ = e.last()
        assert term and not obs["action_mask"].any()
        seen[agent] = reward
        e.step(None)
    assert seen == {a: (-3.0 if a == offender else 0.0) for a in u.possible_agents}
    assert not e.agents and not u.winners


def test_terminate_mode_also_punishes_out_of_range_ids_but_raises_for_non_integers():
    e = make_env("australian", illegal_action="terminate")
    e.reset(seed=6)
    for action in ("PASS", 1.0, None, True):
        with pytest.raises(IllegalActionError):
            e.step(action)
    offender = e.agent_selection
    e.step(10_000)
    assert all(e.unwrapped.terminations.values())
    assert e.last()[1] == (-1.0 if e.agent_selection == offender else 0.0)


def test_terminate_mode_keeps_legal_play_unchanged():
    """With only legal actions, the penalty mode plays exactly like the default."""
    a, b = make_env("french_46"), make_env("french_46", illegal_action="terminate")
    trajectories = []
    for env in (a, b):
        env.reset(seed=8)
        rng = random.Random(8)
        steps = []
        for agent in env.agent_iter():
            obs, reward, term, trunc, _ = env.last()
            action = None if term or trunc else random_action(obs, rng)
            steps.append((agent, action, reward))
            env.step(action)
        trajectories.append(steps)
    assert trajectories[0] == trajectories[1]
