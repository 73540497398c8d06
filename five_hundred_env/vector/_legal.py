"""The legal set of a game (Deal.legal_actions) and the card-order tables the kernels read.

The legal set is kept as 128 bits in two words (``F_LEGAL``, bits 0-63, and ``F_LEGAL_HIGH``,
bits 64-127): in bidding, bit ``u`` for bid id ``u`` (0-27); in the kitty phase, the call and
play, bit ``c`` for the card of kernel bit ``c`` (0-63, see :mod:`._layout`), bit
``lead + 4·j + s`` for leading joker ``j`` naming suit ``s`` (``lead`` is ``O_LEAD_BIT``: 46 in
the packs of ranks 4-A, so that their whole set stays in the first word; 64 in the packs of 53
and 63 cards) and bit ``72 + s`` for ``PARTNER_s``; in the nomination, bits 0-4 for
``NOMINATE_S … NOMINATE_H, NO_NOMINATION``.

The card order comes from the options vector's tables (``O_SUIT``, ``O_SUIT_CARDS``,
``O_WIN_KEY``), indexed by kernel bit: never from the bit itself.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from five_hundred_env.cards import JOKER1, JOKERS_MASK, KERNEL_MASK_BITS
from five_hundred_env.vector._layout import (
    F_BOTH_JOKERS_SEAT,
    F_CONTRACTOR,
    F_CTX,
    F_HANDS,
    F_HIGH_BID,
    F_LED_SUIT,
    F_LEGAL,
    F_LEGAL_HIGH,
    F_PHASE,
    F_SHOWN_VOID,
    F_SUITS_LED,
    F_TO_ACT,
    F_TRICK_LEN,
    O_BOTH_JOKERS_MIN,
    O_DECK,
    O_JOKER_LEAD,
    O_LEAD_BIT,
    O_MISERE,
    O_N,
    O_OPEN_MISERE_RANK,
    O_PARTNER_CALL,
    O_SUIT,
    O_SUIT_CARDS,
    PARTNER_BIT,
)

# The phases as Phase numbers them, except the five-handed call (Phase.CALL = 5) placed before
# the end of the deal, so that "phase < DEAL_OVER" says a deal goes on (write_obs shows each
# phase in its Phase row).
BIDDING, DISCARD, NOMINATE, PLAY, CALL, DEAL_OVER = 0, 1, 2, 3, 4, 5
PASS, MISERE, OPEN_MISERE, NO_NOMINATION = 0, 26, 27, 86
MISERE_RANK = 19
NO_TRUMP_CTX = 4
SUITLESS = 4
NOMINATE_WORD = 0b11111
NO_PARTNER_CALL, CARD_CALL = 0, 1  # O_PARTNER_CALL (2: a seat call)


@njit(cache=True, inline="always")
def effective_suit(o: np.ndarray, ctx: int, bit: int) -> int:
    """engine.EFFECTIVE_SUIT[ctx] of the card of a kernel bit."""
    return o[O_SUIT + KERNEL_MASK_BITS * ctx + bit]


@njit(cache=True, inline="always")
def suit_cards(o: np.ndarray, ctx: int, suit: int) -> int:
    """engine.SUIT_CARDS[ctx][suit] as a kernel mask (the pack's cards only)."""
    return o[O_SUIT_CARDS + 5 * ctx + suit]


@njit(cache=True)
def bid_rank(action: int, o: np.ndarray) -> int:
    """engine.bid_rank (§4): trick bids 0, 2 … 48, misère 19, open misère 45 or 50."""
    if action == MISERE:
        return MISERE_RANK
    if action == OPEN_MISERE:
        return o[O_OPEN_MISERE_RANK]
    return 2 * (action - 1)


@njit(cache=True)
def bidding_word(st: np.ndarray, b: int, o: np.ndarray) -> int:
    """Deal._bidding_actions (§4) as a bit set of bid ids."""
    high = st[b, F_HIGH_BID]
    current = bid_rank(high, o) if high >= 0 else -1
    first_trick_bid = 1 + (current + 2) // 2 if current >= 0 else 1
    trick_bids = 0
    if first_trick_bid <= 25:
        trick_bids = ((1 << 26) - 1) ^ ((1 << first_trick_bid) - 1)
    if st[b, F_TO_ACT] == st[b, F_BOTH_JOKERS_SEAT]:
        floor = 1 + 5 * (o[O_BOTH_JOKERS_MIN] - 6)
        if current < 2 * (floor - 1):  # both jokers dealt, the bid below the floor: no pass, no misère
            return trick_bids & ~((1 << floor) - 1)
    word = trick_bids | 1 << PASS
    misere = o[O_MISERE]  # 0 after_seven, 1 any_time, 2 none
    if misere != 2 and current < MISERE_RANK and (misere == 1 or 6 <= high <= 10):
        word |= 1 << MISERE
    open_rank = o[O_OPEN_MISERE_RANK]
    if open_rank >= 0 and current < open_rank:
        word |= 1 << OPEN_MISERE
    return word


@njit(cache=True)
def joker_lead_suits(st: np.ndarray, b: int, o: np.ndarray, seat: int) -> int:
    """Deal._joker_lead_suits (§7, ``joker_lead_suit``) as a bit set of suits."""
    if o[O_JOKER_LEAD] == 0:  # not_yet_led
        allowed = ~st[b, F_SUITS_LED] & 15
        if allowed == 0 and st[b, F_HANDS + seat] & ~JOKERS_MASK == 0:
            allowed = 15  # nothing but jokers left: any suit
        return allowed
    allowed = ~st[b, F_SHOWN_VOID + seat] & 15
    return allowed if allowed else 15


@njit(cache=True, inline="always")  # one call less per decision (numba passes each array as 7 arguments)
def set_legal(st: np.ndarray, b: int, o: np.ndarray) -> None:
    """Deal.legal_actions as the game's legal set (``F_LEGAL``, ``F_LEGAL_HIGH``: module docstring)."""
    phase = st[b, F_PHASE]
    word = 0
    high = 0
    if phase == PLAY:
        seat = st[b, F_TO_ACT]
        hand = st[b, F_HANDS + seat]
        ctx = st[b, F_CTX]
        if st[b, F_TRICK_LEN]:
            follow = hand & suit_cards(o, ctx, st[b, F_LED_SUIT])  # follow suit if you can (§7)
            word = follow if follow else hand
        else:
            suitless = hand & suit_cards(o, ctx, SUITLESS)
            word = hand ^ suitless
            if suitless:
                leads = joker_leads(st, b, o, seat, suitless)
                lead = o[O_LEAD_BIT]
                if lead < KERNEL_MASK_BITS:
                    word |= leads << lead
                else:
                    high = leads << (lead - KERNEL_MASK_BITS)
    elif phase == BIDDING:
        word = bidding_word(st, b, o)
    elif phase == DISCARD:
        word = st[b, F_HANDS + st[b, F_CONTRACTOR]]
    elif phase == NOMINATE:
        word = NOMINATE_WORD
    elif phase == CALL:
        if o[O_PARTNER_CALL] == CARD_CALL:  # any card but the joker and the contractor's own (§10.5)
            word = o[O_DECK] & ~JOKERS_MASK & ~st[b, F_HANDS + st[b, F_CONTRACTOR]]
        else:  # any seat but the contractor's
            seats = ((1 << o[O_N]) - 1) ^ (1 << st[b, F_CONTRACTOR])
            high = seats << (PARTNER_BIT - KERNEL_MASK_BITS)
    st[b, F_LEGAL] = word
    st[b, F_LEGAL_HIGH] = high


@njit(cache=True)
def joker_leads(st: np.ndarray, b: int, o: np.ndarray, seat: int, suitless: int) -> int:
    """The joker leads open to ``seat`` (bit ``4·j + s``: joker ``j`` led naming suit ``s``),
    ``suitless`` being the suitless jokers in its hand."""
    suits = joker_lead_suits(st, b, o, seat)
    leads = 0
    for j in range(2):
        if suitless >> (JOKER1 + j) & 1:
            leads |= suits << (4 * j)
    return leads


@njit(cache=True, inline="always")
def is_legal(st: np.ndarray, b: int, bit: int) -> bool:
    """Whether bit ``bit`` (0-127) of game ``b``'s legal set is set."""
    if bit < KERNEL_MASK_BITS:
        return st[b, F_LEGAL] >> bit & 1 == 1
    return st[b, F_LEGAL_HIGH] >> (bit - KERNEL_MASK_BITS) & 1 == 1
