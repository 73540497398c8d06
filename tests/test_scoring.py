"""docs/rules.md §8: scoring — made and lost contracts, the slam bonus, defence tricks, misère.

The deals here are *forced*: the number of tricks each side takes does not depend on how anyone
plays (see conftest: AU_SEVEN, FR_SEVEN, TOP_HEARTS), so every score is exact."""

from __future__ import annotations

import pytest
from conftest import (
    AU_SEVEN,
    AU_SEVEN_KITTY,
    AU_SEVEN_LEADS,
    FR_SEVEN,
    FR_SEVEN_KITTY,
    FR_SEVEN_LEADS,
    act,
    all_tricks_deal,
    discard_kitty,
    make_deal,
    play_out,
)

from five_hundred_env import make_rules


def seven_three(preset: str, contract: str, **options):
    """Team 0 (contractor seat 0) takes exactly 7 tricks with hearts trumps, team 1 exactly 3."""
    hands, kitty, leads = {
        "australian": (AU_SEVEN, AU_SEVEN_KITTY, AU_SEVEN_LEADS),
        "french_46": (FR_SEVEN, FR_SEVEN_KITTY, FR_SEVEN_LEADS),
    }[preset]
    d = make_deal(preset, hands, kitty, dealer=3, **options)
    act(d, f"{contract} PASS PASS PASS")
    discard_kitty(d)
    play_out(d, {0: leads})
    assert d.side_tricks() == [7, 3]
    return d


def slam(preset: str, contract: str, holder: int = 0, **options):
    """Seat ``holder`` has the ten top hearts; seat 0 (or seat 0 of 3) bids ``contract``."""
    rules = make_rules(preset, **options)
    d = all_tricks_deal(rules, holder, dealer=rules.num_players - 1)
    act(d, contract + " PASS" * (rules.num_players - 1))
    discard_kitty(d)
    play_out(d)
    return d


@pytest.mark.parametrize("preset", ["australian", "french_46"])
@pytest.mark.parametrize(
    ("contract", "expected"),
    [("6H", [100, 30]), ("7H", [200, 30]), ("8H", [-300, 30]), ("9H", [-400, 30]), ("10H", [-500, 30])],
)
def test_made_and_lost(preset, contract, expected):
    """§8: "Contract made: the contractor's side scores the bid value"; "Contract lost: the bid
    value is subtracted"; "each opposing side scores 10 per trick it won, made or lost"."""
    d = seven_three(preset, contract)
    assert d.contract_made() is (expected[0] > 0)
    assert d.score_change == expected


@pytest.mark.parametrize(
    ("option", "contract", "expected"),
    [
        ("10_per_trick", "7H", [200, 30]),
        ("10_per_trick", "8H", [-300, 30]),
        ("none", "7H", [200, 0]),
        ("none", "8H", [-300, 0]),
        ("only_when_lost", "7H", [200, 0]),
        ("only_when_lost", "8H", [-300, 30]),
    ],
)
def test_defence_tricks_option(option, contract, expected):
    """§8 `defence_tricks`: `10_per_trick`; variants `none`, `only_when_lost` [AU variants]."""
    assert seven_three("australian", contract, defence_tricks=option).score_change == expected


@pytest.mark.parametrize(
    ("contract", "options", "expected"),
    [
        ("6H", {}, 250),  # 100 < 250
        ("7H", {}, 250),
        ("8H", {}, 300),  # worth 300 already: no bonus
        ("9H", {}, 400),
        ("10H", {}, 500),
        ("6H", {"slam_bonus": False}, 100),
        ("7H", {"slam_bonus": False}, 200),
    ],
)
def test_slam_bonus_australian(contract, options, expected):
    """§8: "With `slam_bonus`, winning all 10 tricks with a bid worth less than 250 scores 250
    instead [AU]"."""
    d = slam("australian", contract, **options)
    assert d.side_tricks() == [10, 0]
    assert d.score_change == [expected, 0]


@pytest.mark.parametrize(
    ("hand", "contract", "expected"),
    [
        ("JK Js Jc As Ks Qs Ts 9s 8s 7s", "8S", 250),  # 240 < 250
        ("JK Js Jc As Ks Qs Ts 9s 8s 7s", "9S", 340),
        ("As Ks Qs Js Ts 9s 8s 7s 6s 5s", "8NT", 320),  # 320: no bonus
        ("As Ks Qs Js Ts 9s 8s 7s 6s 5s", "7NT", 250),  # 220 < 250
        ("As Ks Qs Js Ts 9s 8s 7s 6s 5s", "6NT", 250),
    ],
)
def test_slam_bonus_only_below_250(hand, contract, expected):
    """§8: ten tricks on 8S (240) score 250, but on 8NT (320) they score 320. With no trumps the
    joker lies in the kitty and seat 0 holds every spade, so it takes every trick."""
    d = make_deal("australian", {0: hand}, kitty="JK Ad Ah" if "NT" in contract else None, dealer=3)
    act(d, f"{contract} PASS PASS PASS")
    discard_kitty(d)
    play_out(d, {0: hand})
    assert d.side_tricks() == [10, 0]
    assert d.score_change == [expected, 0]


def test_slam_counts_the_side_not_the_contractor():
    """§8: the bonus is for the side "winning all 10 tricks": the partner's tricks count."""
    d = slam("australian", "6H", holder=2)
    assert d.tricks_won[0] == 0 and d.side_tricks() == [10, 0]
    assert d.score_change == [250, 0]


@pytest.mark.parametrize(("preset", "sides"), [("italian_3p", 3), ("french_46", 2)])
def test_no_slam_bonus_in_italian_and_french(preset, sides):
    """§2 `slam_bonus`: no in italian_3p and french_46 — ten tricks on 6H score 100."""
    d = slam(preset, "6H")
    assert d.score_change == [100] + [0] * (sides - 1)


def test_slam_bonus_can_be_switched_on_elsewhere():
    """§2/§8: `slam_bonus` is an option of every preset."""
    assert slam("italian_3p", "6H", slam_bonus=True).score_change == [250, 0, 0]


def test_lost_contract_with_no_tricks():
    """§8: lost: "the bid value is subtracted"; the defence scores 10 for each of its 10 tricks."""
    d = slam("australian", "6H", holder=1)
    assert d.side_tricks() == [0, 10]
    assert d.score_change == [-100, 100]
    assert not d.contract_made()


def test_italian_each_opponent_scores_its_own_tricks():
    """§2 `defence_tricks` [IT]: `10_per_trick` "(each opponent, own tricks)": seat 1 took all ten
    tricks, seat 2 none."""
    d = slam("italian_3p", "6H", holder=1)
    assert d.tricks_won == [0, 10, 0]
    assert d.score_change == [-100, 100, 0]
    d = slam("italian_3p", "6H", holder=2)
    assert d.score_change == [-100, 0, 100]


# -- misère -----------------------------------------------------------------------------------------

# [AU] seat 0 holds the lowest card of every suit it has (the joker is in the kitty): it can never
# win a trick. With the ace of spades instead of the five it wins the first trick.
AU_LOWEST = "5s 6s 7s 5c 6c 7c 4d 5d 4h 5h"
AU_ACE = "As 6s 7s 5c 6c 7c 4d 5d 4h 5h"


def misere(preset, hand_text, contract, leads=None, **options):
    rules = make_rules(preset, **options)
    n = rules.num_players
    if n == 4:
        auction = "OPEN_MISERE PASS PASS PASS" if contract == "OPEN_MISERE" else "7S MISERE PASS PASS PASS"
        dealer = 3 if contract == "OPEN_MISERE" else 2
    else:
        auction, dealer = f"{contract} PASS PASS", 2
    d = make_deal(rules, {0: hand_text}, kitty="JK Ad Ah", dealer=dealer)
    act(d, auction)
    assert d.contractor == 0
    discard_kitty(d)
    play_out(d, {0: leads or hand_text})
    return d


@pytest.mark.parametrize(
    ("contract", "hand_text", "expected"),
    [("MISERE", AU_LOWEST, [250, 0]), ("MISERE", AU_ACE, [-250, 0]),
     ("OPEN_MISERE", AU_LOWEST, [500, 0]), ("OPEN_MISERE", AU_ACE, [-500, 0])],
)
def test_misere_scores(contract, hand_text, expected):
    """§8: "the contractor's side scores +`misere_value` (250) / +500 if the contractor takes no
    trick, −`misere_value` / −500 otherwise [AU]. `misere_defence=nothing` [AU]"."""
    d = misere("australian", hand_text, contract)
    assert (d.tricks_won[0] == 0) is (expected[0] > 0)
    assert d.score_change == expected


@pytest.mark.parametrize(("hand_text", "expected"), [(AU_LOWEST, [150, 0]), (AU_ACE, [-150, 0])])
def test_misere_value_option(hand_text, expected):
    """§2/§8: `misere_value` is what misère scores (the [AU] variant list mentions 150); open
    misère stays 500."""
    assert misere("australian", hand_text, "MISERE", misere_value=150).score_change == expected
    open_expected = [500 if expected[0] > 0 else -500, 0]
    assert misere("australian", hand_text, "OPEN_MISERE", misere_value=150).score_change == open_expected


# [IT] seat 0 takes exactly two tricks (the top spades, led first), then never another: all its
# other cards are the lowest of their suits.
IT_TWO = "As Ks 7s 8s 7c 8c 7d 8d 7h 8h"
IT_NONE = "7s 8s 9s 7c 8c 9c 7d 8d 7h 8h"


@pytest.mark.parametrize("contract", ["MISERE", "OPEN_MISERE"])
def test_italian_misere_defence(contract):
    """§8: "`10_per_declarer_trick`: each opposing side scores 10 for every trick the contractor
    took [IT]"."""
    value = 250 if contract == "MISERE" else 500
    d = misere("italian_3p", IT_TWO, contract)
    assert d.tricks_won[0] == 2
    assert d.score_change == [-value, 20, 20]
    d = misere("italian_3p", IT_NONE, contract)
    assert d.tricks_won[0] == 0
    assert d.score_change == [value, 0, 0]


def test_misere_defence_option_elsewhere():
    """§2: `misere_defence` is an option of every preset; in 4 players each opposing *side*."""
    d = misere("australian", "As Ks 5s 5c 6c 7c 4d 5d 4h 5h", "MISERE", misere_defence="10_per_declarer_trick")
    assert d.tricks_won[0] == 2
    assert d.score_change == [-250, 20]
    d = misere("italian_3p", IT_TWO, "MISERE", misere_defence="nothing")
    assert d.score_change == [-250, 0, 0]


def test_misere_ignores_defence_tricks():
    """§8: defence tricks are for trick contracts; a misère's defenders score only by
    `misere_defence` (nothing in [AU]) however many tricks they take."""
    d = misere("australian", AU_LOWEST, "MISERE")
    assert d.side_tricks()[1] == 10 and d.score_change == [250, 0]


# -- the pure scoring functions (five_hundred_env.scoring), which agents call too ------------------
def test_deal_score_function_values():
    """§8: 'a contract that is made scores its value; a lost contract loses it'; defenders 10 a trick;
    a made slam below 250 scores 250 with the slam bonus."""
    from five_hundred_env.actions import MISERE, parse_action
    from five_hundred_env.scoring import contract_type, deal_score

    au = make_rules("australian")
    seven_h = parse_action("7H", au)
    assert deal_score(au, seven_h, 0, [4, 2, 3, 1]) == [200, 30]
    assert deal_score(au, seven_h, 1, [4, 2, 3, 1]) == [70, -200]
    assert deal_score(au, seven_h, 0, [6, 0, 4, 0]) == [250, 0]  # slam: 10 tricks
    assert deal_score(make_rules("australian", slam_bonus=False), seven_h, 0, [6, 0, 4, 0]) == [200, 0]
    assert deal_score(au, MISERE, 0, [0, 5, 0, 5]) == [250, 0]
    assert deal_score(au, MISERE, 0, [1, 5, 0, 4]) == [-250, 0]
    it = make_rules("italian_3p")  # misère defence: 10 per declarer trick to each opponent
    assert deal_score(it, MISERE, 1, [5, 2, 3]) == [20, -250, 20]
    assert [contract_type(parse_action(b, au)) for b in ("7H", "8NT", "MISERE", "OPEN_MISERE")] == [
        "suit", "no_trumps", "misere", "misere"]


def test_rules_partners():
    """§2: four players play in two partnerships (seats opposite); three players each alone."""
    au, it = make_rules("australian"), make_rules("italian_3p")
    assert [au.partner_of(s) for s in range(4)] == [2, 3, 0, 1]
    assert [it.partner_of(s) for s in range(3)] == [None, None, None]
    assert au.seats_of(1) == (1, 3) and it.seats_of(2) == (2,)
    assert au.has_partners and not it.has_partners
