"""The observation decoded (view.ViewDecoder) and the kernels' tables and constants."""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic

from five_hundred_env.vector._layout import (
    L_BIDS,
    L_CONTRACT,
    L_CONTRACTOR,
    L_DISCARDS,
    L_EXPOSED,
    L_HAND,
    L_JOKER_SUIT,
    L_LEADER,
    L_LED_SUIT,
    L_PASSES,
    L_PHASE,
    L_PLAYED,
    L_SCORES,
    L_SHOWN_VOID,
    L_SITTING_OUT,
    L_TRICK,
    L_TRUMP,
)

NUM_CARDS = 46
JOKER1 = 44
SUITLESS = 4
NO_TRUMP_CTX = 4
PASS, MISERE, OPEN_MISERE = 0, 26, 27
NT = 4
JOKER_LEAD_BIT = 46  # the legal word's first joker lead
CARD_BITS = (1 << NUM_CARDS) - 1
NO_NOMINATION_BIT = 4
PHASE_BIDDING, PHASE_DISCARD, PHASE_NOMINATE = 0, 1, 2
HIGH_TRUMP_STRENGTH = 19  # play._HIGH_TRUMP_STRENGTH
JOKER_DANGER = 3.0  # evaluation.JOKER_DANGER
INF = np.inf

# -- the card tables of one trump context: ct[ctx, column] ------------------------------------------
TD_WIDTH = 16  # room for the longest effective suit of any deck (14)
C_EFF = 0
C_STRENGTH = C_EFF + NUM_CARDS
C_HIGHER = C_STRENGTH + NUM_CARDS
C_LOWER = C_HIGHER + NUM_CARDS
C_SUIT = C_LOWER + NUM_CARDS  # 5 masks
C_KEY = C_SUIT + 5  # 4 rows of 46 keys, by the suit led
C_TOP_DOWN = C_KEY + 4 * NUM_CARDS  # 5 rows of TD_WIDTH cards, strongest first
C_TD_LEN = C_TOP_DOWN + 5 * TD_WIDTH
NUM_CT = C_TD_LEN + 5

# -- the rules' integers ri[] and the calibration's floats rf[] --------------------------------------
R_N, R_PARTNER, R_DECK, R_HAND_SIZE, R_KITTY, R_NOMINATE_NT, R_NO_MISERE, R_LOSING, R_TARGET, R_OPEN_RANK = range(10)
NUM_RI = 10
(K_SUIT_A, K_SUIT_B, K_SUIT_SIGMA, K_NT_A, K_NT_B, K_NT_SIGMA, K_OWN_AVG, K_OWN_AVG_NT, K_DEFENCE_AVG,
 K_DEFENCE_WEIGHT, K_SUPPORT, K_OTHER_SUIT_HELP, K_PASS_PENALTY, K_OPPONENT_STRAIN, K_MISERE_A, K_MISERE_B,
 K_OPEN_MISERE_A, K_OPEN_MISERE_B, K_MARGIN, K_GAME_END, K_SHARE) = range(21)
NUM_RF = 21
# -- a contract's §8 scores cs[contract, column] (bidding._ContractScores) ---------------------------
S_MADE, S_SLAM, S_LOST, S_DEFENCE_MADE, S_DEFENCE_LOST = range(5)

# -- the decoded view v[] (TableView) ------------------------------------------------------------------
(V_HAND, V_PHASE, V_CONTRACT, V_CONTRACTOR, V_TRUMP, V_SITTING_OUT, V_DISCARDS, V_EXPOSED,
 V_LEADER, V_LED, V_CTX, V_PASSED, V_SCORE, V_NUM_BIDS, V_PLAYED, V_TRICK_LEN, V_UNSEEN, V_FRIENDS,
 V_ENEMIES, V_ENEMY) = range(20)
V_TRICK_CARDS = V_ENEMY + 1  # per relative seat (a card mask)
V_SHOWN_VOID = V_TRICK_CARDS + 4
V_POSSIBLE = V_SHOWN_VOID + 4
V_TRICK_SEAT = V_POSSIBLE + 4  # the trick in playing order
V_TRICK_CARD = V_TRICK_SEAT + 4
V_BID = V_TRICK_CARD + 4  # the bids in bid-id order: (bid, relative seat)
V_BID_SEAT = V_BID + 27
NUM_V = V_BID_SEAT + 27

# -- evaluation.py's weights --------------------------------------------------------------------------
W_TRUMP = np.array((1.0, 0.7, 0.45, 0.28, 0.15))
W_SIDE = np.array(((0.9, 0.35, 0.1), (0.75, 0.25, 0.05), (0.35, 0.1, 0.0)))
W_NT = np.array((1.0, 0.5, 0.25, 0.1))
W_DEFENCE_TRUMP = np.array((1.0, 0.6, 0.35, 0.2, 0.1))
W_DEFENCE_SIDE = np.array(((0.8, 0.25, 0.05), (0.5, 0.15, 0.0)))
MISERE_DANGER = np.array((0.0, 0.3, 0.6, 0.9, 1.2))


# -- the view (view.ViewDecoder) ------------------------------------------------------------------------
@intrinsic
def _load_u64(typingctx, row, at):  # type: ignore[no-untyped-def]
    """The 8 bytes ``row[at:at+8]`` as one little-endian ``uint64`` (an unaligned load)."""
    if not isinstance(row, types.Array) or not isinstance(at, types.Integer):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        pointer = builder.bitcast(builder.gep(data, [args[1]]), ir.IntType(64).as_pointer())
        return builder.load(pointer, align=1)

    return types.uint64(row, at), codegen


GATHER = np.uint64(0x0102040810204080)  # gathers the low bits of 8 bytes into the top byte


@njit(cache=True, inline="always")
def read_bits(row: np.ndarray, at: int, width: int) -> int:
    """The 0/1 elements ``row[at:at+width]`` as a bit mask, 8 at a time (the row must go on for
    ``(width + 7) // 8 * 8`` elements: every slice read so is followed by others)."""
    m = 0
    for w in range((width + 7) // 8):
        x = _load_u64(row, at + 8 * w)
        if x:
            m |= np.int64((x * GATHER) >> np.uint64(56)) << (8 * w)
    return m & ((1 << width) - 1)


@njit(cache=True, inline="always")
def read_index(row: np.ndarray, at: int, width: int) -> int:
    """The highest set element of ``row[at:at+width]`` (a one-hot slice's index), or -1."""
    for i in range(width - 1, -1, -1):
        if row[at + i]:
            return i
    return -1


@njit(cache=True, inline="always")
def top_card(mask: int) -> int:
    """The highest card of a mask (``int.bit_length() - 1``)."""
    c = -1
    while mask:
        c = trailing_zeros(mask)
        mask &= mask - 1
    return c


@njit(cache=True)
def decode(row: np.ndarray, off: np.ndarray, ri: np.ndarray, v: np.ndarray) -> None:
    """ViewDecoder.decode (and know_cards in play) of one observation into ``v``; only the parts
    a decision of its phase reads."""
    n = ri[R_N]
    v[V_HAND] = read_bits(row, off[L_HAND], NUM_CARDS)
    phase = read_index(row, off[L_PHASE], 5)
    v[V_PHASE] = phase
    nb = 0
    for start in range(0, 27 * n, 56):
        bits = read_bits(row, off[L_BIDS] + start, min(56, 27 * n - start))
        while bits:
            i = start + trailing_zeros(bits)
            bits &= bits - 1
            v[V_BID + nb] = i // n + 1
            v[V_BID_SEAT + nb] = i % n
            nb += 1
    v[V_NUM_BIDS] = nb
    if phase == PHASE_BIDDING:
        passed = 0
        for start in range(0, 28 * n, 56):
            bits = read_bits(row, off[L_PASSES] + start, min(56, 28 * n - start))
            while bits:
                passed |= 1 << ((start + trailing_zeros(bits)) % n)
                bits &= bits - 1
        v[V_PASSED] = passed
        v[V_SCORE] = row[off[L_SCORES]]
        return
    v[V_CONTRACT] = read_index(row, off[L_CONTRACT], 27) + 1
    v[V_CONTRACTOR] = read_index(row, off[L_CONTRACTOR], n)
    trump = read_index(row, off[L_TRUMP], 5)
    v[V_TRUMP] = trump if 0 <= trump < 4 else -1
    v[V_SITTING_OUT] = read_index(row, off[L_SITTING_OUT], n)
    v[V_DISCARDS] = read_bits(row, off[L_DISCARDS], NUM_CARDS)
    joker_suit = read_index(row, off[L_JOKER_SUIT], 4)
    if v[V_TRUMP] >= 0:
        v[V_CTX] = v[V_TRUMP]
    else:
        v[V_CTX] = NO_TRUMP_CTX + 1 + joker_suit if joker_suit >= 0 else NO_TRUMP_CTX
    if phase != 3:
        return
    v[V_EXPOSED] = read_bits(row, off[L_EXPOSED], NUM_CARDS)
    played = 0
    for r in range(n):
        played |= read_bits(row, off[L_PLAYED] + NUM_CARDS * r, NUM_CARDS)
        v[V_TRICK_CARDS + r] = read_bits(row, off[L_TRICK] + NUM_CARDS * r, NUM_CARDS)
        v[V_SHOWN_VOID + r] = read_bits(row, off[L_SHOWN_VOID] + 4 * r, 4)
    v[V_PLAYED] = played
    leader = read_index(row, off[L_LEADER], n)
    v[V_LEADER] = leader
    v[V_LED] = read_index(row, off[L_LED_SUIT], 4)
    k = 0
    if leader >= 0:
        seat = leader
        for _ in range(n):
            if v[V_TRICK_CARDS + seat]:
                v[V_TRICK_SEAT + k] = seat
                v[V_TRICK_CARD + k] = top_card(v[V_TRICK_CARDS + seat])
                k += 1
            seat = (seat + 1) % n
    v[V_TRICK_LEN] = k


@njit(cache=True)
def know_cards(v: np.ndarray, ct: np.ndarray, ri: np.ndarray) -> None:
    """ViewDecoder.know_cards: friends and enemies (bit sets of relative seats), the unseen cards,
    what each other seat may hold, and what some enemy may hold."""
    n = ri[R_N]
    partner = ri[R_PARTNER]
    c = v[V_CONTRACTOR]
    out = v[V_SITTING_OUT]
    friends = 0
    if partner >= 0:
        if out != partner:
            friends = 1 << partner
    elif c != 0:
        for r in range(1, n):
            if r != c:
                friends |= 1 << r
    enemies = 0
    for r in range(1, n):
        if r != out and not friends >> r & 1:
            enemies |= 1 << r
    v[V_FRIENDS] = friends
    v[V_ENEMIES] = enemies
    unseen = ri[R_DECK] & ~v[V_HAND] & ~v[V_PLAYED] & ~v[V_DISCARDS]
    v[V_UNSEEN] = unseen
    ctx = v[V_CTX]
    exposed = v[V_EXPOSED]
    enemy = 0
    for r in range(n):
        pos = 0
        if r != 0 and r != out:
            pos = exposed if exposed and r == c else unseen & ~exposed
            voids = v[V_SHOWN_VOID + r]
            for s in range(4):
                if voids >> s & 1:
                    pos &= ~ct[ctx, C_SUIT + s]
        v[V_POSSIBLE + r] = pos
        if enemies >> r & 1:
            enemy |= pos
    v[V_ENEMY] = enemy
