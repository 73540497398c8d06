"""docs/rules.md §10 (RULES.md §10): two, five and six players — the presets ``two_handed``,
``five_handed`` (with ``partner_call``) and ``six_handed``. Each test quotes the sentence of
§10 it checks.

The deals are explicit (conftest ``make_deal``: the seats named get their cards, the other seats
and the kitty the rest in card order; in ``two_handed`` what is left is the dead hand) or seeded.
"""

from __future__ import annotations

import itertools
import json
import random

import numpy as np
import pytest
from conftest import act, card_name, discard_kitty, hand, legal, make_deal, names, play_out, random_play

import five_hundred_env
from five_hundred_env import ActionTable, Deal, Game, IllegalActionError, action_to_str, make_rules, parse_action
from five_hundred_env.actions import FIRST_PARTNER, card_action, partner_action
from five_hundred_env.cards import DECKS, PLAIN_ORDER, card_suit, card_to_str, kernel_card_ids, mask_to_cards, parse_card
from five_hundred_env.engine import EFFECTIVE_SUIT, WIN_KEY, Phase
from five_hundred_env.records import record_of, replay
from five_hundred_env.scoring import deal_score

NEW = ("two_handed", "five_handed", "six_handed")


def cards_of(text: str) -> set[int]:
    return {parse_card(c) for c in text.split()}


# -- §10.1 notation ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("preset", "n"), [("two_handed", 2), ("five_handed", 5), ("six_handed", 6)])
def test_seats_are_0_to_n_minus_1(preset, n):
    """§10.1 "Seats are 0 … n-1 clockwise as in section 1, with n = 2, 5 or 6." """
    rules = make_rules(preset)
    assert rules.num_players == n
    assert five_hundred_env.env(rules=preset).possible_agents == [f"player_{i}" for i in range(n)]
    deal = Deal.new(rules, random.Random(1), dealer=n - 1)
    assert deal.to_act == 0  # the dealer's left is (dealer + 1) % n


def test_sides():
    """§10.1 "two_handed: each player alone (side = seat). five_handed: each player is a side (side =
    seat; scores are kept per player) … six_handed: seats {0, 2, 4} are team 0 and {1, 3, 5} team 1
    (side = seat mod 2), so partners alternate round the table and each player has an opponent on
    either side." """
    two, five, six = (make_rules(p) for p in NEW)
    assert [two.side_of(s) for s in range(2)] == [0, 1] and two.num_sides == 2 and not two.has_partners
    assert [five.side_of(s) for s in range(5)] == [0, 1, 2, 3, 4] and not five.has_partners
    assert len(Game(five, seed=1).scores) == 5
    assert [six.side_of(s) for s in range(6)] == [0, 1, 0, 1, 0, 1] and six.has_partners
    assert six.seats_of(0) == (0, 2, 4) and six.seats_of(1) == (1, 3, 5)
    assert six.partners_of(1) == (3, 5)
    for seat in range(6):  # an opponent on either side
        assert six.side_of((seat + 1) % 6) != six.side_of(seat) != six.side_of((seat - 1) % 6)


@pytest.mark.parametrize("preset", list(DECKS))
def test_every_pack_fits_the_kernels_64_bit_masks(preset):
    """§10.1: the packs use up to 66 card ids, but each has at most 63 cards: each card gets its own bit
    below 64, its own id wherever that id is below 64."""
    bits = kernel_card_ids(DECKS[preset])
    in_pack = [c for c in range(len(bits)) if DECKS[preset] >> c & 1]
    assert sorted(bits[c] for c in in_pack) == sorted(set(bits[c] for c in in_pack))
    assert all(0 <= bits[c] < 64 for c in in_pack)
    assert all(bits[c] == c for c in in_pack if c < 64)
    assert all(bits[c] == -1 for c in range(len(bits)) if c not in in_pack)


def test_rank_order_and_new_rank_letters():
    """§10.1 "Ranks. Low to high, all ranks any pack may have: 2 3 4 5 6 7 8 9 T E W X J Q K A. E, W,
    X are the 11, 12 and 13 … Cards are still rank then lower-case suit: 2s, 3h, Ec (11♣), Wd
    (12♦), Xh (13♥)." """
    assert PLAIN_ORDER == "23456789TEWXJQKA"
    for text in ("2s", "3h", "Ec", "Wd", "Xh"):
        assert card_to_str(parse_card(text)) == text
    nt = WIN_KEY[4]  # no trumps: the plain order, a suit led
    hearts = [parse_card(r + "h") for r in PLAIN_ORDER]
    assert [nt[3][c] for c in hearts] == sorted(nt[3][c] for c in hearts)


@pytest.mark.parametrize(("text", "canonical"), [("11h", "Eh"), ("13D", "Xd"), ("12s", "Ws"), ("10h", "Th"),
                                                 ("eh", "Eh"), ("wC", "Wc"), ("2S", "2s")])
def test_two_digit_ranks_are_accepted_and_printed_in_one_letter(text, canonical):
    """§10.1 "The parser also accepts 11, 12, 13 for E, W, X, as it accepts 10 for T (11h → Eh,
    13D → Xd); it prints the one-letter form." """
    assert card_to_str(parse_card(text)) == canonical


def test_no_clash_with_bids():
    """§10.1 "Trick bids have 6 to 10 tricks, so 11H, 12S, 13D spell no bid and are read as cards;
    10H stays the bid and 10h, Th the card (section 1 unchanged)." """
    six = make_rules("six_handed")
    assert parse_action("11H", six) == card_action(parse_card("Eh"))
    assert parse_action("12S", six) == card_action(parse_card("Ws"))
    assert parse_action("13D", six) == card_action(parse_card("Xd"))
    assert action_to_str(parse_action("10H", six), six) == "10H"
    assert parse_action("10h", six) == parse_action("Th", six) == card_action(parse_card("Th"))


@pytest.mark.parametrize("preset", NEW)
def test_every_action_is_spelled_differently(preset):
    """§10.1 "… so every card keeps one spelling and every action stays spelled differently from
    every other." """
    rules = make_rules(preset)
    table = ActionTable(rules)
    spelled = [table.to_str(a) for a in range(len(table))]
    assert len(set(spelled)) == len(spelled)
    assert [table.from_str(s) for s in spelled] == list(range(len(table)))


def test_partner_actions_are_upper_case_and_exact():
    """§10.1 "PARTNER_0 … PARTNER_4: the contractor names that seat as partner (five_handed,
    partner_call=seat). Upper case, exact, like PASS." """
    five = make_rules("five_handed", partner_call="seat")
    assert [parse_action(f"PARTNER_{s}", five) for s in range(5)] == list(range(107, 112))
    for bad in ("partner_2", "Partner_2", "PARTNER_5", "PARTNER2"):
        with pytest.raises(ValueError):
            parse_action(bad, five)
    with pytest.raises(ValueError, match="six_handed"):
        parse_action("PARTNER_1", make_rules("six_handed"))


def test_universal_action_ids():
    """§10.1 "87–106 the new cards: 87 + 5·suit + k … (so 2s = 87, Wd = 100, Xh = 106); ids 91 (Xs)
    and 96 (Xc) are reserved: no pack holds them | 107–112 PARTNER_0 … PARTNER_5" """
    six = make_rules("six_handed")
    for text, uid in (("2s", 87), ("3s", 88), ("Es", 89), ("Ws", 90), ("2c", 92), ("Wd", 100), ("Xh", 106)):
        assert parse_action(text, six) == uid and action_to_str(uid, six) == text
    assert card_to_str(91 - 41) == "Xs" and card_to_str(96 - 41) == "Xc"
    assert not any(deck >> (91 - 41) & 1 or deck >> (96 - 41) & 1 for deck in DECKS.values())
    assert partner_action(0) == FIRST_PARTNER == 107 and partner_action(5) == 112
    assert action_to_str(112, make_rules("five_handed")) == "PARTNER_5"
    # ids 0-86 keep their meaning
    assert action_to_str(28, six) == "4s" and action_to_str(72, six) == "JK" and action_to_str(86, six) == "NO_NOMINATION"


@pytest.mark.parametrize("partner_call", ["card", "seat", "none"])
def test_compact_action_spaces(partner_call):
    """§10.1 "Compact action spaces …: two_handed 70 (as italian_3p), five_handed 95 (53 cards, 4
    joker leads, 5 nomination decisions, PARTNER_0–PARTNER_4 whatever partner_call says, masked
    when unused), six_handed 100." """
    assert len(ActionTable(make_rules("two_handed"))) == len(ActionTable(make_rules("italian_3p"))) == 70
    assert len(ActionTable(make_rules("six_handed"))) == 100
    table = ActionTable(make_rules("five_handed", partner_call=partner_call))
    assert len(table) == 95 and [table.to_str(a) for a in range(90, 95)] == [f"PARTNER_{s}" for s in range(5)]


def test_a_called_card_uses_the_cards_id():
    """§10.1 "A card name during the call phase (five_handed, partner_call=card) calls that card …
    it is the card's own spelling; the phase says what it does." """
    d = make_deal("five_handed", {0: "Ah Kh Qh Jh Th 9h 8h 7h 6h 5h"}, dealer=4)
    act(d, "7H PASS PASS PASS PASS")
    discard_kitty(d)
    assert d.phase == Phase.CALL and parse_action("As", d.rules) in d.legal_actions()
    act(d, "As")
    assert d.called_card == parse_card("As")


# -- §10.2 the presets --------------------------------------------------------------------------------
def test_the_packs():
    """§10.2 deck: "33: 7–A in each suit, one joker (the italian_3p pack) | 53: 2–A in each suit, one
    joker | 63: 2–A in each suit, E (11) and W (12) in each suit, X (13) in ♥ and ♦ only, one joker";
    cards per suit "8 | 13 | ♠ ♣ 15, ♦ ♥ 16". """
    two, five, six = (make_rules(p) for p in NEW)
    assert two.deck == make_rules("italian_3p").deck and two.deck.bit_count() == 33
    assert five.deck.bit_count() == 53 and six.deck.bit_count() == 63

    def per_suit(rules):
        return [sum(1 for c in mask_to_cards(rules.deck) if card_suit(c) == s) for s in range(4)]

    assert per_suit(two) == [8] * 4 and per_suit(five) == [13] * 4 and per_suit(six) == [15, 15, 16, 16]
    assert {card_to_str(c)[0] for c in mask_to_cards(five.deck)} == set("23456789TJQKA") | {"J"}
    assert {card_to_str(c) for c in mask_to_cards(six.deck) if card_to_str(c)[0] == "X"} == {"Xd", "Xh"}
    for rules in (two, five, six):
        assert rules.num_jokers == 1 and rules.hand_size == 10 and rules.kitty_size == 3
    assert two.dead_hand_size == 10 and five.dead_hand_size == six.dead_hand_size == 0


AU_OPTIONS = dict(bidding="until_passed", misere="after_seven", open_misere="between_10D_10H",
                  open_misere_exposure="after_first_trick", joker_nomination="nt_and_misere",
                  joker_lead_suit="not_yet_led", defence_tricks="10_per_trick", misere_defence="nothing",
                  slam_bonus=True, win_needs_contract=True)
COMMON = dict(rebid_after_pass=False, misere_value=250, both_jokers_min_bid=None, target=500, losing_score=-500)


def test_the_options_of_each_preset():
    """§10.2 "So two_handed sets bidding=single_round, misere=any_time, open_misere=highest,
    open_misere_exposure=before_first_lead, joker_nomination=none, joker_lead_suit=not_shown_void,
    defence_tricks=10_per_trick, misere_defence=10_per_declarer_trick, slam_bonus=false,
    win_needs_contract=true; five_handed and six_handed set [the australian options] … In all three
    rebid_after_pass=false, misere_value=250, both_jokers_min_bid off, target=500, losing_score=-500." """
    it = dict(bidding="single_round", misere="any_time", open_misere="highest", open_misere_exposure="before_first_lead",
              joker_nomination="none", joker_lead_suit="not_shown_void", defence_tricks="10_per_trick",
              misere_defence="10_per_declarer_trick", slam_bonus=False, win_needs_contract=True)
    for preset, expected in (("two_handed", it), ("five_handed", AU_OPTIONS), ("six_handed", AU_OPTIONS)):
        rules = make_rules(preset)
        for name, value in {**expected, **COMMON}.items():
            assert getattr(rules, name) == value, (preset, name)


def test_partner_call_option():
    """§10.2 "New option partner_call: card, seat, none. five_handed sets card; every other preset has
    none. A value other than none needs five players: any other preset refuses it with an error
    naming partner_call … none with five players: no partner, the contractor plays alone against
    four." """
    assert make_rules("five_handed").partner_call == "card"
    for preset in ("australian", "italian_3p", "french_46", "two_handed", "six_handed"):
        assert make_rules(preset).partner_call == "none"
        for value in ("card", "seat"):
            with pytest.raises(ValueError, match="partner_call"):
                make_rules(preset, partner_call=value)
    with pytest.raises(ValueError, match="partner_call"):
        make_rules("five_handed", partner_call="team")
    d = make_deal("five_handed", {}, dealer=4, partner_call="none")
    act(d, "6S PASS PASS PASS PASS")
    discard_kitty(d)
    assert d.phase in (Phase.PLAY, Phase.NOMINATE) and d.partner == -1


def test_options_can_be_changed_but_the_table_is_fixed():
    """§10.2 "the players, the deck, the hand, dead-hand and kitty sizes and the teams are fixed by
    the preset; every option can be changed (make_rules("six_handed", slam_bonus=False),
    make_rules("five_handed", partner_call="seat", bidding="single_round")). both_jokers_min_bid
    stays refused (one joker in all three packs)." """
    assert not make_rules("six_handed", slam_bonus=False).slam_bonus
    r = make_rules("five_handed", partner_call="seat", bidding="single_round")
    assert (r.partner_call, r.bidding) == ("seat", "single_round")
    for preset in NEW:
        with pytest.raises(ValueError, match="both_jokers_min_bid"):
            make_rules(preset, both_jokers_min_bid=8)
        with pytest.raises(ValueError, match="num_players"):
            make_rules(preset, num_players=4)
        with pytest.raises(ValueError, match="kitty_size"):
            make_rules(preset, kitty_size=6)


# -- §10.3 the deal -----------------------------------------------------------------------------------
@pytest.mark.parametrize("preset", NEW)
def test_dealer_rotation_and_the_deal(preset):
    """§10.3 "Dealer and rotation as section 3 (the first dealer drawn at random; the deal passes to
    the left after every deal, played or thrown in). Each player gets 10 cards and the kitty 3, face
    down, in all three presets." """
    rules = make_rules(preset)
    game = Game(rules, seed=5, max_deals=12)
    random_play(game, random.Random(2))
    dealers = [d.dealer for d in game.deals]
    assert all(b == (a + 1) % rules.num_players for a, b in itertools.pairwise(dealers))
    for d in game.deals:
        assert [h.bit_count() for h in d.dealt] == [10] * rules.num_players and d.kitty.bit_count() == 3
    firsts = {Game(rules, seed=s).deal.dealer for s in range(40)}
    assert len(firsts) == rules.num_players  # drawn at random


def test_the_dead_hand_takes_no_part():
    """§10.3 "two_handed: the remaining 10 cards form the dead hand … It belongs to nobody, nobody
    ever sees it, and it takes no part in the deal: its cards are neither picked up, played nor
    scored." """
    rules = make_rules("two_handed")
    for seed in range(20):
        d = Deal.new(rules, random.Random(seed), seed % 2)
        dead = d.dead_hand
        assert dead.bit_count() == 10 and not dead & (d.dealt[0] | d.dealt[1] | d.kitty)
        random_play(d, random.Random(seed))
        assert not any(p & dead for p in d.played) and not d.discards & dead
        assert not (d.hands[0] | d.hands[1]) & dead
        assert d.thrown_in or (sum(d.tricks_won) == 10 and all(len(t[2]) == 2 for t in d.tricks))


def test_an_explicit_two_handed_deal_implies_the_dead_hand():
    """§10.3 "in two_handed the dead hand is then the 10 cards of the pack in no hand and not in the
    kitty (it is not given separately; an explicit deal with wrong counts, repeated cards or foreign
    cards is refused)." """
    rules = make_rules("two_handed")
    hands = [["7s", "8s", "9s", "Ts", "Js", "Qs", "Ks", "As", "7c", "8c"],
             ["9c", "Tc", "Jc", "Qc", "Kc", "Ac", "7d", "8d", "9d", "Td"]]
    kitty = ["Jd", "Qd", "Kd"]
    d = Deal.from_cards(rules, hands, kitty, dealer=0)
    assert names(d, d.dead_hand) == {"Ad", "7h", "8h", "9h", "Th", "Jh", "Qh", "Kh", "Ah", "JK"}
    with pytest.raises(ValueError, match="10 cards"):
        Deal.from_cards(rules, [hands[0][:9], hands[1]], kitty, 0)
    with pytest.raises(ValueError, match="twice"):
        Deal.from_cards(rules, [hands[0], [*hands[1][:9], "7s"]], kitty, 0)
    with pytest.raises(ValueError, match="not in the two_handed deck"):
        Deal.from_cards(rules, [hands[0], [*hands[1][:9], "6h"]], kitty, 0)
    with pytest.raises(ValueError, match="hands must be a list of 2"):
        Deal.from_cards(rules, [hands[0], hands[1], hands[1]], kitty, 0)
    env = five_hundred_env.env(rules="two_handed")
    env.reset(options={"dealer": 0, "hands": hands, "kitty": kitty})
    assert env.unwrapped.deal.dead_hand == d.dead_hand


# -- §10.4 bidding, the kitty, card order and play -------------------------------------------------------
@pytest.mark.parametrize("preset", ["five_handed", "six_handed"])
def test_until_passed_ends_when_the_other_n_minus_1_passed(preset):
    """§10.4 "with n players, until_passed ends when there is a bid and the other n−1 players have
    passed" """
    rules = make_rules(preset)
    n = rules.num_players
    d = make_deal(rules, {}, dealer=n - 1)
    act(d, ["6S"] + ["PASS"] * (n - 2))
    assert d.phase == Phase.BIDDING
    act(d, "PASS")
    assert d.phase == Phase.DISCARD and d.contractor == 0


def test_single_round_with_two_players():
    """§10.4 "single_round gives each player, from the dealer's left to the dealer, one turn (with two
    players: the non-dealer, then the dealer)." All pass: thrown in."""
    d = make_deal("two_handed", {}, dealer=1)
    assert d.to_act == 0
    act(d, "6S")
    assert d.to_act == 1
    act(d, "PASS")
    assert d.phase == Phase.DISCARD and d.contractor == 0
    d = make_deal("two_handed", {}, dealer=0)
    act(d, "PASS PASS")
    assert d.thrown_in and d.score_change == [0, 0]


@pytest.mark.parametrize("preset", NEW)
def test_the_kitty_is_three_cards_discarded_one_per_action(preset):
    """§10.4 "The kitty (section 5): 3 cards in every new preset; the contractor takes them and
    discards 3, one per action." """
    rules = make_rules(preset)
    d = make_deal(rules, {}, dealer=rules.num_players - 1)
    act(d, ["7S"] + ["PASS"] * (rules.num_players - 1))
    assert d.phase == Phase.DISCARD and len(hand(d, 0)) == 13
    for left in (3, 2, 1):
        assert d.phase == Phase.DISCARD and d.discards.bit_count() == 3 - left
        d.apply_action(d.legal_actions()[0])
    assert d.phase != Phase.DISCARD and len(hand(d, 0)) == 10


def _order(ctx: int, led: int, cards: str) -> list[str]:
    keys = WIN_KEY[ctx][led]
    return [card_to_str(c) for c in sorted(cards_of(cards), key=lambda c: -keys[c])]


def test_trump_order_with_the_extended_ranks():
    """§10.4 "Example, six_handed, hearts trumps (18 cards): JK Jh Jd Ah Kh Qh Xh Wh Eh Th 9h 8h 7h
    6h 5h 4h 3h 2h; diamonds lose their jack (Ad Kd Qd Xd Wd Ed Td … 2d)." """
    six = make_rules("six_handed")
    trumps = [c for c in mask_to_cards(six.deck) if EFFECTIVE_SUIT[3][c] == 3]  # hearts trumps
    assert len(trumps) == 18
    expected = "JK Jh Jd Ah Kh Qh Xh Wh Eh Th 9h 8h 7h 6h 5h 4h 3h 2h"
    assert _order(3, 3, " ".join(card_to_str(c) for c in trumps)) == expected.split()
    assert _order(3, 2, "2d 3d 4d 5d 6d 7d 8d 9d Td Ed Wd Xd Qd Kd Ad") == \
        "Ad Kd Qd Xd Wd Ed Td 9d 8d 7d 6d 5d 4d 3d 2d".split()


def test_plain_order_in_no_trumps():
    """§10.4 "every other suit, and every suit in no trumps and misère: A K Q J X W E T 9 … 2" """
    assert _order(4, 3, "2h 3h 4h 5h 6h 7h 8h 9h Th Eh Wh Xh Jh Qh Kh Ah") == \
        "Ah Kh Qh Jh Xh Wh Eh Th 9h 8h 7h 6h 5h 4h 3h 2h".split()
    # spades trumps, clubs led: the jack of clubs is the left bower (a trump), the rest plain
    assert _order(0, 1, "2c Ec Wc Tc Jc Ac") == "Jc Ac Wc Ec Tc 2c".split()
    assert _order(2, 1, "2c Ec Wc Tc Jc Ac") == "Ac Jc Wc Ec Tc 2c".split()  # diamonds trumps: plain clubs
    assert _order(0, 0, "Jc Js Ws As") == "Js Jc As Ws".split()


@pytest.mark.parametrize("preset", NEW)
def test_tricks_have_one_card_from_every_player(preset):
    """§10.4 "Play (section 7): tricks have one card from every player who plays. The contractor leads
    to the first trick, after the discards, the call (10.5) and any nomination." """
    rules = make_rules(preset)
    n = rules.num_players
    d = make_deal(rules, {}, dealer=n - 1)
    act(d, ["7NT"] + ["PASS"] * (n - 1))
    while d.phase != Phase.PLAY:
        d.apply_action(d.legal_actions()[0])
    assert d.to_act == d.leader == 0
    random_play(d, random.Random(3))
    assert all(len(t[2]) == n for t in d.tricks) and len(d.tricks) == 10


@pytest.mark.parametrize(("preset", "size", "out"), [("two_handed", 2, ()), ("five_handed", 5, ()),
                                                     ("six_handed", 4, (2, 4))])
def test_misere_partners_sit_out(preset, size, out):
    """§10.4 "Misère (section 7): the contractor plays alone, and all of the contractor's partners sit
    out: none in two_handed (two-card tricks), none in five_handed (no partner is called: the
    contractor against the other four, five-card tricks), the two team-mates in six_handed (the
    contractor against three, four-card tricks). The turn skips the seats that sit out." """
    rules = make_rules(preset)
    n = rules.num_players
    d = make_deal(rules, {}, dealer=n - 1)
    act(d, ["7S", "MISERE"] + ["PASS"] * (n - 2) + (["PASS"] if rules.bidding == "until_passed" else []))
    assert d.contract == parse_action("MISERE", rules) and d.contractor == 1 and d.sitting_out_seats == tuple(
        (1 + s) % n for s in out)
    discard_kitty(d)
    if d.phase == Phase.NOMINATE:
        act(d, "NO_NOMINATION")
    assert d.phase == Phase.PLAY and d.partner == -1 and d.called_card == -1  # no call in misère
    seen = set()
    while not d.is_over:
        seen.add(d.to_act)
        d.apply_action(d.legal_actions()[0])
    assert all(len(t[2]) == size for t in d.tricks)
    assert seen == set(range(n)) - set(d.sitting_out_seats)
    assert all(d.played[s] == 0 for s in d.sitting_out_seats)


def test_the_joker_in_the_dead_hand():
    """§10.4 "in two_handed the joker may lie in the dead hand, and then no one holds it (no
    nomination, no joker lead)." """
    d = make_deal("two_handed", {0: "7s 8s 9s Ts Js Qs Ks As 7c 8c", 1: "9c Tc Jc Qc Kc Ac 7d 8d 9d Td"},
                  "Jd Qd Kd", dealer=1, joker_nomination="nt_and_misere")
    assert d.dead_hand >> parse_card("JK") & 1
    act(d, "6NT PASS")
    discard_kitty(d)
    assert d.phase == Phase.PLAY  # no nomination: the contractor holds no joker
    while not d.is_over:
        assert not any(":" in a for a in legal(d))
        d.apply_action(d.legal_actions()[0])


# -- §10.5 calling a partner -----------------------------------------------------------------------------
FIVE_TOP = {0: "JK Jh Jd Ah Kh Qh Th 9h 8h 7h"}


def _called(preset_options: dict, auction: str, call: str | None = None, **hands) -> Deal:
    d = make_deal("five_handed", hands or {0: "2s 3s 4s 5s 6s 2c 3c 4c 5c 6c"}, dealer=4, **preset_options)
    act(d, auction)
    discard_kitty(d)
    if call is not None:
        act(d, call)
    return d


def test_the_call_comes_after_the_discards_and_before_the_nomination():
    """§10.5 "When. Only in a trick contract (6S … 10NT), right after the contractor's last discard and
    before the joker-nomination decision (if any) and the first lead … It is one decision of the
    contractor." """
    d = make_deal("five_handed", {0: "JK As Ks Qs Ac Kc Qc Ad Kd Qd"}, dealer=4)
    act(d, "7NT PASS PASS PASS PASS")
    phases = []
    while d.phase != Phase.PLAY:
        phases.append((d.phase, d.to_act))
        d.apply_action(d.legal_actions()[-1] if d.phase == Phase.NOMINATE else d.legal_actions()[0])
    assert [p for p, _ in phases] == [Phase.DISCARD] * 3 + [Phase.CALL, Phase.NOMINATE]
    assert {s for _, s in phases} == {0} and d.to_act == 0


@pytest.mark.parametrize("contract", ["MISERE", "OPEN_MISERE"])
def test_no_call_in_misere(contract):
    """§10.5 "In misère and open misère there is no call." """
    d = make_deal("five_handed", {}, dealer=4)
    act(d, ("7S MISERE" if contract == "MISERE" else "OPEN_MISERE") + " PASS PASS PASS PASS")
    discard_kitty(d)
    assert d.phase in (Phase.PLAY, Phase.NOMINATE)


def test_the_cards_that_may_be_called():
    """§10.5 "Legal: every card of the pack except the joker and except the cards in the contractor's
    hand at that moment; the contractor's own discards are legal." """
    d = _called({}, "7S PASS PASS PASS PASS")
    assert d.phase == Phase.CALL
    own = hand(d, 0)
    everything = {card_to_str(c) for c in mask_to_cards(d.rules.deck)}
    assert legal(d) == everything - own - {"JK"}
    assert names(d, d.discards) <= legal(d)


def test_the_holder_of_the_called_card_is_the_partner():
    """§10.5 "The partner is the player holding the called card at the moment of the call." """
    d = _called({}, "7S PASS PASS PASS PASS", "As")
    holder = next(s for s in range(5) if "As" in hand(d, s))
    assert d.partner == holder != 0 and d.contracting_seats() == tuple(sorted((0, holder)))


def test_calling_a_discard_means_playing_alone():
    """§10.5 "If the called card is one of the discards, there is no partner: the contractor plays
    alone (nobody else knows this until the deal is scored)." """
    d = make_deal("five_handed", {0: "2s 3s 4s 5s 6s 2c 3c 4c 5c 6c"}, "As Ks Qs", dealer=4)
    act(d, "7S PASS PASS PASS PASS As Ks Qs As")
    assert d.partner == -1 and d.called_card == parse_card("As") and d.contracting_seats() == (0,)
    play_out(d)
    assert d.score_change[0] == -140 and not d.contract_made()


def test_seat_call():
    """§10.5 "partner_call=seat: the contractor names a seat, PARTNER_s, any seat but their own. That
    player is the partner." """
    d = _called({"partner_call": "seat"}, "7S PASS PASS PASS PASS")
    assert legal(d) == {"PARTNER_1", "PARTNER_2", "PARTNER_3", "PARTNER_4"}
    with pytest.raises(IllegalActionError):
        act(d, "PARTNER_0")
    act(d, "PARTNER_3")
    assert d.partner == 3 and d.partner_revealed


def test_no_call_with_none():
    """§10.5 "partner_call=none: no call; the contractor always plays alone." """
    d = _called({"partner_call": "none"}, "7S PASS PASS PASS PASS")
    assert d.phase == Phase.PLAY and d.partner == -1 and d.contracting_seats() == (0,)


def test_the_partner_plays_their_own_hand_in_turn():
    """§10.5 "The partner plays their own hand in their own turn; nothing else changes in the play (no
    seat sits out, nobody passes cards)." """
    d = _called({}, "7S PASS PASS PASS PASS", "As")
    dealt = [h for h in d.hands]
    order = []
    while not d.is_over:
        order.append(d.to_act)
        d.apply_action(d.legal_actions()[0])
    assert all(len(t[2]) == 5 for t in d.tricks) and d.sitting_out_seats == ()
    assert all(d.played[s] == dealt[s] for s in range(5))
    assert order[:5] == [0, 1, 2, 3, 4]


def _obs(env, agent):
    u = env.unwrapped
    return u.encoder.decode(u.observe(agent)["observation"])


def test_who_knows_the_partner_card_call():
    """§10.5 "Who knows what. The call itself (the card named, or the seat) is announced to every
    player. With card, the holder knows from their own hand that they are the partner; the other
    players learn who the partner is when the called card is played to a trick (it is then public who
    played it)." §10.8 "The partner's identity is public … with card from the moment the called card
    is played; until then only the holder knows." """
    d = make_deal("five_handed", {0: "2s 3s 4s 5s 6s 2c 3c 4c 5c 6c", 3: "As 7h 8h 9h Th 2h 3h 4h 5h 6h"}, dealer=4)
    env = five_hundred_env.env(rules="five_handed")
    env.reset(options={"dealer": 4, "hands": [sorted(hand(d, s)) for s in range(5)], "kitty": sorted(names(d, d.kitty))})
    deal = env.unwrapped.deal
    for text in "7S PASS PASS PASS PASS".split() + [card_name(deal, c) for c in mask_to_cards(deal.kitty)] + ["As"]:
        env.step(env.unwrapped.str_to_action(text))
    assert deal.partner == 3
    for agent in env.possible_agents:  # the call is public
        assert np.flatnonzero(_obs(env, agent)["called"]).tolist() == [parse_card("As")]
    assert _obs(env, "player_3")["partner"].tolist() == [1, 0, 0, 0, 0]  # the holder knows (relative seat 0)
    for agent in ("player_0", "player_1", "player_2", "player_4"):
        assert not _obs(env, agent)["partner"].any()
    while not deal.played[3] >> parse_card("As") & 1:
        mask = env.unwrapped.observe(env.agent_selection)["action_mask"]
        before = [_obs(env, a)["partner"].any() for a in ("player_0", "player_1")]
        assert before == [False, False]
        env.step(int(np.flatnonzero(mask)[0]))
    for seat, agent in enumerate(env.possible_agents):  # now public, relative to each observer
        assert np.flatnonzero(_obs(env, agent)["partner"]).tolist() == [(3 - seat) % 5]


def test_who_knows_the_partner_seat_call():
    """§10.5 "With seat, everyone knows the partner from the call." """
    env = five_hundred_env.env(rules="five_handed", partner_call="seat")
    env.reset(seed=4, options={"dealer": 4})
    deal = env.unwrapped.deal
    for text in ["7S", "PASS", "PASS", "PASS", "PASS"]:
        env.step(env.unwrapped.str_to_action(text))
    while deal.phase == Phase.DISCARD:
        env.step(int(np.flatnonzero(env.unwrapped.observe("player_0")["action_mask"])[0]))
    env.step(env.unwrapped.str_to_action("PARTNER_2"))
    for seat, agent in enumerate(env.possible_agents):
        assert np.flatnonzero(_obs(env, agent)["partner"]).tolist() == [(2 - seat) % 5]
        assert np.flatnonzero(_obs(env, agent)["seat"]).tolist() == [seat]


def test_the_called_partners_identity_does_not_leak():
    """§10.8 "until then only the holder knows": moving the called card from one opponent's hand to
    another's changes nothing a third player (or the contractor) observes before it is played."""
    base = {0: "2s 3s 4s 5s 6s 2c 3c 4c 5c 6c", 2: "As 7h 8h 9h Th 2h 3h 4h 5h 6h",
            3: "Ks Jh Qh Kh Ah 7d 8d 9d Td 2d"}
    moved = {0: base[0], 2: "Ks" + base[2][2:], 3: "As" + base[3][2:]}
    views = []
    for given in (base, moved):
        d = make_deal("five_handed", given, dealer=4)
        env = five_hundred_env.env(rules="five_handed")
        env.reset(options={"dealer": 4, "hands": [sorted(hand(d, s)) for s in range(5)],
                           "kitty": sorted(names(d, d.kitty))})
        deal = env.unwrapped.deal
        for text in "7S PASS PASS PASS PASS".split() + [card_name(deal, c) for c in mask_to_cards(deal.kitty)] + ["As"]:
            env.step(env.unwrapped.str_to_action(text))
        views.append({a: env.unwrapped.observe(a)["observation"].copy() for a in ("player_0", "player_1", "player_4")})
        assert deal.partner == (2 if given is base else 3)
    for agent in views[0]:
        np.testing.assert_array_equal(views[0][agent], views[1][agent])


# -- §10.6 scoring -----------------------------------------------------------------------------------------
def test_the_scoring_examples():
    """§10.6 "Examples. five_handed, seat 0 contracts 7H (200), seat 3 is the partner; tricks [4, 1, 0,
    3, 2]: seats 0 and 3 +200 each, seat 1 +10, seat 2 0, seat 4 +20. Same tricks with 8NT (320):
    seats 0 and 3 −320 each, seat 1 +10, seat 4 +20. six_handed, seat 2 contracts 7H, tricks by seat
    [2, 1, 3, 1, 3, 0]: team 0 (seats 0, 2, 4: 8 tricks) +200, team 1 +20. two_handed, seat 1 bids
    MISERE and takes 2 tricks: seat 1 −250, seat 0 +20." """
    five, six, two = make_rules("five_handed"), make_rules("six_handed"), make_rules("two_handed")
    seven_h, eight_nt = parse_action("7H", five), parse_action("8NT", five)
    assert deal_score(five, seven_h, 0, [4, 1, 0, 3, 2], partner=3) == [200, 10, 0, 200, 20]
    assert deal_score(five, eight_nt, 0, [4, 1, 0, 3, 2], partner=3) == [-320, 10, 0, -320, 20]
    assert deal_score(six, seven_h, 2, [2, 1, 3, 1, 3, 0]) == [200, 20]
    assert deal_score(two, parse_action("MISERE", two), 1, [8, 2]) == [20, -250]


def test_the_contracting_team_makes_it_together_and_each_scores_it():
    """§10.6 "Trick contracts: made when the contracting team's tricks together reach the bid. Made:
    each side of the contracting team scores the bid value (in five_handed the contractor and the
    partner each score it, with the slam_bonus 250 if the team took all 10 tricks); lost: each loses
    it. Each other side scores 10 per trick it took itself" """
    five = make_rules("five_handed")
    six_s = parse_action("6S", five)
    assert deal_score(five, six_s, 1, [0, 4, 2, 0, 4], partner=4) == [0, 40, 20, 0, 40]  # 4 + 4 = 8 >= 6
    assert deal_score(five, six_s, 1, [0, 6, 0, 0, 4], partner=4) == [0, 250, 0, 0, 250]  # all ten: the slam
    assert deal_score(five, six_s, 1, [3, 3, 2, 0, 2], partner=4) == [30, -40, 20, 0, -40]  # 5 < 6
    assert deal_score(five, six_s, 1, [3, 6, 1, 0, 0]) == [30, 40, 10, 0, 0]  # alone
    # end to end: the contractor holds the ten top trumps, so the team takes all ten tricks
    d = make_deal("five_handed", FIVE_TOP, dealer=4)
    act(d, "6H PASS PASS PASS PASS")
    discard_kitty(d, "As")
    partner = d.partner
    play_out(d)
    assert d.score_change[0] == d.score_change[partner] == 250
    assert all(d.score_change[s] == 0 for s in range(5) if s not in (0, partner))


def test_misere_scores_as_section_8():
    """§10.6 "Misère: as section 8 (the contractor's side ± misere_value / ± 500; misere_defence:
    nothing, or each opposing side 10 per trick the contractor took)." """
    five, six = make_rules("five_handed"), make_rules("six_handed")
    m = parse_action("MISERE", five)
    assert deal_score(five, m, 2, [3, 3, 0, 2, 2]) == [0, 0, 250, 0, 0]
    assert deal_score(five, m, 2, [3, 3, 1, 2, 1]) == [0, 0, -250, 0, 0]
    assert deal_score(make_rules(five, misere_defence="10_per_declarer_trick"), m, 2, [3, 3, 1, 2, 1]) == [10, 10, -250, 10, 10]
    assert deal_score(six, m, 1, [3, 0, 3, 0, 4, 0]) == [0, 250]


# -- §10.7 winning the game ----------------------------------------------------------------------------------
def _slam_game(scores, **options) -> Game:
    """five_handed: seat 0 holds the ten top trumps, bids 6H and calls As; the team takes every trick
    (250 each with the slam bonus)."""
    rules = make_rules("five_handed", **options)
    d = make_deal(rules, FIVE_TOP, dealer=4)
    game = Game(rules, first_deal=d, scores=scores)
    for text in ["6H", "PASS", "PASS", "PASS", "PASS"] + [card_name(d, c) for c in mask_to_cards(d.kitty)] + ["As"]:
        game.apply_action(parse_action(text, rules))
    return game


def _finish(game: Game) -> None:
    deal = game.deal
    while game.deal is deal and not game.is_over:
        game.apply_action(game.legal_actions()[0])


def test_the_partner_of_a_made_contract_wins_too():
    """§10.7 "In five_handed the partner of a made contract has made it too: after a made contract, the
    contractor and the partner each win if at or above the target (both, if both are)." """
    game = _slam_game([300, 0, 0, 0, 0])
    partner = game.deal.partner
    _finish(game)
    assert game.winners == [0]
    scores = [300, 0, 0, 0, 0]
    scores[partner] = 260
    game = _slam_game(scores)
    _finish(game)
    assert game.winners == [0, partner] and game.winning_seats() == [0, partner]
    scores = [100, 0, 0, 0, 0]
    scores[partner] = 300
    game = _slam_game(scores)
    _finish(game)
    assert game.winners == [partner]


def test_without_a_contract_needed_the_contracting_team_wins_ties():
    """§10.7 "With win_needs_contract=false, "the contractor's side wins if it is among them" reads
    "the contracting team's players among them win"." """
    game = _slam_game([300, 0, 0, 0, 0], win_needs_contract=False)
    partner = game.deal.partner
    scores = [300, 0, 0, 0, 0]
    scores[partner] = 400
    game = _slam_game(scores, win_needs_contract=False)
    _finish(game)
    assert game.scores[0] == 550 and game.scores[partner] == 650
    assert game.winners == [0, partner]  # both reached the target: the contracting team's players, not the highest


def _sinking_game(preset: str, scores, **options) -> Game:
    """Seat 0 bids 10S with the lowest cards and loses 440 (no partner is called)."""
    rules = make_rules(preset, **options)
    low = {"two_handed": "7s 8s 9s Ts 7c 8c 9c 7d 8d 9d", "five_handed": "2s 3s 4s 5s 2c 3c 4c 2d 3d 4d",
           "six_handed": "2s 3s 4s 5s 2c 3c 4c 2d 3d 4d"}[preset]
    d = make_deal(rules, {0: low}, dealer=rules.num_players - 1)
    game = Game(rules, first_deal=d, scores=scores)
    auction = ["10S"] + ["PASS"] * (rules.num_players - 1)
    for text in auction + [card_name(d, c) for c in mask_to_cards(d.kitty)]:
        game.apply_action(parse_action(text, rules))
    return game


def test_sinking_to_minus_500():
    """§10.7 "A side at −500 or below loses and the game ends, whatever the others' scores: with two
    teams (six_handed) the other team wins; otherwise (two and five players) the player with the
    highest score among the others wins, players tied for it all win ([BC2]: "If a player's score
    reaches minus 500, his opponent wins the game")." """
    game = _sinking_game("two_handed", [-100, -300])
    _finish(game)
    assert game.is_over and game.winners == [1]
    game = _sinking_game("six_handed", [-100, 0])
    _finish(game)
    assert game.is_over and game.winners == [1]
    game = _sinking_game("five_handed", [-100, 200, 200, 100, 0], partner_call="none")
    _finish(game)
    tricks = game.deal.tricks_won
    final = [200 + 10 * tricks[1], 200 + 10 * tricks[2]]
    expected = [s for s, v in ((1, final[0]), (2, final[1])) if v == max(final)]
    assert game.is_over and game.winners == expected


def test_reaching_the_target_beats_sinking():
    """§10.7 "Reaching the target beats sinking, as in section 9." """
    rules = make_rules("five_handed", partner_call="none", win_needs_contract=False)
    d = make_deal(rules, {0: "2s 3s 4s 5s 2c 3c 4c 2d 3d 4d", 1: "JK 2h 3h 4h 5h 6h 7h 8h 9h Th"}, dealer=4)
    game = Game(rules, first_deal=d, scores=[-100, 495, 0, 0, 490])
    for text in ["10S", "PASS", "PASS", "PASS", "PASS"] + [card_name(d, c) for c in mask_to_cards(d.kitty)]:
        game.apply_action(parse_action(text, rules))
    _finish(game)
    assert game.scores[0] == -540 and game.deal.tricks_won[1] >= 1  # the joker takes a trick
    assert game.is_over and 1 in game.winners and all(game.scores[s] >= 500 for s in game.winners)


# -- §10.8 information -------------------------------------------------------------------------------------
CARD_SLICES = ("hand", "kitty", "discards", "exposed", "played", "trick", "tricks")


@pytest.mark.parametrize("seed", range(4))
def test_nobody_ever_sees_the_dead_hand(seed):
    """§10.8 "two_handed: nobody ever sees the dead hand; otherwise as section 5 (the kitty and the
    discards only to the contractor) and section 7 (open misère)." """
    env = five_hundred_env.env(rules="two_handed")
    env.reset(seed=seed)
    dead = env.unwrapped.deal.dead_hand
    rng = random.Random(seed)
    for _agent in env.agent_iter():
        for observer in env.possible_agents:
            parts = _obs(env, observer)
            for name in CARD_SLICES:
                rows = parts[name].reshape(-1, 46)
                for row in rows:
                    assert not sum(1 << int(c) for c in np.flatnonzero(row)) & dead, name
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    state_layout = env.unwrapped.encoder.state_layout
    at, _ = state_layout["dead_hand"]
    assert sum(1 << int(c) for c in np.flatnonzero(env.state()[at:at + 46])) == dead  # the hidden fact


def test_six_handed_misere_team_mates_keep_their_hands_hidden():
    """§10.8 "six_handed: as the four-player game; in misère the two team-mates who sit out keep their
    hands hidden." """
    env = five_hundred_env.env(rules="six_handed")
    env.reset(seed=3, options={"dealer": 5})
    for text in ["7S", "MISERE", "PASS", "PASS", "PASS", "PASS", "PASS"]:
        env.step(env.unwrapped.str_to_action(text))
    deal = env.unwrapped.deal
    assert deal.sitting_out_seats == (3, 5)
    rng = random.Random(1)
    out_cards = deal.hands[3] | deal.hands[5]
    while not deal.is_over:
        for observer in ("player_0", "player_1", "player_2", "player_4"):
            parts = _obs(env, observer)
            for name in ("hand", "exposed", "played", "trick", "kitty", "discards"):
                for row in parts[name].reshape(-1, 66):
                    assert not sum(1 << int(c) for c in np.flatnonzero(row)) & out_cards, name
            assert np.flatnonzero(parts["sitting_out"]).tolist() == sorted((s - int(observer[-1])) % 6 for s in (3, 5))
        mask = env.unwrapped.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))


# -- records, replays, the environment, agents and evaluation ---------------------------------------------------
@pytest.mark.parametrize(("preset", "options"), [("two_handed", {}), ("five_handed", {}),
                                                 ("five_handed", {"partner_call": "seat"}), ("six_handed", {})])
def test_records_replay_exactly(preset, options):
    """§10.3 explicit deals and §10.1 notation: a game record (the call, PARTNER_s and the new ranks
    included) replays to the same state."""
    rules = make_rules(preset, **options)
    game = Game(rules, seed=11, max_deals=6)
    random_play(game, random.Random(5))
    record = json.loads(json.dumps(record_of(game)))
    again = replay(record)
    assert [d.history for d in again.deals] == [d.history for d in game.deals]
    assert again.scores == game.scores and [d.partner for d in again.deals] == [d.partner for d in game.deals]
    with pytest.raises(ValueError, match="other rules"):
        replay(record, make_rules("australian"))


@pytest.mark.parametrize("preset", NEW)
def test_the_gymnasium_id_plays_the_new_presets(preset):
    """The Gymnasium id ``FiveHundred-v1`` takes the new presets (one learner against agents)."""
    import gymnasium

    env = gymnasium.make("FiveHundred-v1", rules=preset, seat=1)
    obs, info = env.reset(seed=2)
    rng = np.random.default_rng(0)
    done = False
    while not done:
        obs, _reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        done = terminated or truncated
    assert env.observation_space.contains(obs)


def test_the_heuristic_calls_a_card_that_completes_its_hand():
    """§10.5 for the heuristic: it calls a card it lacks (never the joker nor a discard), the one
    worth most to its hand — here the missing top trump; its holder then plays as the partner."""
    from agents.heuristic import HeuristicAgent

    hands = {0: "JK Jh Ah Kh Qh Th 9h As Ks Ac", 2: "Jd 2s 3s 4s 5s 6s 2c 3c 4c 5c"}
    d = make_deal("five_handed", hands, "2d 3d 4d", dealer=4)
    env = five_hundred_env.env(rules="five_handed")
    env.reset(options={"dealer": 4, "hands": [sorted(hand(d, s)) for s in range(5)], "kitty": ["2d", "3d", "4d"]})
    for text in "7H PASS PASS PASS PASS 2d 3d 4d".split():
        env.step(env.unwrapped.str_to_action(text))
    agent = HeuristicAgent("five_handed", seed=0)
    choice = env.unwrapped.action_to_str(agent.act(env.unwrapped.observe("player_0")))
    assert choice == "Jd"  # the left bower: the best trump missing
    env.step(env.unwrapped.str_to_action(choice))
    view = agent.decoder.decode(env.unwrapped.observe("player_2")["observation"])
    assert view.mates == (3,) and view.declaring  # player_2 knows the contractor (3 seats to its left) is its partner


@pytest.mark.parametrize(("rules", "margin"), [(make_rules(p), 150) for p in NEW]
                         + [(make_rules("five_handed", partner_call="seat"), 50)],
                         ids=lambda x: x.describe() if hasattr(x, "describe") else str(x))
def test_the_heuristic_beats_random(rules, margin):
    """The heuristic plays every new preset legally and beats random by 150 points a deal (a small
    duplicate match); with the seat call (an option), where it trusts the random players' bids,
    by less."""
    from training.evaluation.evaluate import duplicate_match

    report = duplicate_match(rules, "heuristic", "random", deals=8, seed=3)
    assert report.score_diff[0] > margin


def test_the_heuristic_calls_the_seat_that_bid_its_strain():
    """§10.5 partner_call=seat for the heuristic: it names the seat whose bid showed the contract's
    suit (PARTNER_s names absolute seats, read from the observation's ``seat`` slice)."""
    from agents.heuristic import HeuristicAgent

    env = five_hundred_env.env(rules="five_handed", partner_call="seat")
    env.reset(seed=6, options={"dealer": 1})
    for text in ["PASS", "6H", "6NT", "PASS", "7H", "PASS", "PASS"]:  # seats 2 … 1: seat 3 bid hearts
        env.step(env.unwrapped.str_to_action(text))
    deal = env.unwrapped.deal
    assert deal.contractor == 1 and deal.phase == Phase.DISCARD
    while deal.phase == Phase.DISCARD:
        env.step(int(np.flatnonzero(env.unwrapped.observe("player_1")["action_mask"])[0]))
    agent = HeuristicAgent(env.unwrapped.rules, seed=0)
    assert env.unwrapped.action_to_str(agent.act(env.unwrapped.observe("player_1"))) == "PARTNER_3"


def test_duplicate_layouts_for_two_five_and_six_seats():
    """Duplicate boards: every hand is played by each agent; teams of three take turns as sides, lone
    players play each seat in turn (two players: each agent in each seat once)."""
    from training.evaluation.evaluate import seat_layouts

    assert seat_layouts(make_rules("six_handed")) == [tuple("ABABAB"), tuple("BABABA")]
    assert seat_layouts(make_rules("two_handed")) == [("A", "B"), ("B", "A")]
    five = seat_layouts(make_rules("five_handed"))
    assert len(five) == 10 and five[0] == tuple("ABBBB") and five[5] == tuple("BAAAA")
    for layouts in (five, seat_layouts(make_rules("six_handed"))):
        for seat in range(len(layouts[0])):
            assert {layout[seat] for layout in layouts} == {"A", "B"}


def test_the_report_says_how_the_seats_are_shared():
    """The evaluation report's ``seats`` line, for sides that are not teams of two."""
    from training.evaluation.evaluate import layout_text

    assert layout_text(make_rules("six_handed")) == (
        "teams of 3 (seats 0, 2, 4 against 1, 3, 5): A as each team in turn, 2 plays a board")
    assert layout_text(make_rules("five_handed")) == (
        "each alone: A against 4 B in every seat, then B against 4 A, 10 plays a board")
    assert layout_text(make_rules("two_handed")).endswith("2 plays a board")


# -- against the independent reference model (tests/reference_model.py, written from §10 too) ---------------
REFERENCE_RULES = [make_rules("two_handed"), make_rules("five_handed"), make_rules("six_handed"),
                   make_rules("five_handed", partner_call="seat"), make_rules("five_handed", partner_call="none"),
                   make_rules("six_handed", misere="any_time", open_misere="highest"),
                   make_rules("two_handed", bidding="until_passed", misere_defence="nothing", slam_bonus=True),
                   make_rules("five_handed", defence_tricks="only_when_lost", joker_lead_suit="not_shown_void")]


@pytest.mark.parametrize("rules", REFERENCE_RULES, ids=lambda r: r.describe())
def test_random_deals_agree_with_the_reference_model(rules):
    """§10.3-§10.6: legal actions, turns, exposure, tricks, the partner and the score of random deals
    are those of the reference model at every step."""
    from test_properties import play_against_reference

    for seed in range(40):
        rng = random.Random(seed)
        deal = Deal.new(rules, rng, rng.randrange(rules.num_players))
        ref = play_against_reference(deal, rng)
        assert deal.partner == (-1 if ref.partner is None else ref.partner)
        if not deal.thrown_in:
            assert deal.contract_made() == ref.made()
            assert all(len(t[2]) == len(ref.active()) for t in deal.tricks)


@pytest.mark.parametrize("rules", REFERENCE_RULES, ids=lambda r: r.describe())
def test_games_end_as_the_reference_says(rules):
    """§10.7: after every deal of random games the winners are the reference model's."""
    from reference_model import game_winners
    from test_properties import choose

    for seed in range(6):
        rng = random.Random(seed)
        game = Game(rules, seed=seed, max_deals=60)
        scores = list(game.scores)
        while not game.is_over and not game.dealing_stopped:
            deal = game.deal
            while not deal.is_over:
                game.apply_action(choose(rng, game.legal_actions()))
            if deal.thrown_in:
                continue
            scores = [s + c for s, c in zip(scores, deal.score_change, strict=True)]
            partner_side = rules.side_of(deal.partner) if deal.partner >= 0 else None
            expected = game_winners(rules, scores, rules.side_of(deal.contractor), deal.contract_made(), partner_side)
            assert game.winners == expected and game.scores == scores
