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

from five_hundred_env.cards import KERNEL_MASK_BITS
from five_hundred_env.vector._layout import (
    F_BID_ROWS,
    F_BID_SEAT,
    F_CALLED,
    F_CONTRACT,
    F_CONTRACTOR,
    F_DEALER,
    F_DEALT,
    F_DISCARDS,
    F_EXPOSED,
    F_HANDS,
    F_JOKER_LEADS,
    F_KITTY,
    F_LEADER,
    F_LED_SUIT,
    F_LEGAL,
    F_LEGAL_HIGH,
    F_NOMINATED,
    F_NUM_TRICKS,
    F_PARTNER,
    F_PARTNER_KNOWN,
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
    L_CALLED,
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
    L_PARTNER,
    L_PASSES,
    L_PHASE,
    L_PLAYED,
    L_SCORES,
    L_SEAT,
    L_SHOWN_VOID,
    L_SITTING_OUT,
    L_SIZE,
    L_STATE_DEAD_HAND,
    L_STATE_PARTNER,
    L_STATE_VIEW,
    L_SUITS_LED,
    L_TO_ACT,
    L_TRICK,
    L_TRICKS,
    L_TRICKS_WON,
    L_TRUMP,
    O_CARD_ID,
    O_DECK,
    O_MOVED,
    O_N,
    O_SIDE_OF,
    O_SIDES,
    O_WIDTH,
)
from five_hundred_env.vector._legal import BIDDING, CALL, DEAL_OVER, NOMINATE, PLAY


@njit(cache=True, inline="always")
def write_bits(row: np.ndarray, offset: int, bits: int) -> None:
    """Set ``row[offset + i] = 1`` for every set bit ``i`` of ``bits``."""
    while bits:
        row[offset + trailing_zeros(bits)] = 1
        bits &= bits - 1


@njit(cache=True, inline="always")
def write_cards(row: np.ndarray, offset: int, cards: int, o: np.ndarray, moved: int) -> None:
    """A card slice: ``row[offset + id] = 1`` for the universal id of every card of the kernel mask
    ``cards``: the bit itself, but for the cards whose ids pass 63 (``moved``, the rules'
    ``O_MOVED``, read once by the caller: a load from ``o`` after stores to ``row`` is not hoisted)."""
    moved &= cards
    write_bits(row, offset, cards ^ moved)
    while moved:
        row[offset + o[O_CARD_ID + trailing_zeros(moved)]] = 1
        moved &= moved - 1


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
    word = st[b, F_LEGAL_HIGH]
    while word:
        row[compact_of_word[kind, KERNEL_MASK_BITS + trailing_zeros(word)]] = 1
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


@njit(cache=True, inline="always")  # one call less per observation (numba passes each array as 7 arguments)
def write_play(st: np.ndarray, b: int, o: np.ndarray, observer: int, n: int, off: np.ndarray, row: np.ndarray,
               width: int, moved: int) -> None:
    """The slices that exist once the auction is over: contract, kitty, played cards, the trick,
    the recall of every trick so far (``tricks``, ``joker_leads``)."""
    contractor = st[b, F_CONTRACTOR]
    row[off[L_CONTRACT] + st[b, F_CONTRACT] - 1] = 1
    row[off[L_CONTRACTOR] + relative(contractor, observer, n)] = 1
    trump = st[b, F_TRUMP]
    row[off[L_TRUMP] + (trump if trump >= 0 else 4)] = 1
    out = st[b, F_SITTING_OUT]
    while out:
        row[off[L_SITTING_OUT] + relative(trailing_zeros(out), observer, n)] = 1
        out &= out - 1
    if observer == contractor:  # nobody but the contractor sees the kitty or discards (§5)
        write_cards(row, off[L_KITTY], st[b, F_KITTY], o, moved)
        write_cards(row, off[L_DISCARDS], st[b, F_DISCARDS], o, moved)
    if st[b, F_NOMINATED] >= 0:
        row[off[L_JOKER_SUIT] + st[b, F_NOMINATED]] = 1
    if st[b, F_EXPOSED]:
        write_cards(row, off[L_EXPOSED], st[b, F_HANDS + contractor], o, moved)
    for seat in range(n):
        rel = relative(seat, observer, n)
        write_cards(row, off[L_PLAYED] + width * rel, st[b, F_PLAYED + seat], o, moved)
        write_bits(row, off[L_SHOWN_VOID] + 4 * rel, st[b, F_SHOWN_VOID + seat])
        won_at = off[L_TRICKS_WON] + 10 * rel
        for t in range(st[b, F_TRICKS_WON + seat]):
            row[won_at + t] = 1
    if st[b, F_TRICK_LEN]:
        for seat in range(n):
            card = st[b, F_TRICK_CARD + seat]
            if card >= 0:
                row[off[L_TRICK] + width * relative(seat, observer, n) + o[O_CARD_ID + card]] = 1
        row[off[L_LEADER] + relative(st[b, F_LEADER], observer, n)] = 1
        row[off[L_LED_SUIT] + st[b, F_LED_SUIT]] = 1
    tricks = st[b, F_NUM_TRICKS] + (1 if st[b, F_TRICK_LEN] else 0)  # the current trick's row too
    for t in range(tricks):
        write_cards(row, off[L_TRICKS] + width * t, st[b, F_TRICK_CARDS + t], o, moved)
    write_bits(row, off[L_JOKER_LEADS], st[b, F_JOKER_LEADS])


@njit(cache=True)
def write_obs(st: np.ndarray, b: int, o: np.ndarray, observer: int, off: np.ndarray, row: np.ndarray) -> None:
    """ObservationEncoder.encode(deal, observer, scores) into ``row`` (``off[L_SIZE]`` elements)."""
    n = o[O_N]
    row[: off[L_SIZE]] = 0
    moved = o[O_MOVED]
    phase = st[b, F_PHASE]
    if phase == NOMINATE and observer != st[b, F_CONTRACTOR]:
        phase = PLAY  # that the contractor may nominate would show it holds the joker (§7)
    write_cards(row, off[L_HAND], st[b, F_HANDS + observer], o, moved)
    row[off[L_PHASE] + phase_row(phase)] = 1
    row[off[L_DEALER] + relative(st[b, F_DEALER], observer, n)] = 1
    write_bits(row, off[L_SUITS_LED], st[b, F_SUITS_LED])
    if st[b, F_TO_ACT] >= 0:
        row[off[L_TO_ACT] + relative(st[b, F_TO_ACT], observer, n)] = 1
    write_auction(st, b, observer, n, off, row)
    if st[b, F_CONTRACTOR] >= 0:
        write_play(st, b, o, observer, n, off, row, o[O_WIDTH], moved)
    k = o[O_SIDES]
    own = o[O_SIDE_OF + observer]
    for i in range(k):
        row[off[L_SCORES] + i] = rounded_tenth(st[b, F_SCORES + (own + i) % k])
    if off[L_SEAT] >= 0:  # five players: the call, the partner, the own seat (§10.5, §10.8)
        row[off[L_SEAT] + observer] = 1
        if st[b, F_CALLED] >= 0:
            row[off[L_CALLED] + o[O_CARD_ID + st[b, F_CALLED]]] = 1
        partner = st[b, F_PARTNER]
        if partner >= 0 and (st[b, F_PARTNER_KNOWN] or observer == partner):
            row[off[L_PARTNER] + relative(partner, observer, n)] = 1


@njit(cache=True, inline="always")
def phase_row(phase: int) -> int:
    """The row of the ``phase`` slice (Phase's number) of a kernel phase: all the same but the
    call and the end of the deal, which the kernels number the other way round (_kernels)."""
    if phase == CALL:
        return 5
    return DEAL_OVER - 1 if phase == DEAL_OVER else phase


@njit(cache=True)
def write_state(st: np.ndarray, b: int, o: np.ndarray, observer: int, off: np.ndarray, row: np.ndarray) -> None:
    """ObservationEncoder.encode_state(deal, scores, observer): every hand (in the observer's
    relative seats), the kitty as dealt, the discards, the dead hand (``two_handed``), the partner
    (five players), the observer's view with the true phase."""
    n = o[O_N]
    width = o[O_WIDTH]
    moved = o[O_MOVED]
    view_at = off[L_STATE_VIEW]
    row[:view_at] = 0
    for seat in range(n):
        write_cards(row, width * relative(seat, observer, n), st[b, F_HANDS + seat], o, moved)
    write_cards(row, width * n, st[b, F_KITTY], o, moved)
    write_cards(row, width * (n + 1), st[b, F_DISCARDS], o, moved)
    if off[L_STATE_DEAD_HAND] >= 0:
        dealt = st[b, F_KITTY]
        for seat in range(n):
            dealt |= st[b, F_DEALT + seat]
        write_cards(row, off[L_STATE_DEAD_HAND], o[O_DECK] & ~dealt, o, moved)
    if off[L_STATE_PARTNER] >= 0 and st[b, F_PARTNER] >= 0:
        row[off[L_STATE_PARTNER] + relative(st[b, F_PARTNER], observer, n)] = 1
    write_obs(st, b, o, observer, off, row[view_at:])
    if st[b, F_PHASE] == NOMINATE and observer != st[b, F_CONTRACTOR]:  # the view showed it as play
        row[view_at + off[L_PHASE] + PLAY] = 0
        row[view_at + off[L_PHASE] + NOMINATE] = 1
