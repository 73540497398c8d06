"""§6 card order: which suit each card belongs to and how strong it is, per trump context.

The orders are tables precomputed once per *trump context* ``ctx``: 0-3 = that suit is trumps;
4 (:data:`NO_TRUMP_CTX`) = no trumps (and misère) with a suitless joker; 5-8 = no trumps with the
joker nominated to suit ``ctx - 5``. :func:`card_actions` turns a card mask into its card actions
with one table lookup per suit.

A card's strength inside its suit keeps the values the packs of ranks 4–A have always had (4 = 0
… ace = 10, left bower 19, right bower 20, jokers 20-22); the extended ranks of §10.4 slot in
around them: ``2`` and ``3`` below the 4 (-2, -1), and 11, 12, 13 between the ten and the jack
(6¼, 6½, 6¾), so the order is ``A K Q J X W E T 9 … 2`` in a plain suit and the jack's place
stays empty in trumps, where it is a bower.
"""

from __future__ import annotations

from five_hundred_env.actions import FIRST_CARD_ACTION, FIRST_EXTRA_CARD_ACTION
from five_hundred_env.cards import EXTRA_RANKS, FIRST_EXTRA_CARD, JOKER1, JOKER2, NUM_CARD_IDS, NUM_RANKS, RANK_JACK

NO_TRUMP_CTX = 4
SUITLESS = 4
"""The effective suit of a joker that belongs to no suit."""
EXTRA_POWER = {"2": -2, "3": -1, "E": 6.25, "W": 6.5, "X": 6.75}
"""The strength of the extended ranks in their suit (see the module docstring)."""


def _suit_and_power(card: int, trump: int, nominated: int) -> tuple[int, float]:
    """A card's effective suit and its strength in it, with ``trump`` (-1: none) and the joker
    ``nominated`` to a suit (-1: not)."""
    if card >= FIRST_EXTRA_CARD:
        suit, k = divmod(card - FIRST_EXTRA_CARD, 5)
        return suit, EXTRA_POWER[EXTRA_RANKS[k]]
    if card == JOKER1 or card == JOKER2:
        if trump >= 0:
            return trump, 22 if card == JOKER1 else 21  # JK1 above JK2 [FR]
        if nominated >= 0:
            return nominated, 20  # the highest card of the nominated suit [AU]
        return SUITLESS, 1 if card == JOKER1 else 0
    suit, rank = divmod(card, NUM_RANKS)
    if trump >= 0 and rank == RANK_JACK:
        if suit == trump:
            return suit, 20  # right bower
        if suit == trump ^ 1:  # the other jack of the same colour: S<->C, D<->H
            return trump, 19  # left bower, a trump for the whole deal
    return suit, rank


def _build_tables() -> tuple[list[list[int]], list[list[int]], list[list[list[float]]]]:
    effective_suit: list[list[int]] = []
    suit_cards: list[list[int]] = []
    win_key: list[list[list[float]]] = []
    for ctx in range(9):
        trump = ctx if ctx < 4 else -1
        nominated = ctx - 5 if ctx >= 5 else -1
        pairs = [_suit_and_power(c, trump, nominated) for c in range(NUM_CARD_IDS)]
        eff = [suit for suit, _ in pairs]
        power = [strength for _, strength in pairs]
        masks = [0] * 5
        for c in range(NUM_CARD_IDS):
            masks[eff[c]] |= 1 << c
        keys = []
        for led in range(4):
            row: list[float] = []
            for c in range(NUM_CARD_IDS):
                if eff[c] == SUITLESS:
                    row.append(300 + power[c])  # wins any trick it is played to
                elif eff[c] == trump:
                    row.append(200 + power[c])
                elif eff[c] == led:
                    row.append(100 + power[c])
                else:
                    row.append(0)
            keys.append(row)
        effective_suit.append(eff)
        suit_cards.append(masks)
        win_key.append(keys)
    return effective_suit, suit_cards, win_key


EFFECTIVE_SUIT, SUIT_CARDS, WIN_KEY = _build_tables()
"""``EFFECTIVE_SUIT[ctx][card]``: the suit a card belongs to (4 = suitless joker);
``SUIT_CARDS[ctx][suit]``: the mask of cards of that effective suit;
``WIN_KEY[ctx][led][card]``: the card's strength in a trick led in ``led`` (highest wins)."""


def _card_actions_table() -> list[list[tuple[int, ...]]]:
    """For each suit, every 11-bit pattern of its cards → their card actions; row 4: the jokers;
    rows 5 and 6: every 10-bit pattern of the extended ranks of spades and clubs, and of diamonds
    and hearts."""
    table = []
    for s in range(4):
        row = []
        for pattern in range(1 << NUM_RANKS):
            row.append(tuple(FIRST_CARD_ACTION + s * NUM_RANKS + r for r in range(NUM_RANKS) if pattern >> r & 1))
        table.append(row)
    table.append([tuple(FIRST_CARD_ACTION + JOKER1 + j for j in range(2) if pattern >> j & 1) for pattern in range(4)])
    for first in (FIRST_EXTRA_CARD_ACTION, FIRST_EXTRA_CARD_ACTION + 10):
        table.append([tuple(first + k for k in range(10) if pattern >> k & 1) for pattern in range(1 << 10)])
    return table


_S, _C, _D, _H, _J, _EXTRA_SC, _EXTRA_DH = _card_actions_table()
_RANK_BITS = (1 << NUM_RANKS) - 1


def card_actions(mask: int) -> list[int]:
    """The card actions of a card mask, in universal-id order (one table lookup per suit)."""
    extra = mask >> FIRST_EXTRA_CARD
    if extra:
        return [*_S[mask & _RANK_BITS], *_C[mask >> 11 & _RANK_BITS], *_D[mask >> 22 & _RANK_BITS],
                *_H[mask >> 33 & _RANK_BITS], *_J[mask >> JOKER1 & 3], *_EXTRA_SC[extra & 0x3FF], *_EXTRA_DH[extra >> 10]]
    return [*_S[mask & _RANK_BITS], *_C[mask >> 11 & _RANK_BITS], *_D[mask >> 22 & _RANK_BITS],
            *_H[mask >> 33 & _RANK_BITS], *_J[mask >> JOKER1]]

