"""docs/rules.md §6 (card order) and §7 (play): bowers, jokers, following suit, winning tricks, joker
leads and their named suits, nomination, the partner sitting out a misère, open misère exposure."""

from __future__ import annotations

import itertools

import pytest
from conftest import (
    act,
    cards,
    deck_names,
    discard_kitty,
    hand,
    legal,
    make_deal,
    names,
    play_out,
    play_trick,
    trick_cards,
)

from five_hundred_env import IllegalActionError, make_rules
from five_hundred_env.engine import Phase

SUIT_INDEX = {"S": 0, "C": 1, "D": 2, "H": 3}
SAME_COLOUR = {"s": "c", "c": "s", "d": "h", "h": "d"}


# -- §6 card order, tested trick by trick -------------------------------------------------------------

def effective_trumps(rules, trump: str) -> list[str]:
    """The trump suit of §6 from the deck: the jokers, both bowers and the printed trump suit."""
    jokers = ["JK1", "JK2"] if rules.two_jokers else ["JK"]
    other_jack = "J" + SAME_COLOUR[trump]
    return jokers + [c for c in deck_names(rules) if c[-1] == trump] + [other_jack]


def duel(preset: str, strain: str, lead: str, a: str, b: str) -> int:
    """Seat 0 (contractor, dealer 3) bids 7<strain> and leads ``lead``; seat 1 holds ``a`` and seat
    2 holds ``b`` as their only cards of the led (effective) suit, seat 3 none; returns the
    winner of the trick. With no trumps the jokers lie in the kitty."""
    rules = make_rules(preset)
    deck = deck_names(rules)
    jokers = [c for c in deck if c.startswith("JK")]
    if strain == "NT":
        suit = lead[-1]
        group = [c for c in deck if c[-1] == suit]
        others = [c for c in deck if c[-1] != suit and c not in jokers]
        kitty = list(jokers)
    else:
        group = effective_trumps(rules, strain.lower())
        others = [c for c in deck if c not in group]
        kitty = []
    rest = [c for c in group if c not in (lead, a, b)]
    s0 = [lead, *rest[:9]]
    kitty += rest[9:]
    fill = 10 - len(s0)
    s0, others = s0 + others[:fill], others[fill:]
    s1, s2, s3 = [a, *others[:9]], [b, *others[9:18]], others[18:28]
    kitty += others[28:]
    d = make_deal(rules, [s0, s1, s2, s3], kitty, dealer=3)
    act(d, f"7{strain} PASS PASS PASS")
    discard_kitty(d)
    assert d.phase == Phase.PLAY
    trick = play_trick(d, lead, a, b, None)
    assert trick_cards(d, trick)[:3] == [lead, a, b]
    return trick[3]


def adjacent(order):
    return list(itertools.pairwise(order))


AU_TRUMP_ORDERS = {
    "H": ["JK", "Jh", "Jd", "Ah", "Kh", "Qh", "Th", "9h", "8h"],
    "D": ["JK", "Jd", "Jh", "Ad", "Kd", "Qd", "Td", "9d", "8d"],
    "S": ["JK", "Js", "Jc", "As", "Ks", "Qs", "Ts", "9s", "8s"],
    "C": ["JK", "Jc", "Js", "Ac", "Kc", "Qc", "Tc", "9c", "8c"],
}
LOWEST = {"H": "4h", "D": "4d", "S": "5s", "C": "5c"}


@pytest.mark.parametrize("swap", [False, True], ids=["higher-first", "lower-first"])
@pytest.mark.parametrize(
    ("trump", "high", "low"),
    [(t, h, lo) for t, order in AU_TRUMP_ORDERS.items() for h, lo in adjacent(order)],
)
def test_trump_order(trump, high, low, swap):
    """§6: "trumps from high to low: the joker(s), the right bower (jack of trumps), the left bower
    (the other jack of the same colour), then A K Q T 9 … of trumps"."""
    a, b = (low, high) if swap else (high, low)
    winner = duel("australian", trump, LOWEST[trump], a, b)
    assert winner == (2 if swap else 1)


@pytest.mark.parametrize(
    ("high", "low"), adjacent(["JK1", "JK2", "Jh", "Jd", "Ah", "Kh"]),
)
def test_french_trump_order(high, low):
    """§6: the jokers (`JK1` above `JK2` [FR]), then the right and left bowers."""
    assert duel("french_46", "H", "4h", high, low) == 1
    assert duel("french_46", "H", "4h", low, high) == 2


@pytest.mark.parametrize("preset", ["australian", "french_46"])
@pytest.mark.parametrize("suit", ["s", "c", "d", "h"])
def test_plain_order_in_no_trumps(preset, suit):
    """§6: "every suit in no trumps and misère: A K Q J T 9 … (no bowers)" (italian_3p: the
    property tests check every trick against the rules)."""
    order = [r + suit for r in "AKQJT98"]
    lowest = "4" + suit if preset == "french_46" or suit in "dh" else "5" + suit
    for high, low in adjacent(order):
        assert duel(preset, "NT", lowest, high, low) == 1
        assert duel(preset, "NT", lowest, low, high) == 2


# Seat 0 holds one diamond; seat 1 the left bower Jd with two diamonds; seat 2 the joker and
# diamonds; seat 3 the low hearts and spades. [AU]
DEAL_B = [
    "Jh Ah Kh Qh 4h As Ks Qs 4d Ts",
    "Jd 5d 6d Ac Kc Qc Jc Tc 9c 8c",
    "JK Ad Kd Qd 7d 8d 9d Td 5c 6c",
    "5h 6h 7h 8h 9h Th 5s 6s 7s 8s",
]
DEAL_B_KITTY = "9s 7c Js"


def deal_b(contract: str):
    d = make_deal("australian", DEAL_B, DEAL_B_KITTY, dealer=3)
    act(d, f"{contract} PASS PASS PASS")
    discard_kitty(d)
    return d


def test_left_bower_never_follows_its_printed_suit():
    """§6: "The left bower and the joker(s) belong to the trump suit for the whole deal — for
    following suit too — and the left bower no longer belongs to its printed suit"."""
    d = deal_b("7H")
    act(d, "4d")
    assert legal(d) == {"5d", "6d"}  # Jd is a heart now, not a diamond
    with pytest.raises(IllegalActionError):
        act(d, "Jd")
    act(d, "5d")
    assert legal(d) == {"Ad", "Kd", "Qd", "7d", "8d", "9d", "Td"}  # the joker is a trump too
    act(d, "Ad")
    assert legal(d) == hand(d, 3)  # void in diamonds: anything
    act(d, "5h")
    assert d.tricks[-1][3] == 3  # §7: a trump beats the ace of the suit led


def test_left_bower_and_joker_must_follow_a_trump_lead():
    """§6/§7: holding no printed trump, the left bower (and the joker) must follow a trump lead."""
    d = deal_b("7H")
    play_trick(d, "4d", "5d", "Ad", "5h")  # seat 3 wins and leads
    act(d, "6h")
    assert legal(d) == {"Jh", "Ah", "Kh", "Qh", "4h"}
    act(d, "Ah")
    assert legal(d) == {"Jd"}
    act(d, "Jd")
    assert legal(d) == {"JK"}  # the joker is forced onto a trump lead when it is the only trump
    act(d, "JK")
    assert d.tricks[-1][3] == 2


def test_left_bower_as_a_void_suit():
    """§6: the holder of the left bower and no other card of its printed suit is void there."""
    hands = [
        "Jh Ah Kh Qh 4h As Ks Qs 4d Ts",
        "Jd 5s 6s Ac Kc Qc Jc Tc 9c 8c",
        "JK Ad Kd Qd 7d 8d 9d Td 5c 6c",
        "5h 6h 7h 8h 9h Th 5d 6d 7s 8s",
    ]
    d = make_deal("australian", hands, DEAL_B_KITTY, dealer=3)
    act(d, "7H PASS PASS PASS")
    discard_kitty(d)
    act(d, "4d")
    assert legal(d) == set(cards(hands[1]))
    act(d, "Jd Ad 5d")
    assert d.tricks[-1][3] == 1  # and it is a trump: it wins the diamond trick


def test_led_left_bower_is_a_trump_lead():
    """§6: the left bower belongs to the trump suit "for the whole deal", so leading it leads
    trumps: diamonds trumps, seat 0 leads Jh, hearts need not be followed, diamonds must."""
    d = deal_b("7D")
    act(d, "Jh")
    assert legal(d) == {"Jd", "5d", "6d"}
    act(d, "5d")
    assert legal(d) == {"JK", "Ad", "Kd", "Qd", "7d", "8d", "9d", "Td"}
    act(d, "Td")
    assert legal(d) == hand(d, 3)  # seat 3 holds hearts but no trump: free
    act(d, "Th")
    _leader, led, _plays, winner = d.tricks[-1]
    assert led == SUIT_INDEX["D"]
    assert winner == 0  # the left bower beats Td; Th is a mere heart


def test_right_bower_beats_led_left_bower():
    """§6: the right bower is above the left bower, also when the left bower is led."""
    d = deal_b("7D")
    trick = play_trick(d, "Jh", "Jd", "Ad", "5h")
    assert trick[3] == 1


def test_highest_card_of_the_suit_led_wins_without_trumps():
    """§7: "A trick is won by the highest trump in it, else by the highest card of the suit led";
    an off-suit card of a higher rank does not win."""
    d = deal_b("7H")
    trick = play_trick(d, "4d", "6d", "7d", "8s")
    assert trick[3] == 2


def test_joker_in_a_trump_contract_is_played_plain():
    """§1: "A joker that has a suit (a trump, or nominated) is played as plain `JK`" — led too."""
    d = make_deal("australian", {0: "JK Jh Jd Ah Kh Qh Th 9h 8h 7h"}, dealer=3)
    act(d, "7H PASS PASS PASS")
    discard_kitty(d)
    assert "JK" in legal(d) and not any(a.startswith("JK:") for a in legal(d))
    with pytest.raises(IllegalActionError):
        act(d, "JK:H")
    act(d, "JK")
    assert d.led_suit == SUIT_INDEX["H"]


def test_off_suit_jacks_are_plain():
    """§6: with hearts trumps the black jacks are plain cards: Js ranks between Qs and Ts."""
    hands = [
        "5s 6s Ah Kh Qh Th 9h 8h 7h 6h",
        "Js Ac Kc Qc Jc Tc 9c 8c 7c 6c",
        "Ts Ad Kd Qd Td 9d 8d 7d 6d 5d",
        "7s 9s Qs Ks As 5c 4d Jd 5h 4h",
    ]
    d = make_deal("australian", hands, "8s Jh JK", dealer=3)
    act(d, "7H PASS PASS PASS")
    discard_kitty(d)
    assert play_trick(d, "5s", "Js", "Ts", "9s")[3] == 1
    d = make_deal("australian", hands, "8s Jh JK", dealer=3)
    act(d, "7H PASS PASS PASS")
    discard_kitty(d)
    assert play_trick(d, "5s", "Js", "Ts", "Qs")[3] == 3


# -- §7 the suitless joker in no trumps ---------------------------------------------------------------

def test_suitless_joker_only_when_void_and_it_wins():
    """§7: "otherwise the joker belongs to no suit and wins any trick it is played to; it may be
    played only by a player who has no card of the suit led"."""
    hands = {0: "As Ks Qs Ac Kc Qc Ad Kd Ah Kh", 1: "JK 5s 6s 7s 4d 5d 6d 4h 5h 6h"}
    d = make_deal("australian", hands, dealer=3)
    act(d, "7NT PASS PASS PASS")
    discard_kitty(d)
    assert d.phase == Phase.PLAY  # the contractor has no joker: no nomination
    act(d, "As")
    assert legal(d) == {"5s", "6s", "7s"}  # holds spades: the joker may not be played
    act(d, "5s")
    play_trick(d, None, None)
    act(d, "Ac")
    assert "JK" in legal(d)  # void in clubs
    assert legal(d) == hand(d, 1)
    act(d, "JK")
    trick = play_trick(d)
    assert trick[3] == 1  # beats the ace of the suit led
    assert d.to_act == 1
    assert d.shown_void[1] & (1 << SUIT_INDEX["C"])


def test_french_jk1_beats_jk2_in_no_trumps():
    """§7: the suitless joker wins any trick "(`JK1` beats `JK2` [FR])"."""
    hands = {0: "As Ks Qs Js Ts 9s Ac Kc Ad Ah", 1: "JK2 4c 5c 6c 4d 5d 6d 4h 5h 6h",
             3: "JK1 7c 8c 9c 7d 8d 9d 7h 8h 9h"}
    d = make_deal("french_46", hands, dealer=3)
    act(d, "7NT PASS PASS PASS")
    discard_kitty(d)
    trick = play_trick(d, "As", "JK2", None, "JK1")
    assert trick[3] == 3
    d = make_deal("french_46", hands, dealer=3)
    act(d, "7NT PASS PASS PASS")
    discard_kitty(d)
    trick = play_trick(d, "As", "JK2", None, "7c")
    assert trick[3] == 1


# Seat 0 holds the joker and the top spades, clubs, diamonds and hearts; nobody else can win.
DEAL_G = {0: "JK As Ks Qs Ac Kc Ad Kd Ah Kh"}


def test_not_yet_led_joker_leads_through_a_whole_deal():
    """§7 `joker_lead_suit=not_yet_led` [AU]: "only a suit not yet led in this deal; once all four
    have been led, it may not be led until the leader holds nothing but jokers (with one joker:
    the last trick), and then any suit may be named"."""
    d = make_deal("australian", DEAL_G, dealer=3)
    act(d, "7NT PASS PASS PASS")
    discard_kitty(d, "NO_NOMINATION")
    leads = {"JK:S", "JK:C", "JK:D", "JK:H"}
    assert legal(d) & {"JK", *leads} == leads  # no plain JK: a suitless joker is led naming a suit
    for card, left in (("As", {"JK:C", "JK:D", "JK:H"}), ("Ac", {"JK:D", "JK:H"}), ("Ad", {"JK:H"}), ("Ah", set())):
        assert play_trick(d, card)[3] == 0
        assert {a for a in legal(d) if a.startswith("JK")} == left
    with pytest.raises(IllegalActionError):
        act(d, "JK:S")
    for card in ("Ks", "Qs", "Kc", "Kd", "Kh"):
        assert play_trick(d, card)[3] == 0
        if card != "Kh":
            assert not any(a.startswith("JK") for a in legal(d))
    assert hand(d, 0) == {"JK"}
    assert legal(d) == leads  # nothing but jokers: any suit
    trick = play_trick(d, "JK:S")
    assert trick[1] == SUIT_INDEX["S"] and trick[3] == 0
    assert d.is_over
    assert d.score_change == [250, 0]  # §8: all ten tricks on 7NT (220) score 250 with slam_bonus


def test_joker_lead_names_the_suit_to_follow():
    """§7: "leading it names the suit the others must follow (`JK:x`)"."""
    hands = {0: "JK As Ks Qs Ac Kc Ad Kd Ah Kh", 1: "5d 6d 5s 6s 7s 5c 6c 7c 8c 9c"}
    d = make_deal("australian", hands, dealer=3)
    act(d, "7NT PASS PASS PASS")
    discard_kitty(d, "NO_NOMINATION")
    act(d, "JK:D")
    assert legal(d) == {"5d", "6d"}
    trick = play_trick(d, "5d")
    assert trick[1] == SUIT_INDEX["D"] and trick[3] == 0
    assert trick_cards(d, trick)[0] == "JK"


def test_named_suit_counts_as_led():
    """§7: "A suit named by a joker lead counts as led" — with `not_yet_led` and two jokers the
    second joker may not name it again."""
    hands = {0: "JK1 JK2 As Ks Ac Kc Ad Kd Ah Kh"}
    d = make_deal("french_46", hands, dealer=3, joker_lead_suit="not_yet_led")
    act(d, "6NT PASS PASS PASS")
    discard_kitty(d)
    assert {a for a in legal(d) if a.startswith("JK")} == {f"{j}:{s}" for j in ("JK1", "JK2") for s in "SCDH"}
    assert play_trick(d, "JK1:H")[3] == 0
    assert {a for a in legal(d) if a.startswith("JK")} == {"JK2:S", "JK2:C", "JK2:D"}


def test_not_shown_void_excludes_a_suit_the_leader_failed_to_follow():
    """§7 `joker_lead_suit=not_shown_void` [IT, FR]: "any suit except one the leader has already
    failed to follow"; "a player who plays a card that is not of the led suit ... has shown
    themselves void in it", a suit named by a joker lead included."""
    hands = ["Ac Kc Qc 7s 8s 9s 7d 8d 7h 8h", "JK As Ks Qs Ad Kd Qd Ah Kh Qh",
             "Ts Js 7c 8c 9c Tc Jc 9d Td Jd"]
    d = make_deal("italian_3p", hands, "9h Th Jh", dealer=2)
    act(d, "6NT PASS PASS")
    discard_kitty(d)
    assert d.phase == Phase.PLAY  # italian_3p: no nomination
    assert play_trick(d, "Ac", "Qd", "7c")[3] == 0  # seat 1 fails to follow clubs
    assert play_trick(d, "7s", "As", "Ts")[3] == 1
    assert {a for a in legal(d) if a.startswith("JK")} == {"JK:S", "JK:D", "JK:H"}
    act(d, "JK:H")
    assert legal(d) == hand(d, 2)  # seat 2 has no hearts: free, and now shown void in hearts
    act(d, "Js")
    assert legal(d) == {"7h", "8h"}
    act(d, "7h")
    assert d.tricks[-1][3] == 1
    assert d.shown_void[2] == 1 << SUIT_INDEX["H"]
    assert d.shown_void[1] == 1 << SUIT_INDEX["C"]
    assert d.shown_void[0] == 0


def test_not_shown_void_all_suits_excluded_allows_any():
    """§7 `not_shown_void`: "if that excludes every suit, any suit may be named"; a suitless joker
    played to a trick shows its player void too. [FR] seat 1 holds both jokers and eight spades."""
    hands = {0: "Ac Kc Qc Ad Kd Qd Ah Kh As 4c", 1: "JK1 JK2 4s 5s 6s 7s 8s 9s Ts Js"}
    d = make_deal("french_46", hands, dealer=3)
    act(d, "6NT PASS PASS PASS")
    discard_kitty(d)
    spades = cards("4s 5s 6s 7s 8s 9s Ts Js")
    for lead, spade in zip(cards("Ac Kc Qc Ad Kd Qd Ah Kh"), spades, strict=True):
        assert play_trick(d, lead, spade)[3] == 0
    assert d.shown_void[1] == 0b1110  # clubs, diamonds, hearts
    act(d, "As")
    assert legal(d) == {"JK1", "JK2"}  # following, a joker is played plain
    act(d, "JK2")
    assert play_trick(d)[3] == 1
    assert d.shown_void[1] == 0b1111
    assert legal(d) == {"JK1:S", "JK1:C", "JK1:D", "JK1:H"}
    trick = play_trick(d, "JK1:C")
    assert trick[1] == SUIT_INDEX["C"] and trick[3] == 1
    assert d.is_over


def test_not_shown_void_leader_may_name_any_suit_at_first():
    """§7 `not_shown_void` [FR]: before the leader has failed to follow anything, every suit may be named."""
    d = make_deal("french_46", {0: "JK1 As Ks Ac Kc Ad Kd Ah Kh Qh"}, dealer=3)
    act(d, "6NT PASS PASS PASS")
    discard_kitty(d)
    assert {a for a in legal(d) if a.startswith("JK")} == {"JK1:S", "JK1:C", "JK1:D", "JK1:H"}
    assert "JK1" not in legal(d)


# -- §7 joker nomination ----------------------------------------------------------------------------

# [AU] Seat 0: the joker, two low hearts and seven clubs; seat 1 all the spades; seat 2 the top
# hearts; seat 3 the other hearts.
DEAL_H = [
    "JK 4h 5h Ac Kc Qc Jc Tc 9c 8c",
    "As Ks Qs Js Ts 9s 8s 7s 6s 5s",
    "Ah Kh Qh 5c 6c 4d 5d 6d 7d 8d",
    "Jh Th 9h 8h 7h 6h 9d Td Jd 7c",
]
DEAL_H_KITTY = "Qd Kd Ad"


def deal_h(nomination: str, contract="7NT", **options):
    d = make_deal("australian", DEAL_H, DEAL_H_KITTY, dealer=3, **options)
    act(d, f"{contract} PASS PASS PASS")
    discard_kitty(d)
    if nomination:
        act(d, nomination)
    return d


def test_nomination_is_one_decision_after_the_last_discard():
    """§7: "a contractor holding the joker after the discards may nominate a suit for it before
    the first lead (`NOMINATE_x`, or `NO_NOMINATION`: one decision, after the last discard)"."""
    d = make_deal("australian", DEAL_H, DEAL_H_KITTY, dealer=3)
    act(d, "7NT PASS PASS PASS Qd Kd")
    assert d.phase == Phase.DISCARD and "NOMINATE_H" not in legal(d)
    act(d, "Ad")
    assert d.phase == Phase.NOMINATE and d.to_act == 0
    assert legal(d) == {"NOMINATE_S", "NOMINATE_C", "NOMINATE_D", "NOMINATE_H", "NO_NOMINATION"}
    with pytest.raises(IllegalActionError):
        act(d, "Ac")
    act(d, "NOMINATE_H")
    assert d.phase == Phase.PLAY and d.to_act == 0 and d.nominated == SUIT_INDEX["H"]


def test_nominated_joker_is_led_plain_as_the_top_of_its_suit():
    """§7: "it is then simply the highest card of that suit for the deal [AU]: its effective suit
    is the nominated suit, for following, leading and winning alike"."""
    d = deal_h("NOMINATE_H")
    assert "JK" in legal(d) and not any(a.startswith("JK:") for a in legal(d))
    act(d, "JK")
    assert legal(d) == hand(d, 1)  # seat 1 has no hearts
    act(d, "As")
    assert legal(d) == {"Ah", "Kh", "Qh"}  # hearts were led
    act(d, "Ah")
    act(d, "6h")
    assert d.tricks[-1][1] == SUIT_INDEX["H"]
    assert d.tricks[-1][3] == 0  # above the ace


def test_nominated_joker_must_follow_its_suit():
    """§7: the nominated joker's "effective suit is the nominated suit, for following"; and it wins that suit."""
    d = deal_h("NOMINATE_H")
    assert play_trick(d, "4h", "5s", "Ah", "6h")[3] == 2
    act(d, "Kh 7h")
    assert legal(d) == {"JK", "5h"}  # the joker is a heart
    act(d, "5h 6s")
    assert d.tricks[-1][3] == 2
    act(d, "Qh 8h")
    assert legal(d) == {"JK"}  # the only heart left: forced
    act(d, "JK 7s")
    assert d.tricks[-1][3] == 0  # and the highest heart


def test_nominated_joker_discarded_on_another_suit_does_not_win():
    """§7: a nominated joker is "simply the highest card of that suit": off-suit, with no trumps, it cannot win."""
    d = deal_h("NOMINATE_H")
    play_trick(d, "4h", "5s", "Ah", "6h")
    act(d, "4d Jd")
    assert "JK" in legal(d)  # void in diamonds
    act(d, "JK 6s")
    assert d.tricks[-1][3] == 3  # a heart on a diamond lead, no trumps: Jd wins


def test_no_nomination_leaves_the_joker_suitless():
    """§7: with `NO_NOMINATION` the joker belongs to no suit: led as `JK:x`, playable only when void."""
    d = deal_h("NO_NOMINATION")
    assert "JK" not in legal(d) and {"JK:S", "JK:C", "JK:D", "JK:H"} <= legal(d)
    play_trick(d, "4h", "5s", "Ah", "6h")
    act(d, "Kh 7h")
    assert legal(d) == {"5h"}  # the suitless joker is not a heart
    d = deal_h("NO_NOMINATION")
    play_trick(d, "4h", "5s", "Ah", "6h")
    act(d, "4d Jd JK 6s")
    assert d.tricks[-1][3] == 0  # suitless, it wins the diamond trick


@pytest.mark.parametrize("suit", "SCD")
def test_nomination_to_another_suit(suit):
    """§7: the nominated suit may be any suit; the joker then leads and wins that suit."""
    d = deal_h(f"NOMINATE_{suit}")
    act(d, "JK")
    assert d.trick and d.led_suit == SUIT_INDEX[suit]


def test_nomination_not_offered_in_trump_contracts():
    """§7: nomination is for "NT and misère" only; §1 in trumps the joker is plain `JK`."""
    d = deal_h("", contract="7C")
    assert d.phase == Phase.PLAY and "JK" in legal(d)


def test_nomination_not_offered_without_the_joker():
    """§7: "a contractor holding the joker after the discards" — discarded, or held by another."""
    d = make_deal("australian", DEAL_H, DEAL_H_KITTY, dealer=3)
    act(d, "7NT PASS PASS PASS JK Qd Kd")
    assert d.phase == Phase.PLAY
    d = make_deal("australian", DEAL_H, DEAL_H_KITTY, dealer=0)
    act(d, "7NT PASS PASS PASS")  # seat 1 is the contractor, seat 0 holds the joker
    discard_kitty(d)
    assert d.phase == Phase.PLAY and d.to_act == 1


def test_nomination_options():
    """§2 `joker_nomination`: `nt_and_misere`, `misere_only` ([AU] variant), `none`."""
    d = deal_h("", joker_nomination="none")
    assert d.phase == Phase.PLAY and "JK:S" in legal(d)
    d = deal_h("", joker_nomination="misere_only")
    assert d.phase == Phase.PLAY and "JK:S" in legal(d)
    for option in ("misere_only", "nt_and_misere"):
        d = make_deal("australian", DEAL_H, DEAL_H_KITTY, dealer=2, joker_nomination=option)
        act(d, "7S MISERE PASS PASS PASS")
        discard_kitty(d)
        assert d.phase == Phase.NOMINATE
    d = make_deal("australian", DEAL_H, DEAL_H_KITTY, dealer=2, joker_nomination="none")
    act(d, "7S MISERE PASS PASS PASS")
    discard_kitty(d)
    assert d.phase == Phase.PLAY


def test_no_nomination_in_italian_and_french():
    """§2: `joker_nomination=none` in italian_3p and french_46: the joker stays suitless."""
    d = make_deal("italian_3p", {0: "JK As Ks Qs Ac Kc Ad Kd Ah Kh"}, dealer=2)
    act(d, "6NT PASS PASS")
    discard_kitty(d)
    assert d.phase == Phase.PLAY and "JK:S" in legal(d)


# -- §7 misère: the partner sits out -------------------------------------------------------------------

@pytest.mark.parametrize("contract", ["MISERE", "OPEN_MISERE"])
@pytest.mark.parametrize("contractor", [0, 1])
def test_partner_sits_out_a_misere(contract, contractor):
    """§7: "with 4 players the contractor's partner sits out [AU], so tricks have 3 cards"; §2
    "With 4 players the contractor's partner always sits out a misère or open misère"."""
    dealer = (contractor + 2) % 4  # the seat after the dealer's left is the contractor
    d = make_deal("australian", [None] * 4, dealer=dealer)
    act(d, f"7S {contract} PASS PASS PASS")
    assert d.contractor == contractor
    partner = (contractor + 2) % 4
    partner_hand = hand(d, partner)
    discard_kitty(d)
    acting = set()
    while not d.is_over:
        if d.phase == Phase.PLAY:
            acting.add(d.to_act)
        d.apply_action(d.legal_actions()[0])
    assert partner not in acting
    assert acting == {0, 1, 2, 3} - {partner}
    assert len(d.tricks) == 10
    for _, _, plays, winner in d.tricks:
        assert len(plays) == 3 and partner not in {s for s, _ in plays} and winner != partner
    assert hand(d, partner) == partner_hand  # never played a card


def test_nobody_sits_out_a_three_player_misere():
    """§7: the sitting out is for 4 players; [IT] misère tricks have all three players."""
    d = make_deal("italian_3p", [None] * 3, dealer=2)
    act(d, "MISERE PASS PASS")
    discard_kitty(d)
    play_out(d)
    assert all(len(t[2]) == 3 for t in d.tricks) and len(d.tricks) == 10


def test_misere_has_no_trumps():
    """§7: "Misère and open misère ... no trumps": bowers are plain jacks."""
    hands = {0: "5s 6s 7s 5c 6c 7c 4d 5d 4h 5h", 1: "Jd Ad Kd 8s 9s Ts 8c 9c Tc 6h"}
    d = make_deal("australian", hands, dealer=2)
    act(d, "7S MISERE PASS PASS PASS")
    discard_kitty(d)
    act(d, "4d")
    assert legal(d) == {"Jd", "Ad", "Kd"}  # Jd is a plain diamond
    act(d, "Jd")
    play_trick(d)
    assert d.tricks[-1][1] == SUIT_INDEX["D"]


def test_all_ten_tricks_are_played_in_misere():
    """§7: "All 10 tricks are played [AU]; in misère too [IT]" — even once the misère is lost."""
    d = make_deal("italian_3p", {0: "As Ks Qs Js Ts 9s 8s 7s Ac Kc"}, dealer=2)
    act(d, "MISERE PASS PASS")
    discard_kitty(d)
    assert play_trick(d, "As")[3] == 0
    assert not d.is_over
    play_out(d)
    assert len(d.tricks) == 10


# -- §7 open misère exposure ------------------------------------------------------------------------

def test_open_misere_exposed_after_the_first_trick():
    """§7 [AU] `after_first_trick`: "the contractor's remaining hand is exposed to everyone from
    the end of the first trick"; then the exposed cards still in that hand."""
    d = make_deal("australian", [None] * 4, dealer=3)
    act(d, "OPEN_MISERE PASS PASS PASS")
    discard_kitty(d)
    while d.phase != Phase.PLAY:
        d.apply_action(d.legal_actions()[0])
    assert not d.exposed and d.exposed_cards() == 0
    d.apply_action(d.legal_actions()[0])
    d.apply_action(d.legal_actions()[0])
    assert not d.exposed and d.exposed_cards() == 0  # two of the three cards played
    d.apply_action(d.legal_actions()[0])
    assert len(d.tricks) == 1
    assert d.exposed and d.exposed_cards() == d.hands[0] and len(hand(d, 0)) == 9
    while len(d.tricks) < 5:
        d.apply_action(d.legal_actions()[0])
        assert d.exposed_cards() == d.hands[0]
    assert names(d, d.exposed_cards()) == hand(d, 0) and len(hand(d, 0)) == 5


def test_open_misere_exposed_before_the_first_lead():
    """§7 [IT] `before_first_lead`: "the contractor's hand (after the discards) from the start of
    play"."""
    hands = ["7s 8s 9s 7c 8c 9c 7d 8d 7h 8h", None, None]
    d = make_deal("italian_3p", hands, dealer=2)
    act(d, "OPEN_MISERE PASS PASS")
    assert d.phase == Phase.DISCARD and not d.exposed
    kitty = sorted(names(d, d.kitty))
    act(d, f"{kitty[0]} {kitty[1]} 9s")
    assert d.phase == Phase.PLAY and d.tricks == [] and not d.trick
    assert d.exposed
    assert names(d, d.exposed_cards()) == set(cards(hands[0])) - {"9s"} | {kitty[2]}
    act(d, "7s")
    assert names(d, d.exposed_cards()) == set(cards(hands[0])) - {"9s", "7s"} | {kitty[2]}


@pytest.mark.parametrize(
    ("preset", "auction", "exposure", "at_start"),
    [("australian", "OPEN_MISERE PASS PASS PASS", "before_first_lead", True),
     ("italian_3p", "OPEN_MISERE PASS PASS", "after_first_trick", False)],
)
def test_open_misere_exposure_option(preset, auction, exposure, at_start):
    """§2 `open_misere_exposure` is an option of every preset."""
    rules = make_rules(preset, open_misere_exposure=exposure, joker_nomination="none")
    d = make_deal(rules, [None] * rules.num_players, dealer=rules.num_players - 1)
    act(d, auction)
    discard_kitty(d)
    assert d.exposed is at_start
    play_trick(d)
    assert d.exposed


def test_plain_misere_is_never_exposed():
    """§7: only open misère exposes the contractor's hand."""
    d = make_deal("australian", [None] * 4, dealer=2)
    act(d, "7S MISERE PASS PASS PASS")
    discard_kitty(d)
    while not d.is_over:
        assert not d.exposed and d.exposed_cards() == 0
        d.apply_action(d.legal_actions()[0])


# -- §7 lead order ------------------------------------------------------------------------------------

@pytest.mark.parametrize("preset", ["australian", "italian_3p", "french_46"])
def test_contractor_leads_then_each_winner_leads(preset):
    """§7: "The contractor leads to the first trick. Play goes clockwise; each trick's winner leads
    the next"."""
    rules = make_rules(preset)
    n = rules.num_players
    d = make_deal(rules, [None] * n, dealer=0)
    act(d, "PASS 6S PASS" + " PASS" * (n - 3))  # seat 2 becomes the contractor
    contractor = 2
    assert d.contractor == contractor
    discard_kitty(d)
    while d.phase != Phase.PLAY:
        d.apply_action(d.legal_actions()[0])
    assert d.to_act == contractor
    play_out(d)
    assert d.tricks[0][0] == contractor
    for prev, nxt in zip(d.tricks, d.tricks[1:], strict=False):
        assert nxt[0] == prev[3]
    for leader, _, plays, _ in d.tricks:
        assert [s for s, _ in plays] == [(leader + i) % n for i in range(n)]
