"""Honest observations (issue 3 item 4; docs/rules.md §5 and §7): each agent sees its own information
state and nothing more, whoever is to act.

The no-leak tests build two explicit deals that differ only in where some hidden cards lie
(other players' hands, the kitty), play the same actions in both while they are legal in both,
and check that the observer's observation is identical at every step.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from env_helpers import (
    PRESET_NAMES,
    act,
    bid_and_pass,
    card_mask_of,
    deal_of,
    decode,
    discard_kitty,
    fill_deal,
    forced_hands,
    legal_names,
    make_env,
    random_action,
    seat_of,
)

from five_hundred_env import Phase
from five_hundred_env.actions import OPEN_MISERE

# -- observe(agent) is the agent's own view, whoever is to act ----------------------------------


@pytest.mark.parametrize("episode", ["deal", "game"])
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_every_agent_observes_its_own_hand_and_a_zero_mask_off_turn(preset, episode):
    """Issue 3 item 4: ``observe(agent)`` gives that agent's own view (peers' environments leaked
    the acting player's hand to everyone); the mask is all zeros when it is not its turn."""
    e = make_env(preset, episode=episode, max_deals=3)
    rng = random.Random(0)
    for seed in range(4):
        e.reset(seed=seed)
        for agent in e.agent_iter(2000):
            u = e.unwrapped
            deal = u.deal
            for other in u.agents:
                obs = e.observe(other)
                seat = seat_of(other)
                assert card_mask_of(u.encoder.decode(obs["observation"])["hand"]) == deal.hands[seat]
                if other == agent and deal.to_act == seat and not (u.terminations[other] or u.truncations[other]):
                    legal = {u.actions.universal[a] for a in np.flatnonzero(obs["action_mask"])}
                    assert legal == set(deal.legal_actions()) and legal
                else:
                    assert not obs["action_mask"].any(), (other, agent)
            obs, _, term, trunc, _ = e.last()
            e.step(None if term or trunc else random_action(obs, rng))


def test_observations_are_fresh_arrays():
    """Keeping an observation and stepping on does not change the one kept."""
    e = make_env()
    e.reset(seed=3)
    kept = e.observe("player_0")
    copy = {k: v.copy() for k, v in kept.items()}
    for _ in range(8):
        obs, *_ = e.last()
        e.step(None if e.unwrapped.terminations[e.agent_selection] else int(np.flatnonzero(obs["action_mask"])[-1]))
    for k in kept:
        np.testing.assert_array_equal(kept[k], copy[k])


def test_the_observation_is_oriented_to_the_observer():
    """Issue 3 item 4: the observing player is always seat 0 of the encoding."""
    e = make_env("australian")
    e.reset(seed=5, options={"dealer": 1})
    for agent in e.possible_agents:
        parts = decode(e, agent)
        assert parts["dealer"].tolist()[(1 - seat_of(agent)) % 4] == 1
        assert parts["to_act"].tolist()[(2 - seat_of(agent)) % 4] == 1  # the dealer's left bids first


# -- the kitty and the discards: only the contractor (docs/rules.md §5) ------------------------------


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_kitty_and_discards_appear_only_in_the_contractors_observation(preset):
    """docs/rules.md §5: nobody but the contractor ever sees the kitty or the discards."""
    e = make_env(preset)
    rng = random.Random(1)
    seen = 0
    for seed in range(12):
        e.reset(seed=seed)
        for _ in e.agent_iter():
            u = e.unwrapped
            deal = u.deal
            for agent in u.possible_agents:
                parts = decode(e, agent)
                if deal.contractor == seat_of(agent):
                    assert card_mask_of(parts["kitty"]) == deal.kitty
                    assert card_mask_of(parts["discards"]) == deal.discards
                    seen += 1
                else:
                    assert not parts["kitty"].any() and not parts["discards"].any()
            obs, _, term, trunc, _ = e.last()
            e.step(None if term or trunc else random_action(obs, rng))
    assert seen > 0


def test_the_nomination_turn_looks_like_play_to_the_others():
    """docs/rules.md §7: only a contractor holding the joker may nominate; the others must not learn from
    the observation that the contractor has a nomination to make (it would show the joker)."""
    e = make_env("australian")
    e.reset(options=forced_hands("australian", holder=0, dealer=3))
    bid_and_pass(e, "6NT", bidder=0)
    discard_kitty(e)
    assert e.unwrapped.deal.phase == Phase.NOMINATE and e.agent_selection == "player_0"
    assert legal_names(e) == {"NOMINATE_S", "NOMINATE_C", "NOMINATE_D", "NOMINATE_H", "NO_NOMINATION"}
    play = [0, 0, 0, 1, 0]
    assert decode(e, "player_0")["phase"].tolist() == [0, 0, 1, 0, 0]
    for other in ("player_1", "player_2", "player_3"):
        assert decode(e, other)["phase"].tolist() == play
    act(e, "NOMINATE_D")
    for agent in e.possible_agents:  # a nomination is announced: everyone sees its suit
        parts = decode(e, agent)
        assert parts["phase"].tolist() == play and parts["joker_suit"].tolist() == [0, 0, 1, 0]


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_the_final_observation_of_a_deal_episode_shows_the_deal_just_played(preset):
    """In "deal" episodes every agent's last observation is the finished deal (not a next one)."""
    e = make_env(preset)
    rng = random.Random(8)
    n = e.unwrapped.rules.num_players
    for seed in range(6):
        e.reset(seed=seed)
        dealt = deal_of(e)
        for _ in e.agent_iter():
            obs, _, term, _, _ = e.last()
            if not term:
                e.step(random_action(obs, rng))
                continue
            parts = e.unwrapped.encoder.decode(obs["observation"])
            assert parts["phase"].tolist()[:5] == [0, 0, 0, 0, 1] and parts["phase"].sum() == 1
            assert not obs["action_mask"].any()
            assert not parts["to_act"].any() and e.unwrapped.legal_actions() == []
            assert deal_of(e) == dealt
            if not e.unwrapped.deal.thrown_in:
                assert parts["tricks_won"].sum() == 10 and not parts["hand"].any()
                assert parts["played"].sum() == 10 * (n - len(e.unwrapped.deal.sitting_out_seats))
            e.step(None)


def test_a_thrown_in_deal_episode_ends_showing_the_passes():
    e = make_env("australian")
    e.reset(seed=4, options={"dealer": 0})
    act(e, "PASS PASS PASS PASS")
    for agent in e.possible_agents:
        parts = decode(e, agent)
        assert parts["passes"][0].sum() == 4 and parts["phase"].tolist() == [0, 0, 0, 0, 1]
        assert parts["hand"].sum() == 10  # nobody played: the hands are still there
    assert all(e.unwrapped.terminations.values())


# -- no leak: hidden cards moved between other hands and the kitty change nothing ---------------


def _swap(hands, kitty, where_a, where_b, rng):
    """Swap one random card between two hidden places (a seat number or ``"kitty"``)."""
    hands = [list(h) for h in hands]
    kitty = list(kitty)
    place = {"kitty": kitty, **dict(enumerate(hands))}
    a, b = place[where_a], place[where_b]
    i, j = rng.randrange(len(a)), rng.randrange(len(b))
    a[i], b[j] = b[j], a[i]
    return hands, kitty


def _shuffle_hidden(hands, kitty, observer, rng):
    """Redeal every card the observer cannot see among the other hands and the kitty."""
    hidden = [c for s, h in enumerate(hands) if s != observer for c in h] + list(kitty)
    rng.shuffle(hidden)
    out = []
    for s, h in enumerate(hands):
        if s == observer:
            out.append(list(h))
        else:
            out.append(hidden[: len(h)])
            hidden = hidden[len(h):]
    return out, hidden


def _same_view_while_legal(preset, observer, deal_a, deal_b, rng, episode="deal", recalled=None):
    """Play one action sequence in both deals while it is legal in both; the observer passes in
    the auction (so the kitty stays hidden from it) and nobody bids open misère (which exposes a
    hand, tested below). Returns how many steps were compared; ``recalled`` (a list) gets, per
    step compared, how many tricks the observer's ``tricks`` slice recalled (v1)."""
    envs = [make_env(preset, episode=episode), make_env(preset, episode=episode)]
    for e, (hands, kitty, dealer) in zip(envs, (deal_a, deal_b), strict=True):
        e.reset(seed=0, options={"dealer": dealer, "hands": hands, "kitty": kitty})  # same next deals
    observer_agent = f"player_{observer}"
    steps = 0
    while envs[0].agents:
        views = [e.observe(observer_agent) for e in envs]
        for key in ("observation", "action_mask"):
            np.testing.assert_array_equal(views[0][key], views[1][key], err_msg=f"{key} after {steps} steps")
        if recalled is not None:
            recalled.append(int(envs[0].unwrapped.encoder.decode(views[0]["observation"])["tricks"].any(axis=1).sum()))
        assert envs[0].agent_selection == envs[1].agent_selection
        u0, u1 = envs[0].unwrapped, envs[1].unwrapped
        if u0.terminations[u0.agent_selection]:
            for e in envs:
                e.step(None)
            continue
        if u0.deal.to_act == observer:
            legal = sorted(np.flatnonzero(views[0]["action_mask"]).tolist())
            pass_id = u0.str_to_action("PASS")
            action = pass_id if pass_id in legal else rng.choice(legal)
        else:
            both = sorted(set(u0.legal_actions()) & set(u1.legal_actions()) - {u0.actions.compact[OPEN_MISERE]})
            if not both:
                break
            action = rng.choice(both)
        for e in envs:
            e.step(action)
        steps += 1
    return steps


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_no_leak_when_one_hidden_card_changes_place(preset):
    """Issue 3 item 4: moving cards between other players' hidden hands or the hidden kitty never
    changes a player's observation (here: one card swapped, a long common sequence, often the
    whole deal and so the v1 recall of all its tricks, §7)."""
    rng = random.Random(f"swap-{preset}")
    e = make_env(preset)
    total = 0
    recalled = []
    for seed in range(40):
        e.reset(seed=seed)
        hands, kitty, dealer = deal_of(e)
        n = len(hands)
        observer = seed % n
        places = [s for s in range(n) if s != observer] + ["kitty"]
        where_a, where_b = rng.sample(places, 2)
        hands_b, kitty_b = _swap(hands, kitty, where_a, where_b, rng)
        assert hands_b[observer] == hands[observer]
        total += _same_view_while_legal(preset, observer, (hands, kitty, dealer), (hands_b, kitty_b, dealer), rng,
                                        recalled=recalled)
    assert total > 40 * 15  # the auction, the discards and a good part of the play were compared
    assert recalled.count(10) > 0  # and whole deals, their recall of all ten tricks included


@pytest.mark.parametrize("episode", ["deal", "game"])
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_no_leak_when_every_hidden_card_is_redealt(preset, episode):
    """Also through the v1 recall of the play (§7): the comparisons reach views recalling
    finished tricks, in which the ``tricks`` and ``joker_leads`` slices are compared too."""
    rng = random.Random(f"redeal-{preset}")
    e = make_env(preset)
    recalled = []
    for seed in range(30):
        e.reset(seed=seed)
        hands, kitty, dealer = deal_of(e)
        observer = (seed * 7) % len(hands)
        hands_b, kitty_b = _shuffle_hidden(hands, kitty, observer, rng)
        _same_view_while_legal(preset, observer, (hands, kitty, dealer), (hands_b, kitty_b, dealer), rng, episode,
                               recalled)
    assert max(recalled) >= 2  # rows recalled: at least one finished trick and the current one


def test_no_leak_of_the_kitty_to_the_players_who_did_not_take_it():
    """docs/rules.md §5: after the auction the kitty is in the contractor's hand; swapping a kitty card
    with another player's card changes nothing for the third player, through discards and play."""
    hands, kitty = fill_deal("australian", {0: "JK Jh Jd Ah Kh Qh Th 9h 8h 7h"})
    rng = random.Random(3)
    for k in range(3):
        for other in (2, 3):
            hands_b, kitty_b = [list(h) for h in hands], list(kitty)
            j = rng.randrange(10)
            kitty_b[k], hands_b[other][j] = hands_b[other][j], kitty_b[k]
            # seat 0 is the contractor (seat 1, the observer, passes), so the kitty is hidden from seat 1
            steps = _same_view_while_legal("australian", 1, (hands, kitty, 3), (hands_b, kitty_b, 3), rng)
            assert steps >= 4 + 3  # the auction and all three discards at least


# -- the exposed open-misère hand (docs/rules.md §7) ---------------------------------------------------


@pytest.mark.parametrize("preset, first_exposed_after", [("australian", "first_trick"), ("italian_3p", "discards")])
def test_open_misere_exposure_appears_in_everyones_observation_at_the_right_time(preset, first_exposed_after):
    """docs/rules.md §7: the open-misère contractor's remaining hand is exposed to everyone from the end of
    the first trick [AU], or from the start of play [IT]; from then on every player's observation
    shows the exposed cards still in that hand (the sitting-out partner's too)."""
    e = make_env(preset)
    rng = random.Random(4)
    n = e.unwrapped.rules.num_players
    e.reset(seed=11, options={"dealer": n - 1})  # seat 0 bids first
    bid_and_pass(e, "OPEN_MISERE", bidder=0)
    u = e.unwrapped
    deal = u.deal
    assert deal.contract == OPEN_MISERE and deal.contractor == 0

    def exposed_views():
        return [card_mask_of(decode(e, a)["exposed"]) for a in u.possible_agents]

    while deal.phase == Phase.DISCARD:
        assert exposed_views() == [0] * n
        act(e, u.action_to_str(random_action(e.observe(e.agent_selection), rng)))
    if deal.phase == Phase.NOMINATE:
        act(e, "NO_NOMINATION")
    assert deal.phase == Phase.PLAY
    if first_exposed_after == "discards":
        assert exposed_views() == [deal.hands[0]] * n and bin(deal.hands[0]).count("1") == 10
    else:
        assert exposed_views() == [0] * n
        while not deal.tricks:
            assert exposed_views() == [0] * n
            obs, *_ = e.last()
            e.step(random_action(obs, rng))
        assert bin(deal.hands[0]).count("1") == 9
    while e.agents and not u.terminations[e.agent_selection]:
        assert exposed_views() == [deal.hands[0]] * n  # the cards still in that hand
        obs, *_ = e.last()
        e.step(random_action(obs, rng))


def test_no_exposure_in_a_plain_misere():
    e = make_env("italian_3p")
    rng = random.Random(5)
    e.reset(seed=2, options={"dealer": 2})
    bid_and_pass(e, "MISERE", bidder=0)
    while e.agents and not e.unwrapped.terminations[e.agent_selection]:
        for a in e.possible_agents:
            assert not decode(e, a)["exposed"].any()
        obs, *_ = e.last()
        e.step(random_action(obs, rng))


def test_the_partner_sitting_out_a_misere_never_acts_but_observes():
    """Issue 3 item 2: in misère with 4 players the contractor's partner never gets a turn."""
    e = make_env("australian")
    rng = random.Random(6)
    e.reset(seed=8, options={"dealer": 3})
    bid_and_pass(e, "OPEN_MISERE", bidder=0)
    discard_kitty(e)
    if e.unwrapped.deal.phase == Phase.NOMINATE:
        act(e, "NO_NOMINATION")
    while not e.unwrapped.terminations[e.agent_selection]:
        assert e.agent_selection != "player_2"
        assert decode(e, "player_2")["sitting_out"].tolist() == [1, 0, 0, 0]
        assert decode(e, "player_1")["sitting_out"].tolist() == [0, 1, 0, 0]
        obs, *_ = e.last()
        e.step(random_action(obs, rng))
    assert e.unwrapped.deal.played[2] == 0 and len(e.unwrapped.deal.tricks) == 10


# -- the global state (issue 3 item 4) ------------------------------------------------------------


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_state_contains_all_hands_the_kitty_and_the_discards(preset):
    e = make_env(preset)
    rng = random.Random(7)
    e.reset(seed=9)
    n = e.unwrapped.rules.num_players
    for _ in e.agent_iter():
        u = e.unwrapped
        deal = u.deal
        state = e.state()
        assert state.shape == u.state_space.shape and u.state_space.contains(state)
        width = u.rules.card_slots
        parts = {name: state[at:at + int(np.prod(shape))] for name, (at, shape) in u.encoder.state_layout.items()}
        for seat in range(n):
            assert card_mask_of(parts["hands"][seat * width:(seat + 1) * width]) == deal.hands[seat]
        assert card_mask_of(parts["kitty"]) == deal.kitty
        assert card_mask_of(parts["discards"]) == deal.discards
        if u.rules.dead_hand_size:  # §10.3: the two-handed dead hand is a hidden fact of the state
            assert card_mask_of(parts["dead_hand"]) == deal.dead_hand and deal.dead_hand.bit_count() == 10
        if n == 5:  # §10.5: the partner of the deal, known to the players or not
            assert card_mask_of(parts["partner"]) == (1 << deal.partner if deal.partner >= 0 else 0)
        if deal.phase != Phase.NOMINATE:  # where the state shows the true phase (tests/test_env_recall.py)
            np.testing.assert_array_equal(parts["observation"], e.observe("player_0")["observation"])
        obs, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else random_action(obs, rng))


def test_scores_and_dealer_in_game_observations():
    """Issue 3 item 4: in "game" episodes the observation holds the scores (÷10, the observer's side
    first) and the dealer."""
    e = make_env("australian", episode="game")
    e.reset(seed=1, options={"scores": [120, -40, 120, -40], "dealer": 0})
    assert decode(e, "player_0")["scores"].tolist() == [12, -4]
    assert decode(e, "player_1")["scores"].tolist() == [-4, 12]
    assert decode(e, "player_3")["dealer"].tolist() == [0, 1, 0, 0]
    e3 = make_env("italian_3p", episode="game")
    e3.reset(seed=1, options={"scores": [10, 20, -30]})
    assert decode(e3, "player_1")["scores"].tolist() == [2, -3, 1]


def test_the_documented_layout_table_is_current():
    """docs/environment.md carries the slice offsets of every preset as generated from the layout."""
    from pathlib import Path

    from five_hundred_env.observation import layout_table

    docs = (Path(__file__).resolve().parent.parent / "docs" / "environment.md").read_text()
    assert layout_table() in docs


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_the_layout_tiles_the_vector_and_decodes_by_name(preset):
    """The layout's slices follow each other without gap or overlap, and each named slice of a
    real observation is what decode() returns for that name."""
    env = make_env(preset)
    env.reset(seed=2)
    encoder = env.unwrapped.encoder
    end = 0
    for offset, shape in encoder.layout.values():
        assert offset == end
        end += int(np.prod(shape))
    assert end == encoder.size == env.observation_space("player_0")["observation"].shape[0]
    vector = env.observe(env.agent_selection)["observation"]
    parts = encoder.decode(vector)
    for name, (offset, shape) in encoder.layout.items():
        assert np.array_equal(parts[name].ravel(), vector[offset:offset + int(np.prod(shape))])
    hand_at, _ = encoder.layout["hand"]
    width = env.unwrapped.rules.card_slots
    assert vector[hand_at:hand_at + width].sum() == 10  # the observer's ten cards, where "hand" says


@pytest.mark.parametrize("preset", ["australian", "italian_3p", "french_46"])
def test_encode_turn_is_what_observe_gives_the_seat_to_act(preset):
    """ObservationEncoder.encode_turn (search and rollouts, straight on the engine) equals the
    environment's observe() of the acting agent, observation and mask, at every step."""
    import random as _random

    from five_hundred_env import env as make_env

    e = make_env(rules=preset)
    e.reset(seed=3)
    u = e.unwrapped
    pick = _random.Random(1)
    for _agent in e.agent_iter():
        obs, _r, term, trunc, _i = e.last()
        if term or trunc:
            e.step(None)
            continue
        turn = u.encoder.encode_turn(u.deal, u.actions, u.game.scores)
        assert np.array_equal(turn["observation"], obs["observation"])
        assert np.array_equal(turn["action_mask"], obs["action_mask"])
        e.step(pick.choice(np.flatnonzero(obs["action_mask"]).tolist()))
