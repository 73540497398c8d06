"""docs/rules.md §5: the kitty — the contractor takes it, then discards as many cards, any cards."""

from __future__ import annotations

import pytest
from conftest import AU_SEVEN, AU_SEVEN_KITTY, FR_SEVEN, FR_SEVEN_KITTY, act, cards, hand, legal, make_deal, names

from five_hundred_env import IllegalActionError, make_rules
from five_hundred_env.engine import Phase

IT_HANDS = [
    "JK Jh Jd Ah Kh Qh Th 7s 8s 9s",
    "9h 8h 7h As Ks Qs Js Ts 7c 8c",
    "9c Tc Jc Qc Kc Ac 7d 8d 9d Td",
]
IT_KITTY = "Qd Kd Ad"

CASES = {
    "australian": (AU_SEVEN, AU_SEVEN_KITTY, 3, "7H PASS PASS PASS"),
    "italian_3p": (IT_HANDS, IT_KITTY, 2, "7H PASS PASS"),
    "french_46": (FR_SEVEN, FR_SEVEN_KITTY, 3, "7H PASS PASS PASS"),
}


def after_auction(preset):
    hands, kitty, dealer, auction = CASES[preset]
    d = make_deal(preset, hands, kitty, dealer=dealer)
    act(d, auction)
    return d, hands, kitty


@pytest.mark.parametrize("preset", sorted(CASES))
def test_contractor_takes_the_kitty(preset):
    """§5: "The contractor adds the kitty to their hand without showing it"."""
    d, hands, kitty = after_auction(preset)
    assert d.phase == Phase.DISCARD and d.to_act == d.contractor == 0
    assert hand(d, 0) == set(cards(hands[0])) | set(cards(kitty))
    assert len(hand(d, 0)) == 10 + make_rules(preset).kitty_size
    # Every card of the enlarged hand may be discarded, and nothing else.
    assert legal(d) == hand(d, 0)
    for seat in range(1, d.n):
        assert hand(d, seat) == set(cards(hands[seat]))
    assert d.card_locations()["kitty"] == 0


@pytest.mark.parametrize("preset", sorted(CASES))
def test_discard_as_many_as_the_kitty_held_any_cards(preset):
    """§5: "then discards as many cards as the kitty held, face down; discards may be any cards,
    kitty or hand". Discards are out of the deal."""
    d, hands, kitty = after_auction(preset)
    size = d.rules.kitty_size
    kept_from_kitty = cards(kitty)[0]
    # Discard hand cards only (keep the whole kitty), one at a time.
    discards = [c for c in cards(hands[0]) if not c.startswith("JK") and c not in ("Jh", "Jd")][:size]
    for c in discards:
        assert d.phase == Phase.DISCARD and d.to_act == 0
        act(d, c)
        assert c not in hand(d, 0)
    assert d.phase == Phase.PLAY  # a trump contract: no nomination
    assert names(d, d.discards) == set(discards)
    assert kept_from_kitty in hand(d, 0)
    assert len(hand(d, 0)) == 10
    assert d.to_act == 0  # §7: the contractor leads to the first trick
    for c in discards:
        with pytest.raises(IllegalActionError):
            act(d, c)  # out of the deal: never playable


def test_discard_mixed_kitty_and_hand_cards():
    """§5: "discards may be any cards, kitty or hand"."""
    d, _hands, kitty = after_auction("australian")
    act(d, f"{cards(kitty)[0]} 5s {cards(kitty)[2]}")
    assert names(d, d.discards) == {cards(kitty)[0], "5s", cards(kitty)[2]}
    assert cards(kitty)[1] in hand(d, 0) and "5s" not in hand(d, 0)


def test_only_cards_in_hand_can_be_discarded():
    """§5: the discards come from the contractor's enlarged hand; twice is impossible."""
    d, _hands, _kitty = after_auction("australian")
    for bad in ("9h", "PASS", "7S", "NOMINATE_H", "JK:H"):
        with pytest.raises(IllegalActionError):
            act(d, bad)
    act(d, "5s")
    with pytest.raises(IllegalActionError):
        act(d, "5s")
    assert d.discards.bit_count() == 1


def test_card_locations_through_the_kitty():
    """§5: the kitty is a place of its own until the contractor takes it; discards afterwards."""
    d = make_deal("australian", AU_SEVEN, AU_SEVEN_KITTY, dealer=3)
    loc = d.card_locations()
    assert names(d, loc["kitty"]) == set(cards(AU_SEVEN_KITTY))
    act(d, "7H PASS PASS PASS")
    assert d.card_locations()["kitty"] == 0
    act(d, "Qd 5s Kd")
    loc = d.card_locations()
    assert names(d, loc["discards"]) == {"Qd", "5s", "Kd"}
    assert names(d, loc["hand0"]) == set(cards(AU_SEVEN[0])) - {"5s"} | {"Ad"}


def test_kitty_taken_by_a_misere_contractor():
    """§5 applies to every contract, misère included: the contractor discards three."""
    d = make_deal("australian", [None] * 4, dealer=2)
    act(d, "7S MISERE PASS PASS PASS")
    assert d.contractor == 0 and d.phase == Phase.DISCARD and len(hand(d, 0)) == 13
