"""Seeding and reset options (issue 3 item 6; docs/rules.md §3: the dealer and the deal come from the
seed, or are set explicitly)."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from env_helpers import EPISODES, PRESET_NAMES, deal_of, fill_deal, make_env, modest_action, names

import five_hundred_env
from five_hundred_env.cards import card_to_str, mask_to_cards


def trajectory(env, seed=None, options=None, policy_seed=0, max_steps=3000):
    """Reset, then play random legal actions (modest bids, so that games last); every step's agent, action, reward, flags and a
    digest of the observation."""
    env.reset(seed=seed, options=options)
    rng = random.Random(policy_seed)
    out = []
    for agent in env.agent_iter(max_steps):
        obs, reward, term, trunc, _ = env.last()
        action = None if term or trunc else modest_action(obs, rng)
        out.append((agent, action, reward, term, trunc, obs["observation"].tobytes(), obs["action_mask"].tobytes()))
        env.step(action)
    return out


@pytest.mark.parametrize("episode", EPISODES)
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_reset_with_a_seed_reproduces_the_identical_episode(preset, episode):
    """Issue 3 item 6: ``env.reset(seed=s)`` reproduces the identical episode, for every preset."""
    a, b = make_env(preset, episode=episode, max_deals=3), make_env(preset, episode=episode, max_deals=3)
    for seed in (0, 7, 2**40):
        first = trajectory(a, seed=seed)
        assert trajectory(b, seed=seed) == first
        assert trajectory(a, seed=seed) == first  # the same env, reseeded
    assert trajectory(a, seed=1) != trajectory(a, seed=2)


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_a_plain_reset_continues_the_seeded_random_sequence(preset):
    """Issue 3 item 6: after ``reset(seed=s)`` a plain ``reset()`` continues the same random
    sequence, as in Gymnasium: two envs given the same calls give the same trajectories, and the
    next episode differs from the first."""
    a, b = make_env(preset), make_env(preset)
    runs = []
    for env in (a, b):
        runs.append([trajectory(env, seed=5), trajectory(env), trajectory(env)])
    assert runs[0] == runs[1]
    first, second, third = runs[0]
    assert second != first and third != second
    a.reset(seed=5)
    deal_after_seed = deal_of(a)
    a.reset()
    assert deal_of(a) != deal_after_seed


def test_unseeded_envs_differ():
    a, b = make_env(), make_env()
    a.reset()
    b.reset()
    assert deal_of(a) != deal_of(b)


def test_the_seed_draws_the_first_dealer():
    """docs/rules.md §3: the first dealer is drawn at random (from the seed)."""
    e = make_env()
    dealers = set()
    for seed in range(40):
        e.reset(seed=seed)
        dealers.add(e.unwrapped.deal.dealer)
    assert dealers == {0, 1, 2, 3}


def test_action_spaces_are_seeded_by_reset():
    a, b = make_env(), make_env()
    a.reset(seed=3)
    b.reset(seed=3)
    assert [a.action_space("player_1").sample() for _ in range(5)] == [b.action_space("player_1").sample() for _ in range(5)]


# -- explicit deals -----------------------------------------------------------------------------


@pytest.mark.parametrize("episode", EPISODES)
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_an_explicit_deal_is_dealt_exactly(preset, episode):
    """Issue 3 item 6, docs/rules.md §3: a deal can be set explicitly (hands, kitty, dealer)."""
    hands, kitty = fill_deal(preset, {})
    n = len(hands)
    e = make_env(preset, episode=episode)
    for dealer in range(n):
        e.reset(options={"dealer": dealer, "hands": hands, "kitty": kitty})
        u = e.unwrapped
        assert deal_of(e) == (hands, kitty, dealer)
        assert e.agent_selection == f"player_{(dealer + 1) % n}"  # the dealer's left bids first (§4)
        for seat in range(n):
            assert names(e, u.deal.hands[seat]) == set(hands[seat])
    # card names in any accepted spelling: 10 for T, either case for the suit (docs/rules.md §1)
    loose = [[c.replace("T", "10").upper() if not c.startswith("JK") else c.lower() for c in h] for h in hands]
    e.reset(options={"dealer": 0, "hands": loose, "kitty": kitty})
    assert deal_of(e) == (hands, kitty, 0)


def test_an_explicit_deal_with_a_seed_reproduces_the_later_deals():
    hands, kitty = fill_deal("australian", {})
    options = {"dealer": 1, "hands": hands, "kitty": kitty}
    a, b = make_env(episode="game", max_deals=3), make_env(episode="game", max_deals=3)
    assert trajectory(a, seed=4, options=options) == trajectory(b, seed=4, options=options)


def test_dealer_alone_sets_the_first_dealer_of_a_shuffled_deal():
    e = make_env("italian_3p")
    for dealer in range(3):
        e.reset(seed=dealer, options={"dealer": dealer})
        assert e.unwrapped.deal.dealer == dealer


def _bad(preset="australian", **change):
    hands, kitty = fill_deal(preset, {})
    options = {"dealer": 0, "hands": hands, "kitty": kitty}
    options.update(change)
    return options


AU_HANDS, AU_KITTY = fill_deal("australian", {})


@pytest.mark.parametrize("options, message", [
    (_bad(hands=AU_HANDS[:3]), "4 hands"),  # a hand missing
    (_bad(hands=[AU_HANDS[0][:9], *AU_HANDS[1:]]), "10 cards"),  # a short hand
    (_bad(kitty=AU_KITTY[:2]), "3 cards"),  # a short kitty
    (_bad(hands=[[*AU_HANDS[0][:9], AU_HANDS[1][0]], *AU_HANDS[1:]]), "twice"),  # a duplicate
    (_bad(hands=[[*AU_HANDS[0][:9], "4s"], *AU_HANDS[1:]]), "not in the australian deck"),  # [AU] spades 5–A
    (_bad(hands=[[*AU_HANDS[0][:9], "JK1"], *AU_HANDS[1:]]), "one joker"),
    (_bad(hands=[[*AU_HANDS[0][:9], "Zz"], *AU_HANDS[1:]]), "Zz"),
    (_bad(kitty="Ah Kh Qh"), "list"),
    (_bad(dealer=4), "dealer"),
    (_bad(dealer=-1), "dealer"),
    (_bad(dealer="0"), "dealer"),
    (_bad(dealer=True), "dealer"),
    ({"hands": AU_HANDS}, "together"),
    ({"kitty": AU_KITTY}, "together"),
    ({"scores": [100, 0, 90, 0]}, "partners"),  # unequal partner scores
    ({"scores": [100, 0, 100]}, "one entry per seat"),
    ({"scores": "100"}, "scores"),
    ({"scores": [100.5, 0, 100.5, 0]}, "whole numbers"),
    ({"scores": [-500, 0, -500, 0]}, "end the game"),
])
def test_malformed_reset_options_raise_a_clear_error(options, message):
    e = make_env("australian", episode="game")
    with pytest.raises(ValueError, match=message):
        e.reset(seed=0, options=options)


@pytest.mark.parametrize("preset, text", [("italian_3p", "6h"), ("french_46", "JK"), ("french_46", "JK3")])
def test_cards_not_in_the_preset_deck_are_refused(preset, text):
    hands, kitty = fill_deal(preset, {})
    hands[2] = [*hands[2][:9], text]
    with pytest.raises(ValueError):
        make_env(preset).reset(options={"dealer": 0, "hands": hands, "kitty": kitty})


def test_options_must_be_a_dict():
    with pytest.raises(ValueError, match="dict"):
        make_env().reset(options=[("dealer", 1)])


@pytest.mark.parametrize("preset, scores, per_side", [
    ("australian", [120, -40, 120, -40], [120, -40]),
    ("australian", [120, -40], [120, -40]),  # one entry per side is accepted too
    ("italian_3p", [10, 490, -490], [10, 490, -490]),
    ("french_46", [490, 0, 490, 0], [490, 0]),
])
def test_the_scores_option_sets_the_starting_scores(preset, scores, per_side):
    e = make_env(preset, episode="game")
    e.reset(seed=0, options={"scores": scores})
    u = e.unwrapped
    assert u.game.scores == per_side
    assert u.scores == {a: per_side[u.rules.side_of(i)] for i, a in enumerate(u.possible_agents)}


def test_unknown_option_keys_warn_and_are_ignored():
    """Issue 3 item 6: unknown keys are ignored with a warning (PettingZoo's own api_test calls
    ``reset(options={"options": 1})``)."""
    a, b = make_env(), make_env()
    with pytest.warns(UserWarning, match="options"):
        a.reset(seed=3, options={"options": 1, "dealer": 2})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b.reset(seed=3, options={"dealer": 2})
    assert deal_of(a) == deal_of(b)
    np.testing.assert_array_equal(a.state(), b.state())


def test_a_failed_reset_can_be_followed_by_a_good_one():
    e = make_env()
    with pytest.raises(ValueError):
        e.reset(seed=1, options={"dealer": 9})
    e.reset(seed=1)
    hands = [[card_to_str(c) for c in mask_to_cards(h)] for h in e.unwrapped.deal.hands]
    assert sum(len(h) for h in hands) == 40


@pytest.mark.parametrize("make", [five_hundred_env.raw_env, five_hundred_env.env])
def test_agent_iter_before_reset_says_so_instead_of_yielding_nothing(make):
    env = make()
    with pytest.raises(RuntimeError, match=r"call reset\(\) before agent_iter\(\)"):
        list(env.agent_iter())
    env.reset(seed=1)
    assert next(iter(env.agent_iter())) == env.agent_selection
