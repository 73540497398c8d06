"""The batch kernels: one decision per game, deal ends with rewards and automatic resets, buffers.

``Tables`` (built once per rules object by :class:`five_hundred_env.vector.BatchEngine`) map the
environment's compact action ids to legal-word bits and back, and hold the observation offsets.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from five_hundred_env.vector._cache import announce_compile
from five_hundred_env.vector._encode import mask_kind, write_mask, write_obs, write_state
from five_hundred_env.vector._kernels import apply_word_bit, new_game, sample_word_bit, shuffle_deal, start_deal
from five_hundred_env.vector._layout import (
    F_ACTION_RNG,
    F_CONTRACT,
    F_CONTRACTOR,
    F_DEAL_RNG,
    F_DEALER,
    F_MADE,
    F_PHASE,
    F_SCORE_CHANGE,
    F_TO_ACT,
    F_WINNERS,
    MAX_SEATS,
    O_GAME_EPISODES,
    O_N,
    O_SIDES,
)
from five_hundred_env.vector._legal import DEAL_OVER, is_legal
from five_hundred_env.vector._score import end_of_game_deal, side_of

ZERO_SUM, SCORE, WIN = 0, 1, 2  # reward modes


@njit(cache=True)
def credit_deal(st: np.ndarray, b: int, o: np.ndarray, reward_mode: int, scale: float, win_shaping: float,
                rewards: np.ndarray, changes: np.ndarray, summary: np.ndarray) -> None:
    """Every seat's reward for the finished deal (scored by end_of_game_deal), in the AEC
    environment's arithmetic (float64, then float32): its side's result (Deal.zero_sum_result)
    ÷ scale, its side's score change ÷ scale, or (``WIN``) ``win_shaping`` × the zero-sum result ÷
    scale plus ±1 when the game ended; each side's score change, and the deal's (contract,
    contractor, made, winning sides) in ``summary``."""
    summary[b, 0] = st[b, F_CONTRACT]
    summary[b, 1] = st[b, F_CONTRACTOR]
    summary[b, 2] = st[b, F_MADE]
    winners = st[b, F_WINNERS]
    summary[b, 3] = winners
    n = o[O_N]
    k = o[O_SIDES]
    total = 0
    for side in range(MAX_SEATS):
        changes[b, side] = st[b, F_SCORE_CHANGE + side]
        total += st[b, F_SCORE_CHANGE + side]
    for seat in range(n):
        side = side_of(seat, o)
        change = st[b, F_SCORE_CHANGE + side]
        if reward_mode == SCORE:
            rewards[b, seat] = change / scale
        elif reward_mode == ZERO_SUM:
            rewards[b, seat] = (change - (total - change) / (k - 1)) / scale
        else:
            reward = win_shaping * (change - (total - change) / (k - 1)) / scale
            if winners:
                reward += 1.0 if winners >> side & 1 else -1.0
            rewards[b, seat] = reward


@njit(cache=True)
def next_deal(st: np.ndarray, b: int, o: np.ndarray, cards: np.ndarray) -> bool:
    """After a deal (scored by end_of_game_deal): the next deal of the game (the deal passes to
    the left), or a new episode.
    Returns whether an episode ended (every deal in ``"deal"`` episodes, a finished game else)."""
    if o[O_GAME_EPISODES] and st[b, F_WINNERS] == 0:
        shuffle_deal(st, b, o, (st[b, F_DEALER] + 1) % o[O_N], cards)
        return False
    new_game(st, b, o, cards)
    return True


@njit(cache=True)
def first_illegal(st: np.ndarray, actions: np.ndarray, universal_of_compact: np.ndarray,
                  word_bit: np.ndarray, word_kind: np.ndarray) -> int:
    """The first game whose action (compact id; negative = skip the game) is not legal, or -1."""
    for b in range(st.shape[0]):
        a = actions[b]
        if a < 0:
            continue
        if a >= universal_of_compact.shape[0] or st[b, F_PHASE] >= DEAL_OVER:
            return b
        u = universal_of_compact[a]
        if word_kind[u] != mask_kind(st[b, F_PHASE]) or not is_legal(st, b, word_bit[u]):
            return b
    return -1


@njit(cache=True)
def step_games(st: np.ndarray, o: np.ndarray, actions: np.ndarray, universal_of_compact: np.ndarray,
               word_bit: np.ndarray, compact_of_word: np.ndarray, off: np.ndarray, reward_mode: int,
               scale: float, win_shaping: float, seats: np.ndarray, masks: np.ndarray, obs: np.ndarray, rewards: np.ndarray,
               changes: np.ndarray, summary: np.ndarray, deal_done: np.ndarray, episode_done: np.ndarray,
               final_observer: np.ndarray, final_obs: np.ndarray, cards: np.ndarray) -> None:
    """Apply each game's (legal, already checked) action; games with a negative action are left as
    they are. A finished deal is credited and the next one dealt at once; then the acting seat,
    its mask and (if ``obs`` has rows) its observation are written. ``final_obs[b]`` receives
    seat ``final_observer[b]``'s view of a deal just finished (when both have rows)."""
    write_masks = masks.shape[0] > 0
    write_views = obs.shape[0] > 0
    write_final = final_obs.shape[0] > 0
    for b in range(st.shape[0]):
        rewards[b, :] = 0.0
        deal_done[b] = False
        episode_done[b] = False
        a = actions[b]
        if a < 0:
            continue
        apply_word_bit(st, b, o, word_bit[universal_of_compact[a]])
        if st[b, F_PHASE] == DEAL_OVER:
            if write_final and final_observer[b] >= 0:
                write_obs(st, b, o, final_observer[b], off, final_obs[b])
            end_of_game_deal(st, b, o)
            credit_deal(st, b, o, reward_mode, scale, win_shaping, rewards, changes, summary)
            deal_done[b] = True
            episode_done[b] = next_deal(st, b, o, cards)
        seats[b] = st[b, F_TO_ACT]
        if write_masks:
            write_mask(st, b, compact_of_word, masks[b])
        if write_views:
            write_obs(st, b, o, st[b, F_TO_ACT], off, obs[b])


@njit(cache=True)
def advance_games(st: np.ndarray, o: np.ndarray, actions: np.ndarray, universal_of_compact: np.ndarray,
                  word_bit: np.ndarray) -> None:
    """Apply each game's (legal, already checked) action, a negative one leaving the game as it
    is; a deal that ends stays at its end (not credited, no next deal)."""
    for b in range(st.shape[0]):
        if actions[b] >= 0:
            apply_word_bit(st, b, o, word_bit[universal_of_compact[actions[b]]])


@njit(cache=True)
def refresh(st: np.ndarray, o: np.ndarray, games: np.ndarray, compact_of_word: np.ndarray, off: np.ndarray,
            seats: np.ndarray, masks: np.ndarray, obs: np.ndarray) -> None:
    """Rewrite the acting seat, mask and observation of the given games."""
    for b in games:
        seats[b] = st[b, F_TO_ACT]
        if masks.shape[0] > 0:
            write_mask(st, b, compact_of_word, masks[b])
        if obs.shape[0] > 0:
            write_obs(st, b, o, st[b, F_TO_ACT], off, obs[b])


@njit(cache=True)
def new_games(st: np.ndarray, o: np.ndarray, cards: np.ndarray) -> None:
    """A new episode in every game."""
    for b in range(st.shape[0]):
        new_game(st, b, o, cards)


@njit(cache=True)
def load_deal(st: np.ndarray, b: int, o: np.ndarray, dealer: int) -> None:
    """Start game ``b``'s current deal over from the hands and kitty written into its row."""
    start_deal(st, b, o, dealer)


@njit(cache=True)
def load_deals(st: np.ndarray, games: np.ndarray, o: np.ndarray, dealers: np.ndarray) -> None:
    """Start the deal of each of ``games`` over from the hands and kitty written into its row, dealt
    by ``dealers[i]``."""
    for i in range(games.shape[0]):
        start_deal(st, games[i], o, dealers[i])


@njit(cache=True)
def replay(st: np.ndarray, b: int, o: np.ndarray, history: np.ndarray, word_bit: np.ndarray,
           word_kind: np.ndarray) -> int:
    """Apply the universal actions ``history`` to game ``b`` in order: the index of the first one
    that is not legal there (the rest not applied), or -1."""
    for i in range(history.shape[0]):
        u = history[i]
        if (st[b, F_PHASE] >= DEAL_OVER or word_kind[u] != mask_kind(st[b, F_PHASE])
                or not is_legal(st, b, word_bit[u])):
            return i
        apply_word_bit(st, b, o, word_bit[u])
    return -1


@njit(cache=True)
def load_branches(st: np.ndarray, o: np.ndarray, dealers: np.ndarray, histories: np.ndarray, lengths: np.ndarray,
                  actions: np.ndarray, word_bit: np.ndarray, word_kind: np.ndarray) -> int:
    """World ``w`` into games ``w·a … w·a+a-1`` (``a = len(actions)``), then ``actions[i]`` in game
    ``w·a+i``: the world's deal (its hands and kitty written into game ``w·a``'s row) started with
    dealer ``dealers[w]`` and ``histories[w, :lengths[w]]`` replayed in game ``w·a``, its row copied
    to the other games (each keeping its own random streams). The first game whose history or
    action is not legal (the rest not loaded), or -1."""
    a = actions.shape[0]
    for w in range(dealers.shape[0]):
        first = w * a
        start_deal(st, first, o, dealers[w])
        if replay(st, first, o, histories[w, :lengths[w]], word_bit, word_kind) >= 0:
            return first
        for g in range(first + 1, first + a):
            deal_rng, action_rng = st[g, F_DEAL_RNG], st[g, F_ACTION_RNG]
            st[g] = st[first]
            st[g, F_DEAL_RNG], st[g, F_ACTION_RNG] = deal_rng, action_rng
        for i in range(a):
            if replay(st, first + i, o, actions[i:i + 1], word_bit, word_kind) >= 0:
                return first + i
    return -1


@njit(cache=True)
def sample_actions(st: np.ndarray, compact_of_word: np.ndarray, out: np.ndarray) -> None:
    """A uniformly random legal compact action for every game (random legal play)."""
    for b in range(st.shape[0]):
        bit = sample_word_bit(st, b)
        out[b] = compact_of_word[mask_kind(st[b, F_PHASE]), bit] if bit >= 0 else -1


@njit(cache=True)
def observe_games(st: np.ndarray, o: np.ndarray, observers: np.ndarray, off: np.ndarray, out: np.ndarray) -> None:
    """Each game's observation from seat ``observers[b]``."""
    for b in range(st.shape[0]):
        write_obs(st, b, o, observers[b], off, out[b])


@njit(cache=True)
def states(st: np.ndarray, o: np.ndarray, observers: np.ndarray, off: np.ndarray, out: np.ndarray) -> None:
    """Each game's global state (the centralised critic's input), oriented to seat ``observers[b]``."""
    for b in range(st.shape[0]):
        write_state(st, b, o, observers[b], off, out[b])


announce_compile(step_games._cache._cache_path)  # before any kernel is loaded from the cache
