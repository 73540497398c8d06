"""The kitty, the partner call and the nomination (kitty.KittyPlayer)."""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from agents.heuristic._kernels.bidding import bid_rank, bid_strain, is_trick_bid
from agents.heuristic._kernels.evaluation import misere_best_throw, nt_tricks, nt_value, suit_tricks
from agents.heuristic._kernels.play import strongest
from agents.heuristic._kernels.view import (
    C_EFF,
    C_HIGHER,
    C_STRENGTH,
    C_SUIT,
    MAX_SEATS,
    MISERE,
    NO_NOMINATION_BIT,
    NO_TRUMP_CTX,
    R_CALL_SEAT,
    R_DECK,
    R_KITTY,
    R_N,
    STRENGTH_SCALE,
    SUITLESS,
    V_BID,
    V_BID_SEAT,
    V_CONTRACT,
    V_CTX,
    V_DISCARDS,
    V_HAND,
    V_NUM_BIDS,
    V_SEAT,
    V_TRUMP,
)
from five_hundred_env.vector._bits import popcount


# -- the kitty and the nomination (kitty.KittyPlayer) -----------------------------------------------------
@njit(cache=True, inline="always")
def discard_keep(ct: np.ndarray, ctx: int, hand: int, c: int, trump: int) -> float:
    """kitty._discard_keep."""
    e = ct[ctx, C_EFF + c]
    strength = ct[ctx, C_STRENGTH + c] / STRENGTH_SCALE
    if e == SUITLESS:
        return 1000.0
    if trump >= 0 and e == trump:
        return 500.0 + strength
    higher_out = ct[ctx, C_HIGHER + c] & ~hand
    length = popcount(hand & ct[ctx, C_SUIT + e])
    if not higher_out:
        return 200.0 + strength
    missing = popcount(higher_out)
    if trump < 0:
        return strength + 3.0 * length + (40.0 if missing < length else 0.0)
    return strength + 2.0 * length + (15.0 if missing == 1 and length >= 2 else 0.0)


@njit(cache=True)
def discard_decision(v: np.ndarray, cards: int, ct: np.ndarray, ri: np.ndarray) -> int:
    """KittyPlayer.discard (and _misere_discard) among the legal ``cards``."""
    hand = v[V_HAND]
    ctx = v[V_CTX]
    if v[V_CONTRACT] >= MISERE:
        left = ri[R_KITTY] - popcount(v[V_DISCARDS])
        thrown = misere_best_throw(ct, hand, left, ri[R_DECK] & ~hand & ~v[V_DISCARDS])[1]
        choice = cards & thrown
        if not choice:
            choice = cards
        return strongest(ct, ctx, choice)
    trump = v[V_TRUMP]
    best, best_score = trailing_zeros(cards), -1e9
    m = cards
    while m:
        c = trailing_zeros(m)
        m &= m - 1
        rest = hand & ~(1 << c)
        value = nt_tricks(ct, ri, rest) if trump < 0 else suit_tricks(ct, rest, trump)
        score = 10.0 * value - discard_keep(ct, ctx, hand, c, trump) / 1000.0
        if score > best_score:
            best, best_score = c, score
    return best


@njit(cache=True)
def call_decision(v: np.ndarray, word: int, ct: np.ndarray, ri: np.ndarray) -> int:
    """KittyPlayer.call: a card's bit (``word``: the legal cards) or, with ``partner_call=seat``, an
    absolute seat (``word``: the legal seats)."""
    if ri[R_CALL_SEAT]:
        return call_seat(v, word, ri)
    hand = v[V_HAND]
    trump = v[V_TRUMP]
    ctx = v[V_CTX]
    base = nt_tricks(ct, ri, hand) if trump < 0 else suit_tricks(ct, hand, trump)
    best, best_gain = trailing_zeros(word), -1e9
    m = word & ~v[V_DISCARDS]  # never a discard: that would mean playing alone
    while m:
        c = trailing_zeros(m)
        m &= m - 1
        more = hand | 1 << c
        worth = nt_tricks(ct, ri, more) if trump < 0 else suit_tricks(ct, more, trump)
        gain = worth - base + ct[ctx, C_STRENGTH + c] / STRENGTH_SCALE / 1000.0  # ties: the higher card
        if gain > best_gain:
            best, best_gain = c, gain
    return best


@njit(cache=True)
def call_seat(v: np.ndarray, seats: int, ri: np.ndarray) -> int:
    """KittyPlayer._call_seat: the seat whose trick bids showed most in the contract's strain (a
    seat's last trick bid counts; ties: the nearest to the left)."""
    n = ri[R_N]
    strain = bid_strain(v[V_CONTRACT])
    shown = np.full(MAX_SEATS, -1, dtype=np.int64)
    for i in range(v[V_NUM_BIDS]):
        b = v[V_BID + i]
        if is_trick_bid(b):
            shown[v[V_BID_SEAT + i]] = bid_rank(b, ri) + (100 if bid_strain(b) == strain else 0)
    best, best_shown, best_r = -1, -2, n
    while seats:
        seat = trailing_zeros(seats)
        seats &= seats - 1
        r = (seat - v[V_SEAT]) % n
        if shown[r] > best_shown or (shown[r] == best_shown and r < best_r):
            best, best_shown, best_r = seat, shown[r], r
    return best


@njit(cache=True)
def nominate_decision(v: np.ndarray, word: int, ct: np.ndarray) -> int:
    """KittyPlayer.nominate (the word's bits: NOMINATE_S … NOMINATE_H, NO_NOMINATION)."""
    if v[V_CONTRACT] >= MISERE:
        return NO_NOMINATION_BIT
    hand = v[V_HAND]
    best, best_value = NO_NOMINATION_BIT, nt_value(ct, hand, NO_TRUMP_CTX) - 0.2
    for s in range(4):
        if not word >> s & 1:
            continue
        value = nt_value(ct, hand, NO_TRUMP_CTX + 1 + s)
        if value > best_value:
            best, best_value = s, value
    return best
