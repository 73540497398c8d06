"""Card play in trick contracts (play.py, with view.TableView's questions about the others' cards)."""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from agents.heuristic._kernels.bidding import bid_strain, is_trick_bid
from agents.heuristic._kernels.view import (
    C_EFF,
    C_HIGHER,
    C_KEY,
    C_STRENGTH,
    C_SUIT,
    HIGH_TRUMP_STRENGTH,
    INF,
    LEAD_CHOICE,
    NUM_BITS,
    R_N,
    STRENGTH_SCALE,
    SUITLESS,
    V_BID,
    V_BID_SEAT,
    V_CONTRACTOR,
    V_CTX,
    V_ENEMIES,
    V_ENEMY,
    V_FRIENDS,
    V_HAND,
    V_LEADER,
    V_LED,
    V_MATES,
    V_NUM_BIDS,
    V_OUT,
    V_POSSIBLE,
    V_SHOWN_VOID,
    V_TRICK_CARD,
    V_TRICK_CARDS,
    V_TRICK_LEN,
    V_TRICK_SEAT,
    V_TRUMP,
    V_UNSEEN,
)
from five_hundred_env.vector._bits import popcount


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
    keys = C_KEY + NUM_BITS * led
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
        if not v[V_OUT] >> seat & 1 and not v[V_TRICK_CARDS + seat]:
            out |= 1 << seat
        seat = (seat + 1) % n
    return out


@njit(cache=True)
def trick_winner(v: np.ndarray, ct: np.ndarray) -> tuple[int, int]:
    """TableView.winner: the seat and key winning the current trick so far."""
    keys = C_KEY + NUM_BITS * v[V_LED]
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
    strength = ct[ctx, C_STRENGTH + c] / STRENGTH_SCALE
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
def follow(v: np.ndarray, cards: int, ct: np.ndarray, ri: np.ndarray) -> int:
    """play.follow (``cards``: the legal cards)."""
    ctx = v[V_CTX]
    led = v[V_LED]
    keys = C_KEY + NUM_BITS * led
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
    order = np.empty(NUM_BITS, dtype=np.int64)
    count = by_rising_key(ct, ctx, keys, winners, order)
    if friends >> w_seat & 1:
        if safe(v, ct, rest_enemies, led, w_key) or count == 0:
            return throw(v, ct, cards)
        for i in range(count):
            c = order[i]
            if safe(v, ct, rest_enemies, led, ct[ctx, keys + c]):
                if (ct[ctx, C_EFF + c] == v[V_TRUMP] and led != v[V_TRUMP]
                        and ct[ctx, C_STRENGTH + c] >= HIGH_TRUMP_STRENGTH * STRENGTH_SCALE):
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
    mates = v[V_MATES] & ~v[V_OUT]
    if not mates:
        return -1
    ctx = v[V_CTX]
    suits = 0
    for i in range(v[V_NUM_BIDS]):
        b = v[V_BID + i]
        if mates >> v[V_BID_SEAT + i] & 1 and is_trick_bid(b):
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
    contractor = v[V_CONTRACTOR]
    trump_suit = ct[ctx, C_SUIT + trump]
    my_trumps = cards & trump_suit
    if declaring and enemy & trump_suit and my_trumps:
        top = strongest(ct, ctx, my_trumps)
        if not ct[ctx, C_HIGHER + top] & enemy:
            return top
        lowest = weakest(ct, ctx, my_trumps)
        if contractor == 0 and popcount(my_trumps) >= 3:
            return lowest
        if v[V_MATES] >> contractor & 1 and not v[V_SHOWN_VOID + contractor] >> trump & 1:
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
def lead_at_no_trumps(v: np.ndarray, joker_leads: int, ct: np.ndarray, ri: np.ndarray, cards: int, bosses: int,
                      declaring: bool) -> int:
    """play._lead_at_no_trumps (returns a card's bit, or LEAD_CHOICE + a joker lead's index)."""
    ctx = v[V_CTX]
    hand = v[V_HAND]
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
        return LEAD_CHOICE + best
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
    return LEAD_CHOICE + trailing_zeros(joker_leads)  # joker_leads[0]: no card is legal


@njit(cache=True)
def lead(v: np.ndarray, cards: int, joker_leads: int, ct: np.ndarray, ri: np.ndarray) -> int:
    """play.lead (``cards``, ``joker_leads``: the legal cards and joker leads)."""
    enemy = v[V_ENEMY]
    declaring = is_declaring(v)
    bosses = 0
    m = cards
    while m:
        c = trailing_zeros(m)
        m &= m - 1
        if is_boss(v, ct, c, enemy):
            bosses |= 1 << c
    if v[V_TRUMP] >= 0:
        return lead_at_trumps(v, ct, ri, cards, bosses, declaring)
    return lead_at_no_trumps(v, joker_leads, ct, ri, cards, bosses, declaring)


@njit(cache=True, inline="always")
def is_declaring(v: np.ndarray) -> bool:
    """TableView.declaring: whether the observer is on the contractor's side, as far as it knows."""
    contractor = v[V_CONTRACTOR]
    return contractor == 0 or (v[V_MATES] >> contractor & 1) != 0


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
