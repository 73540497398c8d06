"""The rules of docs/rules.md §3-§10 as numba kernels over the batched state of :mod:`._layout`.

Each function mirrors the method of :class:`five_hundred_env.engine.Deal` or ``Game`` named in
its docstring; the scalar engine is the readable reference and the differential tests
(``tests/test_vector_diff.py``) hold the two to the same results at every step.

The legal set of a game, its bits (what a kernel applies with :func:`apply_word_bit`) and the
card-order tables are described in :mod:`._legal`.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from five_hundred_env.cards import JOKER1, JOKERS_MASK, KERNEL_MASK_BITS
from five_hundred_env.vector._bits import next_random, popcount
from five_hundred_env.vector._layout import (
    F_ACTION_RNG,
    F_BID_ROWS,
    F_BID_SEAT,
    F_BOTH_JOKERS_SEAT,
    F_CALLED,
    F_CONTRACT,
    F_CONTRACTOR,
    F_CTX,
    F_DEAL_RNG,
    F_DEALER,
    F_DEALT,
    F_DISCARDS,
    F_EXPOSED,
    F_HANDS,
    F_HIGH_BID,
    F_HIGH_BIDDER,
    F_JOKER_LEADS,
    F_KITTY,
    F_LEADER,
    F_LED_SUIT,
    F_LEGAL,
    F_LEGAL_HIGH,
    F_MADE,
    F_NEXT_SEAT,
    F_NOMINATED,
    F_NUM_DEALS,
    F_NUM_TRICKS,
    F_PARTNER,
    F_PARTNER_KNOWN,
    F_PASS_ROWS,
    F_PASS_SEATS,
    F_PASSED,
    F_PASSES_IN_ROW,
    F_PHASE,
    F_PLAYED,
    F_SCORE_CHANGE,
    F_SCORES,
    F_SHOWN_VOID,
    F_SITTING_OUT,
    F_START_SCORES,
    F_SUITS_LED,
    F_THROWN_IN,
    F_TO_ACT,
    F_TRICK_CARD,
    F_TRICK_CARDS,
    F_TRICK_LEN,
    F_TRICK_SIZE,
    F_TRICKS_WON,
    F_TRUMP,
    F_WINNERS,
    MAX_SEATS,
    MAX_TRICKS,
    O_BIDDING,
    O_BOTH_JOKERS_MIN,
    O_DECK,
    O_EXPOSURE,
    O_HAND,
    O_KITTY,
    O_LEAD_BIT,
    O_N,
    O_NOMINATION,
    O_PARTNER_CALL,
    O_REBID,
    O_SIDE_OF,
    O_WIN_KEY,
    PARTNER_BIT,
)
from five_hundred_env.vector._legal import (
    BIDDING,
    CALL,
    DEAL_OVER,
    DISCARD,
    MISERE,
    NO_NOMINATION,
    NO_PARTNER_CALL,
    NO_TRUMP_CTX,
    NOMINATE,
    OPEN_MISERE,
    PASS,
    PLAY,
    effective_suit,
    set_legal,
)
from five_hundred_env.vector._score import score_deal


# -- §3 the deal -----------------------------------------------------------------------------------
@njit(cache=True)
def start_deal(st: np.ndarray, b: int, o: np.ndarray, dealer: int) -> None:
    """Deal.__init__ over the hands and kitty already in ``F_DEALT``/``F_KITTY``."""
    n = o[O_N]
    st[b, F_PHASE] = BIDDING
    st[b, F_DEALER] = dealer
    st[b, F_TO_ACT] = (dealer + 1) % n
    for field in (F_PASSED, F_PASSES_IN_ROW, F_DISCARDS, F_TRICK_LEN, F_NUM_TRICKS, F_SUITS_LED, F_EXPOSED,
                  F_THROWN_IN, F_MADE, F_JOKER_LEADS):
        st[b, field] = 0
    for field in (F_SITTING_OUT, F_PARTNER_KNOWN):
        st[b, field] = 0
    for field in (F_HIGH_BID, F_HIGH_BIDDER, F_CONTRACT, F_CONTRACTOR, F_TRUMP, F_NOMINATED, F_LEADER, F_LED_SUIT,
                  F_BOTH_JOKERS_SEAT, F_CALLED, F_PARTNER):
        st[b, field] = -1
    st[b, F_CTX] = NO_TRUMP_CTX
    st[b, F_TRICK_SIZE] = n
    for s in range(n):
        st[b, F_HANDS + s] = st[b, F_DEALT + s]
        st[b, F_PLAYED + s] = 0
        st[b, F_SHOWN_VOID + s] = 0
        st[b, F_TRICKS_WON + s] = 0
        st[b, F_TRICK_CARD + s] = -1
        st[b, F_NEXT_SEAT + s] = (s + 1) % n
        st[b, F_SCORE_CHANGE + s] = 0
        if o[O_BOTH_JOKERS_MIN] > 0 and st[b, F_DEALT + s] & JOKERS_MASK == JOKERS_MASK:
            st[b, F_BOTH_JOKERS_SEAT] = s
    for t in range(MAX_TRICKS):
        st[b, F_TRICK_CARDS + t] = 0
    st[b, F_BID_ROWS] = 0
    st[b, F_PASS_ROWS] = 0
    set_legal(st, b, o)


@njit(cache=True)
def shuffle_deal(st: np.ndarray, b: int, o: np.ndarray, dealer: int, cards: np.ndarray) -> None:
    """Deal.new: a uniform shuffle of the deck (Fisher-Yates over the game's stream), then dealt:
    the hands, the kitty, and (``two_handed``) the dead hand, the cards left over (§10.3)."""
    deck = o[O_DECK]
    count = 0
    for c in range(KERNEL_MASK_BITS):
        if deck >> c & 1:
            cards[count] = c
            count += 1
    for i in range(count - 1, 0, -1):
        j = next_random(st, b, F_DEAL_RNG, i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    size = o[O_HAND]
    n = o[O_N]
    for s in range(MAX_SEATS):
        hand = 0
        if s < n:
            for k in range(size):
                hand |= 1 << cards[s * size + k]
        st[b, F_DEALT + s] = hand
    kitty = 0
    for k in range(n * size, n * size + o[O_KITTY]):
        kitty |= 1 << cards[k]
    st[b, F_KITTY] = kitty
    start_deal(st, b, o, dealer)


@njit(cache=True)
def new_game(st: np.ndarray, b: int, o: np.ndarray, cards: np.ndarray) -> None:
    """A new episode (env.reset): starting scores, a random first dealer, a shuffled deal."""
    for side in range(MAX_SEATS):
        st[b, F_SCORES + side] = st[b, F_START_SCORES + side]
    st[b, F_WINNERS] = 0
    st[b, F_NUM_DEALS] = 0
    shuffle_deal(st, b, o, next_random(st, b, F_DEAL_RNG, o[O_N]), cards)


# -- §4 bidding, §5 the kitty, §7 play ---------------------------------------------------------------
@njit(cache=True)
def apply_bid(st: np.ndarray, b: int, o: np.ndarray, action: int) -> None:
    """Deal._apply_bid."""
    n = o[O_N]
    seat = st[b, F_TO_ACT]
    if action == PASS:
        row = max(st[b, F_HIGH_BID], 0)
        if not st[b, F_PASS_ROWS] >> row & 1:
            st[b, F_PASS_ROWS] |= 1 << row
            st[b, F_PASS_SEATS + row] = 0
        st[b, F_PASS_SEATS + row] |= 1 << seat
        st[b, F_PASSED] |= 1 << seat
        st[b, F_PASSES_IN_ROW] += 1
    else:
        st[b, F_BID_SEAT + action - 1] = seat
        st[b, F_BID_ROWS] |= 1 << (action - 1)
        st[b, F_HIGH_BID] = action
        st[b, F_HIGH_BIDDER] = seat
        st[b, F_PASSES_IN_ROW] = 0
    if o[O_BIDDING] == 1:  # single_round: dealer's left … dealer, once each
        if seat == st[b, F_DEALER]:
            end_auction(st, b, o)
        else:
            st[b, F_TO_ACT] = (seat + 1) % n
        return
    if o[O_REBID]:
        in_row = st[b, F_PASSES_IN_ROW]
        if (st[b, F_HIGH_BID] >= 0 and in_row == n - 1) or in_row == n:
            end_auction(st, b, o)
        else:
            st[b, F_TO_ACT] = (seat + 1) % n
        return
    all_seats = (1 << n) - 1
    passed = st[b, F_PASSED]
    if passed == all_seats or (st[b, F_HIGH_BID] >= 0 and passed | 1 << st[b, F_HIGH_BIDDER] == all_seats):
        end_auction(st, b, o)
        return
    nxt = (seat + 1) % n
    while passed >> nxt & 1:
        nxt = (nxt + 1) % n
    st[b, F_TO_ACT] = nxt


@njit(cache=True)
def end_auction(st: np.ndarray, b: int, o: np.ndarray) -> None:
    """Deal._end_auction: thrown in, or the contractor takes the kitty."""
    contract = st[b, F_HIGH_BID]
    if contract < 0:  # every player passed: thrown in (§4)
        st[b, F_THROWN_IN] = 1
        st[b, F_PHASE] = DEAL_OVER
        st[b, F_TO_ACT] = -1
        return
    contractor = st[b, F_HIGH_BIDDER]
    st[b, F_CONTRACT] = contract
    st[b, F_CONTRACTOR] = contractor
    misere = contract >= MISERE
    strain = (contract - 1) % 5
    if misere or strain == 4:
        st[b, F_CTX] = NO_TRUMP_CTX
        st[b, F_TRUMP] = -1
    else:
        st[b, F_CTX] = strain
        st[b, F_TRUMP] = strain
    if misere:  # the contractor's team-mates sit out (§7, §10.4): one with four players, two with six
        n = o[O_N]
        own = o[O_SIDE_OF + contractor]
        out = 0
        for s in range(n):
            if s != contractor and o[O_SIDE_OF + s] == own:
                out |= 1 << s
        if out:
            st[b, F_SITTING_OUT] = out
            st[b, F_TRICK_SIZE] = n - popcount(out)
            for s in range(n):
                nxt = (s + 1) % n
                while out >> nxt & 1:
                    nxt = (nxt + 1) % n
                st[b, F_NEXT_SEAT + s] = nxt
    st[b, F_HANDS + contractor] |= st[b, F_KITTY]  # picked up without showing it
    st[b, F_PHASE] = DISCARD
    st[b, F_TO_ACT] = contractor


@njit(cache=True)
def apply_discard(st: np.ndarray, b: int, o: np.ndarray, card: int) -> None:
    """Deal._apply_discard: after the last discard, a trick contract's partner call (§10.5) or
    what follows it (after_call)."""
    contractor = st[b, F_CONTRACTOR]
    st[b, F_HANDS + contractor] ^= 1 << card
    st[b, F_DISCARDS] |= 1 << card
    if popcount(st[b, F_DISCARDS]) < o[O_KITTY]:
        return
    if o[O_PARTNER_CALL] != NO_PARTNER_CALL and st[b, F_CONTRACT] < MISERE:
        st[b, F_PHASE] = CALL
    else:
        after_call(st, b, o)


@njit(cache=True)
def apply_call(st: np.ndarray, b: int, o: np.ndarray, bit: int) -> None:
    """Deal._apply_call: a seat named (``PARTNER_s``), or a card whose holder at the call is the
    partner (none if it is a discard)."""
    if bit >= PARTNER_BIT:
        st[b, F_PARTNER] = bit - PARTNER_BIT
        st[b, F_PARTNER_KNOWN] = 1
    else:
        st[b, F_CALLED] = bit
        for s in range(o[O_N]):
            if st[b, F_HANDS + s] >> bit & 1:
                st[b, F_PARTNER] = s
    after_call(st, b, o)


@njit(cache=True)
def after_call(st: np.ndarray, b: int, o: np.ndarray) -> None:
    """Deal._after_call: the joker's nomination if Deal._may_nominate, else the play."""
    nomination = o[O_NOMINATION]  # 0 nt_and_misere, 1 misere_only, 2 none
    contract = st[b, F_CONTRACT]
    misere = contract >= MISERE
    if (nomination != 2 and st[b, F_HANDS + st[b, F_CONTRACTOR]] >> JOKER1 & 1
            and (misere or (nomination == 0 and (contract - 1) % 5 == 4))):
        st[b, F_PHASE] = NOMINATE
    else:
        start_play(st, b, o)


@njit(cache=True)
def start_play(st: np.ndarray, b: int, o: np.ndarray) -> None:
    """Deal._start_play: the contractor leads; an open misère shown before the first lead [IT]."""
    st[b, F_PHASE] = PLAY
    st[b, F_LEADER] = st[b, F_CONTRACTOR]
    st[b, F_TO_ACT] = st[b, F_CONTRACTOR]
    if st[b, F_CONTRACT] == OPEN_MISERE and o[O_EXPOSURE] == 1:
        st[b, F_EXPOSED] = 1


@njit(cache=True)
def apply_play(st: np.ndarray, b: int, o: np.ndarray, bit: int) -> None:
    """Deal._apply_play for word bit ``bit`` (a card, or a joker lead naming a suit)."""
    seat = st[b, F_TO_ACT]
    ctx = st[b, F_CTX]
    leading = st[b, F_TRICK_LEN] == 0
    number = st[b, F_NUM_TRICKS]
    lead = o[O_LEAD_BIT]
    if bit >= lead:  # a suitless joker led, naming the suit to follow
        card = JOKER1 + (bit - lead) // 4
        st[b, F_LED_SUIT] = (bit - lead) % 4
        st[b, F_JOKER_LEADS] |= 1 << (4 * number + st[b, F_LED_SUIT])
    else:
        card = bit
        suit = effective_suit(o, ctx, card)
        if leading:
            st[b, F_LED_SUIT] = suit
        elif suit != st[b, F_LED_SUIT]:
            st[b, F_SHOWN_VOID + seat] |= 1 << st[b, F_LED_SUIT]
    led = st[b, F_LED_SUIT]
    st[b, F_HANDS + seat] ^= 1 << card
    st[b, F_PLAYED + seat] |= 1 << card
    st[b, F_TRICK_CARDS + number] |= 1 << card
    if card == st[b, F_CALLED]:
        st[b, F_PARTNER_KNOWN] = 1  # who played it is public (§10.5)
    if leading:
        st[b, F_SUITS_LED] |= 1 << led
    st[b, F_TRICK_CARD + seat] = card
    st[b, F_TRICK_LEN] += 1
    if st[b, F_TRICK_LEN] < st[b, F_TRICK_SIZE]:
        st[b, F_TO_ACT] = st[b, F_NEXT_SEAT + seat]
        return
    # The trick is complete: the highest trump wins, else the highest card of the suit led.
    winner, best = -1, -1
    keys = O_WIN_KEY + KERNEL_MASK_BITS * (4 * ctx + led)
    for s in range(o[O_N]):
        c = st[b, F_TRICK_CARD + s]
        if c >= 0:
            key = o[keys + c]
            if key > best:
                winner, best = s, key
            st[b, F_TRICK_CARD + s] = -1
    st[b, F_TRICKS_WON + winner] += 1
    st[b, F_TRICK_LEN] = 0
    st[b, F_NUM_TRICKS] += 1
    if st[b, F_CONTRACT] == OPEN_MISERE and st[b, F_NUM_TRICKS] == 1:
        st[b, F_EXPOSED] = 1  # after_first_trick; before_first_lead set it already
    if st[b, F_NUM_TRICKS] == o[O_HAND]:
        st[b, F_PHASE] = DEAL_OVER
        st[b, F_TO_ACT] = -1
        score_deal(st, b, o)
        return
    st[b, F_LEADER] = winner
    st[b, F_TO_ACT] = winner
    st[b, F_LED_SUIT] = -1


# -- one decision ---------------------------------------------------------------------------------------
@njit(cache=True)
def apply_word_bit(st: np.ndarray, b: int, o: np.ndarray, bit: int) -> None:
    """Deal.apply_action for a legal word bit (legality is checked by the caller)."""
    phase = st[b, F_PHASE]
    if phase == PLAY:
        apply_play(st, b, o, bit)
    elif phase == BIDDING:
        apply_bid(st, b, o, bit)
    elif phase == DISCARD:
        apply_discard(st, b, o, bit)
    elif phase == CALL:
        apply_call(st, b, o, bit)
    else:
        if bit != NO_NOMINATION - 82:
            st[b, F_NOMINATED] = bit
            st[b, F_CTX] = NO_TRUMP_CTX + 1 + bit
        start_play(st, b, o)
    set_legal(st, b, o)


@njit(cache=True)
def sample_word_bit(st: np.ndarray, b: int) -> int:
    """A uniformly random bit (0-127) of the game's legal set, from its action stream (-1 if none)."""
    word = st[b, F_LEGAL]
    high = st[b, F_LEGAL_HIGH]
    low_count = popcount(word)
    count = low_count + popcount(high)
    if count == 0:
        return -1
    k = next_random(st, b, F_ACTION_RNG, count)
    offset = 0
    if k >= low_count:
        word, k, offset = high, k - low_count, KERNEL_MASK_BITS
    for _ in range(k):
        word &= word - 1
    return offset + trailing_zeros(word)

