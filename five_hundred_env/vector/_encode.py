"""Observations, action masks and the global state of a batch, written into caller's buffers.

``write_obs`` is :meth:`five_hundred_env.observation.ObservationEncoder.encode` (with the game
scores) for one game and observer; ``write_mask`` is the environment's action mask; ``write_state``
is :meth:`ObservationEncoder.encode_state` for one game and observer. The differential tests
compare them byte for byte.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from five_hundred_env.cards import NUM_CARDS
from five_hundred_env.vector._kernels import BIDDING, DEAL_OVER, NOMINATE, PLAY
from five_hundred_env.vector._layout import (
    F_BID_ROWS,
    F_BID_SEAT,
    F_CONTRACT,
    F_CONTRACTOR,
    F_DEALER,
    F_DISCARDS,
    F_EXPOSED,
    F_HANDS,
    F_JOKER_LEADS,
    F_KITTY,
    F_LEADER,
    F_LED_SUIT,
    F_LEGAL,
    F_NOMINATED,
    F_NUM_TRICKS,
    F_PASS_ROWS,
    F_PASS_SEATS,
    F_PHASE,
    F_PLAYED,
    F_SCORES,
    F_SHOWN_VOID,
    F_SITTING_OUT,
    F_SUITS_LED,
    F_TO_ACT,
    F_TRICK_CARD,
    F_TRICK_CARDS,
    F_TRICK_LEN,
    F_TRICKS_WON,
    F_TRUMP,
    L_BIDS,
    L_CONTRACT,
    L_CONTRACTOR,
    L_DEALER,
    L_DISCARDS,
    L_EXPOSED,
    L_HAND,
    L_JOKER_LEADS,
    L_JOKER_SUIT,
    L_KITTY,
    L_LEADER,
    L_LED_SUIT,
    L_PASSES,
    L_PHASE,
    L_PLAYED,
    L_SCORES,
    L_SHOWN_VOID,
    L_SITTING_OUT,
    L_SIZE,
    L_SUITS_LED,
    L_TO_ACT,
    L_TRICK,
    L_TRICKS,
    L_TRICKS_WON,
    L_TRUMP,
    O_N,
    O_SIDE_OF,
    O_SIDES,
)


@njit(cache=True, inline="always")
def write_bits(row: np.ndarray, offset: int, bits: int) -> None:
    """Set ``row[offset + i] = 1`` for every set bit ``i`` of ``bits``."""
    while bits:
        row[offset + trailing_zeros(bits)] = 1
        bits &= bits - 1


@njit(cache=True, inline="always")
def relative(seat: int, observer: int, n: int) -> int:
    """The seat ``seat`` places to the observer's left (``(seat - observer) % n`` without a division)."""
    rel = seat - observer
    return rel + n if rel < 0 else rel


@njit(cache=True)
def mask_kind(phase: int) -> int:
    """The row of ``compact_of_word`` for a phase: 0 bids, 1 cards (and joker leads), 2 nominations."""
    if phase == BIDDING:
        return 0
    return 2 if phase == NOMINATE else 1


@njit(cache=True)
def write_mask(st: np.ndarray, b: int, compact_of_word: np.ndarray, row: np.ndarray) -> None:
    """The acting seat's action mask over the compact action ids (all zeros once the deal is over)."""
    row[:] = 0
    word = st[b, F_LEGAL]
    kind = mask_kind(st[b, F_PHASE])
    while word:
        row[compact_of_word[kind, trailing_zeros(word)]] = 1
        word &= word - 1


@njit(cache=True)
def rounded_tenth(score: int) -> int:
    """``round(score / 10)`` as Python rounds (half to even), clipped to ±127."""
    q, r = divmod(score, 10)
    if r > 5 or (r == 5 and q % 2 == 1):
        q += 1
    return max(-127, min(127, q))


@njit(cache=True)
def write_auction(st: np.ndarray, b: int, observer: int, n: int, off: np.ndarray, row: np.ndarray) -> None:
    """The ``bids`` and ``passes`` slices (only the auction rows in use are visited)."""
    rows = st[b, F_BID_ROWS]
    while rows:
        bid = trailing_zeros(rows)
        row[off[L_BIDS] + bid * n + relative(st[b, F_BID_SEAT + bid], observer, n)] = 1
        rows &= rows - 1
    rows = st[b, F_PASS_ROWS]
    while rows:
        high = trailing_zeros(rows)
        seats = st[b, F_PASS_SEATS + high]
        while seats:
            row[off[L_PASSES] + high * n + relative(trailing_zeros(seats), observer, n)] = 1
            seats &= seats - 1
        rows &= rows - 1


@njit(cache=True)
def write_play(st: np.ndarray, b: int, observer: int, n: int, off: np.ndarray, row: np.ndarray) -> None:
    """The slices that exist once the auction is over: contract, kitty, played cards, the trick,
    the recall of every trick so far (``tricks``, ``joker_leads``)."""
    contractor = st[b, F_CONTRACTOR]
    row[off[L_CONTRACT] + st[b, F_CONTRACT] - 1] = 1
    row[off[L_CONTRACTOR] + relative(contractor, observer, n)] = 1
    trump = st[b, F_TRUMP]
    row[off[L_TRUMP] + (trump if trump >= 0 else 4)] = 1
    if st[b, F_SITTING_OUT] >= 0:
        row[off[L_SITTING_OUT] + relative(st[b, F_SITTING_OUT], observer, n)] = 1
    if observer == contractor:  # nobody but the contractor sees the kitty or discards (§5)
        write_bits(row, off[L_KITTY], st[b, F_KITTY])
        write_bits(row, off[L_DISCARDS], st[b, F_DISCARDS])
    if st[b, F_NOMINATED] >= 0:
        row[off[L_JOKER_SUIT] + st[b, F_NOMINATED]] = 1
    if st[b, F_EXPOSED]:
        write_bits(row, off[L_EXPOSED], st[b, F_HANDS + contractor])
    for seat in range(n):
        rel = relative(seat, observer, n)
        write_bits(row, off[L_PLAYED] + NUM_CARDS * rel, st[b, F_PLAYED + seat])
        write_bits(row, off[L_SHOWN_VOID] + 4 * rel, st[b, F_SHOWN_VOID + seat])
        won_at = off[L_TRICKS_WON] + 10 * rel
        for t in range(st[b, F_TRICKS_WON + seat]):
            row[won_at + t] = 1
    if st[b, F_TRICK_LEN]:
        for seat in range(n):
            card = st[b, F_TRICK_CARD + seat]
            if card >= 0:
                row[off[L_TRICK] + NUM_CARDS * (relative(seat, observer, n)) + card] = 1
        row[off[L_LEADER] + relative(st[b, F_LEADER], observer, n)] = 1
        row[off[L_LED_SUIT] + st[b, F_LED_SUIT]] = 1
    tricks = st[b, F_NUM_TRICKS] + (1 if st[b, F_TRICK_LEN] else 0)  # the current trick's row too
    for t in range(tricks):
        write_bits(row, off[L_TRICKS] + NUM_CARDS * t, st[b, F_TRICK_CARDS + t])
    write_bits(row, off[L_JOKER_LEADS], st[b, F_JOKER_LEADS])


@njit(cache=True)
def write_obs(st: np.ndarray, b: int, o: np.ndarray, observer: int, off: np.ndarray, row: np.ndarray) -> None:
    """ObservationEncoder.encode(deal, observer, scores) into ``row`` (``off[L_SIZE]`` elements)."""
    n = o[O_N]
    row[: off[L_SIZE]] = 0
    phase = min(st[b, F_PHASE], DEAL_OVER)
    if phase == NOMINATE and observer != st[b, F_CONTRACTOR]:
        phase = PLAY  # that the contractor may nominate would show it holds the joker (§7)
    write_bits(row, off[L_HAND], st[b, F_HANDS + observer])
    row[off[L_PHASE] + phase] = 1
    row[off[L_DEALER] + relative(st[b, F_DEALER], observer, n)] = 1
    write_bits(row, off[L_SUITS_LED], st[b, F_SUITS_LED])
    if st[b, F_TO_ACT] >= 0:
        row[off[L_TO_ACT] + relative(st[b, F_TO_ACT], observer, n)] = 1
    write_auction(st, b, observer, n, off, row)
    if st[b, F_CONTRACTOR] >= 0:
        write_play(st, b, observer, n, off, row)
    k = o[O_SIDES]
    own = o[O_SIDE_OF + observer]
    for i in range(k):
        row[off[L_SCORES] + i] = rounded_tenth(st[b, F_SCORES + (own + i) % k])


@njit(cache=True)
def write_state(st: np.ndarray, b: int, o: np.ndarray, observer: int, off: np.ndarray, row: np.ndarray) -> None:
    """ObservationEncoder.encode_state(deal, scores, observer): every hand (in the observer's
    relative seats), the kitty as dealt, the discards, the observer's view with the true phase."""
    n = o[O_N]
    view_at = (n + 2) * NUM_CARDS
    row[:view_at] = 0
    for seat in range(n):
        write_bits(row, NUM_CARDS * relative(seat, observer, n), st[b, F_HANDS + seat])
    write_bits(row, NUM_CARDS * n, st[b, F_KITTY])
    write_bits(row, NUM_CARDS * (n + 1), st[b, F_DISCARDS])
    write_obs(st, b, o, observer, off, row[view_at:])
    if st[b, F_PHASE] == NOMINATE and observer != st[b, F_CONTRACTOR]:  # the view showed it as play
        row[view_at + off[L_PHASE] + PLAY] = 0
        row[view_at + off[L_PHASE] + NOMINATE] = 1
