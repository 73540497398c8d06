"""Rewards and their AEC timing (issue 3 item 5; docs/rules.md §8 scoring, §9 winning).

The contract under test, as env.py documents it: rewards are given only when a deal ends; then
*every* agent — the partner sitting out a misère too — is credited with its side's result, and
``last()`` shows each agent the reward accumulated since its own previous action, the next time it
is selected (its next turn, or its final ``last()`` once the episode is over).
"""

from __future__ import annotations

import random

import pytest
from env_helpers import (
    PRESET_NAMES,
    act,
    bid_and_pass,
    discard_kitty,
    fill_deal,
    forced_hands,
    make_env,
    modest_action,
    random_action,
    seat_of,
)

from five_hundred_env import Phase


def side_results(u, change):
    """What docs/rules.md §8 + issue 3 item 5 say each agent gets for a deal's score change."""
    rules = u.rules
    k = rules.num_sides
    out = {}
    for agent in u.possible_agents:
        side = rules.side_of(seat_of(agent))
        if u.reward_mode == "score":
            out[agent] = change[side] / u.reward_scale
        elif u.reward_mode == "zero_sum":
            out[agent] = (change[side] - (sum(change) - change[side]) / (k - 1)) / u.reward_scale
        else:
            out[agent] = 0.0
    return out


def play_checking_reward_timing(env, rng, seed=None, options=None, policy=random_action):
    """Play one episode with random legal actions, checking at every step that ``last()`` shows the
    reward accumulated since the agent's own last action, that rewards come only when a deal ends
    and are each side's result. Returns (total reward per agent, finished deals, final agents)."""
    u = env.unwrapped
    env.reset(seed=seed, options=options)
    pending = dict.fromkeys(u.possible_agents, 0.0)
    totals = dict.fromkeys(u.possible_agents, 0.0)
    finished, final_last = [], []
    for agent in env.agent_iter():
        obs, reward, termination, truncation, _ = env.last()
        assert reward == pytest.approx(pending[agent]), (agent, len(finished))
        done = termination or truncation
        action = None if done else policy(obs, rng)
        deal = u.deal
        env.step(action)
        if done:
            final_last.append(agent)
            assert all(r == 0 for r in u.rewards.values())
            pending.pop(agent)
            continue
        pending[agent] = 0.0  # acting resets the actor's accumulated reward
        if deal.is_over:  # this action ended a deal: every agent gets its side's result at once
            finished.append(deal)
            expected = side_results(u, deal.score_change)
            if u.reward_mode == "win" and u.game.is_over:
                expected = {a: 1.0 if a in u.winners else -1.0 for a in u.possible_agents}
            assert u.rewards == pytest.approx(expected)
        else:
            assert all(r == 0 for r in u.rewards.values()), "a reward before the end of a deal"
        for a, r in u.rewards.items():
            pending[a] += r
            totals[a] += r
    return totals, finished, final_last


@pytest.mark.parametrize("reward", ["zero_sum", "score"])
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_deal_episodes_reward_every_agent_at_the_end_only(preset, reward):
    e = make_env(preset, reward=reward)
    rng = random.Random(1)
    for seed in range(15):
        totals, finished, final_last = play_checking_reward_timing(e, rng, seed=seed)
        assert len(finished) == 1
        assert sorted(final_last) == sorted(e.unwrapped.possible_agents)  # each sees its reward once more
        assert totals == pytest.approx(side_results(e.unwrapped, finished[0].score_change))
        if reward == "zero_sum":
            assert sum(totals.values()) == pytest.approx(0.0)
        u = e.unwrapped
        for agent in u.possible_agents:  # env.unwrapped.scores: each agent's side's score
            assert u.scores[agent] == finished[0].score_change[u.rules.side_of(seat_of(agent))]


@pytest.mark.parametrize("reward", ["zero_sum", "score", "win"])
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_game_episodes_reward_each_deal_and_name_the_winners(preset, reward):
    """Issue 3 item 5: per-deal rewards in "game" episodes (``win``: ±1 at the end only);
    ``env.unwrapped.winners`` lists the winning agents, both partners of a winning team."""
    e = make_env(preset, episode="game", reward=reward)
    u = e.unwrapped
    rng = random.Random(2)
    deals = 0
    for seed in range(3):
        totals, finished, final_last = play_checking_reward_timing(e, rng, seed=seed, policy=modest_action)
        deals += len(finished)
        assert u.game.is_over and u.winners and sorted(final_last) == sorted(u.possible_agents)
        assert u.winners == [f"player_{s}" for s in u.game.winning_seats()]
        if u.rules.num_players == 4:
            assert len(u.winners) == 2 and seat_of(u.winners[0]) % 2 == seat_of(u.winners[1]) % 2
        for agent in u.possible_agents:
            side = u.rules.side_of(seat_of(agent))
            assert u.scores[agent] == u.game.scores[side]
            if reward == "score":  # the rewards add up to the side's score
                assert totals[agent] * u.reward_scale == pytest.approx(u.scores[agent])
            if reward == "win":
                assert totals[agent] == (1.0 if agent in u.winners else -1.0)
    assert deals >= 3 * 5  # many deals per game: rewards were given mid-episode


def test_reward_timing_with_a_truncated_game():
    """``max_deals`` truncates a game episode; the last deal's rewards still arrive."""
    e = make_env("australian", episode="game", max_deals=2, reward="score")
    rng = random.Random(3)
    for seed in range(5):
        totals, finished, _ = play_checking_reward_timing(e, rng, seed=seed, policy=modest_action)
        u = e.unwrapped
        if not u.game.is_over:
            assert len(finished) == 2 and all(u.truncations.get(a, True) for a in u.possible_agents)
            assert not u.winners
        for agent in u.possible_agents:
            assert totals[agent] * 100 == pytest.approx(u.scores[agent])


# -- exact values on deals whose outcome does not depend on the play -----------------------------
# The holder of the ten top hearts bids 6H and takes every trick (docs/rules.md §6): [AU] slam bonus
# 250 (§8), [IT] and [FR] 100; the defenders take nothing.
SLAM = {  # preset: (reward of the contractor's side, of each other side) in zero_sum, score ÷ 100
    "australian": ((2.5, -2.5), (2.5, 0.0)),
    "italian_3p": ((1.0, -0.5), (1.0, 0.0)),
    "french_46": ((1.0, -1.0), (1.0, 0.0)),
    "two_handed": ((1.0, -1.0), (1.0, 0.0)),  # 6H = 100, no slam bonus (the italian_3p options)
    "five_handed": ((2.5, -0.625), (2.5, 0.0)),  # played alone (partner_call=none): 250 against four
    "six_handed": ((2.5, -2.5), (2.5, 0.0)),
}
OPTIONS = {"five_handed": {"partner_call": "none"}}  # the called partner's rewards: tests/test_presets_2_5_6.py


def play_slam(e, holder=0):
    n = e.unwrapped.rules.num_players
    bid_and_pass(e, "6H", bidder=holder)
    discard_kitty(e)
    rng = random.Random(0)
    pending = {}
    while e.agents:
        agent = e.agent_selection
        obs, reward, term, trunc, _ = e.last()
        if term or trunc:
            pending[agent] = reward
            e.step(None)
        else:
            assert reward == 0.0
            e.step(random_action(obs, rng))
    assert len(pending) == n
    return pending


@pytest.mark.parametrize("reward", ["zero_sum", "score"])
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_exact_rewards_of_a_forced_deal(preset, reward):
    e = make_env(preset, reward=reward, **OPTIONS.get(preset, {}))
    n = e.unwrapped.rules.num_players
    e.reset(options=forced_hands(preset, holder=0, dealer=n - 1))
    got = play_slam(e)
    own, other = SLAM[preset][0 if reward == "zero_sum" else 1]
    for agent, value in got.items():
        same_side = e.unwrapped.rules.side_of(seat_of(agent)) == 0
        assert value == pytest.approx(own if same_side else other)


@pytest.mark.parametrize("scale", [1, 50.0, 250])
def test_reward_scale_divides_the_score_change(scale):
    e = make_env("australian", reward_scale=scale)
    e.reset(options=forced_hands("australian", holder=0, dealer=3))
    got = play_slam(e)
    assert got == pytest.approx({"player_0": 250 / scale, "player_2": 250 / scale,
                                 "player_1": -250 / scale, "player_3": -250 / scale})


def test_the_partner_sitting_out_a_misere_gets_its_sides_result():
    """Issue 3 item 5: every agent — the partner who sat out a misère too — receives its side's
    result (docs/rules.md §7: the contractor's partner sits out; §8: ±500 for open misère)."""
    e = make_env("australian")
    rng = random.Random(9)
    for seed in range(6):
        e.reset(seed=seed, options={"dealer": 3})
        bid_and_pass(e, "OPEN_MISERE", bidder=0)
        totals, acted = {}, set()
        while e.agents:
            agent = e.agent_selection
            obs, reward, term, _, _ = e.last()
            if term:
                totals[agent] = reward
                e.step(None)
            else:
                acted.add(agent)
                e.step(random_action(obs, rng))
        assert "player_2" not in acted  # never a turn, not even to pass (the auction had ended)
        assert totals["player_2"] == totals["player_0"] == -totals["player_1"] == -totals["player_3"]
        assert abs(totals["player_0"]) == 5.0


def test_a_thrown_in_deal_gives_zero_and_ends_a_deal_episode():
    """docs/rules.md §4: if every player passes the deal is thrown in; an episode in "deal" mode ends
    with reward 0 for everyone."""
    for preset in PRESET_NAMES:
        e = make_env(preset)
        e.reset(seed=1)
        n = e.unwrapped.rules.num_players
        act(e, " ".join(["PASS"] * n))
        assert e.unwrapped.deal.thrown_in
        seen = {}
        for agent in e.agent_iter():
            _, reward, term, _, _ = e.last()
            assert term
            seen[agent] = reward
            e.step(None)
        assert seen == dict.fromkeys(e.unwrapped.possible_agents, 0.0)
        assert set(e.unwrapped.scores.values()) == {0}


def test_a_thrown_in_deal_in_a_game_passes_the_deal_without_reward():
    e = make_env("australian", episode="game")
    e.reset(seed=1, options={"dealer": 2, "scores": [100, -20, 100, -20]})
    act(e, "PASS PASS PASS PASS")
    u = e.unwrapped
    assert u.deal.dealer == 3 and u.deal.phase == Phase.BIDDING and not any(u.terminations.values())
    assert u.rewards == dict.fromkeys(u.possible_agents, 0) and all(v == 0 for v in u._cumulative_rewards.values())
    assert u.scores == {"player_0": 100, "player_1": -20, "player_2": 100, "player_3": -20}
    assert e.agent_selection == "player_0"  # the new dealer's left bids first


# -- the end of a game, set up with the ``scores`` option (issue 3 item 6) -------------------------


@pytest.mark.parametrize("reward", ["zero_sum", "win"])
def test_a_team_reaching_500_by_its_contract_wins(reward):
    """docs/rules.md §9 [AU]: a side wins when it reaches 500 by making a contract."""
    e = make_env("australian", episode="game", reward=reward)
    e.reset(options={**forced_hands("australian", holder=0, dealer=3), "scores": [480, 300, 480, 300]})
    got = play_slam(e)
    u = e.unwrapped
    assert u.winners == ["player_0", "player_2"] and u.game.is_over
    assert u.scores == {"player_0": 730, "player_1": 300, "player_2": 730, "player_3": 300}
    if reward == "win":
        assert got == {"player_0": 1.0, "player_1": -1.0, "player_2": 1.0, "player_3": -1.0}
    else:
        assert got == {"player_0": 2.5, "player_1": -2.5, "player_2": 2.5, "player_3": -2.5}


def test_a_team_sinking_to_minus_500_loses():
    """docs/rules.md §9: a side at −500 or less loses; with four players the other team wins. Seat 1
    holds every trump but the two lowest and takes every trick of seat 0's 6S."""
    hands, kitty = fill_deal("australian", {1: "JK Js Jc As Ks Qs Ts 9s 8s 7s"})
    e = make_env("australian", episode="game", reward="win")
    e.reset(options={"dealer": 3, "hands": hands, "kitty": kitty, "scores": [-470, 0, -470, 0]})
    bid_and_pass(e, "6S", bidder=0)
    rng = random.Random(1)
    final = {}
    for agent in e.agent_iter():
        obs, reward, term, _, _ = e.last()
        if term:
            final[agent] = reward
        e.step(None if term else random_action(obs, rng))
    u = e.unwrapped
    assert u.game.deals[0].tricks_won[1] == 10
    assert u.scores == {"player_0": -510, "player_1": 100, "player_2": -510, "player_3": 100}
    assert u.winners == ["player_1", "player_3"]
    assert final == {"player_0": -1.0, "player_1": 1.0, "player_2": -1.0, "player_3": 1.0}


def test_three_players_tied_for_the_highest_score_all_win():
    """docs/rules.md §9 [IT]: when a player sinks to −500, the player(s) with the highest score win;
    with ``reward="win"``: +1 to the winners, −1 to the others (issue 3 item 5)."""
    hands, kitty = fill_deal("italian_3p", {1: "JK Js Jc As Ks Qs Ts 9s 8s 7s"})
    e = make_env("italian_3p", episode="game", reward="win")
    e.reset(options={"dealer": 2, "hands": hands, "kitty": kitty, "scores": [-480, 100, 200]})
    bid_and_pass(e, "6S", bidder=0)
    rng = random.Random(2)
    final = {}
    for agent in e.agent_iter():
        obs, reward, term, _, _ = e.last()
        if term:
            final[agent] = reward
        e.step(None if term else random_action(obs, rng))
    u = e.unwrapped
    # seat 0 loses 40; seat 1 scores 10 for each of its ten tricks ([IT] defence)
    assert u.scores == {"player_0": -520, "player_1": 200, "player_2": 200}
    assert u.winners == ["player_1", "player_2"]
    assert final == {"player_0": -1.0, "player_1": 1.0, "player_2": 1.0}


def test_scores_property_before_and_after_reset():
    e = make_env("italian_3p", episode="game")
    assert e.unwrapped.scores == {}
    e.reset(seed=0, options={"scores": [10, 20, 30]})
    assert e.unwrapped.scores == {"player_0": 10, "player_1": 20, "player_2": 30}
    e.reset(seed=0)
    assert e.unwrapped.scores == dict.fromkeys(e.possible_agents, 0)
