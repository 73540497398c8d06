"""The heuristic's decisions as numba kernels: :class:`~agents.heuristic.HeuristicAgent` line by line.

Each function mirrors the method of :mod:`agents.heuristic` named in its docstring, with the same
floating-point operations in the same order and the same tie-breaks (the first of equals in the
order the Python form iterates), so the decisions are the same bit for bit; the differential test
(``tests/test_heuristic_compiled.py``) holds the two forms equal.

Inputs are arrays built once per rules object (:func:`agents.heuristic.compiled.policy_tables`):
``ct[ctx]`` the card tables of each trump context (:class:`~agents.heuristic.view.CardTables`:
columns ``C_*``), ``ri``/``rf`` the rules' and calibration's numbers (``R_*``/``K_*``), ``cs`` every
contract's §8 scores (``S_*``), ``off`` the observation's offsets. The view of one observation
is decoded into an ``int64`` scratch row ``v`` (``V_*``), relative seats as in
:class:`~agents.heuristic.view.TableView`. The legal actions are the batched engine's legal word
(:mod:`five_hundred_env.vector._kernels`): bid ids, cards and joker leads, or nominations.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic

from five_hundred_env.vector._bits import popcount
from five_hundred_env.vector._cache import drop_stale_kernels
from five_hundred_env.vector._encode import write_obs
from five_hundred_env.vector._kernels import DEAL_OVER, apply_word_bit, sample_word_bit
from five_hundred_env.vector._layout import (
    F_LEGAL,
    F_PHASE,
    F_SCORE_CHANGE,
    F_TO_ACT,
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
    L_SIZE,
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


# -- hand evaluation (evaluation.HandEvaluator) ----------------------------------------------------------
@njit(cache=True, inline="always")
def held_in_order(ct: np.ndarray, ctx: int, s: int, hand: int) -> tuple[int, int]:
    """The hand's cards of suit ``s``, strongest first, as what the evaluation reads of each: how
    many cards of the suit rank above it (its index ``p`` in ``top_down``) less the hand's cards
    above it (its round ``i``), i.e. the higher cards it lacks; packed 4 bits per round (round
    ``i`` at bit ``4·i``). Returns (packed, how many)."""
    m = hand & ct[ctx, C_SUIT + s]
    packed = 0
    count = 0
    while m:
        c = trailing_zeros(m)
        m &= m - 1
        higher = ct[ctx, C_HIGHER + c]
        i = popcount(higher & hand)
        packed |= (popcount(higher) - i) << (4 * i)
        count += 1
    return packed, count


@njit(cache=True, inline="always")
def suit_tricks(ct: np.ndarray, hand: int, trump: int) -> float:
    """HandEvaluator.suit_tricks (the same additions in the same order)."""
    value = 0.0
    packed, n_t = held_in_order(ct, trump, trump, hand)
    for i in range(n_t):
        w = W_TRUMP[min(packed >> (4 * i) & 15, 4)]
        if i >= 3:
            w = max(w, 0.55 if i == 3 else 0.8)
        value += w
    spare = max(0, n_t - 3)
    ruffs = 0.0
    for s in range(4):
        if s == trump:
            continue
        packed, count = held_in_order(ct, trump, s, hand)
        for rnd in range(min(count, 3)):
            value += W_SIDE[rnd, min(packed >> (4 * rnd) & 15, 2)]
        if count == 0:
            ruffs += 0.9
        elif count == 1 and packed > 0:  # a singleton below the top card
            ruffs += 0.45
    value += min(ruffs, spare * 0.9)
    return value


@njit(cache=True, inline="always")
def nt_value(ct: np.ndarray, hand: int, ctx: int) -> float:
    """HandEvaluator.nt_value."""
    value = float(popcount(hand & ct[ctx, C_SUIT + SUITLESS]))
    unstopped = 0
    for s in range(4):
        top = 0.0
        packed, length = held_in_order(ct, ctx, s, hand)
        for rnd in range(length):
            missing = packed >> (4 * rnd) & 15
            if rnd < 4:
                top += W_NT[min(missing, 3)]
            else:
                top += 0.6 if missing <= 1 else 0.1
        first = packed & 15  # the top card's place in the suit (it lacks every card above it)
        if length >= 5 and first <= 1:
            top += 0.4 * (length - 4)
        stopped = length > 0 and (first == 0 or (first == 1 and length >= 2) or (first == 2 and length >= 3))
        if not stopped:
            unstopped += 1
        value += top
    value -= 0.6 * unstopped
    return value


@njit(cache=True)
def nt_tricks(ct: np.ndarray, ri: np.ndarray, hand: int) -> float:
    """HandEvaluator.nt_tricks."""
    base = nt_value(ct, hand, NO_TRUMP_CTX)
    if ri[R_NOMINATE_NT] and hand >> JOKER1 & 1:
        best = nt_value(ct, hand, NO_TRUMP_CTX + 1)
        for s in range(1, 4):
            best = max(best, nt_value(ct, hand, NO_TRUMP_CTX + 1 + s))
        base = max(base, best)
    return base


@njit(cache=True, inline="always")
def defence_tricks(ct: np.ndarray, hand: int, strain: int) -> float:
    """HandEvaluator.defence_tricks."""
    if strain == 4:
        return 0.8 * max(0.0, nt_value(ct, hand, NO_TRUMP_CTX) + 0.3)
    value = 0.0
    packed, count = held_in_order(ct, strain, strain, hand)
    for i in range(count):
        value += W_DEFENCE_TRUMP[min(packed >> (4 * i) & 15, 4)]
    for s in range(4):
        if s == strain:
            continue
        packed, count = held_in_order(ct, strain, s, hand)
        for rnd in range(min(count, 2)):
            value += W_DEFENCE_SIDE[rnd, min(packed >> (4 * rnd) & 15, 2)]
    return value


@njit(cache=True, inline="always")
def suit_danger(ct: np.ndarray, s: int, cards: int, outside: int) -> float:
    """HandEvaluator._misere_suit_danger of the cards of suit ``s`` in ``cards`` (low to high: in
    the no-trump context a suit's cards rise with their ids)."""
    danger = 0.0
    i = 0
    m = cards & ct[NO_TRUMP_CTX, C_SUIT + s]
    while m:
        c = trailing_zeros(m)
        m &= m - 1
        slack = popcount(ct[NO_TRUMP_CTX, C_LOWER + c] & outside) - 2 * i
        if slack > 0:
            danger += MISERE_DANGER[min(slack, 4)] + 0.25 * max(0, slack - 4)
        i += 1
    return danger


@njit(cache=True)
def hand_danger(ct: np.ndarray, hand: int, outside: int) -> float:
    """HandEvaluator.misere_hand_danger."""
    danger = JOKER_DANGER * popcount(hand & ct[NO_TRUMP_CTX, C_SUIT + SUITLESS])
    for s in range(4):
        danger += suit_danger(ct, s, hand, outside)
    return danger


@njit(cache=True)
def misere_throw(ct: np.ndarray, hand: int, cards: int, outside: int) -> int:
    """HandEvaluator.misere_throw: the card of ``cards`` leaving the least danger (ties: the higher)."""
    best, best_danger, best_strength = -1, INF, 0
    m = cards
    while m:
        c = trailing_zeros(m)
        m &= m - 1
        danger = hand_danger(ct, hand & ~(1 << c), outside)
        strength = ct[NO_TRUMP_CTX, C_STRENGTH + c]
        if best < 0 or danger < best_danger or (danger == best_danger and strength > best_strength):
            best, best_danger, best_strength = c, danger, strength
    return best


@njit(cache=True, inline="always")
def kept_danger(lower_out: np.ndarray, count: int, thrown: int) -> float:
    """HandEvaluator._misere_suit_danger of a suit's cards (``lower_out[i]``: the outside cards
    below its ``i``-th lowest card) but those of index bits ``thrown``."""
    danger = 0.0
    i = 0
    for idx in range(count):
        if thrown >> idx & 1:
            continue
        slack = lower_out[idx] - 2 * i
        if slack > 0:
            danger += MISERE_DANGER[min(slack, 4)] + 0.25 * max(0, slack - 4)
        i += 1
    return danger


@njit(cache=True)
def suit_throws(ct: np.ndarray, s: int, hand: int, k: int, outside: int, out_d: np.ndarray, out_m: np.ndarray,
                cards: np.ndarray) -> int:
    """HandEvaluator._suit_throws of suit ``s``: into ``out_d[j]``/``out_m[j]`` the least danger
    left after throwing ``j`` of its cards and those cards (ties: the higher cards); returns how
    many options (``min(k, length) + 1``). ``cards`` is scratch room (twice the longest suit)."""
    mine = hand & ct[NO_TRUMP_CTX, C_SUIT + s]
    count = 0
    lower_out = cards[TD_WIDTH:]
    m = mine
    while m:  # low to high: at no trumps a suit's cards rise with their ids
        c = trailing_zeros(m)
        m &= m - 1
        cards[count] = c
        lower_out[count] = popcount(ct[NO_TRUMP_CTX, C_LOWER + c] & outside)
        count += 1
    options = min(k, count) + 1
    out_d[0], out_m[0] = kept_danger(lower_out, count, 0), 0
    for j in range(1, options):
        best_d, best_m = INF, -1
        pick = (1 << j) - 1  # Gosper's hack: every j-subset of the suit's cards (the order of a
        while pick < 1 << count:  # minimum's search does not matter: no two choices tie)
            danger = kept_danger(lower_out, count, pick)
            if danger <= best_d:
                combo = 0
                x = pick
                while x:
                    combo |= 1 << cards[trailing_zeros(x)]
                    x &= x - 1
                if danger < best_d or combo > best_m:
                    best_d, best_m = danger, combo
            low = pick & -pick
            ripple = pick + low
            pick = (((ripple ^ pick) >> 2) // low) | ripple
        out_d[j] = best_d
        out_m[j] = best_m
    return options


@njit(cache=True, inline="always")
def combine_group(best_d: np.ndarray, best_m: np.ndarray, opt_d: np.ndarray, opt_m: np.ndarray, options: int,
                  k: int, new_d: np.ndarray, new_m: np.ndarray) -> None:
    """One step of misere_best_throw's dynamic programme (a group's options into ``best``; ``new_*``
    scratch room)."""
    for j in range(k + 1):
        new_d[j] = INF
        new_m[j] = 0
    for j in range(k + 1):
        if best_d[j] == INF:
            continue
        for jj in range(options):
            if j + jj <= k and best_d[j] + opt_d[jj] < new_d[j + jj]:
                new_d[j + jj] = best_d[j] + opt_d[jj]
                new_m[j + jj] = best_m[j] | opt_m[jj]
    for j in range(k + 1):
        best_d[j] = new_d[j]
        best_m[j] = new_m[j]


@njit(cache=True)
def misere_best_throw(ct: np.ndarray, hand: int, k: int, outside: int) -> tuple[float, int]:
    """HandEvaluator.misere_best_throw: the least danger left after throwing ``k`` cards, and them."""
    room = k + 1
    floats = np.empty(3 * room)
    ints = np.empty(3 * room + 2 * TD_WIDTH, dtype=np.int64)
    best_d, opt_d, new_d = floats[:room], floats[room:2 * room], floats[2 * room:]
    best_m, opt_m, new_m, cards = ints[:room], ints[room:2 * room], ints[2 * room:3 * room], ints[3 * room:]
    best_d[:] = INF
    best_m[:] = 0
    best_d[0] = 0.0
    jokers = hand & ct[NO_TRUMP_CTX, C_SUIT + SUITLESS]
    num_jokers = popcount(jokers)
    options = min(k, num_jokers) + 1
    thrown = 0
    rest = jokers
    for j in range(options):
        opt_d[j] = JOKER_DANGER * (num_jokers - j)
        opt_m[j] = thrown
        if rest:
            thrown |= rest & -rest
            rest &= rest - 1
    combine_group(best_d, best_m, opt_d, opt_m, options, k, new_d, new_m)
    for s in range(4):
        options = suit_throws(ct, s, hand, k, outside, opt_d, opt_m, cards)
        combine_group(best_d, best_m, opt_d, opt_m, options, k, new_d, new_m)
    return best_d[k], best_m[k]


@njit(cache=True)
def evaluate(ct: np.ndarray, ri: np.ndarray, hand: int, est: np.ndarray) -> None:
    """HandEvaluator.evaluate into ``est``: own tricks by strain (0-4), defence (5-9), misère danger (10)."""
    for s in range(4):
        est[s] = suit_tricks(ct, hand, s)
    est[4] = nt_tricks(ct, ri, hand)
    for s in range(5):
        est[5 + s] = defence_tricks(ct, hand, s)
    if ri[R_NO_MISERE]:
        est[10] = INF
    else:
        est[10] = misere_best_throw(ct, hand, ri[R_KITTY], ri[R_DECK] & ~hand)[0]


ESTIMATE_CACHE_BITS = 12  # 4,096 hands


@njit(cache=True, inline="always")
def cached_evaluate(ct: np.ndarray, ri: np.ndarray, hand: int, keys: np.ndarray, estimates: np.ndarray) -> np.ndarray:
    """evaluate(hand), kept in a direct-mapped cache of recent hands (``keys[slot]`` the hand of
    ``estimates[slot]``), as HandEvaluator caches its estimates: a pure function of the hand."""
    slot = np.int64((np.uint64(hand) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - ESTIMATE_CACHE_BITS))
    est = estimates[slot]
    if keys[slot] != hand:
        evaluate(ct, ri, hand, est)
        keys[slot] = hand
    return est


# -- bidding (bidding.Bidder) ---------------------------------------------------------------------------
@njit(cache=True, inline="always")
def phi(x: float) -> float:
    """bidding._phi."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


@njit(cache=True, inline="always")
def bid_tricks(a: int) -> int:
    return 6 + (a - 1) // 5


@njit(cache=True, inline="always")
def bid_strain(a: int) -> int:
    return (a - 1) % 5


@njit(cache=True, inline="always")
def is_trick_bid(a: int) -> bool:
    return 1 <= a <= 25


@njit(cache=True, inline="always")
def bid_rank(a: int, ri: np.ndarray) -> int:
    """engine.bid_rank."""
    if a == MISERE:
        return 19
    if a == OPEN_MISERE:
        return ri[R_OPEN_RANK]
    return 2 * (a - 1)


@njit(cache=True, inline="always")
def expected_contract_score(cs: np.ndarray, contract: int, p: float) -> float:
    """Bidder._expected_contract_score."""
    return cs[contract, S_LOST] + p * (cs[contract, S_MADE] - cs[contract, S_LOST])


@njit(cache=True, inline="always")
def expected_defence(cs: np.ndarray, rf: np.ndarray, contract: int, p: float, defence: float) -> float:
    """Bidder._expected_defence."""
    made = cs[contract, S_DEFENCE_MADE]
    lost = cs[contract, S_DEFENCE_LOST]
    if contract < MISERE:
        tricks = defence * rf[K_SHARE]
        made_f = made * tricks
        lost_f = lost * tricks
        return lost_f + p * (made_f - lost_f)
    return lost + p * (made - lost)


@njit(cache=True, inline="always")
def trick_contract(cs: np.ndarray, ri: np.ndarray, rf: np.ndarray, contract: int, tricks: float,
                   sigma: float) -> tuple[float, float]:
    """Bidder._trick_contract."""
    p = phi((tricks + 0.5 - bid_tricks(contract)) / sigma)
    defence = max(0.0, ri[R_HAND_SIZE] - tricks)
    return p, expected_contract_score(cs, contract, p) - expected_defence(cs, rf, contract, p, defence)


@njit(cache=True, inline="always")
def fit_a_b_sigma(rf: np.ndarray, strain: int) -> tuple[float, float, float]:
    """The calibration's ``"nt"`` or ``"suit"`` fit."""
    if strain == NT:
        return rf[K_NT_A], rf[K_NT_B], rf[K_NT_SIGMA]
    return rf[K_SUIT_A], rf[K_SUIT_B], rf[K_SUIT_SIGMA]


@njit(cache=True, inline="always")
def shown_own(rf: np.ndarray, bid: int) -> float:
    """Bidder._shown_own."""
    a, b, _sigma = fit_a_b_sigma(rf, bid_strain(bid))
    return (bid_tricks(bid) - a) / b + 0.3


@njit(cache=True, inline="always")
def support(rf: np.ndarray, own: float, strain: int) -> float:
    """Bidder._support."""
    avg = rf[K_OWN_AVG_NT] if strain == NT else rf[K_OWN_AVG]
    slope = rf[K_NT_B] if strain == NT else rf[K_SUIT_B]
    return rf[K_SUPPORT] * slope * (own - avg)


@njit(cache=True)
def bid_decision(v: np.ndarray, word: int, ct: np.ndarray, ri: np.ndarray, rf: np.ndarray, cs: np.ndarray,
                 keys: np.ndarray, estimates: np.ndarray) -> int:
    """Bidder.bid (with expected_results, _read_auction, _side_tricks, _bid_expectation, _pass_expectation)."""
    est = cached_evaluate(ct, ri, v[V_HAND], keys, estimates)
    partner = ri[R_PARTNER]
    high, high_seat, partner_best, opponent_strains = 0, -1, 0, 0
    for i in range(v[V_NUM_BIDS]):
        b = v[V_BID + i]
        r = v[V_BID_SEAT + i]
        if high == 0 or bid_rank(b, ri) > bid_rank(high, ri):
            high, high_seat = b, r
        if r == partner and (partner_best == 0 or bid_rank(b, ri) > bid_rank(partner_best, ri)):
            partner_best = b
        if r != 0 and r != partner and is_trick_bid(b):
            opponent_strains |= 1 << bid_strain(b)
    partner_passed = partner >= 0 and (v[V_PASSED] >> partner & 1) != 0
    own_score = 10 * v[V_SCORE]
    strains = np.empty((5, 3))
    for strain in range(5):
        tricks, sigma = side_tricks(est, strain, partner_best, partner_passed, opponent_strains, ri, rf)
        strains[strain, 0] = tricks
        strains[strain, 1] = sigma
        strains[strain, 2] = phi((tricks - (ri[R_HAND_SIZE] - 0.5)) / sigma)
    best_action, best_ev = PASS, -1e9
    m = word & ~1
    while m:
        a = trailing_zeros(m)
        m &= m - 1
        e = bid_expectation(a, est, strains, own_score, ri, rf, cs)
        if e > best_ev:
            best_action, best_ev = a, e
    pass_ev = pass_expectation(est, high, high_seat, ri, rf, cs)
    pass_legal = word & 1
    if best_action != PASS and (best_ev > pass_ev + rf[K_MARGIN] or not pass_legal):
        return best_action
    return PASS if pass_legal else best_action


@njit(cache=True, inline="always")
def side_tricks(est: np.ndarray, strain: int, partner_best: int, partner_passed: bool, opponent_strains: int,
                ri: np.ndarray, rf: np.ndarray) -> tuple[float, float]:
    """Bidder._side_tricks: this side's expected tricks (and spread) in ``strain``."""
    fa, fb, sigma = fit_a_b_sigma(rf, strain)
    tricks = fa + fb * est[strain]
    if opponent_strains >> strain & 1:
        tricks -= rf[K_OPPONENT_STRAIN]
    if ri[R_PARTNER] >= 0:
        if partner_best and is_trick_bid(partner_best):
            if bid_strain(partner_best) == strain:
                tricks += support(rf, shown_own(rf, partner_best), strain)
            else:
                tricks += rf[K_OTHER_SUIT_HELP]
        elif partner_best:
            tricks -= 0.8
        elif partner_passed:
            tricks -= rf[K_PASS_PENALTY]
    return tricks, sigma


@njit(cache=True, inline="always")
def bid_expectation(a: int, est: np.ndarray, strains: np.ndarray, own_score: int, ri: np.ndarray, rf: np.ndarray,
                    cs: np.ndarray) -> float:
    """Bidder._bid_expectation of bid ``a``; ``strains[s]``: the side's tricks, their spread and
    P(every trick) in strain ``s`` (side_tricks and _slam_gain's probability: the same for every
    level of a strain, so computed once per strain)."""
    if is_trick_bid(a):
        strain = bid_strain(a)
        tricks, sigma = strains[strain, 0], strains[strain, 1]
        p, e = trick_contract(cs, ri, rf, a, tricks, sigma)
        gain = cs[a, S_SLAM] - cs[a, S_MADE]
        e += gain * strains[strain, 2] if gain else 0.0
    else:
        if a == OPEN_MISERE:
            ma, mb = rf[K_OPEN_MISERE_A], rf[K_OPEN_MISERE_B]
        else:
            ma, mb = rf[K_MISERE_A], rf[K_MISERE_B]
        p = 1.0 / (1.0 + math.exp(-(ma - mb * est[10])))
        e = expected_contract_score(cs, a, p) - expected_defence(cs, rf, a, p, 0.0)
    if own_score + cs[a, S_LOST] <= ri[R_LOSING]:
        e -= rf[K_GAME_END] * (1 - p)
    if own_score + cs[a, S_MADE] >= ri[R_TARGET]:
        e += 0.5 * rf[K_GAME_END] * p
    return e


@njit(cache=True)
def pass_expectation(est: np.ndarray, high: int, high_seat: int, ri: np.ndarray, rf: np.ndarray,
                     cs: np.ndarray) -> float:
    """Bidder._pass_expectation."""
    if not high:
        return 0.0
    value = cs[high, S_MADE]
    if high_seat == ri[R_PARTNER]:
        if not is_trick_bid(high):
            return 0.3 * value
        s = bid_strain(high)
        a, b, sigma = fit_a_b_sigma(rf, s)
        tricks = a + b * shown_own(rf, high)
        tricks += support(rf, est[s], s)
        return trick_contract(cs, ri, rf, high, tricks, sigma)[1]
    if not is_trick_bid(high):
        return -0.3 * value * rf[K_SHARE]
    s = bid_strain(high)
    _a, _b, sigma = fit_a_b_sigma(rf, s)
    theirs = bid_tricks(high) + 0.3 - rf[K_DEFENCE_WEIGHT] * (est[5 + s] - rf[K_DEFENCE_AVG])
    p = phi((theirs + 0.5 - bid_tricks(high)) / sigma)
    defence = max(0.0, ri[R_HAND_SIZE] - theirs)
    return -expected_contract_score(cs, high, p) * rf[K_SHARE] + expected_defence(cs, rf, high, p, defence)


# -- the kitty and the nomination (kitty.KittyPlayer) -----------------------------------------------------
@njit(cache=True, inline="always")
def discard_keep(ct: np.ndarray, ctx: int, hand: int, c: int, trump: int) -> float:
    """kitty._discard_keep."""
    e = ct[ctx, C_EFF + c]
    strength = ct[ctx, C_STRENGTH + c]
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
def discard_decision(v: np.ndarray, word: int, ct: np.ndarray, ri: np.ndarray) -> int:
    """KittyPlayer.discard (and _misere_discard)."""
    hand = v[V_HAND]
    ctx = v[V_CTX]
    cards = word & CARD_BITS
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


# -- card play helpers (view.TableView, play.py) ----------------------------------------------------------
@njit(cache=True, inline="always")
def strongest(ct: np.ndarray, ctx: int, cards: int) -> int:
    """``max(cards, key=strength)``: the first strongest card (in card order)."""
    best, best_s = -1, -1
    while cards:
        c = trailing_zeros(cards)
        cards &= cards - 1
        if ct[ctx, C_STRENGTH + c] > best_s:
            best, best_s = c, ct[ctx, C_STRENGTH + c]
    return best


@njit(cache=True, inline="always")
def weakest(ct: np.ndarray, ctx: int, cards: int) -> int:
    """``min(cards, key=strength)``: the first weakest card (in card order)."""
    best, best_s = -1, 1 << 30
    while cards:
        c = trailing_zeros(cards)
        cards &= cards - 1
        if ct[ctx, C_STRENGTH + c] < best_s:
            best, best_s = c, ct[ctx, C_STRENGTH + c]
    return best


@njit(cache=True, inline="always")
def may_ruff(v: np.ndarray, ct: np.ndarray, e: int, suit: int) -> bool:
    """TableView.may_ruff."""
    trump = v[V_TRUMP]
    ctx = v[V_CTX]
    if trump < 0 or suit == trump:
        return False
    pos = v[V_POSSIBLE + e]
    if not pos & ct[ctx, C_SUIT + trump]:
        return False
    return not pos & ct[ctx, C_SUIT + suit] or popcount(v[V_UNSEEN] & ct[ctx, C_SUIT + suit]) <= 2


@njit(cache=True, inline="always")
def beats(v: np.ndarray, ct: np.ndarray, e: int, led: int, key: int) -> bool:
    """TableView.beats."""
    ctx = v[V_CTX]
    keys = C_KEY + NUM_CARDS * led
    pos = v[V_POSSIBLE + e]
    follow = pos & ct[ctx, C_SUIT + led]
    m = follow
    while m:
        c = trailing_zeros(m)
        m &= m - 1
        if ct[ctx, keys + c] > key:
            return True
    if not (not follow or popcount(v[V_UNSEEN] & ct[ctx, C_SUIT + led]) <= 2):
        return False
    m = pos & ~ct[ctx, C_SUIT + led]
    while m:
        c = trailing_zeros(m)
        m &= m - 1
        if ct[ctx, keys + c] > key:
            return True
    return False


@njit(cache=True)
def still_to_play(v: np.ndarray, n: int) -> int:
    """TableView.still_to_play, as a bit set of relative seats."""
    out = 0
    seat = 1 % n
    for _ in range(n):
        if seat == v[V_LEADER] or seat == 0:
            break
        if seat != v[V_SITTING_OUT] and not v[V_TRICK_CARDS + seat]:
            out |= 1 << seat
        seat = (seat + 1) % n
    return out


@njit(cache=True)
def trick_winner(v: np.ndarray, ct: np.ndarray) -> tuple[int, int]:
    """TableView.winner: the seat and key winning the current trick so far."""
    keys = C_KEY + NUM_CARDS * v[V_LED]
    ctx = v[V_CTX]
    best_seat, best_key = -1, -1
    for i in range(v[V_TRICK_LEN]):
        key = ct[ctx, keys + v[V_TRICK_CARD + i]]
        if key > best_key:
            best_seat, best_key = v[V_TRICK_SEAT + i], key
    return best_seat, best_key


@njit(cache=True, inline="always")
def suit_length(v: np.ndarray, ct: np.ndarray, c: int) -> int:
    """play._suit_length."""
    ctx = v[V_CTX]
    return popcount(v[V_HAND] & ct[ctx, C_SUIT + ct[ctx, C_EFF + c]])


@njit(cache=True, inline="always")
def keep_value(v: np.ndarray, ct: np.ndarray, c: int, enemy: int) -> float:
    """play._keep_value."""
    ctx = v[V_CTX]
    e = ct[ctx, C_EFF + c]
    strength = ct[ctx, C_STRENGTH + c]
    trump = v[V_TRUMP]
    if e == SUITLESS:
        return 1000.0
    if trump >= 0 and e == trump:
        return 500.0 + strength
    if not ct[ctx, C_HIGHER + c] & enemy:
        return 200.0 + strength
    length = popcount(v[V_HAND] & ct[ctx, C_SUIT + e])
    if trump >= 0:
        return strength + 2.0 * length
    return strength + 3.0 * length


@njit(cache=True)
def throw(v: np.ndarray, ct: np.ndarray, cards: int) -> int:
    """play._throw: the card least worth keeping."""
    enemy = v[V_ENEMY]
    best, best_value = -1, INF
    while cards:
        c = trailing_zeros(cards)
        cards &= cards - 1
        value = keep_value(v, ct, c, enemy)
        if best < 0 or value < best_value:
            best, best_value = c, value
    return best


@njit(cache=True, inline="always")
def safe(v: np.ndarray, ct: np.ndarray, rest_enemies: int, led: int, key: int) -> bool:
    """follow's ``safe``: no enemy still to play may beat ``key``."""
    m = rest_enemies
    while m:
        e = trailing_zeros(m)
        m &= m - 1
        if beats(v, ct, e, led, key):
            return False
    return True


@njit(cache=True)
def by_rising_key(ct: np.ndarray, ctx: int, keys: int, cards: int, order: np.ndarray) -> int:
    """``sorted(cards, key=keys)`` into ``order`` (the cards' keys are distinct); returns how many."""
    count = 0
    while cards:
        low = lowest_key(ct, ctx, keys, cards)
        order[count] = low
        count += 1
        cards &= ~(1 << low)
    return count


@njit(cache=True)
def follow(v: np.ndarray, word: int, ct: np.ndarray, ri: np.ndarray) -> int:
    """play.follow."""
    ctx = v[V_CTX]
    led = v[V_LED]
    keys = C_KEY + NUM_CARDS * led
    cards = word & CARD_BITS
    w_seat, w_key = trick_winner(v, ct)
    rest = still_to_play(v, ri[R_N])
    rest_enemies = rest & v[V_ENEMIES]
    friends = v[V_FRIENDS]
    winners = 0
    m = cards
    while m:
        c = trailing_zeros(m)
        m &= m - 1
        if ct[ctx, keys + c] > w_key:
            winners |= 1 << c
    order = np.empty(NUM_CARDS, dtype=np.int64)
    count = by_rising_key(ct, ctx, keys, winners, order)
    if friends >> w_seat & 1:
        if safe(v, ct, rest_enemies, led, w_key) or count == 0:
            return throw(v, ct, cards)
        for i in range(count):
            c = order[i]
            if safe(v, ct, rest_enemies, led, ct[ctx, keys + c]):
                if (ct[ctx, C_EFF + c] == v[V_TRUMP] and led != v[V_TRUMP]
                        and ct[ctx, C_STRENGTH + c] >= HIGH_TRUMP_STRENGTH):
                    break
                return c
        return throw(v, ct, cards)
    if count == 0:
        return throw(v, ct, cards)
    for i in range(count):
        c = order[i]
        if safe(v, ct, rest_enemies, led, ct[ctx, keys + c]):
            return c
    if not rest_enemies:
        return order[0]
    following = ct[ctx, C_EFF + order[0]] == led
    if v[V_TRICK_LEN] == 1 and following and rest & friends:
        return throw(v, ct, cards)
    if following:
        return order[count - 1]
    return order[0]


@njit(cache=True, inline="always")
def is_boss(v: np.ndarray, ct: np.ndarray, c: int, enemy: int) -> bool:
    """play._is_boss."""
    ctx = v[V_CTX]
    trump = v[V_TRUMP]
    if ct[ctx, C_HIGHER + c] & enemy:
        return False
    e = ct[ctx, C_EFF + c]
    if e == SUITLESS or (trump >= 0 and e == trump):
        return True
    enemies = v[V_ENEMIES]
    if trump < 0:
        suit = ct[ctx, C_SUIT + e]
        short = popcount(v[V_UNSEEN] & suit) <= 2
        while enemies:
            x = trailing_zeros(enemies)
            enemies &= enemies - 1
            pos = v[V_POSSIBLE + x]
            if pos & ct[ctx, C_SUIT + SUITLESS] and (short or not pos & suit):
                return False
        return True
    while enemies:
        x = trailing_zeros(enemies)
        enemies &= enemies - 1
        if may_ruff(v, ct, x, e):
            return False
    return True


@njit(cache=True)
def by_length_strength(v: np.ndarray, ct: np.ndarray, cards: int) -> int:
    """``max(cards, key=(suit length, strength))``, the first of equals."""
    ctx = v[V_CTX]
    best, best_len, best_s = -1, -1, -1
    while cards:
        c = trailing_zeros(cards)
        cards &= cards - 1
        length = suit_length(v, ct, c)
        s = ct[ctx, C_STRENGTH + c]
        if length > best_len or (length == best_len and s > best_s):
            best, best_len, best_s = c, length, s
    return best


@njit(cache=True)
def partner_suit_lead(v: np.ndarray, ct: np.ndarray, ri: np.ndarray, cards: int) -> int:
    """play._partner_suit_lead (-1 for None)."""
    partner = ri[R_PARTNER]
    if partner < 0 or v[V_SITTING_OUT] == partner:
        return -1
    ctx = v[V_CTX]
    suits = 0
    for i in range(v[V_NUM_BIDS]):
        b = v[V_BID + i]
        if v[V_BID_SEAT + i] == partner and is_trick_bid(b):
            suits |= 1 << bid_strain(b)
    for s in range(3, -1, -1):
        if not suits >> s & 1 or s == v[V_TRUMP]:
            continue
        mine = cards & ct[ctx, C_SUIT + s]
        if mine:
            return strongest(ct, ctx, mine) if popcount(mine) <= 2 else weakest(ct, ctx, mine)
    return -1


@njit(cache=True)
def lead_from_long(v: np.ndarray, ct: np.ndarray, cards: int, declaring: bool) -> int:
    """play._lead_from_long."""
    ctx = v[V_CTX]
    trump = v[V_TRUMP]
    best_suit, best_score = -1, -1
    for s in range(5):
        mine = cards & ct[ctx, C_SUIT + s]
        if not mine:
            continue
        ruffable = False
        if trump >= 0 and s != trump:
            enemies = v[V_ENEMIES]
            while enemies:
                x = trailing_zeros(enemies)
                enemies &= enemies - 1
                if may_ruff(v, ct, x, s):
                    ruffable = True
                    break
        # the score tuple (not ruffable, not trumps or declaring, length, suit) as one number
        score = ((0 if ruffable else 1) * 2 + (1 if s != trump or declaring else 0)) * 1024 + popcount(mine) * 8 + s
        if score > best_score:
            best_suit, best_score = s, score
    mine = cards & ct[ctx, C_SUIT + best_suit]
    top = strongest(ct, ctx, mine)
    if popcount(mine) >= 2:
        second = strongest(ct, ctx, mine & ~(1 << top))
        enemy = v[V_ENEMY]
        unseen = v[V_UNSEEN]
        if (popcount(ct[ctx, C_HIGHER + top] & enemy) == 1
                and ct[ctx, C_HIGHER + second] & unseen == ct[ctx, C_HIGHER + top] & unseen):
            return top
    return weakest(ct, ctx, mine)


@njit(cache=True)
def lead_at_trumps(v: np.ndarray, ct: np.ndarray, ri: np.ndarray, cards: int, bosses: int, declaring: bool) -> int:
    """play._lead_at_trumps (with _draw_trumps and _defender_lead)."""
    ctx = v[V_CTX]
    trump = v[V_TRUMP]
    enemy = v[V_ENEMY]
    partner = ri[R_PARTNER]
    trump_suit = ct[ctx, C_SUIT + trump]
    my_trumps = cards & trump_suit
    if declaring and enemy & trump_suit and my_trumps:
        top = strongest(ct, ctx, my_trumps)
        if not ct[ctx, C_HIGHER + top] & enemy:
            return top
        lowest = weakest(ct, ctx, my_trumps)
        if v[V_CONTRACTOR] == 0 and popcount(my_trumps) >= 3:
            return lowest
        if partner >= 0 and v[V_CONTRACTOR] == partner and not v[V_SHOWN_VOID + partner] >> trump & 1:
            return lowest
    side_bosses = bosses & ~trump_suit
    if side_bosses:
        return by_length_strength(v, ct, side_bosses)
    if bosses and declaring:
        return strongest(ct, ctx, bosses)
    side = cards & ~trump_suit
    if not declaring and side:
        if my_trumps:
            singles = 0
            m = side
            while m:
                c = trailing_zeros(m)
                m &= m - 1
                if suit_length(v, ct, c) == 1:
                    singles |= 1 << c
            if singles:
                return weakest(ct, ctx, singles)
        pick = partner_suit_lead(v, ct, ri, side)
        if pick >= 0:
            return pick
    if side:
        return lead_from_long(v, ct, side, declaring)
    return weakest(ct, ctx, cards)


@njit(cache=True)
def lead_at_no_trumps(v: np.ndarray, word: int, ct: np.ndarray, ri: np.ndarray, cards: int, bosses: int,
                      declaring: bool) -> int:
    """play._lead_at_no_trumps (returns a word bit: a card, or a joker lead)."""
    ctx = v[V_CTX]
    hand = v[V_HAND]
    joker_leads = word >> JOKER_LEAD_BIT
    regular = bosses & ~ct[ctx, C_SUIT + SUITLESS]
    running = 0
    m = regular
    while m:
        c = trailing_zeros(m)
        m &= m - 1
        if suit_length(v, ct, c) >= 3:
            running |= 1 << c
    if running:
        return by_length_strength(v, ct, running)
    if joker_leads and declaring:
        best, best_count = -1, -1
        m = joker_leads
        while m:
            i = trailing_zeros(m)  # rising action ids: the first of equals is the smallest
            m &= m - 1
            count = popcount(hand & ct[ctx, C_SUIT + i % 4])
            if count > best_count:
                best, best_count = i, count
        return JOKER_LEAD_BIT + best
    if not declaring and cards:
        pick = partner_suit_lead(v, ct, ri, cards)
        if pick >= 0:
            return pick
    long_cards = 0
    m = cards & ~ct[ctx, C_SUIT + SUITLESS]
    while m:
        c = trailing_zeros(m)
        m &= m - 1
        if suit_length(v, ct, c) >= 3:
            long_cards |= 1 << c
    if long_cards:
        return lead_from_long(v, ct, long_cards, declaring)
    if regular:
        return by_length_strength(v, ct, regular)
    if cards:
        return lead_from_long(v, ct, cards, declaring)
    return trailing_zeros(word)  # joker_leads[0] (or legal[0])


@njit(cache=True)
def lead(v: np.ndarray, word: int, ct: np.ndarray, ri: np.ndarray) -> int:
    """play.lead."""
    cards = word & CARD_BITS
    enemy = v[V_ENEMY]
    partner = ri[R_PARTNER]
    declaring = v[V_CONTRACTOR] == 0 or (partner >= 0 and v[V_CONTRACTOR] == partner)
    bosses = 0
    m = cards
    while m:
        c = trailing_zeros(m)
        m &= m - 1
        if is_boss(v, ct, c, enemy):
            bosses |= 1 << c
    if v[V_TRUMP] >= 0:
        return lead_at_trumps(v, ct, ri, cards, bosses, declaring)
    return lead_at_no_trumps(v, word, ct, ri, cards, bosses, declaring)


# -- misère play (misere.py) ------------------------------------------------------------------------------
@njit(cache=True)
def misere_declarer(v: np.ndarray, word: int, ct: np.ndarray) -> int:
    """misere.misere_declarer."""
    ctx = v[V_CTX]
    hand = v[V_HAND]
    enemy = v[V_ENEMY]
    enemies = v[V_ENEMIES]
    num_enemies = popcount(enemies)
    cards = word & CARD_BITS
    if not v[V_TRICK_LEN]:
        if not cards:
            return trailing_zeros(word)
        best, best_score = -1, INF
        m = cards
        while m:
            c = trailing_zeros(m)
            m &= m - 1
            e = ct[ctx, C_EFF + c]
            if e == SUITLESS:
                score = 1e6
            else:
                suit = ct[ctx, C_SUIT + e]
                held = 0
                x_set = enemies
                while x_set:
                    x = trailing_zeros(x_set)
                    x_set &= x_set - 1
                    if v[V_POSSIBLE + x] & suit:
                        held += 1
                risk = 0.6 * popcount(ct[ctx, C_LOWER + c] & enemy)
                if held == 0:
                    risk += 10.0
                elif held < num_enemies or popcount(v[V_UNSEEN] & suit) <= 2:
                    risk += 0.5
                score = 3.0 * risk + hand_danger(ct, hand & ~(1 << c), enemy)
            if best < 0 or score < best_score:
                best, best_score = c, score
        return best
    led = v[V_LED]
    keys = C_KEY + NUM_CARDS * led
    _w_seat, w_key = trick_winner(v, ct)
    following = cards & ct[ctx, C_SUIT + led]
    if following:
        best, best_key = -1, -1
        m = following
        while m:
            c = trailing_zeros(m)
            m &= m - 1
            if ct[ctx, keys + c] < w_key and ct[ctx, keys + c] > best_key:
                best, best_key = c, ct[ctx, keys + c]
        if best >= 0:
            return best
        return lowest_key(ct, ctx, keys, following)
    safe_cards = cards & ~ct[ctx, C_SUIT + SUITLESS]
    if not safe_cards:
        safe_cards = cards
    return misere_throw(ct, hand, safe_cards, enemy)


@njit(cache=True, inline="always")
def lowest_key(ct: np.ndarray, ctx: int, keys: int, cards: int) -> int:
    """``min(cards, key=keys)``: the first card of the lowest key."""
    best, best_key = -1, 1 << 30
    while cards:
        c = trailing_zeros(cards)
        cards &= cards - 1
        if ct[ctx, keys + c] < best_key:
            best, best_key = c, ct[ctx, keys + c]
    return best


@njit(cache=True, inline="always")
def highest_key(ct: np.ndarray, ctx: int, keys: int, cards: int) -> int:
    """``max(cards, key=keys)``: the first card of the highest key."""
    best, best_key = -1, -1
    while cards:
        c = trailing_zeros(cards)
        cards &= cards - 1
        if ct[ctx, keys + c] > best_key:
            best, best_key = c, ct[ctx, keys + c]
    return best


@njit(cache=True)
def misere_defender(v: np.ndarray, word: int, ct: np.ndarray) -> int:
    """misere.misere_defender."""
    ctx = v[V_CTX]
    c_seat = v[V_CONTRACTOR]
    cards = word & CARD_BITS
    not_joker = cards & ~ct[ctx, C_SUIT + SUITLESS]
    if not not_joker:
        not_joker = cards
    if not v[V_TRICK_LEN]:
        if not not_joker:
            return trailing_zeros(word)
        decl = v[V_POSSIBLE + c_seat]
        best, best_score = -1, 1 << 40
        m = not_joker
        while m:
            c = trailing_zeros(m)
            m &= m - 1
            held = decl & ct[ctx, C_SUIT + ct[ctx, C_EFF + c]]
            if not held:
                score = 1 << 30  # (1, 0, 0): after every suit the contractor holds
            else:
                score = popcount(ct[ctx, C_LOWER + c] & held) * 1024 + ct[ctx, C_STRENGTH + c]
            if score < best_score:
                best, best_score = c, score
        return best
    led = v[V_LED]
    keys = C_KEY + NUM_CARDS * led
    w_seat, w_key = trick_winner(v, ct)
    following = not_joker & ct[ctx, C_SUIT + led]
    if v[V_TRICK_CARDS + c_seat]:
        if w_seat == c_seat:
            if not following:
                return strongest(ct, ctx, not_joker)
            best, best_key = -1, -1
            m = following
            while m:
                c = trailing_zeros(m)
                m &= m - 1
                if ct[ctx, keys + c] < w_key and ct[ctx, keys + c] > best_key:
                    best, best_key = c, ct[ctx, keys + c]
            if best >= 0:
                return best
        if following:
            return highest_key(ct, ctx, keys, following)
        return strongest(ct, ctx, not_joker)
    if following:
        return lowest_key(ct, ctx, keys, following)
    return strongest(ct, ctx, not_joker)


# -- one decision (agent.HeuristicAgent.act) --------------------------------------------------------------
@njit(cache=True)
def decide(row: np.ndarray, word: int, ct: np.ndarray, ri: np.ndarray, rf: np.ndarray, cs: np.ndarray,
           keys: np.ndarray, estimates: np.ndarray, off: np.ndarray, v: np.ndarray) -> int:
    """HeuristicAgent.act on one observation ``row`` and its legal word: the chosen word bit (-1
    when the word is empty). A single legal action is taken without looking at the observation.
    ``keys``/``estimates``: the cache of hand estimates (cached_evaluate)."""
    if word == 0:
        return -1
    if word & (word - 1) == 0:
        return trailing_zeros(word)
    decode(row, off, ri, v)
    phase = v[V_PHASE]
    if phase == PHASE_BIDDING:
        return bid_decision(v, word, ct, ri, rf, cs, keys, estimates)
    if phase == PHASE_DISCARD:
        return discard_decision(v, word, ct, ri)
    if phase == PHASE_NOMINATE:
        return nominate_decision(v, word, ct)
    know_cards(v, ct, ri)
    if v[V_CONTRACT] >= MISERE:
        if v[V_CONTRACTOR] == 0:
            return misere_declarer(v, word, ct)
        return misere_defender(v, word, ct)
    if v[V_TRICK_LEN]:
        return follow(v, word, ct, ri)
    return lead(v, word, ct, ri)


@njit(cache=True)
def act_rows(obs: np.ndarray, mask: np.ndarray, universal: np.ndarray, word_bit: np.ndarray, word_kind: np.ndarray,
             compact_of_word: np.ndarray, ct: np.ndarray, ri: np.ndarray, rf: np.ndarray, cs: np.ndarray,
             keys: np.ndarray, estimates: np.ndarray, off: np.ndarray, out: np.ndarray) -> None:
    """HeuristicAgent.act for every row: ``out[b]`` the compact action (-1 for an empty mask, or
    -2 when the chosen action is not in the mask, which the Python form would replace by a random one)."""
    v = np.zeros(NUM_V, dtype=np.int64)
    for b in range(obs.shape[0]):
        word = 0
        kind = 0
        row = mask[b]
        for start in range(0, mask.shape[1], 8):
            if start + 8 <= mask.shape[1]:
                legal = read_bits(row, start, 8)
            else:
                legal = 0
                for a in range(start, mask.shape[1]):
                    legal |= np.int64(row[a] != 0) << (a - start)
            while legal:
                u = universal[start + trailing_zeros(legal)]
                legal &= legal - 1
                word |= 1 << word_bit[u]
                kind = word_kind[u]
        bit = decide(obs[b], word, ct, ri, rf, cs, keys, estimates, off, v)
        if bit < 0:
            out[b] = -1
        elif not word >> bit & 1:
            out[b] = -2
        else:
            out[b] = compact_of_word[kind, bit]


# -- playouts on the batched engine's state ----------------------------------------------------------------
@njit(cache=True)
def play_out_games(st: np.ndarray, o: np.ndarray, games: np.ndarray, heuristic: bool, ct: np.ndarray,
                   ri: np.ndarray, rf: np.ndarray, cs: np.ndarray, keys: np.ndarray, estimates: np.ndarray,
                   off: np.ndarray, out: np.ndarray) -> None:
    """Play each listed game's deal to its end, every seat deciding with the heuristic (on its own
    observation, as the engine writes it) or uniformly at random (the game's action stream);
    ``out[b, side]`` each side's score change (0 for a deal thrown in)."""
    v = np.zeros(NUM_V, dtype=np.int64)
    row = np.zeros(off[L_SIZE], dtype=np.int8)
    for b in games:
        while st[b, F_PHASE] < DEAL_OVER:
            if heuristic:
                write_obs(st, b, o, st[b, F_TO_ACT], off, row)
                bit = decide(row, st[b, F_LEGAL], ct, ri, rf, cs, keys, estimates, off, v)
            else:
                bit = sample_word_bit(st, b)
            apply_word_bit(st, b, o, bit)
        for side in range(out.shape[1]):
            out[b, side] = st[b, F_SCORE_CHANGE + side]


# numba checks only each cached function's own file: drop this module's cache when it or any
# engine kernel it calls changes (before any kernel is loaded from the cache)
drop_stale_kernels(play_out_games._cache._cache_path, extra_sources=(Path(__file__),))
