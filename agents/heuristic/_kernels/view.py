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

NUM_BITS = 64
"""Card masks are one ``int64`` word: bit = the card's policy bit (compiled.policy_card_bits: its
universal id, but in six_handed, whose ids go to 65, its place in the pack's id order)."""
MAX_SEATS = 6
JOKER1 = 44  # the (higher) joker's bit in every pack: ids below 45 keep their id
SUITLESS = 4
NO_TRUMP_CTX = 4
PASS, MISERE, OPEN_MISERE = 0, 26, 27
NT = 4
LEAD_CHOICE = NUM_BITS  # a decision's code of the first joker lead (64 + 4·joker + suit); below it, a card's bit
NO_NOMINATION_BIT = 4
PHASE_BIDDING, PHASE_DISCARD, PHASE_NOMINATE, PHASE_PLAY, PHASE_CALL = 0, 1, 2, 3, 5
HIGH_TRUMP_STRENGTH = 19  # play._HIGH_TRUMP_STRENGTH
JOKER_DANGER = 3.0  # evaluation.JOKER_DANGER
INF = np.inf

# -- the card tables of one trump context: ct[ctx, column], by card bit ----------------------------------
STRENGTH_SCALE = 4  # strengths and keys are tabled times this: the extended ranks' are quarters (§10.1)
TD_WIDTH = 20  # room for the longest effective suit of any pack (18: six_handed's red trumps)
C_EFF = 0
C_STRENGTH = C_EFF + NUM_BITS
C_HIGHER = C_STRENGTH + NUM_BITS
C_LOWER = C_HIGHER + NUM_BITS
C_SUIT = C_LOWER + NUM_BITS  # 5 masks
C_KEY = C_SUIT + 5  # 4 rows of NUM_BITS keys, by the suit led
C_TOP_DOWN = C_KEY + 4 * NUM_BITS  # 5 rows of TD_WIDTH cards, strongest first
C_TD_LEN = C_TOP_DOWN + 5 * TD_WIDTH
NUM_CT = C_TD_LEN + 5

# -- the rules' integers ri[] and the calibration's floats rf[] --------------------------------------
(R_N, R_MATES, R_DECK, R_HAND_SIZE, R_KITTY, R_NOMINATE_NT, R_NO_MISERE, R_LOSING, R_TARGET, R_OPEN_RANK,
 R_PHASE_WIDTH, R_WIDTH, R_CALL, R_CALL_SEAT, R_PARTNER_AT, R_SEAT_AT, R_NUM_RUNS, R_RUNS) = range(18)
# R_MATES: the fixed team-mates of relative seat 0 (a bit set); R_WIDTH: a card slice's width;
# R_CALL: five players (the partner slices at R_PARTNER_AT, R_SEAT_AT); R_CALL_SEAT: partner_call=seat;
# R_RUNS: R_NUM_RUNS runs (first card id, how many ids, first bit) that read a card slice into bits
# (none where every card's bit is its id)
MAX_RUNS = 4
NUM_RI = R_RUNS + 3 * MAX_RUNS
(K_SUIT_A, K_SUIT_B, K_SUIT_SIGMA, K_NT_A, K_NT_B, K_NT_SIGMA, K_OWN_AVG, K_OWN_AVG_NT, K_DEFENCE_AVG,
 K_DEFENCE_WEIGHT, K_SUPPORT, K_OTHER_SUIT_HELP, K_PASS_PENALTY, K_OPPONENT_STRAIN, K_MISERE_A, K_MISERE_B,
 K_OPEN_MISERE_A, K_OPEN_MISERE_B, K_MARGIN, K_GAME_END, K_SHARE) = range(21)
NUM_RF = 21
# -- a contract's §8 scores cs[contract, column] (bidding._ContractScores) ---------------------------
S_MADE, S_SLAM, S_LOST, S_DEFENCE_MADE, S_DEFENCE_LOST = range(5)

# -- the decoded view v[] (TableView) ------------------------------------------------------------------
(V_HAND, V_PHASE, V_CONTRACT, V_CONTRACTOR, V_TRUMP, V_OUT, V_DISCARDS, V_EXPOSED,
 V_LEADER, V_LED, V_CTX, V_PASSED, V_SCORE, V_NUM_BIDS, V_PLAYED, V_TRICK_LEN, V_UNSEEN, V_FRIENDS,
 V_ENEMIES, V_ENEMY, V_MATES, V_AGAINST, V_SEAT) = range(23)
# V_OUT: the seats sitting out (a bit set); V_MATES: the observer's side as far as it knows (a bit set);
# V_AGAINST: a five-handed partner known to a defender (-1: none); V_SEAT: the observer's absolute seat
V_TRICK_CARDS = V_SEAT + 1  # per relative seat (a card mask)
V_SHOWN_VOID = V_TRICK_CARDS + MAX_SEATS
V_POSSIBLE = V_SHOWN_VOID + MAX_SEATS
V_TRICK_SEAT = V_POSSIBLE + MAX_SEATS  # the trick in playing order
V_TRICK_CARD = V_TRICK_SEAT + MAX_SEATS
V_BID = V_TRICK_CARD + MAX_SEATS  # the bids in bid-id order: (bid, relative seat)
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
def read_cards(row: np.ndarray, at: int, ri: np.ndarray) -> int:
    """The card slice ``row[at:at+width]`` (indexed by universal card id) as a mask of card bits.
    Where the ids are the bits (no runs), the slice's first 64 elements in 8 loads, kept to the
    pack (every card slice is followed by at least 18 more 0/1 elements: see read_bits); else each
    run of ids whose bits follow on, 8 elements at a time."""
    m = 0
    if ri[R_NUM_RUNS] == 0:
        for w in range(8):
            x = _load_u64(row, at + 8 * w)
            if x:
                m |= np.int64((x * GATHER) >> np.uint64(56)) << (8 * w)
        return m & ri[R_DECK]
    for k in range(ri[R_NUM_RUNS]):
        run = R_RUNS + 3 * k
        m |= read_bits(row, at + ri[run], ri[run + 1]) << ri[run + 2]
    return m


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
    width = ri[R_WIDTH]
    v[V_HAND] = read_cards(row, off[L_HAND], ri)
    phase = read_index(row, off[L_PHASE], ri[R_PHASE_WIDTH])
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
    v[V_OUT] = read_bits(row, off[L_SITTING_OUT], n)
    v[V_DISCARDS] = read_cards(row, off[L_DISCARDS], ri)
    joker_suit = read_index(row, off[L_JOKER_SUIT], 4)
    if v[V_TRUMP] >= 0:
        v[V_CTX] = v[V_TRUMP]
    else:
        v[V_CTX] = NO_TRUMP_CTX + 1 + joker_suit if joker_suit >= 0 else NO_TRUMP_CTX
    if ri[R_CALL]:
        partnership(row, ri, v)
    if phase != PHASE_PLAY:
        return
    v[V_EXPOSED] = read_cards(row, off[L_EXPOSED], ri)
    played = 0
    for r in range(n):
        played |= read_cards(row, off[L_PLAYED] + width * r, ri)
        v[V_TRICK_CARDS + r] = read_cards(row, off[L_TRICK] + width * r, ri)
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
def partnership(row: np.ndarray, ri: np.ndarray, v: np.ndarray) -> None:
    """ViewDecoder._partnership with five players: the partner of the deal, once the observer knows
    it (``V_MATES``, ``V_AGAINST``), and the observer's absolute seat."""
    n = ri[R_N]
    v[V_SEAT] = read_index(row, ri[R_SEAT_AT], n)
    known = -1
    for i in range(n):  # the first set element, as the Python form reads these slices
        if row[ri[R_PARTNER_AT] + i]:
            known = i
            break
    v[V_MATES] = ri[R_MATES]
    v[V_AGAINST] = -1
    if known == 0:
        v[V_MATES] = 1 << v[V_CONTRACTOR]
    elif known > 0 and v[V_CONTRACTOR] == 0:
        v[V_MATES] = 1 << known
    elif known > 0:
        v[V_AGAINST] = known


@njit(cache=True)
def know_cards(v: np.ndarray, ct: np.ndarray, ri: np.ndarray) -> None:
    """ViewDecoder.know_cards: friends and enemies (bit sets of relative seats), the unseen cards,
    what each other seat may hold, and what some enemy may hold."""
    n = ri[R_N]
    c = v[V_CONTRACTOR]
    out = v[V_OUT]
    if not ri[R_CALL]:  # else decode's partnership has read the partner of the deal
        v[V_MATES] = ri[R_MATES]
        v[V_AGAINST] = -1
    mates = v[V_MATES]
    friends = 0
    if mates:
        friends = mates & ~out
    elif c != 0:
        for r in range(1, n):
            if r != c and r != v[V_AGAINST]:
                friends |= 1 << r
    enemies = 0
    for r in range(1, n):
        if not out >> r & 1 and not friends >> r & 1:
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
        if r != 0 and not out >> r & 1:
            pos = exposed if exposed and r == c else unseen & ~exposed
            voids = v[V_SHOWN_VOID + r]
            for s in range(4):
                if voids >> s & 1:
                    pos &= ~ct[ctx, C_SUIT + s]
        v[V_POSSIBLE + r] = pos
        if enemies >> r & 1:
            enemy |= pos
    v[V_ENEMY] = enemy
