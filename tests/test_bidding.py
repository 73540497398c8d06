"""docs/rules.md §4: bidding — turn order, bid order, misère and open misère ranks, the three ways an
auction ends, the throw-in, and `both_jokers_min_bid`."""

from __future__ import annotations

import pytest
from conftest import PRESET_NAMES, act, legal, make_deal

from five_hundred_env import Game, IllegalActionError, make_rules, parse_action
from five_hundred_env.actions import bid_value
from five_hundred_env.engine import Phase

STRAINS = ("S", "C", "D", "H", "NT")
ALL_TRICK_BIDS = [f"{t}{s}" for t in range(6, 11) for s in STRAINS]


def trick_bids_above(bid: str) -> set[str]:
    return set(ALL_TRICK_BIDS[ALL_TRICK_BIDS.index(bid) + 1:])


def fresh(preset="australian", dealer=None, **options):
    rules = make_rules(preset, **options)
    if dealer is None:
        dealer = rules.num_players - 1  # seat 0 bids first
    return make_deal(rules, [None] * rules.num_players, dealer=dealer)


def bidders(deal, actions: str) -> list[int]:
    """Apply the actions; return the seat that made each one."""
    seats = []
    for text in actions.split():
        seats.append(deal.to_act)
        act(deal, text)
    return seats


# -- turn order ---------------------------------------------------------------------------------

@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_bidding_starts_left_of_dealer_and_goes_clockwise(preset):
    """§4: "Bidding starts with the player to the dealer's left and goes clockwise"; §1: the left
    of seat i is (i + 1) % n."""
    n = make_rules(preset).num_players
    for dealer in range(n):
        d = fresh(preset, dealer=dealer)
        assert d.phase == Phase.BIDDING
        seats = bidders(d, " ".join(["6S"] + ["PASS"] * (n - 1)))
        assert seats == [(dealer + 1 + i) % n for i in range(n)]


# -- bid order ------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("preset", "expected"),
    [
        ("australian", {"PASS", *ALL_TRICK_BIDS, "OPEN_MISERE"}),  # misère only after a 7 bid
        ("italian_3p", {"PASS", *ALL_TRICK_BIDS, "MISERE", "OPEN_MISERE"}),
        ("french_46", {"PASS", *ALL_TRICK_BIDS}),  # misere=none, open_misere=none
    ],
)
def test_opening_bids(preset, expected):
    """§4: each turn `PASS` or a bid higher than the current highest bid; §2 misère options."""
    assert legal(fresh(preset)) == expected


@pytest.mark.parametrize("preset", PRESET_NAMES)
@pytest.mark.parametrize("bid", ["6S", "6NT", "7H", "8D", "9NT", "10D"])
def test_only_higher_trick_bids(preset, bid):
    """§4: a bid must be higher than the current highest: by tricks, then S < C < D < H < NT."""
    d = fresh(preset)
    act(d, bid)
    assert {b for b in legal(d) if b in ALL_TRICK_BIDS} == trick_bids_above(bid)
    assert "PASS" in legal(d)
    with pytest.raises(IllegalActionError):
        act(d, bid)


def test_last_bid_10nt_leaves_only_pass_without_open_misere():
    """§4: nothing outranks 10NT when there is no open misère (french_46)."""
    d = fresh("french_46")
    act(d, "10NT")
    assert legal(d) == {"PASS"}


@pytest.mark.parametrize(
    ("cell", "value"),
    [(f"{t}{s}", v) for t, row in zip(range(6, 11), [
        (40, 60, 80, 100, 120), (140, 160, 180, 200, 220), (240, 260, 280, 300, 320),
        (340, 360, 380, 400, 420), (440, 460, 480, 500, 520)], strict=True)
     for s, v in zip(STRAINS, row, strict=True)],
)
def test_avondale_table(cell, value):
    """§4: `value = 40 + 100 × (tricks − 6) + 20 × s`; the table."""
    assert bid_value(parse_action(cell, make_rules())) == value


def test_misere_values():
    """§4: `MISERE` = 250 (`misere_value`), `OPEN_MISERE` = 500."""
    r = make_rules()
    assert bid_value(parse_action("MISERE", r)) == 250
    assert bid_value(parse_action("MISERE", r), 150) == 150
    assert bid_value(parse_action("OPEN_MISERE", r)) == 500
    assert bid_value(parse_action("OPEN_MISERE", r), 150) == 500


# -- misère ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("bid", ["6S", "6H", "6NT"])
def test_after_seven_misere_not_before_a_seven_bid(bid):
    """§4 [AU] `misere=after_seven`: "`MISERE` may be bid only after someone in this deal has bid
    a 7-trick bid, that is, while the current highest bid is a 7-trick bid"."""
    d = fresh("australian")
    act(d, bid)
    assert "MISERE" not in legal(d)
    with pytest.raises(IllegalActionError):
        act(d, "MISERE")


@pytest.mark.parametrize("bid", ["7S", "7C", "7D", "7H", "7NT"])
def test_after_seven_misere_over_any_seven_bid(bid):
    """§4 [AU]: misère ranks above every 7-trick bid and may be bid while the highest is a 7 bid."""
    d = fresh("australian")
    act(d, bid)
    assert "MISERE" in legal(d)
    act(d, "MISERE")
    assert d.high_bid == parse_action("MISERE", d.rules)


def test_after_seven_misere_not_once_an_eight_bid_is_highest():
    """§4 [AU]: misère is below every 8-trick bid, so after 7S then 8S it is no longer biddable."""
    d = fresh("australian")
    act(d, "7S 8S")
    assert "MISERE" not in legal(d)


def test_misere_ranks_between_seven_and_eight_tricks():
    """§4: `MISERE` ranks above every 7-trick bid and below every 8-trick bid."""
    for preset, opening in (("australian", "7NT"), ("italian_3p", "")):
        d = fresh(preset)
        act(d, f"{opening} MISERE")
        assert {b for b in legal(d) if b in ALL_TRICK_BIDS} == trick_bids_above("7NT")
        assert "MISERE" not in legal(d)


def test_misere_rank_is_not_its_value():
    """§4: the bid order is by rank, not value: misère is worth 250 but 8S (240) outranks it and
    7NT (220) does not; with `misere_value=150` the rank is the same."""
    for value in (250, 150):
        d = fresh("australian", misere_value=value)
        act(d, "7NT")  # 220 > 150, yet misère still outranks it
        assert "MISERE" in legal(d)
        act(d, "MISERE")
        assert "8S" in legal(d)
        assert "7NT" not in legal(d)
        act(d, "8S")
        assert "MISERE" not in legal(d)


def test_any_time_misere():
    """§4 [IT] `misere=any_time`: whenever it outranks the current bid (same rank as [AU])."""
    d = fresh("italian_3p")
    assert "MISERE" in legal(d)
    act(d, "6S")
    assert "MISERE" in legal(d)
    d = fresh("italian_3p")
    act(d, "7NT")
    assert "MISERE" in legal(d)
    d = fresh("italian_3p")
    act(d, "8S")
    assert "MISERE" not in legal(d)
    d = fresh("australian", misere="any_time")
    assert "MISERE" in legal(d)


def test_no_misere_when_the_option_is_none():
    """§2 `misere=none` (french_46): no misère at all."""
    d = fresh("australian", misere="none")
    act(d, "7S")
    assert "MISERE" not in legal(d)


# -- open misère ----------------------------------------------------------------------------------

def test_open_misere_between_10d_and_10h():
    """§4 [AU]: `OPEN_MISERE` ranks between `10D` and `10H`."""
    d = fresh("australian")
    assert "OPEN_MISERE" in legal(d)  # no 7 bid needed
    act(d, "10D")
    assert "OPEN_MISERE" in legal(d)
    act(d, "OPEN_MISERE")
    assert legal(d) == {"PASS", "10H", "10NT"}
    d = fresh("australian")
    act(d, "10H")
    assert "OPEN_MISERE" not in legal(d)


def test_open_misere_outranks_misere():
    """§4: `OPEN_MISERE` ranks between `10D` and `10H` [AU], so above `MISERE` (between 7 and 8 tricks)."""
    d = fresh("australian")
    act(d, "7S MISERE")
    assert "OPEN_MISERE" in legal(d)


def test_open_misere_highest():
    """§4 [IT]: `OPEN_MISERE` ranks above every bid."""
    d = fresh("italian_3p")
    act(d, "10NT")
    assert "OPEN_MISERE" in legal(d)
    d = fresh("italian_3p")
    act(d, "OPEN_MISERE")
    assert legal(d) == {"PASS"}
    d = fresh("australian", open_misere="highest")
    act(d, "10NT")
    assert "OPEN_MISERE" in legal(d)


def test_no_open_misere_when_none():
    """§2 `open_misere=none`: no open misère bid."""
    d = fresh("australian", open_misere="none")
    assert "OPEN_MISERE" not in legal(d)


# -- until_passed -----------------------------------------------------------------------------------

@pytest.mark.parametrize("preset", ["australian", "french_46"])
def test_three_pass_then_fourth_bids_is_the_contract_at_once(preset):
    """§4 `until_passed`: "the high bidder is not asked again (so if three players pass and the
    fourth bids, that bid is the contract at once)"."""
    d = fresh(preset, dealer=0)
    assert bidders(d, "PASS PASS PASS 6S") == [1, 2, 3, 0]
    assert d.phase == Phase.DISCARD
    assert (d.contractor, d.contract) == (0, parse_action("6S", d.rules))
    assert d.to_act == 0


def test_high_bidder_not_asked_again():
    """§4: "The auction ends as soon as there is a bid and every other player has passed"."""
    d = fresh("australian", dealer=3)
    assert bidders(d, "6S PASS PASS PASS") == [0, 1, 2, 3]
    assert d.phase == Phase.DISCARD and d.contractor == 0


def test_passed_players_are_skipped():
    """§4: "a player who passed is skipped and may not bid again in this deal"."""
    d = fresh("australian", dealer=3)
    seats = bidders(d, "6S PASS 6C 6D 6H 7S PASS 7C PASS")
    #                   0   1    2  3  0  2   3    0   2
    assert seats == [0, 1, 2, 3, 0, 2, 3, 0, 2]
    assert d.phase == Phase.DISCARD
    assert (d.contractor, d.contract) == (0, parse_action("7C", d.rules))


def test_outbid_players_keep_bidding():
    """§4: bidding goes round as often as needed."""
    d = fresh("australian", dealer=3)
    seats = bidders(d, "6S 6C PASS PASS 6D PASS")
    assert seats == [0, 1, 2, 3, 0, 1]
    assert (d.contractor, d.contract) == (0, parse_action("6D", d.rules))


@pytest.mark.parametrize("preset", ["australian", "french_46"])
def test_all_pass_is_a_throw_in(preset):
    """§4: "If every player passes without a bid, the deal is thrown in ... scores do not change"."""
    d = fresh(preset)
    act(d, "PASS PASS PASS PASS")
    assert d.is_over and d.thrown_in
    assert d.score_change == [0, 0]
    assert d.legal_actions() == []
    assert d.contractor == -1
    with pytest.raises(IllegalActionError):
        act(d, "PASS")


# -- rebid_after_pass --------------------------------------------------------------------------------

def test_rebid_after_pass_passed_players_keep_their_turns():
    """§4 `rebid_after_pass` [AU variant]: "passed players keep their turns, and the auction ends
    when, after the last bid, every other player has passed in succession"."""
    d = fresh("australian", dealer=3, rebid_after_pass=True)
    seats = bidders(d, "PASS 6S PASS PASS")
    assert seats == [0, 1, 2, 3]
    assert d.to_act == 0 and d.phase == Phase.BIDDING  # seat 0 passed, yet bids again
    assert "6C" in legal(d)
    seats = bidders(d, "6C PASS PASS PASS")
    assert seats == [0, 1, 2, 3]
    assert (d.contractor, d.contract) == (0, parse_action("6C", d.rules))


def test_rebid_after_pass_three_pass_then_a_bid_is_not_the_end():
    """§4 `rebid_after_pass`: after the fourth player's bid the other three must pass again."""
    d = fresh("australian", dealer=3, rebid_after_pass=True)
    act(d, "PASS PASS PASS 6S")
    assert d.phase == Phase.BIDDING and d.to_act == 0
    seats = bidders(d, "PASS PASS PASS")
    assert seats == [0, 1, 2]
    assert (d.contractor, d.contract) == (3, parse_action("6S", d.rules))


def test_rebid_after_pass_passes_must_be_in_succession():
    """§4 `rebid_after_pass`: "every other player has passed in succession" after the last bid."""
    d = fresh("australian", dealer=3, rebid_after_pass=True)
    act(d, "6S PASS PASS 6C PASS PASS")
    assert d.phase == Phase.BIDDING and d.to_act == 2
    act(d, "PASS")
    assert (d.contractor, d.contract) == (3, parse_action("6C", d.rules))


def test_rebid_after_pass_all_pass_is_a_throw_in():
    """§4: every player passing without a bid is a throw-in, `rebid_after_pass` too."""
    d = fresh("australian", rebid_after_pass=True)
    act(d, "PASS PASS PASS PASS")
    assert d.thrown_in and d.score_change == [0, 0]


# -- single_round --------------------------------------------------------------------------------------

def test_single_round_each_bids_once():
    """§4 `single_round` [IT]: "each player, from the dealer's left to the dealer, bids or passes
    exactly once; the highest bid is the contract"."""
    d = fresh("italian_3p", dealer=2)
    seats = bidders(d, "6S 7S PASS")
    assert seats == [0, 1, 2]
    assert d.phase == Phase.DISCARD  # seat 0, outbid, is not asked again
    assert (d.contractor, d.contract) == (1, parse_action("7S", d.rules))


def test_single_round_dealer_bids_last():
    """§4 `single_round`: "from the dealer's left to the dealer"."""
    d = fresh("italian_3p", dealer=0)
    assert bidders(d, "PASS PASS 6H") == [1, 2, 0]
    assert (d.contractor, d.contract) == (0, parse_action("6H", d.rules))


def test_single_round_first_bid_stands_when_others_pass():
    """§4 `single_round`: "the highest bid is the contract"."""
    d = fresh("italian_3p", dealer=2)
    act(d, "9D PASS PASS")
    assert (d.contractor, d.contract) == (0, parse_action("9D", d.rules))


def test_single_round_all_pass_is_a_throw_in():
    """§4: the throw-in applies "in every preset"."""
    d = fresh("italian_3p")
    act(d, "PASS PASS PASS")
    assert d.thrown_in and d.score_change == [0, 0, 0]


def test_single_round_with_four_players():
    """§2/§4: `bidding=single_round` is an option of every preset (four turns with four players)."""
    d = fresh("australian", dealer=3, bidding="single_round")
    act(d, "6S 6C 6D")
    assert d.phase == Phase.BIDDING
    act(d, "PASS")
    assert (d.contractor, d.contract) == (2, parse_action("6D", d.rules))


def test_italian_until_passed_variant():
    """§4: "(The [IT] variant 'bidding goes round until two players pass' is `until_passed`.)"."""
    d = fresh("italian_3p", dealer=2, bidding="until_passed")
    seats = bidders(d, "6S 6C PASS 7S PASS")
    assert seats == [0, 1, 2, 0, 1]
    assert (d.contractor, d.contract) == (0, parse_action("7S", d.rules))


# -- both_jokers_min_bid ---------------------------------------------------------------------------------

def joker_deal(dealer=0, **options):
    """french_46 with seat 1 dealt both jokers."""
    rules = make_rules("french_46", **options)
    return make_deal(rules, {1: "JK1 JK2 Ah Kh Qh Jh Th 9h 8h 7h"}, dealer=dealer)


def test_both_jokers_holder_may_not_pass_below_eight():
    """§4 `both_jokers_min_bid=8` [FR option]: while the current highest bid is below 8 tricks (no
    bid …), a player whose dealt hand holds both jokers may not pass and may bid only trick bids
    of 8 tricks or more."""
    d = joker_deal(dealer=0, both_jokers_min_bid=8)
    assert d.to_act == 1
    assert legal(d) == {"8S", *trick_bids_above("8S")}
    with pytest.raises(IllegalActionError):
        act(d, "PASS")
    # Without the option the same hand may pass.
    d = joker_deal(dealer=0)
    assert "PASS" in legal(d) and "6S" in legal(d)


def test_both_jokers_holder_over_a_seven_bid_and_misere():
    """§4: "(no bid, any 6- or 7-trick bid, or misère) ... (no misère, no open misère)"."""
    opts = dict(both_jokers_min_bid=8, misere="after_seven", open_misere="between_10D_10H")
    d = joker_deal(dealer=3, **opts)
    act(d, "7NT")
    assert legal(d) == {"8S", *trick_bids_above("8S")}
    d = joker_deal(dealer=3, **opts)
    act(d, "6S")
    assert "MISERE" not in legal(d) and "OPEN_MISERE" not in legal(d) and "PASS" not in legal(d)
    # Another player's misère is still below 8 tricks: the holder must still bid 8+.
    d = joker_deal(dealer=2, **opts)
    act(d, "7S MISERE")
    assert d.to_act == 1
    assert legal(d) == {"8S", *trick_bids_above("8S")}


def test_both_jokers_holder_may_pass_once_eight_is_bid():
    """§4: "once the highest bid is of 8 tricks or more, they may pass"."""
    d = joker_deal(dealer=3, both_jokers_min_bid=8)
    act(d, "8S")
    assert legal(d) == {"PASS", *trick_bids_above("8S")}
    act(d, "PASS PASS PASS")
    assert (d.contractor, d.contract) == (0, parse_action("8S", d.rules))


def test_both_jokers_min_bid_other_thresholds():
    """§2: `both_jokers_min_bid` is a number of tricks from 6 to 10."""
    d = joker_deal(dealer=0, both_jokers_min_bid=10)
    assert legal(d) == {"10S", "10C", "10D", "10H", "10NT"}
    d = joker_deal(dealer=3, both_jokers_min_bid=10)
    act(d, "9NT")
    assert legal(d) == {"10S", "10C", "10D", "10H", "10NT"}


def test_both_jokers_only_binds_the_holder_of_both():
    """§4: only "a player whose dealt hand holds both jokers" is bound."""
    rules = make_rules("french_46", both_jokers_min_bid=8)
    d = make_deal(rules, {1: "JK1 Ah Kh Qh Jh Th 9h 8h 7h 6h", 2: "JK2 As Ks Qs Js Ts 9s 8s 7s 6s"}, dealer=0)
    assert "PASS" in legal(d)
    act(d, "PASS")
    assert "PASS" in legal(d)
    # Both jokers in the kitty: nobody is bound.
    d = make_deal(rules, [None] * 4, kitty="JK1 JK2 4s 5s 6s 7s", dealer=0)
    assert bidders(d, "PASS PASS PASS PASS") == [1, 2, 3, 0]
    assert d.thrown_in


# -- the throw-in in a game --------------------------------------------------------------------------------

@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_throw_in_leaves_scores_and_passes_the_deal(preset):
    """§4: "If every player passes without a bid, the deal is thrown in and the next dealer deals
    ... scores do not change"; §3: the deal passes to the left."""
    rules = make_rules(preset)
    n = rules.num_players
    start = [30, -40, 120][: rules.num_sides]
    dealer = n - 1
    game = Game(rules, first_deal=make_deal(rules, [None] * n, dealer=dealer), scores=start)
    for k in range(1, 4):
        for _ in range(n):
            game.apply_action(parse_action("PASS", rules))
        assert game.scores == start
        assert not game.is_over
        assert len(game.deals) == k + 1
        assert game.deals[-2].thrown_in
        assert game.deal.dealer == (dealer + k) % n
        assert game.deal.phase == Phase.BIDDING
        assert game.to_act == (dealer + k + 1) % n
