"""docs/rules.md §9 (winning the game) and §3 (the dealer rotation), through whole deals of a Game.

The deals are the forced ones of conftest, so the score of every deal is exact."""

from __future__ import annotations

import itertools
import random

import pytest
from conftest import (
    AU_SEVEN,
    AU_SEVEN_KITTY,
    AU_SEVEN_LEADS,
    FR_SEVEN,
    FR_SEVEN_KITTY,
    FR_SEVEN_LEADS,
    PRESET_NAMES,
    TOP_HEARTS,
    cards,
    make_deal,
    random_play,
    rotate,
)

from five_hundred_env import Game, IllegalActionError, make_rules, parse_action
from five_hundred_env.actions import card_action
from five_hundred_env.cards import mask_to_cards
from five_hundred_env.engine import Phase

SEVEN = {"australian": (AU_SEVEN, AU_SEVEN_KITTY, AU_SEVEN_LEADS), "french_46": (FR_SEVEN, FR_SEVEN_KITTY, FR_SEVEN_LEADS)}


def finish_deal(game: Game, auction: str, prefs: dict[int, str] | None = None) -> list[int]:
    """Play the current deal of ``game`` through the game: the auction, the kitty discarded back,
    then play (each seat the first legal card of its preference list, else its first legal action).
    Returns the deal's score change."""
    deal = game.deal
    rules = game.rules
    for text in auction.split():
        game.apply_action(parse_action(text, rules))
    if not deal.thrown_in:
        for c in mask_to_cards(deal.kitty):
            game.apply_action(card_action(c))
    prefs = {s: [parse_action(t, rules) for t in cards(p)] for s, p in (prefs or {}).items()}
    while not deal.is_over:
        options = game.legal_actions()
        choice = next((a for a in prefs.get(game.to_act, []) if a in options), options[0])
        game.apply_action(choice)
    return deal.score_change


def seven_deal(preset: str, contractor: int = 0, **options):
    """The forced deal where ``contractor``'s side takes exactly 7 tricks with hearts trumps
    (the contractor bids first)."""
    hands, kitty, leads = SEVEN[preset]
    rules = make_rules(preset, **options)
    deal = make_deal(rules, rotate(hands, contractor), kitty, dealer=(contractor - 1) % 4)
    return rules, deal, {contractor: leads}


def play_seven(scores, contract="7H", preset="australian", contractor=0, **options) -> Game:
    rules, deal, prefs = seven_deal(preset, contractor, **options)
    game = Game(rules, first_deal=deal, scores=scores)
    change = finish_deal(game, f"{contract} PASS PASS PASS", prefs)
    own, other = contractor % 2, 1 - contractor % 2
    made = contract in ("6H", "7H")
    value = {"6H": 100, "7H": 200, "8H": 300, "9H": 400}[contract]
    assert change[own] == (value if made else -value) and change[other] == 30
    return game


def test_contract_reaching_the_target_wins():
    """§9: "A side wins when it reaches the target (500: 'reach' means a score ≥ 500) by making a
    contract"."""
    game = play_seven([300, 0])
    assert game.scores == [500, 30]
    assert game.is_over and game.winners == [0]
    assert game.phase == Phase.GAME_OVER and game.legal_actions() == [] and game.to_act == -1
    assert game.winning_seats() == [0, 2]
    with pytest.raises(IllegalActionError):
        game.apply_action(0)
    assert len(game.deals) == 1  # no new deal after the end


def test_below_the_target_play_goes_on():
    """§9: "reach" means a score ≥ 500 — 499 is not enough; §3 the next deal is dealt by the left."""
    game = play_seven([299, 0])
    assert game.scores == [499, 30]
    assert not game.is_over and game.winners == []
    assert len(game.deals) == 2 and game.deal.dealer == 0  # §3: the deal passes to the left


@pytest.mark.parametrize("contract", ["7H", "8H"])
def test_defence_points_alone_do_not_win(contract):
    """§9: "points from defence tricks alone do not end the game, play goes on until a contract is
    made that takes a side to 500 or more" — team 1 defends from 480 to 510."""
    game = play_seven([0, 480], contract)
    assert game.scores[1] == 510
    assert not game.is_over


def test_contract_made_when_already_at_500_from_defence_wins():
    """§9: a side wins by making a contract "whether or not it was already at 500 from defence
    points". Team 1 reaches 510 defending, then makes 7H in the next deal."""
    rules, deal, prefs = seven_deal("australian", 0)
    game = Game(rules, first_deal=deal, scores=[0, 480])
    _, next_deal, next_prefs = seven_deal("australian", 1)  # dealt by seat 0: the next dealer
    game.upcoming_deals.append(next_deal)
    finish_deal(game, "8H PASS PASS PASS", prefs)
    assert game.scores == [-300, 510] and not game.is_over
    assert game.deal is next_deal
    finish_deal(game, "7H PASS PASS PASS", next_prefs)
    assert game.scores == [-270, 710]
    assert game.is_over and game.winners == [1]


def test_starting_above_500_from_defence_then_losing_is_no_win():
    """§9: at 520 from defence, losing a contract wins nothing."""
    game = play_seven([0, 520], "8H", contractor=1)
    assert game.scores == [30, 220] and not game.is_over


def test_only_the_contractors_side_wins_when_a_contract_is_needed():
    """§9 with `win_needs_contract`: the defending side also over 500 does not win."""
    game = play_seven([480, 510], "7H")
    assert game.scores == [680, 540]
    assert game.winners == [0]


def test_misere_is_a_contract_that_wins():
    """§9 "by making a contract": misère (§7: "misère" includes open misère) counts."""
    rules = make_rules("australian")
    deal = make_deal(rules, {0: "5s 6s 7s 5c 6c 7c 4d 5d 4h 5h"}, kitty="JK Ad Ah", dealer=2)
    game = Game(rules, first_deal=deal, scores=[300, 450])
    assert finish_deal(game, "7S MISERE PASS PASS PASS") == [250, 0]
    assert game.winners == [0]


# -- win_needs_contract=False [FR] ----------------------------------------------------------------------

def test_french_defence_points_count():
    """§9: "With `win_needs_contract=False`, defence points count too [FR]"."""
    game = play_seven([0, 480], "7H", preset="french_46")
    assert game.scores == [200, 510]
    assert game.is_over and game.winners == [1]


def test_french_several_reach_contractor_wins():
    """§9: "if several sides reach the target in the same deal, the contractor's side wins if it
    is among them"."""
    game = play_seven([480, 490], "7H", preset="french_46")
    assert game.scores == [680, 520]
    assert game.winners == [0]
    game = play_seven([490, 480], "7H", preset="french_46", contractor=1)
    assert game.scores == [520, 680]
    assert game.winners == [1]


def test_australian_with_win_needs_contract_false():
    """§2: `win_needs_contract` is an option of every preset."""
    game = play_seven([0, 480], "7H", win_needs_contract=False)
    assert game.winners == [1]


# [IT] seat 0 holds the lowest cards and bids 6NT; seat 1 takes the first trick with As, then
# leads Tc to seat 2, who takes the other nine.
IT_SPLIT = ["7s 8s 9s 7c 8c 7d 8d 9d 7h 8h", "As Ks Qs Js Ts Ad Kd Qd Jd Tc", "Ac Kc Qc Jc 9c Ah Kh Qh Jh Th"]
IT_SPLIT_KITTY = "JK Td 9h"
IT_SPLIT_PREFS = {0: "7s", 1: "As Tc", 2: "Th Ac Ah Kh Qh Jh Kc Qc Jc 9c"}


def play_split(scores, **options) -> Game:
    rules = make_rules("italian_3p", **options)
    game = Game(rules, first_deal=make_deal(rules, IT_SPLIT, IT_SPLIT_KITTY, dealer=2), scores=scores)
    assert finish_deal(game, "6NT PASS PASS", IT_SPLIT_PREFS) == [-120, 10, 90]
    assert game.deals[0].tricks_won == [0, 1, 9]
    return game


def test_three_players_several_reach_contractor_not_among_highest_wins():
    """§9: several sides reach the target, the contractor's side not among them: "otherwise the
    highest score wins"."""
    game = play_split([0, 495, 420], win_needs_contract=False)
    assert game.scores == [-120, 505, 510]
    assert game.winners == [2]


def test_three_players_several_reach_tied():
    """§9 does not say who wins a tie for the highest score among several sides at the target;
    the engine lets every tied side win, as §9 does for the −500 case."""
    game = play_split([0, 490, 410], win_needs_contract=False)
    assert game.scores == [-120, 500, 500]
    assert game.winners == [1, 2]


def test_three_players_defence_reach_needs_a_contract():
    """§9 [IT] `win_needs_contract`: defenders over 500 do not win."""
    game = play_split([0, 495, 420])
    assert game.scores == [-120, 505, 510] and not game.is_over


# -- −500 ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("start", "other"), [(-400, 0), (-200, 100), (-300, 480)])
def test_sinking_to_minus_500_loses(start, other):
    """§9: "A side that sinks to −500 or less loses and the game ends [AU, IT, FR], whatever the
    other scores are; with four players the other team wins"."""
    game = play_seven([start, other], "8H")
    assert game.scores == [start - 300, other + 30]
    assert game.scores[0] <= -500
    assert game.is_over and game.winners == [1]


def test_just_above_minus_500_goes_on():
    """§9: "sinks to −500 or less" — −499 does not end the game."""
    game = play_seven([-199, 0], "8H")
    assert game.scores == [-499, 30] and not game.is_over


def test_target_and_minus_500_in_the_same_deal():
    """§9: "If one side reaches the target and another sinks to −500 in the same deal, the side at
    the target wins" [FR: defence points count]."""
    game = play_seven([-300, 480], "8H", preset="french_46")
    assert game.scores == [-600, 510]
    assert game.winners == [1]
    game = play_split([-400, 300, 420], win_needs_contract=False)
    assert game.scores == [-520, 310, 510]
    assert game.winners == [2]


def three_player_sink(scores):
    """[IT] seat 1 holds every trump; seat 0 bids 6H and loses 100, seat 1 takes 100."""
    rules = make_rules("italian_3p")
    deal = make_deal(rules, {1: TOP_HEARTS["italian_3p"]}, dealer=2)
    game = Game(rules, first_deal=deal, scores=scores)
    assert finish_deal(game, "6H PASS PASS") == [-100, 100, 0]
    return game


def test_three_players_sink_highest_wins():
    """§9: "with three players the player with the highest score wins"."""
    game = three_player_sink([-400, 200, 350])
    assert game.scores == [-500, 300, 350]
    assert game.winners == [2]
    game = three_player_sink([-450, 460, 350])
    assert game.winners == [1]


def test_three_players_sink_ties_all_win():
    """§9: "(players tied for the highest score all win)"."""
    game = three_player_sink([-400, 200, 300])
    assert game.scores == [-500, 300, 300]
    assert game.winners == [1, 2]
    assert game.winning_seats() == [1, 2]


# -- §3 the dealer -----------------------------------------------------------------------------------

@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_dealer_rotates_left_through_a_game(preset):
    """§3: "The first dealer is drawn at random (from the seed); after each deal the deal passes
    to the left"."""
    rules = make_rules(preset)
    game = Game(rules, seed=11)
    random_play(game, random.Random(5))
    assert game.is_over and game.winners
    dealers = [d.dealer for d in game.deals]
    for a, b in itertools.pairwise(dealers):
        assert b == (a + 1) % rules.num_players
    for d in game.deals:
        assert d.is_over
        assert d.to_act == -1


def test_first_dealer_is_drawn_from_the_seed():
    """§3: "The first dealer is drawn at random (from the seed)"."""
    first = {seed: Game("australian", seed=seed).deals[0].dealer for seed in range(40)}
    assert set(first.values()) == {0, 1, 2, 3}
    assert all(Game("australian", seed=s).deals[0].dealer == first[s] for s in range(40))
    a, b = Game("australian", seed=3), Game("australian", seed=3)
    assert a.deal.hands == b.deal.hands and a.deal.kitty == b.deal.kitty


def test_game_scores_add_up_the_deals():
    """§9: the game's scores are the starting scores plus every deal's score change."""
    for preset in PRESET_NAMES:
        game = Game(preset, seed=21)
        random_play(game, random.Random(21))
        totals = list(game.starting_scores)
        for d in game.deals:
            for side, change in enumerate(d.score_change):
                totals[side] += change
        assert totals == game.scores


@pytest.mark.parametrize(
    ("preset", "scores", "message"),
    [("australian", [0, -500], "-500"), ("french_46", [500, 0], "500"), ("australian", [0, 0, 0], "entry")],
)
def test_starting_scores_that_end_the_game_are_refused(preset, scores, message):
    """§9: a game cannot start at −500, or at the target when defence points count (it would be over)."""
    with pytest.raises(ValueError, match=message):
        Game(preset, seed=1, scores=scores)


def test_starting_scores_per_seat():
    """§1: partners form one side and share one score."""
    game = Game("australian", seed=1, scores=[100, -50, 100, -50])
    assert game.scores == [100, -50]
    with pytest.raises(ValueError, match="partners"):
        Game("australian", seed=1, scores=[100, -50, 90, -50])


def test_max_deals_stops_dealing_and_keeps_the_last_deal():
    """§3 "after each deal the deal passes to the left" — unless the caller limits the deals:
    with ``max_deals`` the finished deal stays current, with nobody to act and no new shuffle."""
    import random

    from five_hundred_env import Game, make_rules

    rules = make_rules("australian")
    game = Game(rules, seed=7, max_deals=1)
    first = game.deal
    rng = random.Random(0)
    while not first.is_over:
        game.apply_action(rng.choice(game.legal_actions()))
    assert game.deal is first and len(game.deals) == 1
    assert game.to_act == -1 and game.legal_actions() == []
    unlimited = Game(rules, seed=7)
    rng = random.Random(0)
    while not unlimited.deals[0].is_over:
        unlimited.apply_action(rng.choice(unlimited.legal_actions()))
    assert len(unlimited.deals) == 2 or unlimited.is_over
