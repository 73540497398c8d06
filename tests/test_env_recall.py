"""``five_hundred_v1``: the observation recalls the whole deal (docs/rules.md §4 auction, §7 play), and
``state()`` tells every decision point apart (the §7 nomination turn included).

The recall tests rebuild the auction and every trick — cards, order, leader, suit led, winner —
from one observation vector alone, following the recipe of docs/environment.md, and compare
them with the engine's record of the deal.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from env_helpers import PRESET_NAMES, act, bid_and_pass, decode, discard_kitty, fill_deal, make_env, random_action

from five_hundred_env import Phase
from five_hundred_env.actions import PASS
from five_hundred_env.engine import EFFECTIVE_SUIT, NO_TRUMP_CTX, SUITLESS, WIN_KEY, bid_rank
from five_hundred_env.rules import Rules


def one(vector: np.ndarray) -> int:
    """The index of a one-hot slice, or -1 if it is empty."""
    hot = np.flatnonzero(vector)
    return int(hot[0]) if len(hot) else -1


def auction_from_observation(rules: Rules, parts: dict[str, np.ndarray]) -> list[tuple[int, int]]:
    """§4: the auction as (relative seat, action id) in the order made, from ``bids`` and ``passes``."""
    n = rules.num_players
    made = sorted(((row + 1, seat) for row, seat in np.argwhere(parts["bids"])), key=lambda b: bid_rank(b[0], rules))
    passes = {(int(h), int(s)) for h, s in np.argwhere(parts["passes"])}
    skip_passed = rules.bidding == "until_passed" and not rules.rebid_after_pass
    seat, high, out_of_bidding, auction = (one(parts["dealer"]) + 1) % n, 0, set(), []
    for _ in range(len(made) + len(passes)):
        while skip_passed and seat in out_of_bidding:
            seat = (seat + 1) % n
        if (high, seat) in passes:
            auction.append((seat, PASS))
            out_of_bidding.add(seat)
        else:
            bid, bidder = made.pop(0)
            assert bidder == seat
            auction.append((seat, int(bid)))
            high = int(bid)
        seat = (seat + 1) % n
    return auction


def tricks_from_observation(rules: Rules, parts: dict[str, np.ndarray]) -> list[tuple]:
    """§7: every trick (finished or current) as (leader, led suit, ((seat, card), …), winner or
    -1), in relative seats, from ``tricks``, ``played``, ``joker_leads`` and the contract."""
    n = rules.num_players
    contractor, sitting_out, trump = one(parts["contractor"]), one(parts["sitting_out"]), one(parts["trump"])
    nominated = one(parts["joker_suit"])
    ctx = trump if trump < 4 else NO_TRUMP_CTX + 1 + nominated
    player_of = {int(card): seat for seat in range(n) for card in np.flatnonzero(parts["played"][seat])}
    trick_size = n - (sitting_out >= 0)
    leader, tricks = contractor, []
    for number in range(rules.hand_size):
        cards = {player_of[int(card)]: int(card) for card in np.flatnonzero(parts["tricks"][number])}
        if not cards:
            break
        order, seat = [], leader
        for _ in range(len(cards)):
            order.append((seat, cards[seat]))
            seat = (seat + 1) % n
            if seat == sitting_out:
                seat = (seat + 1) % n
        lead_card = order[0][1]
        led = one(parts["joker_leads"][number]) if EFFECTIVE_SUIT[ctx][lead_card] == SUITLESS else EFFECTIVE_SUIT[ctx][lead_card]
        winner = max(order, key=lambda play: WIN_KEY[ctx][led][play[1]])[0] if len(order) == trick_size else -1
        tricks.append((leader, led, tuple(order), winner))
        leader = winner
    return tricks


def engine_tricks(deal, observer: int) -> list[tuple]:
    """The engine's tricks (and the current one, winner -1) in ``observer``'s relative seats."""
    n = deal.rules.num_players

    def rel(seat: int) -> int:
        return (seat - observer) % n

    out = [(rel(leader), led, tuple((rel(s), c) for s, c in plays), rel(winner))
           for leader, led, plays, winner in deal.tricks]
    if deal.trick:
        out.append((rel(deal.leader), deal.led_suit, tuple((rel(s), c) for s, c in deal.trick), -1))
    return out


@pytest.mark.parametrize("options", [{}, {"rebid_after_pass": True}], ids=["plain", "rebid_after_pass"])
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_every_observation_recalls_the_auction_and_every_trick_in_order(preset, options):
    """§4 and §7: from any seat's observation at any step, the auction and the tricks so far
    (cards, order, leader, suit led, winner) are rebuilt exactly; suitless joker leads and
    nominations included (random bids reach no-trump contracts often)."""
    e = make_env(preset, **options)
    rng = random.Random(f"recall-{preset}")
    rules = e.unwrapped.rules
    n = rules.num_players
    joker_leads = 0
    for seed in range(12):
        e.reset(seed=seed)
        while not e.unwrapped.terminations[e.agent_selection]:
            deal = e.unwrapped.deal
            for observer in range(n):
                parts = decode(e, f"player_{observer}")
                assert auction_from_observation(rules, parts) == [((s - observer) % n, a) for s, a in deal.bids]
                if deal.contractor >= 0:
                    assert tricks_from_observation(rules, parts) == engine_tricks(deal, observer)
            joker_leads += int(decode(e, "player_0")["joker_leads"].any())
            e.step(random_action(e.observe(e.agent_selection), rng))
    if preset != "australian":  # not_shown_void lets a suitless joker lead early and often
        assert joker_leads > 0


def _partner_plays_spades(first: str, second: str):
    """Seat 0 (6H, hearts trumps) leads As then Ks and wins both; its partner, seat 2, plays
    ``first`` to the first trick and ``second`` to the second; everything else is the same."""
    hands, kitty = fill_deal("australian", {0: "As Ks JK Jh Jd Ah Kh Qh Th 9h",
                                            2: "9s 7s 5c 6c 7c 8c 9c Tc Jc Qc"})
    e = make_env("australian")
    e.reset(options={"dealer": 3, "hands": hands, "kitty": kitty})
    bid_and_pass(e, "6H", bidder=0)
    discard_kitty(e)
    act(e, f"As 5s {first} 6d Ks 6s {second} 7d")
    assert e.unwrapped.deal.tricks_won[0] == 2
    return e


def test_the_order_of_play_changes_every_observation():
    """§7: partner playing 9♠ then 7♠ or 7♠ then 9♠ leaves the same cards played by the same
    seats, but every seat's observation differs — in ``tricks``, the recall of the play, only."""
    nine_first, seven_first = _partner_plays_spades("9s", "7s"), _partner_plays_spades("7s", "9s")
    for agent in nine_first.possible_agents:
        a, b = decode(nine_first, agent), decode(seven_first, agent)
        differing = [name for name in a if not np.array_equal(a[name], b[name])]
        assert differing == ["tricks"], agent


# -- state(): every decision point exactly ---------------------------------------------------------


def _nomination_turn(contractor: int):
    """No trumps with the joker in the contractor's hand (§7): the contractor's nomination turn."""
    hands, kitty = fill_deal("australian", {contractor: "JK As Ks Qs Js Ac Kc Qc Ad Kd"})
    e = make_env("australian")
    e.reset(options={"dealer": (contractor - 1) % 4, "hands": hands, "kitty": kitty})
    bid_and_pass(e, "7NT", bidder=contractor)
    discard_kitty(e)
    assert e.unwrapped.deal.phase == Phase.NOMINATE
    return e


@pytest.mark.parametrize("contractor", [0, 1])
def test_the_state_shows_the_nomination_turn(contractor):
    """§7: the state before and after ``NO_NOMINATION`` differs (v0's, which embedded seat 0's
    view, did not when seat 0 was not the contractor); the players' observations still show the
    turn as play to all but the contractor."""
    e = _nomination_turn(contractor)
    before = e.state()
    parts = e.unwrapped.encoder.decode(before[e.unwrapped.encoder.state_layout["observation"][0]:])
    assert parts["phase"].tolist() == [0, 0, 1, 0, 0]
    act(e, "NO_NOMINATION")
    assert e.unwrapped.deal.phase == Phase.PLAY
    assert not np.array_equal(before, e.state())


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_the_state_fixes_the_player_to_act_and_its_legal_actions(preset):
    """Across random deals, two decision points with the same state always have the same player
    to act and the same legal actions (so a critic of the state can tell every decision apart)."""
    e = make_env(preset)
    rng = random.Random(f"state-{preset}")
    seen: dict[bytes, tuple[str, tuple[int, ...]]] = {}
    nomination_turns = 0
    for seed in range(25):
        e.reset(seed=seed)
        while not e.unwrapped.terminations[e.agent_selection]:
            key = e.state().tobytes()
            decision = (e.agent_selection, tuple(e.unwrapped.legal_actions()))
            assert seen.setdefault(key, decision) == decision
            nomination_turns += e.unwrapped.deal.phase == Phase.NOMINATE
            e.step(random_action(e.observe(e.agent_selection), rng))
    if preset == "australian":  # the one preset nominating in no trumps (§2, §7)
        assert nomination_turns > 0


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_state_of_an_agent_is_oriented_to_it(preset):
    """``state(agent)``: hand row r is the seat r places to the agent's left, then the kitty, the
    discards and the agent's own observation (its phase being the true one); ``state()`` is
    ``state("player_0")``."""
    e = make_env(preset, episode="game")
    rng = random.Random(8)
    u = e.unwrapped
    n = u.rules.num_players
    e.reset(seed=3, options={"scores": [[30, -20, 10, 40, -30][u.rules.side_of(seat)] for seat in range(n)]})
    view_at = u.encoder.state_layout["observation"][0]
    for _ in range(60):
        deal = u.deal
        np.testing.assert_array_equal(e.state(), e.state("player_0"))
        for seat, agent in enumerate(u.possible_agents):
            state = e.state(agent)
            assert u.state_space.contains(state)
            width = u.rules.card_slots
            for r in range(n):
                row = state[r * width:(r + 1) * width]
                assert sum(1 << int(c) for c in np.flatnonzero(row)) == deal.hands[(seat + r) % n]
            np.testing.assert_array_equal(state[view_at:], e.observe(agent)["observation"])
        e.step(random_action(e.observe(e.agent_selection), rng))
    with pytest.raises(ValueError, match="unknown agent"):
        e.state("player_9")


def test_state_of_an_agent_during_the_nomination_turn_shows_the_turn():
    """The one place where ``state(agent)``'s embedded view differs from the agent's observation."""
    e = _nomination_turn(contractor=1)
    u = e.unwrapped
    view_at = u.encoder.state_layout["observation"][0]
    for agent in u.possible_agents:
        mine = u.encoder.decode(e.observe(agent)["observation"])
        in_state = u.encoder.decode(e.state(agent)[view_at:])
        assert in_state["phase"].tolist() == [0, 0, 1, 0, 0]
        assert mine["phase"].tolist() == ([0, 0, 1, 0, 0] if agent == "player_1" else [0, 0, 0, 1, 0])
        assert [n for n in mine if not np.array_equal(mine[n], in_state[n])] == ([] if agent == "player_1" else ["phase"])
