"""One decision (agent.HeuristicAgent.act), a batch of them, and playouts on the batched engine's state."""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from agents.heuristic._kernels.bidding import bid_decision
from agents.heuristic._kernels.kitty import call_decision, discard_decision, nominate_decision
from agents.heuristic._kernels.misere import misere_declarer, misere_defender
from agents.heuristic._kernels.play import follow, lead
from agents.heuristic._kernels.view import (
    LEAD_CHOICE,
    MISERE,
    NUM_V,
    PHASE_BIDDING,
    PHASE_CALL,
    PHASE_DISCARD,
    PHASE_NOMINATE,
    R_CALL_SEAT,
    V_CONTRACT,
    V_CONTRACTOR,
    V_PHASE,
    V_TRICK_LEN,
    decode,
    know_cards,
    read_bits,
)
from five_hundred_env.cards import KERNEL_MASK_BITS
from five_hundred_env.vector._encode import write_obs
from five_hundred_env.vector._kernels import apply_word_bit, sample_word_bit
from five_hundred_env.vector._layout import (
    F_LEGAL,
    F_LEGAL_HIGH,
    F_PHASE,
    F_SCORE_CHANGE,
    F_TO_ACT,
    L_SIZE,
    O_LEAD_BIT,
    PARTNER_BIT,
)
from five_hundred_env.vector._legal import CALL, DEAL_OVER, DISCARD, PLAY


# -- one decision (agent.HeuristicAgent.act) --------------------------------------------------------------
@njit(cache=True)
def decide(row: np.ndarray, word: int, joker_leads: int, ct: np.ndarray, ri: np.ndarray, rf: np.ndarray,
           cs: np.ndarray, keys: np.ndarray, estimates: np.ndarray, off: np.ndarray, v: np.ndarray) -> int:
    """HeuristicAgent.act on one observation ``row`` and its legal actions: the chosen one's code
    (-1 when none is legal). ``word``: the legal bids (bit = bid id), cards (bit = card bit),
    nominations (bit = suit, 4 none) or called seats (bit = absolute seat); ``joker_leads``: the
    legal joker leads (bit 4·joker + suit), chosen as LEAD_CHOICE + that bit. A single legal action
    is taken without looking at the observation. ``keys``/``estimates``: the cache of hand
    estimates (cached_evaluate)."""
    if word == 0 and joker_leads == 0:
        return -1
    if joker_leads == 0 and word & (word - 1) == 0:
        return trailing_zeros(word)
    if word == 0 and joker_leads & (joker_leads - 1) == 0:
        return LEAD_CHOICE + trailing_zeros(joker_leads)
    decode(row, off, ri, v)
    phase = v[V_PHASE]
    if phase == PHASE_BIDDING:
        return bid_decision(v, word, ct, ri, rf, cs, keys, estimates)
    if phase == PHASE_DISCARD:
        return discard_decision(v, word, ct, ri)
    if phase == PHASE_NOMINATE:
        return nominate_decision(v, word, ct)
    if phase == PHASE_CALL:
        return call_decision(v, word, ct, ri)
    know_cards(v, ct, ri)
    if v[V_CONTRACT] >= MISERE:
        if v[V_CONTRACTOR] == 0:
            return misere_declarer(v, word, joker_leads, ct)
        return misere_defender(v, word, joker_leads, ct)
    if v[V_TRICK_LEN]:
        return follow(v, word, ct, ri)
    return lead(v, word, joker_leads, ct, ri)


@njit(cache=True)
def act_rows(obs: np.ndarray, mask: np.ndarray, action_kind: np.ndarray, action_code: np.ndarray,
             compact_of_code: np.ndarray, ct: np.ndarray, ri: np.ndarray, rf: np.ndarray, cs: np.ndarray,
             keys: np.ndarray, estimates: np.ndarray, off: np.ndarray, out: np.ndarray) -> None:
    """HeuristicAgent.act for every row: ``out[b]`` the compact action (-1 for an empty mask, or
    -2 when the chosen action is not in the mask, which the Python form would replace by a random one).
    ``action_kind[a]``/``action_code[a]``: the kind of compact action ``a`` (0 bid, 1 card or joker
    lead, 2 nomination, 3 partner seat) and its code in decide's terms; ``compact_of_code`` back."""
    v = np.zeros(NUM_V, dtype=np.int64)
    for b in range(obs.shape[0]):
        word = 0
        joker_leads = 0
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
                a = start + trailing_zeros(legal)
                legal &= legal - 1
                code = action_code[a]
                if code >= LEAD_CHOICE:
                    joker_leads |= 1 << (code - LEAD_CHOICE)
                else:
                    word |= 1 << code
                kind = action_kind[a]
        choice = decide(obs[b], word, joker_leads, ct, ri, rf, cs, keys, estimates, off, v)
        if choice < 0:
            out[b] = -1
        elif not (word >> choice & 1 if choice < LEAD_CHOICE else joker_leads >> (choice - LEAD_CHOICE) & 1):
            out[b] = -2
        else:
            out[b] = compact_of_code[kind, choice]


# -- playouts on the batched engine's state ----------------------------------------------------------------
@njit(cache=True, inline="always")
def translate(cards: int, bit_of: np.ndarray) -> int:
    """A card mask with each bit ``c`` moved to ``bit_of[c]``."""
    out = 0
    while cards:
        c = trailing_zeros(cards)
        cards &= cards - 1
        out |= 1 << bit_of[c]
    return out


@njit(cache=True)
def engine_decision(st: np.ndarray, b: int, o: np.ndarray, row: np.ndarray, ct: np.ndarray, ri: np.ndarray,
                    rf: np.ndarray, cs: np.ndarray, keys: np.ndarray, estimates: np.ndarray, off: np.ndarray,
                    v: np.ndarray, policy_bit: np.ndarray, engine_bit: np.ndarray) -> int:
    """The heuristic's decision in game ``b`` as a bit of the engine's legal set (five_hundred_env.vector._legal):
    decide on the acting seat's observation, with the legal set's cards moved from the engine's
    kernel bits to the policy's (``policy_bit``; ``engine_bit`` back: they differ in six_handed only)."""
    write_obs(st, b, o, st[b, F_TO_ACT], off, row)
    phase = st[b, F_PHASE]
    low, high = st[b, F_LEGAL], st[b, F_LEGAL_HIGH]
    lead = o[O_LEAD_BIT]
    joker_leads = 0
    if phase == PLAY or phase == DISCARD or (phase == CALL and not ri[R_CALL_SEAT]):
        if lead < KERNEL_MASK_BITS:  # the packs of ranks 4-A: the joker leads follow the cards
            word, joker_leads = low & ((1 << lead) - 1), low >> lead
        else:
            word, joker_leads = low, high & 0xFF
        word = translate(word, policy_bit)
    elif phase == CALL:
        word = high >> (PARTNER_BIT - KERNEL_MASK_BITS)
    else:
        word = low
    choice = decide(row, word, joker_leads, ct, ri, rf, cs, keys, estimates, off, v)
    if phase == CALL and ri[R_CALL_SEAT]:
        return PARTNER_BIT + choice
    if choice >= LEAD_CHOICE:
        return lead + choice - LEAD_CHOICE
    if phase == PLAY or phase == DISCARD or phase == CALL:
        return engine_bit[choice]
    return choice


@njit(cache=True)
def play_out_games(st: np.ndarray, o: np.ndarray, games: np.ndarray, heuristic: bool, ct: np.ndarray,
                   ri: np.ndarray, rf: np.ndarray, cs: np.ndarray, keys: np.ndarray, estimates: np.ndarray,
                   off: np.ndarray, policy_bit: np.ndarray, engine_bit: np.ndarray, out: np.ndarray) -> None:
    """Play each listed game's deal to its end, every seat deciding with the heuristic (on its own
    observation, as the engine writes it) or uniformly at random (the game's action stream);
    ``out[b, side]`` each side's score change (0 for a deal thrown in)."""
    v = np.zeros(NUM_V, dtype=np.int64)
    row = np.zeros(off[L_SIZE], dtype=np.int8)
    for b in games:
        while st[b, F_PHASE] < DEAL_OVER:
            if heuristic:
                bit = engine_decision(st, b, o, row, ct, ri, rf, cs, keys, estimates, off, v, policy_bit, engine_bit)
            else:
                bit = sample_word_bit(st, b)
            apply_word_bit(st, b, o, bit)
        for side in range(out.shape[1]):
            out[b, side] = st[b, F_SCORE_CHANGE + side]


# numba checks only each cached function's own file: drop this module's cache when it or any
# engine kernel it calls changes (before any kernel is loaded from the cache)
