"""Misère play (misere.py)."""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from agents.heuristic._kernels.evaluation import hand_danger, misere_throw
from agents.heuristic._kernels.play import highest_key, lowest_key, strongest, trick_winner
from agents.heuristic._kernels.view import (
    C_EFF,
    C_KEY,
    C_LOWER,
    C_STRENGTH,
    C_SUIT,
    INF,
    LEAD_CHOICE,
    NUM_BITS,
    SUITLESS,
    V_CONTRACTOR,
    V_CTX,
    V_ENEMIES,
    V_ENEMY,
    V_HAND,
    V_LED,
    V_POSSIBLE,
    V_TRICK_CARDS,
    V_TRICK_LEN,
    V_UNSEEN,
)
from five_hundred_env.vector._bits import popcount


# -- misère play (misere.py) ------------------------------------------------------------------------------
@njit(cache=True)
def misere_declarer(v: np.ndarray, cards: int, joker_leads: int, ct: np.ndarray) -> int:
    """misere.misere_declarer (``cards``, ``joker_leads``: the legal cards and joker leads)."""
    ctx = v[V_CTX]
    hand = v[V_HAND]
    enemy = v[V_ENEMY]
    enemies = v[V_ENEMIES]
    num_enemies = popcount(enemies)
    if not v[V_TRICK_LEN]:
        if not cards:
            return LEAD_CHOICE + trailing_zeros(joker_leads)  # legal[0]: no card is legal
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
    keys = C_KEY + NUM_BITS * led
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


@njit(cache=True)
def misere_defender(v: np.ndarray, cards: int, joker_leads: int, ct: np.ndarray) -> int:
    """misere.misere_defender (``cards``, ``joker_leads``: the legal cards and joker leads)."""
    ctx = v[V_CTX]
    c_seat = v[V_CONTRACTOR]
    not_joker = cards & ~ct[ctx, C_SUIT + SUITLESS]
    if not not_joker:
        not_joker = cards
    if not v[V_TRICK_LEN]:
        if not not_joker:
            return LEAD_CHOICE + trailing_zeros(joker_leads)  # legal[0]: no card is legal
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
                score = popcount(ct[ctx, C_LOWER + c] & held) * 4096 + ct[ctx, C_STRENGTH + c]  # < 4096
            if score < best_score:
                best, best_score = c, score
        return best
    led = v[V_LED]
    keys = C_KEY + NUM_BITS * led
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
