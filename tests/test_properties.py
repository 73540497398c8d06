"""Property tests over random legal play, for every preset and random combinations of options.

Each example is one seeded ``random.Random`` (drawn by hypothesis) driving a deal or a game.
The engine is checked against tests/reference_model.py, an independent plain model of docs/rules.md
§4-§9, at every step: the legal actions (§4-§7), whose turn it is, each trick's led suit and
winner (§6-§7), open-misère exposure (§7), the score (§8) and the winners of a game (§9). Also:
every card is in exactly one place, a deal has ten tricks of the right size, there is always a
legal action while the deal is live, illegal actions raise and change nothing, records replay
exactly, and the same seed gives the same game.
"""

from __future__ import annotations

import copy
import json
import os
import random
import tempfile

import pytest
from conftest import PRESET_NAMES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference_model import ReferenceDeal, game_winners

from five_hundred_env import (
    Deal,
    Game,
    IllegalActionError,
    action_to_str,
    load_record,
    make_rules,
    parse_action,
    record_of,
    replay,
    save_record,
)
from five_hundred_env.actions import MISERE, OPEN_MISERE, PASS
from five_hundred_env.cards import card_to_str, mask_to_cards
from five_hundred_env.engine import Phase

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

OPTION_VALUES = {
    "bidding": ["until_passed", "single_round"],
    "rebid_after_pass": [False, True],
    "misere": ["after_seven", "any_time", "none"],
    "misere_value": [250, 150],
    "open_misere": ["between_10D_10H", "highest", "none"],
    "open_misere_exposure": ["after_first_trick", "before_first_lead"],
    "joker_nomination": ["nt_and_misere", "misere_only", "none"],
    "joker_lead_suit": ["not_yet_led", "not_shown_void"],
    "defence_tricks": ["10_per_trick", "none", "only_when_lost"],
    "misere_defence": ["nothing", "10_per_declarer_trick"],
    "slam_bonus": [False, True],
    "win_needs_contract": [False, True],
    "both_jokers_min_bid": [None, 6, 8, 10],
}


@st.composite
def any_rules(draw):
    """A preset with a random subset of its options changed (valid combinations only, §2)."""
    preset = draw(st.sampled_from(PRESET_NAMES))
    changed = draw(st.lists(st.sampled_from(sorted(OPTION_VALUES)), max_size=6, unique=True))
    options = {name: draw(st.sampled_from(OPTION_VALUES[name])) for name in changed}
    if preset == "french_46":
        options["joker_nomination"] = "none"
    else:
        options["both_jokers_min_bid"] = None
    return make_rules(preset, **options)


preset_rules = st.sampled_from(PRESET_NAMES).map(make_rules)
rules_strategy = st.one_of(preset_rules, any_rules())
seeds = st.integers(0, 2**32 - 1)


def choose(rng: random.Random, legal: list[int]) -> int:
    """A random legal action, biased in the auction towards passes, misère and low bids so that
    misère, no trumps and throw-ins come up often; uniform in the other phases."""
    if legal[-1] > OPEN_MISERE:  # not an auction
        return rng.choice(legal)
    if legal[0] == PASS and rng.random() < 0.45:
        return PASS
    if MISERE in legal and rng.random() < 0.3:
        return MISERE
    bids = [a for a in legal if a != PASS]
    if bids and rng.random() < 0.8:
        return rng.choice(bids[:6])
    return rng.choice(legal)


def names(rules, mask: int) -> list[str]:
    return [card_to_str(c, rules.two_jokers) for c in mask_to_cards(mask)]


def snapshot(deal: Deal) -> dict:
    """Every public attribute of a deal, copied (containers deeply; the frozen rules as they are)."""
    slots = getattr(type(deal), "__slots__", None) or list(vars(deal))
    out = {}
    for k in slots:
        if not k.startswith("_"):
            v = getattr(deal, k)
            out[k] = copy.deepcopy(v) if isinstance(v, (list, dict, set)) else v
    return out


def check_card_places(deal: Deal) -> None:
    """Every card of the deck is in exactly one place (a hand, the kitty, the discards, played)."""
    places = deal.card_locations()
    seen = 0
    for mask in places.values():
        assert seen & mask == 0, "a card is in two places"
        seen |= mask
    assert seen == deal.rules.deck, "a card is missing"


def check_tricks(deal: Deal, ref: ReferenceDeal) -> None:
    assert len(deal.tricks) == len(ref.tricks)
    for (leader, led, plays, winner), (r_leader, r_led, r_plays, r_winner) in zip(deal.tricks, ref.tricks, strict=True):
        assert leader == r_leader
        assert "SCDH"[led] == r_led
        assert [(s, card_to_str(c, deal.rules.two_jokers)) for s, c in plays] == r_plays
        assert winner == r_winner


def play_against_reference(deal: Deal, rng: random.Random) -> ReferenceDeal:
    """Play random legal actions, checking the engine against the reference model at each step."""
    rules = deal.rules
    ref = ReferenceDeal(rules, [names(rules, h) for h in deal.hands], names(rules, deal.kitty), deal.dealer)
    steps = 0
    while not deal.is_over:
        legal = deal.legal_actions()
        assert legal, "no legal action in a live deal"
        assert {action_to_str(a, rules) for a in legal} == ref.legal()
        assert len(set(legal)) == len(legal)
        assert deal.to_act == ref.to_act
        check_card_places(deal)
        assert deal.exposed == ref.exposed
        if deal.exposed:
            assert deal.exposed_cards() == deal.hands[deal.contractor]
        else:
            assert deal.exposed_cards() == 0
        action = choose(rng, legal)
        deal.apply_action(action)
        ref.apply(action_to_str(action, rules))
        steps += 1
        assert steps < 200
    assert deal.legal_actions() == []
    assert ref.phase == "over"
    check_card_places(deal)
    check_tricks(deal, ref)
    assert deal.score_change == ref.score
    assert deal.thrown_in == ref.thrown_in
    return ref


@SETTINGS
@given(rules=rules_strategy, seed=seeds)
def test_random_deals_follow_the_rules(rules, seed):
    """§4-§8 against the reference model; a deal has exactly 10 tricks of the right size."""
    rng = random.Random(seed)
    deal = Deal.new(rules, rng, rng.randrange(rules.num_players))
    check_card_places(deal)
    ref = play_against_reference(deal, rng)
    if deal.thrown_in:
        assert deal.tricks == [] and deal.score_change == [0] * rules.num_sides
        return
    assert len(deal.tricks) == 10
    size = 3 if ref.misere and rules.num_players == 4 else rules.num_players
    assert all(len(t[2]) == size for t in deal.tricks)
    assert sum(deal.tricks_won) == 10
    assert deal.contract_made() == ref.made()
    # Every card was played once, or discarded, or (the sitting-out partner) kept.
    assert deal.discards.bit_count() == rules.kitty_size


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_many_deals_of_each_preset(preset):
    """§4-§8: The same check, on 40 fixed seeds per preset (fast, and never skipped by hypothesis)."""
    rules = make_rules(preset)
    for seed in range(40):
        rng = random.Random(seed)
        deal = Deal.new(rules, rng, seed % rules.num_players)
        play_against_reference(deal, rng)


ILLEGAL_EXTRAS = [-1, 87, 1000, None, "PASS", 1.5, True]


@SETTINGS
@given(rules=rules_strategy, seed=seeds)
def test_illegal_actions_raise_and_change_nothing(rules, seed):
    """§1/§4-§7: An illegal action raises IllegalActionError and leaves the state untouched."""
    rng = random.Random(seed)
    deal = Deal.new(rules, rng, rng.randrange(rules.num_players))
    while not deal.is_over:
        legal = deal.legal_actions()
        illegal = [a for a in range(87) if a not in legal]
        tries = rng.sample(illegal, 2) + ([rng.choice(ILLEGAL_EXTRAS)] if rng.random() < 0.3 else [])
        before = snapshot(deal)
        legal_before = list(legal)
        for bad in tries:
            if bad is True and 1 in legal:
                continue  # True == 1: a legal action id
            with pytest.raises(IllegalActionError):
                deal.apply_action(bad)
            assert snapshot(deal) == before
            assert deal.legal_actions() == legal_before
        deal.apply_action(choose(rng, legal))
    with pytest.raises(IllegalActionError):
        deal.apply_action(0)


@SETTINGS
@given(rules=rules_strategy, seed=seeds, stop=st.floats(0, 1))
def test_records_replay_exactly(rules, seed, stop):
    """§1/§3: record_of → JSON → replay rebuilds the same state, mid-deal or finished."""
    rng = random.Random(seed)
    deal = Deal.new(rules, rng, rng.randrange(rules.num_players))
    target = int(stop * 80)
    while not deal.is_over and len(deal.history) < target:
        deal.apply_action(choose(rng, deal.legal_actions()))
    record = json.loads(json.dumps(record_of(deal)))
    again = replay(record, rules)
    assert snapshot(again) == snapshot(deal)
    assert again.legal_actions() == deal.legal_actions()
    # Both go on identically.
    rng2 = copy.deepcopy(rng)
    while not deal.is_over:
        deal.apply_action(choose(rng, deal.legal_actions()))
        again.apply_action(choose(rng2, again.legal_actions()))
    assert snapshot(again) == snapshot(deal)


def test_records_refuse_other_rules_and_survive_files():
    """§1 (replays use the public notation): a record made under other rules is refused; save/load keeps it exact."""
    rules = make_rules("australian")
    rng = random.Random(4)
    deal = Deal.new(rules, rng, 0)
    while not deal.is_over:
        deal.apply_action(choose(rng, deal.legal_actions()))
    with pytest.raises(ValueError, match="other rules"):
        replay(record_of(deal), make_rules("australian", slam_bonus=False))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "deal.json")
        save_record(deal, path)
        assert snapshot(replay(load_record(path))) == snapshot(deal)


def play_game_checking_winners(game: Game, rng: random.Random) -> None:
    """Play a whole game; after each deal, the winners must be those of §9 (reference)."""
    rules = game.rules
    scores = list(game.scores)
    while not game.is_over:
        deal = game.deal
        count = len(game.deals)
        while not deal.is_over:
            game.apply_action(choose(rng, game.legal_actions()))
        if not deal.thrown_in:
            scores = [s + c for s, c in zip(scores, deal.score_change, strict=True)]
        assert game.scores == scores
        side = None if deal.thrown_in else rules.side_of(deal.contractor)
        expected = [] if deal.thrown_in else game_winners(rules, scores, side, deal.contract_made())
        assert game.winners == expected
        assert game.is_over == bool(expected)
        if not game.is_over:
            assert len(game.deals) == count + 1
            assert game.deal.dealer == (deal.dealer + 1) % rules.num_players
            assert game.deal.phase == Phase.BIDDING
        assert len(game.deals) < 500


@settings(max_examples=30, deadline=None)
@given(rules=rules_strategy, seed=seeds)
def test_games_end_as_section_9_says(rules, seed):
    """§9 against the reference; §3 the dealer rotates; scores add up."""
    game = Game(rules, seed=seed)
    play_game_checking_winners(game, random.Random(seed ^ 0x5EED))
    assert game.winners
    assert game.legal_actions() == [] and game.phase == Phase.GAME_OVER


@settings(max_examples=20, deadline=None)
@given(rules=rules_strategy, seed=seeds)
def test_same_seed_same_game_and_game_records_replay(rules, seed):
    """§3/§9: The same seed (and the same choices) gives the same game; a game record replays exactly."""
    records = []
    for _ in range(2):
        game = Game(rules, seed=seed)
        rng = random.Random(seed + 1)
        while not game.is_over:
            game.apply_action(choose(rng, game.legal_actions()))
        records.append(json.dumps(record_of(game), sort_keys=True))
    assert records[0] == records[1]
    again = replay(json.loads(records[0]), rules)
    assert isinstance(again, Game)
    assert again.is_over and again.scores == game.scores and again.winners == game.winners
    assert len(again.deals) == len(game.deals)
    assert snapshot(again.deal) == snapshot(game.deal)


def test_replay_refuses_a_broken_record():
    """§1/§3: a record whose actions are illegal or malformed, or whose deal deals a card twice, is refused."""
    rules = make_rules("italian_3p")
    deal = Deal.new(rules, random.Random(1), 0)
    record = record_of(deal)
    record["deals"][0]["actions"] = ["PASS", "PASS", "PASS", "PASS"]
    with pytest.raises(ValueError, match="deal 0"):
        replay(record)
    with pytest.raises(ValueError, match="format"):
        replay({"format": "something else"})
    record = record_of(deal)
    record["deals"][0]["actions"] = ["7X"]
    with pytest.raises(ValueError):
        replay(record)
    record = record_of(deal)
    record["deals"][0]["kitty"] = record["deals"][0]["hands"][0][:3]
    with pytest.raises(ValueError, match="twice"):
        replay(record)
    assert parse_action("PASS", rules) == 0
