"""§8 and §10.6 scoring, §9 and §10.7 winning as numba kernels (``scoring.deal_score``,
``Game._end_of_deal``)."""

from __future__ import annotations

import numpy as np
from numba import njit

from five_hundred_env.vector._bits import popcount
from five_hundred_env.vector._layout import (
    F_CONTRACT,
    F_CONTRACTOR,
    F_MADE,
    F_NUM_DEALS,
    F_PARTNER,
    F_SCORE_CHANGE,
    F_SCORES,
    F_THROWN_IN,
    F_TRICKS_WON,
    F_WINNERS,
    MAX_SEATS,
    O_DEFENCE,
    O_HAND,
    O_LOSING,
    O_MISERE_DEFENCE,
    O_MISERE_VALUE,
    O_N,
    O_SIDE_OF,
    O_SIDES,
    O_SLAM,
    O_TARGET,
    O_WIN_NEEDS_CONTRACT,
)

MISERE, OPEN_MISERE = 26, 27
SLAM_VALUE = 250


@njit(cache=True)
def side_of(seat: int, o: np.ndarray) -> int:
    """Rules.side_of, from the table the options vector carries (``O_SIDE_OF + seat``)."""
    return o[O_SIDE_OF + seat]


@njit(cache=True)
def team_sides(st: np.ndarray, b: int, o: np.ndarray) -> int:
    """The sides of the contracting team (§10.6), as a bit set: the contractor's, and in a trick
    contract a five-handed partner's (Deal.contracting_seats)."""
    sides = 1 << side_of(st[b, F_CONTRACTOR], o)
    partner = st[b, F_PARTNER]
    if partner >= 0 and st[b, F_CONTRACT] < MISERE:
        sides |= 1 << side_of(partner, o)
    return sides


@njit(cache=True)
def score_deal(st: np.ndarray, b: int, o: np.ndarray) -> None:
    """scoring.deal_score into ``F_SCORE_CHANGE`` (and ``F_MADE``)."""
    n = o[O_N]
    contract = st[b, F_CONTRACT]
    contractor = st[b, F_CONTRACTOR]
    team = team_sides(st, b, o)
    side_tricks = np.zeros(MAX_SEATS, dtype=np.int64)
    for s in range(n):
        side_tricks[side_of(s, o)] += st[b, F_TRICKS_WON + s]
    team_tricks = 0
    for side in range(o[O_SIDES]):
        if team >> side & 1:
            team_tricks += side_tricks[side]
    contractor_tricks = st[b, F_TRICKS_WON + contractor]
    misere = contract >= MISERE
    made = contractor_tricks == 0 if misere else team_tricks >= 6 + (contract - 1) // 5
    if contract == MISERE:
        value = o[O_MISERE_VALUE]
    elif contract == OPEN_MISERE:
        value = 500
    else:
        value = 40 + 100 * ((contract - 1) // 5) + 20 * ((contract - 1) % 5)
        if made and o[O_SLAM] and team_tricks == o[O_HAND] and value < SLAM_VALUE:
            value = SLAM_VALUE
    st[b, F_MADE] = made
    for side in range(o[O_SIDES]):
        if team >> side & 1:
            change = value if made else -value
        elif misere:
            change = 10 * contractor_tricks if o[O_MISERE_DEFENCE] == 1 else 0
        elif o[O_DEFENCE] == 0 or (o[O_DEFENCE] == 2 and not made):
            change = 10 * side_tricks[side]
        else:
            change = 0
        st[b, F_SCORE_CHANGE + side] = change


@njit(cache=True)
def highest_sides(st: np.ndarray, b: int, sides: int) -> int:
    """engine._highest: the sides (bit set) of ``sides`` with the highest score."""
    best = -(1 << 62)
    for side in range(MAX_SEATS):
        if sides >> side & 1 and st[b, F_SCORES + side] > best:
            best = st[b, F_SCORES + side]
    out = 0
    for side in range(MAX_SEATS):
        if sides >> side & 1 and st[b, F_SCORES + side] == best:
            out |= 1 << side
    return out


@njit(cache=True)
def end_of_game_deal(st: np.ndarray, b: int, o: np.ndarray) -> None:
    """Game._end_of_deal (§9): add the deal's score; set ``F_WINNERS`` if the game is over."""
    st[b, F_NUM_DEALS] += 1
    if st[b, F_THROWN_IN]:
        return
    k = o[O_SIDES]
    for side in range(k):
        st[b, F_SCORES + side] += st[b, F_SCORE_CHANGE + side]
    team = team_sides(st, b, o)
    reached = 0
    for side in range(k):
        if st[b, F_SCORES + side] >= o[O_TARGET]:
            reached |= 1 << side
    if o[O_WIN_NEEDS_CONTRACT]:  # the contracting team's sides at the target, by a made contract
        reached = reached & team if st[b, F_MADE] else 0
    elif popcount(reached) > 1:
        reached = reached & team if reached & team else highest_sides(st, b, reached)
    if reached == 0:
        sunk = False
        for side in range(k):
            sunk = sunk or st[b, F_SCORES + side] <= o[O_LOSING]
        if sunk:
            if k == 2:
                for side in range(2):
                    if st[b, F_SCORES + side] > o[O_LOSING]:
                        reached |= 1 << side
                if reached == 0:
                    reached = highest_sides(st, b, 3)
            else:
                reached = highest_sides(st, b, (1 << k) - 1)
    st[b, F_WINNERS] = reached


