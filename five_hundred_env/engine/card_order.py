"""§6 card order: which suit each card belongs to and how strong it is, per trump context.

The orders are tables precomputed once per *trump context* ``ctx``: 0-3 = that suit is trumps;
4 (:data:`NO_TRUMP_CTX`) = no trumps (and misère) with a suitless joker; 5-8 = no trumps with the
joker nominated to suit ``ctx - 5``. :func:`card_actions` turns a card mask into its card actions
with one table lookup per suit.
"""

from __future__ import annotations

from five_hundred_env.actions import FIRST_CARD_ACTION
from five_hundred_env.cards import JOKER1, NUM_CARDS, NUM_RANKS, RANK_JACK

NO_TRUMP_CTX = 4
SUITLESS = 4
"""The effective suit of a joker that belongs to no suit."""


def _build_tables() -> tuple[list[list[int]], list[list[int]], list[list[list[int]]]]:
    effective_suit: list[list[int]] = []
    suit_cards: list[list[int]] = []
    win_key: list[list[list[int]]] = []
    for ctx in range(9):
        trump = ctx if ctx < 4 else -1
        nominated = ctx - 5 if ctx >= 5 else -1
        eff = [0] * NUM_CARDS
        power = [0] * NUM_CARDS
        for c in range(NUM_CARDS):
            if c >= JOKER1:
                if trump >= 0:
                    eff[c] = trump
                    power[c] = 22 if c == JOKER1 else 21  # JK1 above JK2 [FR]
                elif nominated >= 0:
                    eff[c] = nominated
                    power[c] = 20  # the highest card of the nominated suit [AU]
                else:
                    eff[c] = SUITLESS
                    power[c] = 1 if c == JOKER1 else 0
                continue
            s, r = divmod(c, NUM_RANKS)
            eff[c], power[c] = s, r
            if trump >= 0 and r == RANK_JACK:
                if s == trump:
                    power[c] = 20  # right bower
                elif s == trump ^ 1:  # the other jack of the same colour: S<->C, D<->H
                    eff[c], power[c] = trump, 19  # left bower, a trump for the whole deal
        masks = [0] * 5
        for c in range(NUM_CARDS):
            masks[eff[c]] |= 1 << c
        keys = []
        for led in range(4):
            row = []
            for c in range(NUM_CARDS):
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
    """For each suit, every 11-bit pattern of its cards → their card actions; row 4: the jokers."""
    table = []
    for s in range(4):
        row = []
        for pattern in range(1 << NUM_RANKS):
            row.append(tuple(FIRST_CARD_ACTION + s * NUM_RANKS + r for r in range(NUM_RANKS) if pattern >> r & 1))
        table.append(row)
    table.append([tuple(FIRST_CARD_ACTION + JOKER1 + j for j in range(2) if pattern >> j & 1) for pattern in range(4)])
    return table


_S, _C, _D, _H, _J = _card_actions_table()
_RANK_BITS = (1 << NUM_RANKS) - 1


def card_actions(mask: int) -> list[int]:
    """The card actions of a card mask, in card order (one table lookup per suit)."""
    return [*_S[mask & _RANK_BITS], *_C[mask >> 11 & _RANK_BITS], *_D[mask >> 22 & _RANK_BITS],
            *_H[mask >> 33 & _RANK_BITS], *_J[mask >> JOKER1]]

