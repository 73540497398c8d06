"""Hand evaluation (evaluation.HandEvaluator): trick estimates and the misère danger."""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from agents.heuristic._kernels.view import (
    C_HIGHER,
    C_LOWER,
    C_STRENGTH,
    C_SUIT,
    C_TD_LEN,
    C_TOP_DOWN,
    INF,
    JOKER1,
    JOKER_DANGER,
    MISERE_DANGER,
    NO_TRUMP_CTX,
    R_DECK,
    R_KITTY,
    R_NO_MISERE,
    R_NOMINATE_NT,
    SUITLESS,
    TD_WIDTH,
    W_DEFENCE_SIDE,
    W_DEFENCE_TRUMP,
    W_NT,
    W_SIDE,
    W_TRUMP,
)
from five_hundred_env.vector._bits import popcount


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
        packed |= min(popcount(higher) - i, 15) << (4 * i)  # every use reads at most 4
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
def rising_places(ct: np.ndarray, s: int, cards: int) -> int:
    """The cards of suit ``s`` in ``cards`` as their places in the suit at no trumps (bit 0: its
    lowest card), so that they are visited low to high (card_at_place) whatever their ids."""
    places = 0
    m = cards & ct[NO_TRUMP_CTX, C_SUIT + s]
    while m:
        c = trailing_zeros(m)
        m &= m - 1
        places |= 1 << popcount(ct[NO_TRUMP_CTX, C_LOWER + c])
    return places


@njit(cache=True, inline="always")
def card_at_place(ct: np.ndarray, s: int, place: int) -> int:
    """The card of suit ``s`` at ``place`` from the bottom at no trumps."""
    return ct[NO_TRUMP_CTX, C_TOP_DOWN + TD_WIDTH * s + ct[NO_TRUMP_CTX, C_TD_LEN + s] - 1 - place]


@njit(cache=True, inline="always")
def suit_danger(ct: np.ndarray, s: int, cards: int, outside: int) -> float:
    """HandEvaluator._misere_suit_danger of the cards of suit ``s`` in ``cards`` (low to high)."""
    danger = 0.0
    i = 0
    places = rising_places(ct, s, cards)
    while places:
        c = card_at_place(ct, s, trailing_zeros(places))
        places &= places - 1
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
    count = 0
    lower_out = cards[TD_WIDTH:]
    places = rising_places(ct, s, hand)
    while places:  # low to high
        c = card_at_place(ct, s, trailing_zeros(places))
        places &= places - 1
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
