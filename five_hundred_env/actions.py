"""Actions: ids, their canonical spelling (docs/rules.md §1) and the action table of a rules object.

The engine works in *universal* action ids, the same for every preset:

======  ==========================================================
id      action
======  ==========================================================
0       ``PASS``
1-25    trick bids ``6S 6C 6D 6H 6NT 7S … 10NT`` (``1 + 5·(tricks-6) + strain``)
26      ``MISERE``
27      ``OPEN_MISERE``
28-73   a card (``28 + card id``): discard it in the kitty phase, play it in play
74-81   ``JK:S … JK:H`` / ``JK1:x`` (74-77) and ``JK2:x`` (78-81): lead a suitless joker naming x
82-85   ``NOMINATE_S … NOMINATE_H``
86      ``NO_NOMINATION``
87-106  a card of the extended ranks (``41 + card id``: ``87 + 5·suit + k``, k = 0 ``2``, 1 ``3``,
        2 ``E``, 3 ``W``, 4 ``X``); 91 (``Xs``) and 96 (``Xc``) are in no pack (§10.1)
107-112 ``PARTNER_0 … PARTNER_5``: the five-handed contractor calls that seat (§10.5)
======  ==========================================================

A card action means what its phase says: discard it (kitty), call it (the five-handed call),
play it (play).

:class:`ActionTable` gives each preset a compact ``Discrete`` space over the actions its deck
allows (the id the environment uses), in universal-id order, and maps both ways.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from five_hundred_env.cards import FIRST_EXTRA_CARD, JOKER1, NUM_CARD_IDS, NUM_CARDS, SUITS, card_to_str, is_joker, parse_card
from five_hundred_env.rules import Rules

PASS = 0
STRAINS = ("S", "C", "D", "H", "NT")
NT = 4
FIRST_BID = 1
LAST_BID = 25
MISERE = 26
OPEN_MISERE = 27
FIRST_CARD_ACTION = 28
FIRST_JOKER_LEAD = FIRST_CARD_ACTION + NUM_CARDS  # 74
FIRST_NOMINATE = FIRST_JOKER_LEAD + 8  # 82
NO_NOMINATION = FIRST_NOMINATE + 4  # 86
FIRST_EXTRA_CARD_ACTION = NO_NOMINATION + 1  # 87: the card FIRST_EXTRA_CARD
EXTRA_CARD_SHIFT = FIRST_EXTRA_CARD_ACTION - FIRST_EXTRA_CARD  # 41: card id -> action id for the extended ranks
FIRST_PARTNER = FIRST_EXTRA_CARD_ACTION + NUM_CARD_IDS - NUM_CARDS  # 107
MAX_PLAYERS = 6
NUM_UNIVERSAL_ACTIONS = FIRST_PARTNER + MAX_PLAYERS  # 113


def bid_action(tricks: int, strain: int) -> int:
    """The id of the trick bid of ``tricks`` (6-10) in ``strain`` (0-3 a suit, 4 no trumps)."""
    return FIRST_BID + 5 * (tricks - 6) + strain


def bid_tricks(action: int) -> int:
    return 6 + (action - FIRST_BID) // 5


def bid_strain(action: int) -> int:
    return (action - FIRST_BID) % 5


def bid_value(action: int, misere_value: int = 250) -> int:
    """The Avondale value of a bid (docs/rules.md §4): ``40 + 100·(tricks-6) + 20·strain``."""
    if action == MISERE:
        return misere_value
    if action == OPEN_MISERE:
        return 500
    return 40 + 100 * (bid_tricks(action) - 6) + 20 * bid_strain(action)


def is_trick_bid(action: int) -> bool:
    return FIRST_BID <= action <= LAST_BID


def card_action(card: int) -> int:
    """The action of a card (discard, call or play it): ``28 + id``, or ``41 + id`` for the extended ranks."""
    return FIRST_CARD_ACTION + card if card < FIRST_EXTRA_CARD else EXTRA_CARD_SHIFT + card


def action_card(action: int) -> int:
    """The card of a card action or a joker lead."""
    if action < FIRST_JOKER_LEAD:
        return action - FIRST_CARD_ACTION
    if action >= FIRST_EXTRA_CARD_ACTION:
        return action - EXTRA_CARD_SHIFT
    return JOKER1 + (action - FIRST_JOKER_LEAD) // 4


def joker_lead_action(joker: int, suit: int) -> int:
    return FIRST_JOKER_LEAD + 4 * (joker - JOKER1) + suit


def joker_lead_suit(action: int) -> int:
    return (action - FIRST_JOKER_LEAD) % 4


def is_card_action(action: int) -> bool:
    return FIRST_CARD_ACTION <= action < FIRST_JOKER_LEAD or FIRST_EXTRA_CARD_ACTION <= action < FIRST_PARTNER


def partner_action(seat: int) -> int:
    """``PARTNER_seat``: the five-handed contractor calls that seat as partner (§10.5)."""
    return FIRST_PARTNER + seat


def is_partner_call(action: int) -> bool:
    return FIRST_PARTNER <= action < NUM_UNIVERSAL_ACTIONS


def is_joker_lead(action: int) -> bool:
    return FIRST_JOKER_LEAD <= action < FIRST_NOMINATE


def is_nomination(action: int) -> bool:
    return FIRST_NOMINATE <= action <= NO_NOMINATION


_KEYWORDS = {"PASS": PASS, "MISERE": MISERE, "OPEN_MISERE": OPEN_MISERE, "NO_NOMINATION": NO_NOMINATION}
_KEYWORDS.update({f"NOMINATE_{s}": FIRST_NOMINATE + i for i, s in enumerate(SUITS)})
_EXACT_KEYWORDS = {f"PARTNER_{seat}": partner_action(seat) for seat in range(MAX_PLAYERS)}
"""Upper case and exact, like ``PASS`` (§10.1)."""
_BID_RE = re.compile(r"^(6|7|8|9|10)(S|C|D|H|NT)$")


def action_to_str(action: int, rules: Rules) -> str:
    """The canonical spelling of a universal action id (docs/rules.md §1)."""
    if not isinstance(action, int) or not 0 <= action < NUM_UNIVERSAL_ACTIONS:
        raise ValueError(f"no action has id {action!r}")
    if action == PASS:
        return "PASS"
    if is_trick_bid(action):
        return f"{bid_tricks(action)}{STRAINS[bid_strain(action)]}"
    if action == MISERE:
        return "MISERE"
    if action == OPEN_MISERE:
        return "OPEN_MISERE"
    if is_card_action(action):
        return card_to_str(action_card(action), rules.two_jokers)
    if is_partner_call(action):
        return f"PARTNER_{action - FIRST_PARTNER}"
    if is_joker_lead(action):
        return f"{card_to_str(action_card(action), rules.two_jokers)}:{SUITS[joker_lead_suit(action)]}"
    if action == NO_NOMINATION:
        return "NO_NOMINATION"
    return f"NOMINATE_{SUITS[action - FIRST_NOMINATE]}"


def parse_action(text: str, rules: Rules) -> int:
    """The universal id of an action written in the notation of docs/rules.md §1.

    A string that spells a bid is the bid (``7H``, ``10NT``); otherwise a card is read (``7h``,
    ``10h``, ``Th``, ``11H`` = ``Eh``). Keywords (``PASS``, ``MISERE``, ``NOMINATE_S`` …) may be in
    either case; ``PARTNER_0`` … is upper case and exact, and only in a five-player game. Raises
    ``ValueError`` saying what is wrong, including cards that are not in this deck.
    """
    if not isinstance(text, str):
        raise ValueError(f"an action must be a string, got {text!r}")
    t = text.strip()
    if not t:
        raise ValueError("empty action: expected e.g. PASS, 7H, MISERE, Ah, JK:H or NOMINATE_S")
    m = _BID_RE.match(t)
    if m:
        return bid_action(int(m.group(1)), STRAINS.index(m.group(2)))
    if t in _EXACT_KEYWORDS:
        seat = _EXACT_KEYWORDS[t] - FIRST_PARTNER
        if not rules.has_partner_call or seat >= rules.num_players:
            raise ValueError(f"{t} is not an action of the {rules.preset} preset: partners are called "
                             "with five players (PARTNER_0 … PARTNER_4)")
        return _EXACT_KEYWORDS[t]
    up = t.upper()
    if up in _KEYWORDS:
        return _KEYWORDS[up]
    if ":" in t:
        card_text, _, suit_text = t.partition(":")
        try:
            card = parse_card(card_text, rules.two_jokers)
        except ValueError as e:
            raise ValueError(f"bad joker lead {text!r}: {e}") from None
        if not is_joker(card):
            raise ValueError(f"bad action {text!r}: only a joker is led with a named suit (JK:H)")
        if suit_text.upper() not in SUITS or len(suit_text) != 1:
            raise ValueError(f"bad joker lead {text!r}: name a suit S, C, D or H after the colon")
        return joker_lead_action(card, SUITS.index(suit_text.upper()))
    try:
        card = parse_card(t, rules.two_jokers)
    except ValueError as e:
        raise ValueError(
            f"unknown action {text!r}: not PASS, a bid (6S … 10NT, MISERE, OPEN_MISERE), "
            f"a nomination (NOMINATE_S, NO_NOMINATION), a partner call (PARTNER_0 …) or a card ({e})"
        ) from None
    if not rules.deck >> card & 1:
        raise ValueError(f"card {card_to_str(card, rules.two_jokers)} is not in the {rules.preset} deck")
    return card_action(card)


@dataclass(frozen=True)
class ActionTable:
    """The compact action space of one rules object: ids ``0 … n-1`` over the actions its deck has.

    The universal ids the deck allows, in universal order: the bids (``PASS``, the 25 trick
    bids, ``MISERE``, ``OPEN_MISERE``: ids 0-27 in every preset), one action per card of ranks
    4–A and jokers, the joker leads, with one joker the nominations, then the cards of the
    extended ranks, and with five players ``PARTNER_0 … PARTNER_4`` (masked unless
    ``partner_call=seat``): 80 ``australian``, 70 ``italian_3p`` and ``two_handed``, 82
    ``french_46``, 95 ``five_handed``, 100 ``six_handed``.
    """

    rules: Rules
    universal: tuple[int, ...] = field(init=False)
    compact: tuple[int, ...] = field(init=False)
    mask_bit: tuple[int, ...] = field(init=False)
    """Per universal id, its bit in an action mask built as an integer (``1 << compact id``; 0 for
    an action this deck does not have): how the encoder ORs the mask into one unpack."""

    def __post_init__(self) -> None:
        deck = self.rules.deck
        ids = list(range(FIRST_CARD_ACTION))
        ids += [card_action(c) for c in range(NUM_CARDS) if deck >> c & 1]
        jokers = [JOKER1, JOKER1 + 1][: self.rules.num_jokers]
        ids += [joker_lead_action(j, s) for j in jokers for s in range(4)]
        if self.rules.num_jokers == 1:
            ids += list(range(FIRST_NOMINATE, NO_NOMINATION + 1))
        ids += [card_action(c) for c in range(NUM_CARDS, NUM_CARD_IDS) if deck >> c & 1]
        if self.rules.has_partner_call:
            ids += [partner_action(seat) for seat in range(5)]
        compact = [-1] * NUM_UNIVERSAL_ACTIONS
        for i, u in enumerate(ids):
            compact[u] = i
        object.__setattr__(self, "universal", tuple(ids))
        object.__setattr__(self, "compact", tuple(compact))
        object.__setattr__(self, "mask_bit", tuple(0 if c < 0 else 1 << c for c in compact))

    def __len__(self) -> int:
        return len(self.universal)

    def to_str(self, action: int) -> str:
        """The spelling of a compact action id."""
        if not isinstance(action, int) or isinstance(action, bool) or not 0 <= action < len(self.universal):
            raise ValueError(f"action id {action!r} is out of range 0..{len(self.universal) - 1}")
        return action_to_str(self.universal[action], self.rules)

    def from_str(self, text: str) -> int:
        """The compact id of an action string; an action this table lacks is a ``ValueError``."""
        compact = self.compact[parse_action(text, self.rules)]
        if compact < 0:
            raise ValueError(f"{text!r} is not an action of the {self.rules.preset} deck")
        return compact
