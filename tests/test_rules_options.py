"""docs/rules.md §2: the presets, the rule options, and the validation of options and combinations."""

from __future__ import annotations

import pytest
from conftest import PRESET_NAMES, act, deck_names, discard_kitty, legal, make_deal, play_out

from five_hundred_env import PRESETS, Rules, make_rules
from five_hundred_env.cards import popcount

# §2 table, row by row: (option, australian, italian_3p, french_46).
TABLE = [
    ("num_players", 4, 3, 4),
    ("hand_size", 10, 10, 10),
    ("kitty_size", 3, 3, 6),
    ("bidding", "until_passed", "single_round", "until_passed"),
    ("rebid_after_pass", False, False, False),
    ("misere", "after_seven", "any_time", "none"),
    ("misere_value", 250, 250, 250),
    ("open_misere", "between_10D_10H", "highest", "none"),
    ("open_misere_exposure", "after_first_trick", "before_first_lead", "after_first_trick"),
    ("joker_nomination", "nt_and_misere", "none", "none"),
    ("joker_lead_suit", "not_yet_led", "not_shown_void", "not_shown_void"),
    ("defence_tricks", "10_per_trick", "10_per_trick", "10_per_trick"),
    ("misere_defence", "nothing", "10_per_declarer_trick", "nothing"),
    ("slam_bonus", True, False, False),
    ("win_needs_contract", True, True, False),
    ("both_jokers_min_bid", None, None, None),
    ("target", 500, 500, 500),
    ("losing_score", -500, -500, -500),
]


@pytest.mark.parametrize("row", TABLE, ids=[r[0] for r in TABLE])
def test_preset_table(row):
    """§2: each preset sets every option the way the table says."""
    name, *values = row
    for preset, value in zip(PRESET_NAMES, values, strict=True):
        assert getattr(make_rules(preset), name) == value, (preset, name)


def test_default_preset_is_australian():
    """§2: `australian` (default)."""
    assert make_rules() == make_rules("australian")
    assert Rules() == make_rules("australian")


def _ranks(names, suit):
    return "".join(n[0] for n in names if n[-1] == suit)


def test_australian_deck():
    """§2 [AU]: 43 cards: ♥♦ 4–A, ♠♣ 5–A, one joker."""
    names = deck_names(make_rules("australian"))
    assert len(names) == 43 == popcount(make_rules("australian").deck)
    assert _ranks(names, "s") == _ranks(names, "c") == "56789TJQKA"
    assert _ranks(names, "d") == _ranks(names, "h") == "456789TJQKA"
    assert [n for n in names if n.startswith("JK")] == ["JK"]


def test_italian_deck():
    """§2 [IT]: 33 cards: 7–A in each suit, one joker."""
    names = deck_names(make_rules("italian_3p"))
    assert len(names) == 33
    for suit in "scdh":
        assert _ranks(names, suit) == "789TJQKA"
    assert [n for n in names if n.startswith("JK")] == ["JK"]


def test_french_deck():
    """§2 [FR]: 46 cards: 4–A in each suit, two jokers (JK1, JK2: §1)."""
    rules = make_rules("french_46")
    names = deck_names(rules)
    assert len(names) == 46
    for suit in "scdh":
        assert _ranks(names, suit) == "456789TJQKA"
    assert [n for n in names if n.startswith("JK")] == ["JK1", "JK2"]
    assert rules.num_jokers == 2


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_deck_is_hands_plus_kitty(preset):
    """§2/§3: each player gets 10 cards, the rest (3, or 6 [FR]) form the kitty."""
    rules = make_rules(preset)
    assert popcount(rules.deck) == rules.num_players * 10 + rules.kitty_size


def test_teams():
    """§1: with 4 players seats {0, 2} are team 0 and {1, 3} team 1; with 3 everyone is alone."""
    au = make_rules("australian")
    assert [au.side_of(s) for s in range(4)] == [0, 1, 0, 1]
    assert au.num_sides == 2
    it = make_rules("italian_3p")
    assert [it.side_of(s) for s in range(3)] == [0, 1, 2]
    assert it.num_sides == 3


def test_any_option_can_be_overridden_independently():
    """§2: "any preset can be taken and any option changed (for example australian with
    slam_bonus=False, or french_46 with misere=after_seven)"."""
    r = make_rules("australian", slam_bonus=False)
    assert r.slam_bonus is False and r.preset == "australian" and r.misere == "after_seven"
    r = make_rules("french_46", misere="after_seven")
    assert r.misere == "after_seven" and r.win_needs_contract is False and r.kitty_size == 6
    # ... and the overridden option really applies: misère is biddable after a 7 bid in french_46.
    d = make_deal(r, [None] * 4, dealer=3)
    act(d, "7S")
    assert "MISERE" in legal(d)
    d = make_deal("french_46", [None] * 4, dealer=3)
    act(d, "7S")
    assert "MISERE" not in legal(d)


def test_overridden_slam_bonus_applies():
    """§2 example `australian` with `slam_bonus=False`: ten tricks on 7H score 200, not 250 (§8)."""
    for slam, expected in ((True, 250), (False, 200)):
        d = make_deal("australian", {0: "JK Jh Jd Ah Kh Qh Th 9h 8h 7h"}, dealer=3, slam_bonus=slam)
        act(d, "7H PASS PASS PASS")
        discard_kitty(d, "")
        play_out(d)
        assert d.score_change == [expected, 0]


def test_override_from_a_rules_object():
    """§2: options are independent — overriding one keeps the others."""
    base = make_rules("italian_3p", misere_value=150)
    r = make_rules(base, slam_bonus=True)
    assert r.misere_value == 150 and r.slam_bonus is True and r.preset == "italian_3p"


@pytest.mark.parametrize(
    ("option", "value"),
    [("num_players", 3), ("hand_size", 9), ("kitty_size", 6)],
)
def test_fixed_by_preset(option, value):
    """§2: "The players, the deck, the hand and kitty sizes and the teams are fixed by the preset"."""
    with pytest.raises(ValueError, match=option):
        make_rules("australian", **{option: value})


CHOICES = {
    "bidding": ["until_passed", "single_round"],
    "misere": ["after_seven", "any_time", "none"],
    "open_misere": ["between_10D_10H", "highest", "none"],
    "open_misere_exposure": ["after_first_trick", "before_first_lead"],
    "joker_nomination": ["nt_and_misere", "misere_only", "none"],
    "joker_lead_suit": ["not_yet_led", "not_shown_void"],
    "defence_tricks": ["10_per_trick", "none", "only_when_lost"],
    "misere_defence": ["nothing", "10_per_declarer_trick"],
}


@pytest.mark.parametrize("option", sorted(CHOICES))
def test_each_choice_is_accepted_and_others_refused(option):
    """§2: "The values each option takes" — each listed value works, anything else is refused
    with an error naming the option."""
    for value in CHOICES[option]:
        assert getattr(make_rules("australian", **{option: value}), option) == value
    for bad in ("bogus", "", None, 1):
        with pytest.raises(ValueError, match=option):
            make_rules("australian", **{option: bad})


@pytest.mark.parametrize("option", ["rebid_after_pass", "slam_bonus", "win_needs_contract"])
def test_boolean_options(option):
    """§2: `rebid_after_pass`, `slam_bonus`, `win_needs_contract`: true or false."""
    for value in (True, False):
        assert getattr(make_rules("french_46", **{option: value}), option) is value
    for bad in ("yes", 1, None):
        with pytest.raises(ValueError, match=option):
            make_rules("french_46", **{option: bad})


def test_misere_value():
    """§2: `misere_value`: a positive number of points (the [AU] variant list mentions 150)."""
    assert make_rules("australian", misere_value=150).misere_value == 150
    for bad in (0, -250, 2.5, True, "150"):
        with pytest.raises(ValueError, match="misere_value"):
            make_rules("australian", misere_value=bad)


def test_both_jokers_min_bid_values():
    """§2: `both_jokers_min_bid`: off or a number of tricks from 6 to 10."""
    for tricks in range(6, 11):
        assert make_rules("french_46", both_jokers_min_bid=tricks).both_jokers_min_bid == tricks
    assert make_rules("french_46", both_jokers_min_bid=None).both_jokers_min_bid is None
    for bad in (5, 11, 0, 8.0, True):
        with pytest.raises(ValueError, match="both_jokers_min_bid"):
            make_rules("french_46", both_jokers_min_bid=bad)


@pytest.mark.parametrize("preset", ["australian", "italian_3p"])
def test_both_jokers_min_bid_needs_two_jokers(preset):
    """§2: "Invalid combinations are refused with a clear error naming the option:
    `both_jokers_min_bid` needs a two-joker deck"."""
    with pytest.raises(ValueError, match="both_jokers_min_bid") as e:
        make_rules(preset, both_jokers_min_bid=8)
    assert "two-joker" in str(e.value)


@pytest.mark.parametrize("value", ["nt_and_misere", "misere_only"])
def test_joker_nomination_needs_one_joker(value):
    """§2: "`joker_nomination` needs a one-joker deck"."""
    with pytest.raises(ValueError, match="joker_nomination") as e:
        make_rules("french_46", joker_nomination=value)
    assert "one-joker" in str(e.value)
    assert make_rules("french_46", joker_nomination="none").joker_nomination == "none"
    assert make_rules("italian_3p", joker_nomination=value).joker_nomination == value


@pytest.mark.parametrize(
    ("target", "losing", "named"),
    [(0, -500, "target"), (-10, -500, "target"), (500, 0, "losing_score"), (500, 10, "losing_score"), (1.5, -500, "target")],
)
def test_target_and_losing_score(target, losing, named):
    """§2: `target` > 0 > `losing_score`."""
    with pytest.raises(ValueError, match=named):
        make_rules("australian", target=target, losing_score=losing)


def test_target_and_losing_score_can_change():
    """§2: `target` / `losing_score` are options (500 / −500 by default)."""
    r = make_rules("australian", target=1000, losing_score=-1000)
    assert (r.target, r.losing_score) == (1000, -1000)


def test_unknown_option_and_preset():
    """§2: invalid options are refused with an error naming them."""
    with pytest.raises(ValueError, match="slam_bonsu"):
        make_rules("australian", slam_bonsu=False)
    with pytest.raises(ValueError, match="belote"):
        make_rules("belote")


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_rules_round_trip_through_dict(preset):
    """Records carry every option (§1 replays): to_dict / from_dict rebuild equal rules."""
    r = make_rules(preset, defence_tricks="only_when_lost", target=600)
    assert Rules.from_dict(r.to_dict()) == r
    assert set(PRESETS[preset]) <= set(r.to_dict())


def test_the_australian_options_have_one_home():
    """§2: the Rules defaults are the australian preset; every preset's options build on them."""
    defaults = Rules().to_dict()
    assert defaults.pop("preset") == "australian"
    assert PRESETS["australian"] == defaults and Rules() == make_rules("australian")
    for preset, options in PRESETS.items():
        assert make_rules(preset).to_dict() == {"preset": preset, **options}


@pytest.mark.parametrize("preset", ["australian", "italian_3p", "french_46"])
def test_sides_partition_the_seats_and_partners_are_mutual(preset):
    """§1: with 4 players seats {0, 2} are team 0 and {1, 3} team 1; with 3 everyone plays alone."""
    rules = make_rules(preset)
    n = rules.num_players
    assert sorted(s for side in range(rules.num_sides) for s in rules.seats_of(side)) == list(range(n))
    for seat in range(n):
        partner = rules.partner_of(seat)
        assert seat in rules.seats_of(rules.side_of(seat))
        assert (partner is not None) == rules.has_partners == (n == 4)
        if partner is not None:
            assert rules.partner_of(partner) == seat and partner == (seat + 2) % 4
