"""Bidding (bidding.Bidder): an expected score per legal bid against passing's."""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from agents.heuristic._kernels.evaluation import cached_evaluate
from agents.heuristic._kernels.view import (
    K_DEFENCE_AVG,
    K_DEFENCE_WEIGHT,
    K_GAME_END,
    K_MARGIN,
    K_MISERE_A,
    K_MISERE_B,
    K_NT_A,
    K_NT_B,
    K_NT_SIGMA,
    K_OPEN_MISERE_A,
    K_OPEN_MISERE_B,
    K_OPPONENT_STRAIN,
    K_OTHER_SUIT_HELP,
    K_OWN_AVG,
    K_OWN_AVG_NT,
    K_PASS_PENALTY,
    K_SHARE,
    K_SUIT_A,
    K_SUIT_B,
    K_SUIT_SIGMA,
    K_SUPPORT,
    MISERE,
    NT,
    OPEN_MISERE,
    PASS,
    R_HAND_SIZE,
    R_LOSING,
    R_MATES,
    R_OPEN_RANK,
    R_TARGET,
    S_DEFENCE_LOST,
    S_DEFENCE_MADE,
    S_LOST,
    S_MADE,
    S_SLAM,
    V_BID,
    V_BID_SEAT,
    V_HAND,
    V_NUM_BIDS,
    V_PASSED,
    V_SCORE,
)


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
    mates = ri[R_MATES]  # the fixed team-mates (a called partner is unknown in the auction)
    high, high_seat, partner_best, opponent_strains = 0, -1, 0, 0
    for i in range(v[V_NUM_BIDS]):
        b = v[V_BID + i]
        r = v[V_BID_SEAT + i]
        if high == 0 or bid_rank(b, ri) > bid_rank(high, ri):
            high, high_seat = b, r
        if mates >> r & 1 and (partner_best == 0 or bid_rank(b, ri) > bid_rank(partner_best, ri)):
            partner_best = b
        if r != 0 and not mates >> r & 1 and is_trick_bid(b):
            opponent_strains |= 1 << bid_strain(b)
    partner_passed = mates != 0 and v[V_PASSED] & mates == mates
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
    if ri[R_MATES]:
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
    if ri[R_MATES] >> high_seat & 1:
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
