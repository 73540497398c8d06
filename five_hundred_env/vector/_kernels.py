"""The rules of docs/rules.md §3-§9 as numba kernels over the batched state of :mod:`._layout`.

Each function mirrors the method of :class:`five_hundred_env.engine.Deal` or ``Game`` named in
its docstring; the scalar engine is the readable reference and the differential tests
(``tests/test_vector_diff.py``) hold the two to the same results at every step.

The legal set of a game is kept as one word (``F_LEGAL``): in bidding, bit ``u`` for bid id
``u`` (0-27); in the kitty phase and in play, bit ``c`` for card ``c`` (0-45) and bit
``46 + 4·j + s`` for leading joker ``j`` naming suit ``s``; in the nomination, bits 0-4 for
``NOMINATE_S … NOMINATE_H, NO_NOMINATION``.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from five_hundred_env.cards import JOKER1, JOKERS_MASK, NUM_CARDS
from five_hundred_env.engine import EFFECTIVE_SUIT, SUIT_CARDS, WIN_KEY
from five_hundred_env.vector._bits import next_random, popcount
from five_hundred_env.vector._layout import (
    F_ACTION_RNG,
    F_BID_ROWS,
    F_BID_SEAT,
    F_BOTH_JOKERS_SEAT,
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
    F_MADE,
    F_NEXT_SEAT,
    F_NOMINATED,
    F_NUM_DEALS,
    F_NUM_TRICKS,
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
    O_JOKER_LEAD,
    O_KITTY,
    O_MISERE,
    O_N,
    O_NOMINATION,
    O_OPEN_MISERE_RANK,
    O_REBID,
)
from five_hundred_env.vector._score import score_deal

# The kernels play the packs of ranks 4-A only (VECTOR_PRESETS): the first NUM_CARDS card ids
# of the engine's tables, whose keys there are whole numbers.
EFFECTIVE_SUIT_TABLE = np.array([row[:NUM_CARDS] for row in EFFECTIVE_SUIT], dtype=np.int64)
SUIT_CARDS_TABLE = np.array([[mask & ((1 << NUM_CARDS) - 1) for mask in row] for row in SUIT_CARDS], dtype=np.int64)
WIN_KEY_TABLE = np.array([[keys[:NUM_CARDS] for keys in ctx] for ctx in WIN_KEY], dtype=np.int64)

BIDDING, DISCARD, NOMINATE, PLAY, DEAL_OVER = 0, 1, 2, 3, 4
PASS, MISERE, OPEN_MISERE, NO_NOMINATION = 0, 26, 27, 86
MISERE_RANK = 19
NO_TRUMP_CTX = 4
SUITLESS = 4
JOKER_LEAD_BIT = NUM_CARDS  # word bit of the first joker lead
NOMINATE_WORD = 0b11111


@njit(cache=True)
def bid_rank(action: int, o: np.ndarray) -> int:
    """engine.bid_rank (§4): trick bids 0, 2 … 48, misère 19, open misère 45 or 50."""
    if action == MISERE:
        return MISERE_RANK
    if action == OPEN_MISERE:
        return o[O_OPEN_MISERE_RANK]
    return 2 * (action - 1)


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
    for field in (F_HIGH_BID, F_HIGH_BIDDER, F_CONTRACT, F_CONTRACTOR, F_TRUMP, F_SITTING_OUT, F_NOMINATED,
                  F_LEADER, F_LED_SUIT, F_BOTH_JOKERS_SEAT):
        st[b, field] = -1
    st[b, F_CTX] = NO_TRUMP_CTX
    st[b, F_TRICK_SIZE] = n
    for s in range(MAX_SEATS):
        st[b, F_HANDS + s] = st[b, F_DEALT + s]
        st[b, F_PLAYED + s] = 0
        st[b, F_SHOWN_VOID + s] = 0
        st[b, F_TRICKS_WON + s] = 0
        st[b, F_TRICK_CARD + s] = -1
        st[b, F_NEXT_SEAT + s] = (s + 1) % n
        st[b, F_SCORE_CHANGE + s] = 0
        if o[O_BOTH_JOKERS_MIN] > 0 and s < n and st[b, F_DEALT + s] & JOKERS_MASK == JOKERS_MASK:
            st[b, F_BOTH_JOKERS_SEAT] = s
    for t in range(MAX_TRICKS):
        st[b, F_TRICK_CARDS + t] = 0
    st[b, F_BID_ROWS] = 0
    st[b, F_PASS_ROWS] = 0
    st[b, F_LEGAL] = legal_word(st, b, o)


@njit(cache=True)
def shuffle_deal(st: np.ndarray, b: int, o: np.ndarray, dealer: int, cards: np.ndarray) -> None:
    """Deal.new: a uniform shuffle of the deck (Fisher-Yates over the game's stream), then dealt."""
    deck = o[O_DECK]
    count = 0
    for c in range(NUM_CARDS):
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
    for k in range(n * size, count):
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


# -- the legal set -----------------------------------------------------------------------------------
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


@njit(cache=True)
def legal_word(st: np.ndarray, b: int, o: np.ndarray) -> int:
    """Deal.legal_actions as a word (module docstring)."""
    phase = st[b, F_PHASE]
    if phase == PLAY:
        seat = st[b, F_TO_ACT]
        hand = st[b, F_HANDS + seat]
        ctx = st[b, F_CTX]
        if st[b, F_TRICK_LEN]:
            follow = hand & SUIT_CARDS_TABLE[ctx, st[b, F_LED_SUIT]]  # follow suit if you can (§7)
            return follow if follow else hand
        suitless = hand & SUIT_CARDS_TABLE[ctx, SUITLESS]
        word = hand ^ suitless
        if suitless:
            suits = joker_lead_suits(st, b, o, seat)
            for j in range(2):
                if suitless >> (JOKER1 + j) & 1:
                    word |= suits << (JOKER_LEAD_BIT + 4 * j)
        return word
    if phase == BIDDING:
        return bidding_word(st, b, o)
    if phase == DISCARD:
        return st[b, F_HANDS + st[b, F_CONTRACTOR]]
    if phase == NOMINATE:
        return NOMINATE_WORD
    return 0


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
    if misere and o[O_N] == 4:
        out = (contractor + 2) % 4
        st[b, F_SITTING_OUT] = out
        st[b, F_NEXT_SEAT + (out + 3) % 4] = (out + 1) % 4
        st[b, F_TRICK_SIZE] = 3
    st[b, F_HANDS + contractor] |= st[b, F_KITTY]  # picked up without showing it
    st[b, F_PHASE] = DISCARD
    st[b, F_TO_ACT] = contractor


@njit(cache=True)
def apply_discard(st: np.ndarray, b: int, o: np.ndarray, card: int) -> None:
    """Deal._apply_discard, then Deal._may_nominate."""
    contractor = st[b, F_CONTRACTOR]
    st[b, F_HANDS + contractor] ^= 1 << card
    st[b, F_DISCARDS] |= 1 << card
    if popcount(st[b, F_DISCARDS]) < o[O_KITTY]:
        return
    nomination = o[O_NOMINATION]  # 0 nt_and_misere, 1 misere_only, 2 none
    contract = st[b, F_CONTRACT]
    misere = contract >= MISERE
    if (nomination != 2 and st[b, F_HANDS + contractor] >> JOKER1 & 1
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
    if bit >= JOKER_LEAD_BIT:  # a suitless joker led, naming the suit to follow
        card = JOKER1 + (bit - JOKER_LEAD_BIT) // 4
        st[b, F_LED_SUIT] = (bit - JOKER_LEAD_BIT) % 4
        st[b, F_JOKER_LEADS] |= 1 << (4 * number + st[b, F_LED_SUIT])
    else:
        card = bit
        suit = EFFECTIVE_SUIT_TABLE[ctx, card]
        if leading:
            st[b, F_LED_SUIT] = suit
        elif suit != st[b, F_LED_SUIT]:
            st[b, F_SHOWN_VOID + seat] |= 1 << st[b, F_LED_SUIT]
    led = st[b, F_LED_SUIT]
    st[b, F_HANDS + seat] ^= 1 << card
    st[b, F_PLAYED + seat] |= 1 << card
    st[b, F_TRICK_CARDS + number] |= 1 << card
    if leading:
        st[b, F_SUITS_LED] |= 1 << led
    st[b, F_TRICK_CARD + seat] = card
    st[b, F_TRICK_LEN] += 1
    if st[b, F_TRICK_LEN] < st[b, F_TRICK_SIZE]:
        st[b, F_TO_ACT] = st[b, F_NEXT_SEAT + seat]
        return
    # The trick is complete: the highest trump wins, else the highest card of the suit led.
    winner, best = -1, -1
    for s in range(o[O_N]):
        c = st[b, F_TRICK_CARD + s]
        if c >= 0:
            key = WIN_KEY_TABLE[ctx, led, c]
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
    else:
        if bit != NO_NOMINATION - 82:
            st[b, F_NOMINATED] = bit
            st[b, F_CTX] = NO_TRUMP_CTX + 1 + bit
        start_play(st, b, o)
    st[b, F_LEGAL] = legal_word(st, b, o)


@njit(cache=True)
def sample_word_bit(st: np.ndarray, b: int) -> int:
    """A uniformly random bit of the game's legal word, from its action stream (-1 if none)."""
    word = st[b, F_LEGAL]
    if word == 0:
        return -1
    k = next_random(st, b, F_ACTION_RNG, popcount(word))
    for _ in range(k):
        word &= word - 1
    return trailing_zeros(word)

