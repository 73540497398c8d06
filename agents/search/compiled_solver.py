"""The exact solver of :mod:`agents.search.solver`, compiled (numba: the ``vector`` extra).

:func:`action_values` returns exactly what ``solver.action_values`` returns (the contractor
side's tricks in the deal after each legal action, with best play afterwards), about two orders
of magnitude faster: the same alpha-beta (fail-soft, a transposition table of bounds at the
start of each trick, the follow-suit rule of §7 and the suit a led suitless joker names), over
the cards still in play renumbered ``0..m-1`` in id order, so a hand is one ``int64`` whatever the
pack. A position at the start of a trick is keyed by the cards left (the hands never exchange
cards, so the cards left say who holds what), the leader, and the joker-lead state while a
suitless joker is out. ``solver.py`` stays the reference: ``tests/test_search_solver.py`` holds
the two equal on random endgames of every preset and contract, and against brute-force minimax.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from agents.search import solver
from five_hundred_env.actions import card_action, joker_lead_action
from five_hundred_env.cards import mask_to_cards
from five_hundred_env.engine import Deal

MAX_CARDS = 62
"""The most cards in play (hands and the trick) the compiled search takes; beyond, the Python one."""

TABLE_BITS = 15
"""The transposition table's size (2 ** bits entries, one table for every search: an entry is
valid only in the search whose stamp it carries, so nothing is cleared between searches)."""

# a search frame (one ply): the position, the window, the move being tried and what it changed
(P_SEAT, P_TRICK_LEN, P_BASE, P_LED, P_SUITS_LED, P_ALPHA, P_BETA, P_A0, P_B0, P_BEST, P_KEY0, P_KEY1, P_LO, P_HI,
 P_TABLE, P_CARDS, P_JOKERS, P_SUITS, P_NAMED, P_MOVE, P_HAND, P_VOID, P_WON, P_FIELDS) = range(24)
# the table's columns
T_STAMP, T_KEY0, T_KEY1, T_LO, T_HI = range(5)


@njit(cache=True)
def _count(mask: int) -> int:
    n = 0
    while mask:
        mask &= mask - 1
        n += 1
    return n


@njit(cache=True)
def _named_suits(seat: int, suits_led: int, voids: np.ndarray, not_yet_led: bool, non_joker: int) -> int:
    """The suits a suitless joker led by ``seat`` may name, as bits (§7, ``joker_lead_suit``)."""
    if not_yet_led:
        named = ~suits_led & 15
        if named == 0 and non_joker == 0:
            named = 15
        return named
    named = ~voids[seat] & 15
    return named if named else 15


@njit(cache=True)
def _slot(table: np.ndarray, stamp: int, key0: int, key1: int) -> int:
    """The table slot of this key in this search: its entry, or the empty slot it would take (-1: full)."""
    mask = len(table) - 1
    h = key0 ^ (key0 >> 17) ^ (key0 >> 31) ^ (key1 * 0x5BD1E995)
    h = (h ^ (h >> 13)) & mask
    for _ in range(64):
        if table[h, T_STAMP] != stamp or (table[h, T_KEY0] == key0 and table[h, T_KEY1] == key1):
            return h
        h = (h + 1) & mask
    return -1


@njit(cache=True)
def _after_move(hands, voids, trick_seat, trick_card, seat, trick_len, base, led, suits_led, card, named, alpha,
                beta, frames, table, stamp, effective, win_key, suit_cards, next_seat, counts, maximises, trick_size,
                not_yet_led):
    """The value after ``seat`` plays local card ``card`` (naming ``named`` if a joker lead) from
    the position given, within (alpha, beta): ``solver._Search.after``, with an explicit stack of
    frames for the recursion (numba caches no recursive function)."""
    root = frames[0]
    root[P_SEAT], root[P_TRICK_LEN], root[P_BASE], root[P_LED], root[P_SUITS_LED] = seat, trick_len, base, led, suits_led
    root[P_ALPHA], root[P_BETA], root[P_TABLE] = alpha, beta, 0
    root[P_BEST] = -1 if maximises[seat] else 99
    root[P_CARDS], root[P_JOKERS], root[P_SUITS] = 0, 0, 0
    if named >= 0:
        root[P_JOKERS], root[P_NAMED] = np.int64(1) << card, np.int64(1) << named
    else:
        root[P_CARDS] = np.int64(1) << card
    d = 0
    while True:
        f = frames[d]
        suit = _next_move(f)
        if suit < 0:  # frame d has its value: back to the frame below
            value = f[P_BEST]
            if f[P_TABLE]:
                _store(table, stamp, f, value)
            if d == 0:
                return value
            d -= 1
            _back(frames[d], value, hands, voids, maximises)
            continue
        _play(f, frames[d + 1], suit, hands, voids, trick_seat, trick_card, effective, win_key, next_seat, counts,
              trick_size)
        d += 1
        value = _enter(frames[d], hands, voids, table, stamp, suit_cards, maximises, not_yet_led)
        if value >= 0:  # settled on entry: back to the frame below
            d -= 1
            _back(frames[d], value, hands, voids, maximises)


@njit(cache=True)
def _back(f: np.ndarray, value: int, hands: np.ndarray, voids: np.ndarray, maximises: np.ndarray) -> None:
    """Frame ``f``'s move taken back, and the value of the position after it (``value``) counted:
    the best so far and the window."""
    seat = f[P_SEAT]
    hands[seat], voids[seat] = f[P_HAND], f[P_VOID]
    v = value + f[P_WON]
    if maximises[seat]:
        if v > f[P_BEST]:
            f[P_BEST] = v
            f[P_ALPHA] = max(f[P_ALPHA], v)
    elif v < f[P_BEST]:
        f[P_BEST] = v
        f[P_BETA] = min(f[P_BETA], v)


@njit(cache=True)
def _next_move(f: np.ndarray) -> int:
    """The next move of frame ``f`` (its card in ``P_MOVE``; the suit a joker lead names, 4: none),
    or -1 when the frame is done: no move left, or a cut-off."""
    while f[P_SUITS] == 0 and (f[P_CARDS] or f[P_JOKERS]):
        if f[P_CARDS]:
            f[P_MOVE] = trailing_zeros(f[P_CARDS])
            f[P_CARDS] &= f[P_CARDS] - 1
            f[P_SUITS] = 1 << 4  # no suit named: one move
        else:
            f[P_MOVE] = trailing_zeros(f[P_JOKERS])
            f[P_JOKERS] &= f[P_JOKERS] - 1
            f[P_SUITS] = f[P_NAMED]
    if f[P_ALPHA] >= f[P_BETA] or f[P_SUITS] == 0:
        return -1
    suit = trailing_zeros(f[P_SUITS])
    f[P_SUITS] &= f[P_SUITS] - 1
    return suit


@njit(cache=True)
def _store(table: np.ndarray, stamp: int, f: np.ndarray, value: int) -> None:
    """A trick-start position's value, searched within the frame's window, as bounds in the table."""
    lo, hi = f[P_LO], f[P_HI]
    if value <= f[P_A0]:
        hi = min(hi, value)
    elif value >= f[P_B0]:
        lo = max(lo, value)
    else:
        lo = hi = value
    h = _slot(table, stamp, f[P_KEY0], f[P_KEY1])
    if h >= 0:
        table[h, T_STAMP], table[h, T_KEY0], table[h, T_KEY1], table[h, T_LO], table[h, T_HI] = (
            stamp, f[P_KEY0], f[P_KEY1], lo, hi)


@njit(cache=True)
def _play(f, c, suit, hands, voids, trick_seat, trick_card, effective, win_key, next_seat, counts,
          trick_size):
    """Frame ``f``'s move played (what it changes saved in ``f``), the position after it in frame ``c``."""
    seat, card, trick_len, led, suits_led, base = (f[P_SEAT], f[P_MOVE], f[P_TRICK_LEN], f[P_LED], f[P_SUITS_LED],
                                                   f[P_BASE])
    f[P_HAND], f[P_VOID] = hands[seat], voids[seat]
    if trick_len == 0:
        led = suit if suit < 4 else effective[card]
        suits_led |= 1 << led
    elif effective[card] != led and not voids[seat] >> led & 1:
        voids[seat] |= 1 << led
    hands[seat] &= ~(np.int64(1) << card)
    trick_seat[base + trick_len] = seat
    trick_card[base + trick_len] = card
    c[P_ALPHA], c[P_BETA], c[P_LED], c[P_SUITS_LED] = f[P_ALPHA], f[P_BETA], led, suits_led
    won = 0
    if trick_len + 1 < trick_size:
        c[P_SEAT], c[P_TRICK_LEN], c[P_BASE] = next_seat[seat], trick_len + 1, base
    else:
        winner, top = trick_seat[base], win_key[led, trick_card[base]]
        for i in range(base + 1, base + trick_size):
            if win_key[led, trick_card[i]] > top:
                winner, top = trick_seat[i], win_key[led, trick_card[i]]
        won = 1 if counts[winner] else 0
        # the next trick's cards go after this one's, which the frames below still read
        c[P_SEAT], c[P_TRICK_LEN], c[P_BASE], c[P_LED] = winner, 0, base + trick_size, -1
        c[P_ALPHA] -= won
        c[P_BETA] -= won
    f[P_WON] = won


@njit(cache=True)
def _enter(f, hands, voids, table, stamp, suit_cards, maximises, not_yet_led):
    """Frame ``f``'s position entered: its value if settled at once (no card left, or the table's
    bounds at the start of a trick), else -1 with its moves set up (window narrowed by the bounds)."""
    seat = f[P_SEAT]
    hand = hands[seat]
    f[P_TABLE] = f[P_TRICK_LEN] == 0
    if f[P_TABLE]:
        left = _count(hand)
        if left == 0:
            return 0
        rest, jokers_out = np.int64(0), False
        for s in range(len(hands)):
            rest |= hands[s]
            jokers_out = jokers_out or (hands[s] & suit_cards[4]) != 0
        relevant = np.int64(0)
        if jokers_out:
            if not_yet_led:
                relevant = f[P_SUITS_LED]
            else:
                for s in range(len(voids)):
                    relevant |= voids[s] << (4 * s)
        f[P_KEY0], f[P_KEY1] = rest, seat + 8 * relevant
        lo, hi = 0, left
        h = _slot(table, stamp, rest, f[P_KEY1])
        if h >= 0 and table[h, T_STAMP] == stamp:
            lo, hi = table[h, T_LO], table[h, T_HI]
        if lo >= f[P_BETA] or lo == hi:
            return lo
        if hi <= f[P_ALPHA]:
            return hi
        f[P_ALPHA], f[P_BETA] = max(f[P_ALPHA], lo), min(f[P_BETA], hi)
        f[P_A0], f[P_B0], f[P_LO], f[P_HI] = f[P_ALPHA], f[P_BETA], lo, hi
    f[P_BEST] = -1 if maximises[seat] else 99
    if f[P_TRICK_LEN]:
        cards = hand & suit_cards[f[P_LED]]
        f[P_CARDS], f[P_JOKERS] = cards if cards else hand, 0
    else:
        cards = hand & ~suit_cards[4]
        f[P_CARDS], f[P_JOKERS] = cards, hand & suit_cards[4]
        if f[P_JOKERS]:
            f[P_NAMED] = _named_suits(seat, f[P_SUITS_LED], voids, not_yet_led, cards)
    f[P_SUITS] = 0
    return -1


@njit(cache=True)
def _root_values(hands, voids, trick_seat, trick_card, trick_len, led, seat, suits_led, moves, effective, win_key,
                 suit_cards, next_seat, counts, maximises, trick_size, not_yet_led, table,
                 stamp):
    """The value after each of ``moves`` (rows: local card, named suit or -1), one table shared."""
    frames = np.zeros((_count(hands[seat]) * trick_size + 2, P_FIELDS), dtype=np.int64)
    out = np.empty(len(moves), dtype=np.int64)
    for i in range(len(moves)):
        out[i] = _after_move(hands, voids, trick_seat, trick_card, seat, trick_len, 0, led, suits_led, moves[i, 0],
                             moves[i, 1], -1, 99, frames, table, stamp, effective, win_key, suit_cards, next_seat,
                             counts, maximises, trick_size, not_yet_led)
    return out


_TABLE = np.zeros((1 << TABLE_BITS, 5), dtype=np.int64)
_STAMP = [0]


def action_values(deal: Deal) -> dict[int, int]:
    """``solver.action_values(deal)``, compiled: each legal action of the seat to act → the
    contractor side's tricks in the deal after it, with best play afterwards."""
    search = solver._Search(deal)
    hands, trick, seat = list(deal.hands), list(deal.trick), deal.to_act
    root = search.moves(hands, trick, deal.led_suit, seat, deal.suits_led, deal.shown_void)
    everything = sum(1 << c for _, c in trick)
    for hand in hands:
        everything |= hand
    in_play = mask_to_cards(everything)
    if len(in_play) > MAX_CARDS:
        return solver.action_values(deal)
    local = {c: i for i, c in enumerate(in_play)}
    bits = [(1 << c, 1 << i) for i, c in enumerate(in_play)]

    def mask(cards: int) -> int:  # over the few cards in play, not over the cards of a suit
        return sum(local_bit for bit, local_bit in bits if cards & bit)

    tricks = hands[seat].bit_count()  # the seat to act still plays to the trick in progress: it and those to come
    trick_seat = np.zeros(search.trick_size * tricks, dtype=np.int64)  # trick k's cards at k × trick_size
    trick_card = np.zeros(search.trick_size * tricks, dtype=np.int64)
    for i, (s, c) in enumerate(trick):
        trick_seat[i], trick_card[i] = s, local[c]
    values = _root_values(
        np.array([mask(h) for h in hands], dtype=np.int64), np.array(deal.shown_void, dtype=np.int64),
        trick_seat, trick_card, len(trick), deal.led_suit, seat, deal.suits_led,
        np.array([(local[c], named) for c, named in root], dtype=np.int64).reshape(-1, 2),
        np.array([search.effective[c] for c in in_play], dtype=np.int64),
        np.array([[search.win_key[led][c] for c in in_play] for led in range(4)], dtype=np.float64),
        np.array([mask(m) for m in search.suit_cards], dtype=np.int64),
        np.array(search.next_seat, dtype=np.int64), np.array(search.counts, dtype=np.bool_),
        np.array(search.maximises, dtype=np.bool_), search.trick_size, search.not_yet_led, _TABLE, _next_stamp())
    won = solver._won(deal, search)
    return {(joker_lead_action(c, named) if named >= 0 else card_action(c)): won + int(v)
            for (c, named), v in zip(root, values.tolist(), strict=True)}


def _next_stamp() -> int:
    _STAMP[0] += 1
    return _STAMP[0]


__all__ = ["MAX_CARDS", "action_values"]
