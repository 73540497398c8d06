"""docs/rules.md §1: the notation of cards and actions — parsing, canonical formatting, errors."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from conftest import PRESET_NAMES, deck_names, make_deal

from five_hundred_env import (
    ActionTable,
    Deal,
    Game,
    IllegalActionError,
    action_to_str,
    card_to_str,
    make_rules,
    parse_action,
    parse_card,
    record_of,
)
from five_hundred_env.cards import mask_to_cards

CANONICAL_CARD = re.compile(r"^([456789TJQKA][schd]|JK|JK1|JK2)$")


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_every_card_round_trips(preset):
    """§1: cards are written rank then suit, the suit in lower case; ranks 4 5 6 7 8 9 T J Q K A;
    the parser always prints the canonical form."""
    rules = make_rules(preset)
    seen = set()
    for card in mask_to_cards(rules.deck):
        name = card_to_str(card, rules.two_jokers)
        assert CANONICAL_CARD.match(name), name
        assert parse_card(name, rules.two_jokers) == card
        seen.add(name)
    assert len(seen) == len(mask_to_cards(rules.deck))


def test_card_examples():
    """§1: `Ah`, `Td`, `Jc`, `7s`; `10` is accepted for `T`, either case for the suit."""
    two = False
    for text, canonical in [("Ah", "Ah"), ("AH", "Ah"), ("Td", "Td"), ("10d", "Td"), ("10D", "Td"),
                            ("TD", "Td"), ("Jc", "Jc"), ("7s", "7s"), ("7S", "7s")]:
        assert card_to_str(parse_card(text, two), two) == canonical, text


def test_joker_names():
    """§1: `JK` where the deck has one joker; `JK1` (the higher) and `JK2` where it has two."""
    assert card_to_str(parse_card("JK"), False) == "JK"
    assert card_to_str(parse_card("JK1", True), True) == "JK1"
    assert card_to_str(parse_card("JK2", True), True) == "JK2"
    assert parse_card("JK1", True) != parse_card("JK2", True)
    with pytest.raises(ValueError, match="two jokers"):
        parse_card("JK", True)
    with pytest.raises(ValueError, match="one joker"):
        parse_card("JK1", False)
    with pytest.raises(ValueError, match="one joker"):
        parse_card("JK2", False)


@pytest.mark.parametrize(
    ("text", "says"),
    [("", "rank then a suit"), ("A", "rank then a suit"), ("Ax", "suit"), ("1h", "rank"), ("Zh", "rank"),
     ("14h", "rank"), ("Ahh", "rank"), ("JK3", "joker")],
)
def test_malformed_cards(text, says):
    """§1: a malformed card name is an error saying what is wrong."""
    with pytest.raises(ValueError, match=says):
        parse_card(text, False)


# -- actions -----------------------------------------------------------------------------------

@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_every_action_round_trips_through_the_action_table(preset):
    """§1: actions are written each one spelled differently from every other; formatting always
    gives the canonical spelling, and parsing it gives the action back."""
    rules = make_rules(preset)
    table = ActionTable(rules)
    spellings = [table.to_str(i) for i in range(len(table))]
    assert len(set(spellings)) == len(table), "two actions share a spelling"
    for i, s in enumerate(spellings):
        assert table.from_str(s) == i
        assert parse_action(s, rules) == table.universal[i]
        assert action_to_str(table.universal[i], rules) == s


def _expected_spellings(preset):
    rules = make_rules(preset)
    bids = ["PASS"] + [f"{t}{s}" for t in range(6, 11) for s in ("S", "C", "D", "H", "NT")] + ["MISERE", "OPEN_MISERE"]
    card_names = deck_names(rules)
    jokers = ["JK1", "JK2"] if rules.two_jokers else ["JK"]
    leads = [f"{j}:{s}" for j in jokers for s in "SCDH"]
    noms = [] if rules.two_jokers else ["NOMINATE_S", "NOMINATE_C", "NOMINATE_D", "NOMINATE_H", "NO_NOMINATION"]
    return bids + card_names + leads + noms


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_action_table_spells_exactly_the_notation(preset):
    """§1: `PASS`; trick bids `6S` … `10NT`; `MISERE`; `OPEN_MISERE`; a card name; `JK:H` (or
    `JK1:H`, `JK2:H`); `NOMINATE_S` … `NO_NOMINATION` (a one-joker deck: §2 joker_nomination)."""
    table = ActionTable(make_rules(preset))
    assert [table.to_str(i) for i in range(len(table))] == _expected_spellings(preset)


def test_bid_versus_card():
    """§1: "a string that spells a bid is the bid (`7H`, `10H`); a card action is read as a card
    otherwise (`7h`, `10h` and `Th` are the card)"."""
    rules = make_rules("australian")
    assert action_to_str(parse_action("7H", rules), rules) == "7H"
    assert action_to_str(parse_action("10H", rules), rules) == "10H"
    assert action_to_str(parse_action("10NT", rules), rules) == "10NT"
    assert action_to_str(parse_action("7h", rules), rules) == "7h"
    card_t = parse_action("Th", rules)
    assert parse_action("10h", rules) == card_t
    assert action_to_str(card_t, rules) == "Th"
    assert parse_action("7H", rules) != parse_action("7h", rules)
    assert parse_action("10H", rules) != parse_action("10h", rules)
    # `TH` cannot be a bid (bids have 6-10 tricks), so it is the card, printed canonically.
    assert action_to_str(parse_action("TH", rules), rules) == "Th"


def test_bids_are_in_bidding_order():
    """§1/§4: bidding order `S < C < D < H < NT`, by tricks first (bid ids follow the order)."""
    rules = make_rules("australian")
    ids = [parse_action(f"{t}{s}", rules) for t in range(6, 11) for s in ("S", "C", "D", "H", "NT")]
    assert ids == sorted(ids) and len(set(ids)) == 25


def test_joker_lead_spelling():
    """§1: `JK:H` (or `JK1:H`, `JK2:H`) leads a suitless joker naming the suit; canonical upper
    case suit after the colon."""
    au, fr = make_rules("australian"), make_rules("french_46")
    assert action_to_str(parse_action("JK:H", au), au) == "JK:H"
    assert action_to_str(parse_action("JK:h", au), au) == "JK:H"
    assert action_to_str(parse_action("JK1:S", fr), fr) == "JK1:S"
    assert action_to_str(parse_action("JK2:D", fr), fr) == "JK2:D"
    assert parse_action("JK1:D", fr) != parse_action("JK2:D", fr)
    # The plain joker (a joker that has a suit) is a different action from every joker lead.
    assert parse_action("JK", au) not in {parse_action(f"JK:{s}", au) for s in "SCDH"}


@pytest.mark.parametrize(
    ("preset", "text", "says"),
    [
        ("australian", "", "empty"),
        ("australian", "7X", "unknown action"),
        ("australian", "11H", "card Eh is not in the australian deck"),
        ("australian", "5NT", "unknown action"),
        ("australian", "BID", "unknown action"),
        ("australian", "4s", "not in the australian deck"),
        ("australian", "4c", "not in the australian deck"),
        ("italian_3p", "6h", "not in the italian_3p deck"),
        ("australian", "JK:X", "name a suit"),
        ("australian", "JK:", "name a suit"),
        ("australian", "Ah:H", "only a joker"),
        ("australian", "JK1:H", "one joker"),
        ("french_46", "JK:H", "two jokers"),
        ("french_46", "JK", "two jokers"),
        ("australian", "JK2", "one joker"),
    ],
)
def test_malformed_actions_say_what_is_wrong(preset, text, says):
    """§1: malformed or foreign action strings are errors that say what is wrong."""
    with pytest.raises(ValueError, match=says):
        parse_action(text, make_rules(preset))


def test_non_string_action_is_refused():
    """§1: actions are written as strings."""
    with pytest.raises(ValueError, match="string"):
        parse_action(7, make_rules())  # type: ignore[arg-type]


def test_action_table_refuses_actions_outside_its_preset():
    """§1/§2: the french_46 deck has two jokers, so it has no nominations (joker_nomination needs a
    one-joker deck): its action table refuses them with an error, never a bogus id."""
    table = ActionTable(make_rules("french_46"))
    for text in ("NOMINATE_S", "NO_NOMINATION"):
        with pytest.raises(ValueError, match="french_46"):
            table.from_str(text)
    with pytest.raises(ValueError):
        table.to_str(len(table))
    with pytest.raises(ValueError):
        action_to_str(113, make_rules())


def test_action_table_sizes():
    """§1/§2: 28 bid actions in every preset, one per card of the deck, the joker leads, and the
    five nominations only with one joker."""
    assert len(ActionTable(make_rules("australian"))) == 28 + 43 + 4 + 5
    assert len(ActionTable(make_rules("italian_3p"))) == 28 + 33 + 4 + 5
    assert len(ActionTable(make_rules("french_46"))) == 28 + 46 + 8


# -- action ids at the door: Deal/Game.apply_action take integers only --------------------------
@pytest.mark.parametrize("convert", [np.int64, np.int32, np.uint8], ids=["int64", "int32", "uint8"])
def test_numpy_integer_actions_are_stored_as_plain_ints(convert):
    """§1 actions: a numpy integer id is the same action, and the history keeps a plain ``int``
    (so a record can always be written and the encoder never overflows)."""
    deal = make_deal("australian", [None] * 4)
    game = Game("australian", seed=3)
    for state in (deal, game):
        action = state.legal_actions()[1]
        state.apply_action(convert(action))
        history = state.history if isinstance(state, Deal) else state.deal.history
        assert history == [action] and type(history[0]) is int
    json.dumps(record_of(deal))  # a numpy integer in the history would not serialise


@pytest.mark.parametrize("bad", [3.0, True, False, "3", None, np.float64(1.0), np.True_],
                         ids=["3.0", "True", "False", "str", "None", "np.float64", "np.bool"])
def test_non_integer_actions_are_refused_and_change_nothing(bad):
    """§1 actions: an action id is an integer; a float (even 3.0), a bool or a string is refused
    with IllegalActionError naming the value, and the deal is unchanged."""
    deal = make_deal("australian", [None] * 4)
    assert 1 in deal.legal_actions() and 3 in deal.legal_actions()  # True == 1 and 3.0 == 3 would pass
    before = (deal.to_act, deal.history.copy(), deal.bids.copy())
    with pytest.raises(IllegalActionError, match="not an integer action id"):
        deal.apply_action(bad)
    assert (deal.to_act, deal.history, deal.bids) == before
    game = Game("australian", seed=3)
    with pytest.raises(IllegalActionError, match="not an integer action id"):
        game.apply_action(bad)
    assert game.deal.history == []
