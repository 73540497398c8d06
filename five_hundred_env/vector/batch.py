"""The batched engine: ``B`` games of Five Hundred as arrays, one decision per game per step.

The state of every game is one row of an ``int64`` array (:mod:`._layout`); the rules run in
numba kernels that mirror :class:`five_hundred_env.engine.Deal` and ``Game`` line by line.
After every step the acting seat, its action mask and its observation (the AEC environment's
``observe(agent)`` for that seat, byte for byte) are written into preallocated buffers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from five_hundred_env.actions import NUM_UNIVERSAL_ACTIONS, ActionTable
from five_hundred_env.cards import KERNEL_MASK_BITS, kernel_card_ids
from five_hundred_env.engine import Deal, IllegalActionError, parse_deal
from five_hundred_env.env import check_seed, is_finite_number
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules, make_rules
from five_hundred_env.vector import _step
from five_hundred_env.vector._actions import action_word_tables
from five_hundred_env.vector._deals import check_side_rows, check_sides, deal_masks
from five_hundred_env.vector._layout import (
    F_ACTION_RNG,
    F_DEAL_RNG,
    F_DEALT,
    F_KITTY,
    F_MADE,
    F_PHASE,
    F_SCORE_CHANGE,
    F_SCORES,
    F_START_SCORES,
    F_THROWN_IN,
    F_WINNERS,
    MAX_SEATS,
    NUM_FIELDS,
    kernel_mask,
    obs_offsets,
    rule_options,
)
from five_hundred_env.vector._legal import DEAL_OVER
from five_hundred_env.vector._score import end_of_game_deal, team_sides

EPISODE_MODES = ("deal", "game")
REWARD_MODES = ("zero_sum", "score", "win")
NO_ROWS_INT8 = np.zeros((0, 0), dtype=np.int8)


def output_buffer(out: np.ndarray | None, shape: tuple[int, ...], dtype: type, name: str) -> np.ndarray:
    """``out`` checked to be a writable C-contiguous array of this shape and dtype (the kernels
    write without bounds checks), or a fresh one when ``out`` is None."""
    if out is None:
        return np.zeros(shape, dtype=dtype)
    if (not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != dtype
            or not out.flags.c_contiguous or not out.flags.writeable):
        got = f"{out.shape} {out.dtype}" if isinstance(out, np.ndarray) else type(out).__name__
        raise ValueError(f"{name} must be a writable C-contiguous {np.dtype(dtype)} array of shape {shape}, got {got}")
    return out


def _write_scores(row: np.ndarray, sides: list[int]) -> None:
    """A game's scores per side, now and at the start of its episodes, into its state row."""
    row[F_SCORES:F_SCORES + MAX_SEATS] = 0
    row[F_SCORES:F_SCORES + len(sides)] = sides
    row[F_START_SCORES:F_START_SCORES + MAX_SEATS] = row[F_SCORES:F_SCORES + MAX_SEATS]


class VectorStep(NamedTuple):
    """What one batched step gives (views of the engine's buffers, overwritten by the next step).

    ``seat[b]`` is the seat to act in game ``b``, ``obs[b]``/``mask[b]`` its observation and mask;
    ``rewards[b, s]`` is seat ``s``'s reward for a deal of game ``b`` that ended in this step
    (0 otherwise); ``deal_done[b]`` says a deal ended, ``episode_done[b]`` that the episode
    ended (every deal in ``"deal"`` episodes, a finished game in ``"game"`` episodes). Games
    whose deal ended have been reset already: ``seat``, ``obs`` and ``mask`` are the next deal's.
    """

    seat: np.ndarray
    obs: np.ndarray
    mask: np.ndarray
    rewards: np.ndarray
    deal_done: np.ndarray
    episode_done: np.ndarray


VECTOR_PRESETS = ("australian", "italian_3p", "french_46", "two_handed", "five_handed", "six_handed")
"""The presets the kernels play: every preset (docs/rules.md §2, §10)."""


class KernelArrays(NamedTuple):
    """What compiled code outside this package (a policy playing deals out, e.g.
    :func:`agents.heuristic.compiled.play_out`) passes to the kernels: the games' state rows
    (:mod:`._layout`), the rule options, the observation offsets. Shared, not copied: the kernels
    change the games in place; call :meth:`BatchEngine.refresh` afterwards."""

    state: np.ndarray
    options: np.ndarray
    obs_offsets: np.ndarray


class BatchEngine:
    """``num_games`` games stepped together, each with its own seeded deals (every preset and option).

    ``episode="deal"``: every deal is an episode (a random dealer each time, the starting scores
    shown); ``"game"``: games to the target of §9, the deal passing to the left. Rewards are each
    seat's side's result when a deal ends: ``"zero_sum"`` (``Deal.zero_sum_result``) or
    ``"score"`` (the side's score change), divided by ``reward_scale``, or with ``"game"`` episodes
    ``"win"`` (+1 to the winners of a game and −1 to the others when it ends, plus ``win_shaping``
    × the ``"zero_sum"`` reward of every deal) — as the AEC environment.
    ``observations=False`` skips writing observations in :meth:`step` (masks only, faster).
    """

    def __init__(
        self,
        rules: str | Rules = "australian",
        num_games: int = 1024,
        *,
        episode: str = "deal",
        reward: str = "zero_sum",
        reward_scale: float = 100.0,
        win_shaping: float = 0.0,
        seed: int | None = None,
        observations: bool = True,
        **options: Any,
    ) -> None:
        self.rules = make_rules(rules, **options) if options or isinstance(rules, str) else rules
        if not isinstance(self.rules, Rules):
            raise ValueError(f"rules must be a preset name or a Rules object, got {rules!r}")
        if not isinstance(num_games, int) or isinstance(num_games, bool) or num_games < 1:
            raise ValueError(f"num_games must be a positive integer, got {num_games!r}")
        for name, value, choices in (("episode", episode, EPISODE_MODES), ("reward", reward, REWARD_MODES)):
            if value not in choices:
                raise ValueError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
        if not is_finite_number(reward_scale) or reward_scale <= 0:
            raise ValueError(f"reward_scale must be a positive finite number, got {reward_scale!r}")
        if reward == "win" and episode != "game":
            raise ValueError("reward='win' needs episode='game' (a deal has no winner)")
        if not is_finite_number(win_shaping) or (win_shaping != 0 and reward != "win"):
            raise ValueError(f"win_shaping must be a finite number, and non-zero only with reward='win'; got {win_shaping!r}")
        rules = self.rules
        self.num_games = num_games
        self.episode = episode
        self.num_players = rules.num_players
        self.actions = ActionTable(rules)
        self.encoder = ObservationEncoder(rules)
        self.num_actions = len(self.actions)
        self.obs_size = self.encoder.size
        self.state_size = self.encoder.state_size
        self._opts = rule_options(rules, episode == "game")
        self._reward_mode = {"zero_sum": _step.ZERO_SUM, "score": _step.SCORE, "win": _step.WIN}[reward]
        self._scale = float(reward_scale)
        self._win_shaping = float(win_shaping)
        self._card_bits = kernel_card_ids(rules.deck)
        self._bit_of_card = np.array(self._card_bits, dtype=np.int64)
        self._universal, self._word_bit, self._word_kind, self._compact_of_word = action_word_tables(self.actions)
        self._offsets = obs_offsets(self.encoder)
        self._cards = np.zeros(KERNEL_MASK_BITS, dtype=np.int64)
        self._state = np.zeros((num_games, NUM_FIELDS), dtype=np.int64)
        b, n = num_games, self.num_players
        self.seat = np.zeros(b, dtype=np.int64)
        """The seat to act in each game."""
        self.masks = np.zeros((b, self.num_actions), dtype=np.int8)
        """The acting seat's action mask in each game (compact ids of :attr:`actions`)."""
        self.obs = np.zeros((b, self.obs_size), dtype=np.int8)
        """The acting seat's observation in each game (not written with ``observations=False``)."""
        self.rewards = np.zeros((b, n), dtype=np.float32)
        self.score_change = np.zeros((b, MAX_SEATS), dtype=np.int64)
        """Each side's score change in the last deal that ended in each game (columns ≥ sides are 0)."""
        self.last_deal = np.full((b, 4), -1, dtype=np.int64)
        """The last deal that ended in each game: its contract (bid id; -1 if thrown in), contractor
        (-1 if thrown in), whether the contract was made (0/1), and the sides that won the game
        with it (a bit set; 0 while the game goes on)."""
        self.deal_done = np.zeros(b, dtype=np.bool_)
        self.episode_done = np.zeros(b, dtype=np.bool_)
        self._obs_out = self.obs if observations else NO_ROWS_INT8
        self._no_final = np.zeros(0, dtype=np.int64)
        self._seat_zero = np.zeros(b, dtype=np.int64)
        self._seeded = False
        self.reset(seed)

    # -- episodes -----------------------------------------------------------------------------------
    def reset(self, seed: int | None = None) -> VectorStep:
        """A new episode in every game. ``seed`` fixes every game's deals and :meth:`sample_actions`;
        a later ``reset()`` without a seed continues the same random streams (as the AEC env)."""
        if seed is not None or not self._seeded:
            entropy = None if seed is None else check_seed(seed)
            streams = np.random.SeedSequence(entropy).generate_state(2 * self.num_games, dtype=np.uint64)
            self._state[:, F_DEAL_RNG] = streams[0::2].view(np.int64)
            self._state[:, F_ACTION_RNG] = streams[1::2].view(np.int64)
            self._seeded = True
        _step.new_games(self._state, self._opts, self._cards)
        self._refresh(np.arange(self.num_games))
        self.rewards[:] = 0
        self.deal_done[:] = False
        self.episode_done[:] = False
        return self._result()

    def set_deal(
        self,
        game: int,
        hands: Sequence[Sequence[str]],
        kitty: Sequence[str],
        dealer: int = 0,
        scores: Sequence[int] | None = None,
    ) -> None:
        """Replace game ``game``'s current deal by an explicit one (card names, as
        ``Deal.from_cards``); ``scores`` (per seat or per side) also sets the game's scores and
        the scores its episodes start from. Bad input raises ``ValueError`` and changes nothing."""
        self._check_game(game)
        hand_masks, kitty_mask = parse_deal(self.rules, hands, kitty, dealer)
        sides = check_sides(self.rules, scores) if scores is not None else None
        row = self._state[game]
        self._write_dealt(row, hand_masks, kitty_mask)
        if sides is not None:
            _write_scores(row, sides)
        _step.load_deal(self._state, int(game), self._opts, dealer)
        self._refresh(np.array([game]))

    def load_deals(self, games: np.ndarray, cards: np.ndarray, dealers: np.ndarray,
                   scores: np.ndarray | None = None) -> None:
        """Explicit deals in many games at once, by universal card id: ``cards[i]`` holds game
        ``games[i]``'s hands in seat order (``hand_size`` ids each), then its kitty (``kitty_size``
        ids; a ``two_handed`` dead hand is the rest of the pack), and ``dealers[i]`` is its dealer.
        ``scores[i]`` (per side), if given, also sets the game's scores and those its episodes start
        from, as :meth:`set_deal`, which this is for many games without card names: the records of
        :mod:`five_hundred_env.dataset` hold their deals this way. A repeated game, a card id outside
        the pack or dealt twice, a dealer or a score out of range raises ``ValueError`` naming the
        first game at fault, and changes nothing."""
        games = self._check_games(games)
        rules = self.rules
        if len(np.unique(games)) != len(games):
            raise ValueError(f"games must be distinct, got {games.tolist()}")
        hands, kitty, dealers = deal_masks(rules, self._bit_of_card, games, cards, dealers)
        sides = None if scores is None else check_side_rows(rules, scores, games)
        state = self._state
        state[games, F_DEALT:F_DEALT + MAX_SEATS] = 0
        state[games, F_DEALT:F_DEALT + rules.num_players] = hands.view(np.int64)
        state[games, F_KITTY] = kitty.view(np.int64)
        if sides is not None:
            for first in (F_SCORES, F_START_SCORES):
                state[games, first:first + MAX_SEATS] = 0
                state[games, first:first + rules.num_sides] = sides
        _step.load_deals(state, games.astype(np.int64), self._opts, dealers)
        self._refresh(games)

    def _write_dealt(self, row: np.ndarray, hands: Sequence[int], kitty: int) -> None:
        """A deal's hands and kitty (universal card masks) into a state row, as kernel masks."""
        row[F_DEALT:F_DEALT + MAX_SEATS] = 0
        row[F_DEALT:F_DEALT + len(hands)] = [kernel_mask(self._card_bits, hand) for hand in hands]
        row[F_KITTY] = kernel_mask(self._card_bits, kitty)

    def load_position(self, game: int, deal: Deal, scores: Sequence[int] | None = None) -> None:
        """Put a position of the scalar engine into game ``game``: ``deal`` as dealt, with every
        action of its history applied (a deal in progress after any actions, or a sampled world
        of the search: every hand known). ``scores`` (per seat or per side) also sets the game's
        scores, as :meth:`set_deal`. A deal of other rules, or a history this engine finds
        illegal, raises ``ValueError`` and changes nothing."""
        self._check_game(game)
        if not isinstance(deal, Deal) or deal.rules != self.rules:
            raise ValueError(f"deal must be a Deal of this engine's rules ({self.rules.describe()}), got {deal!r}")
        sides = check_sides(self.rules, scores) if scores is not None else None
        history = np.array(deal.history, dtype=np.int64)
        if ((history < 0) | (history >= NUM_UNIVERSAL_ACTIONS)).any():
            raise ValueError(f"the deal's history holds ids that are no actions: {history.tolist()}")
        row = self._state[game]
        saved = row.copy()
        self._write_dealt(row, deal.dealt, deal.kitty)
        if sides is not None:
            _write_scores(row, sides)
        _step.load_deal(self._state, int(game), self._opts, deal.dealer)
        bad = _step.replay(self._state, int(game), self._opts, history, self._word_bit, self._word_kind)
        if bad >= 0:
            row[:] = saved
            raise ValueError(f"action {bad} of the deal's history ({history[bad]}) is not legal in game {game}")
        self._refresh(np.array([game]))

    def load_branches(self, deals: Sequence[Deal], actions: Sequence[int], scores: Sequence[int] | None = None) -> None:
        """Put ``deals[w]`` followed by ``actions[i]`` (a universal id legal in every deal) into game
        ``w * len(actions) + i``, as :meth:`load_position` of each branch would, but loading each
        deal once, every deal in one compiled call: the worlds of a search and their candidates.
        A foreign deal, too few games or an illegal action raises ``ValueError``; after an illegal
        one the games are left in an unspecified state (load them again)."""
        width, count = len(actions), len(deals) * len(actions)
        if width == 0 or not deals or count > self.num_games:
            raise ValueError(f"give at least one deal and one action, for at most {self.num_games} games: "
                             f"{len(deals)} deals, {width} actions")
        sides = check_sides(self.rules, scores) if scores is not None else None
        for deal in deals:
            if not isinstance(deal, Deal) or deal.rules != self.rules:
                raise ValueError(f"deals must be Deals of this engine's rules ({self.rules.describe()}), got {deal!r}")
        lengths = np.array([len(deal.history) for deal in deals], dtype=np.int64)
        histories = np.zeros((len(deals), int(lengths.max())), dtype=np.int64)
        for w, deal in enumerate(deals):
            histories[w, :lengths[w]] = deal.history
            row = self._state[w * width]
            self._write_dealt(row, deal.dealt, deal.kitty)
            if sides is not None:
                _write_scores(row, sides)
        steps = np.array(actions, dtype=np.int64)
        for ids in (histories, steps):  # the compiled replay indexes its tables with them unchecked
            if ((ids < 0) | (ids >= NUM_UNIVERSAL_ACTIONS)).any():
                raise ValueError(f"the deals' histories and the actions must be universal action ids, got {ids.tolist()}")
        dealers = np.array([deal.dealer for deal in deals], dtype=np.int64)
        bad = _step.load_branches(self._state, self._opts, dealers, histories, lengths, steps, self._word_bit,
                                  self._word_kind)
        if bad >= 0:
            raise ValueError(f"the history of deal {bad // width} or action {actions[bad % width]} is not legal "
                             f"in game {bad}")
        self._refresh(np.arange(count))

    def kernel_arrays(self) -> KernelArrays:
        """The arrays compiled policies step these games with (see :class:`KernelArrays`)."""
        return KernelArrays(self._state, self._opts, self._offsets)

    def refresh(self, games: np.ndarray | None = None) -> None:
        """Rewrite the acting seat, mask and observation of ``games`` (every game if None) from
        their state: after compiled code changed them (:meth:`kernel_arrays`)."""
        self._refresh(np.arange(self.num_games) if games is None else self._check_games(games))

    def end_game_deals(self, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Score the finished deals of ``games`` into their games (§9, as an ``episode="game"`` engine
        does at a deal's end) and return, for each of ``games``, whether its deal was thrown in and the
        sides that won the game as a bit set (0 while it goes on): for playouts of a game's deal on an
        ``episode="deal"`` engine. A deal that is not over raises ``ValueError`` and changes nothing."""
        games = self._finished_games(games)
        for game in games.tolist():
            self._state[game, F_WINNERS] = 0
            end_of_game_deal(self._state, game, self._opts)
        return self._state[games, F_THROWN_IN].astype(bool), self._state[games, F_WINNERS].copy()

    def contract_outcomes(self, games: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For the finished deals of ``games``: whether each was thrown in, its contracting team's sides
        as a bit set (the contractor's, and in a trick contract a five-handed partner's, §10.6) and
        whether the contract was made. A deal that is not over raises ``ValueError``."""
        games = self._finished_games(games)
        team = np.array([team_sides(self._state, game, self._opts) for game in games.tolist()], dtype=np.int64)
        return self._state[games, F_THROWN_IN].astype(bool), team, self._state[games, F_MADE].astype(bool)

    def deal_changes(self, games: np.ndarray) -> np.ndarray:
        """Each side's score change in the finished deals of ``games`` (``[len(games), sides]``; 0 for
        a deal thrown in), before it is credited to the game. A deal that is not over raises ``ValueError``."""
        games = self._finished_games(games)
        return self._state[games, F_SCORE_CHANGE:F_SCORE_CHANGE + self.rules.num_sides].copy()

    def deals_over(self, games: np.ndarray) -> np.ndarray:
        """Whether the deal of each of ``games`` is over (:meth:`advance` leaves it so)."""
        return self._state[self._check_games(games), F_PHASE] == DEAL_OVER

    def _finished_games(self, games: np.ndarray) -> np.ndarray:
        games = self._check_games(games)
        if (self._state[games, F_PHASE] != DEAL_OVER).any():
            raise ValueError(f"the deals of games {games[self._state[games, F_PHASE] != DEAL_OVER].tolist()} are not over")
        return games

    def _check_games(self, games: np.ndarray) -> np.ndarray:
        games = np.asarray(games)
        if (games.ndim != 1 or not np.issubdtype(games.dtype, np.integer)
                or ((games < 0) | (games >= self.num_games)).any()):
            raise ValueError(f"games must be game indices 0..{self.num_games - 1}, got {games!r}")
        return games

    def set_scores(self, game: int, scores: Sequence[int]) -> None:
        """Set game ``game``'s scores (per seat or per side) and the scores its episodes start
        from, keeping its current deal: the acting seat's observation shows them at once (a
        trainer draws each deal's starting scores this way). Scores that would end the game at
        once (§9) raise ``ValueError`` and change nothing."""
        self._check_game(game)
        _write_scores(self._state[game], check_sides(self.rules, scores))
        self._refresh(np.array([game]))

    # -- stepping -----------------------------------------------------------------------------------
    def step(self, actions: np.ndarray, final_observer: np.ndarray | None = None,
             final_obs: np.ndarray | None = None) -> VectorStep:
        """One decision in every game: ``actions[b]`` is the compact action id of game ``b``'s
        acting seat, or negative to leave game ``b`` as it is. An illegal action raises
        :class:`IllegalActionError` naming the game, and no game changes. ``final_obs[b]``, if
        given, receives the view of seat ``final_observer[b]`` of a deal that ends in this step."""
        actions = self._check_actions(actions)
        if final_obs is None or final_observer is None:
            final_observer, final_obs = self._no_final, NO_ROWS_INT8
        else:
            final_observer = self._check_seats(final_observer, "final_observer")
            final_obs = output_buffer(final_obs, (self.num_games, self.obs_size), np.int8, "final_obs")
        _step.step_games(self._state, self._opts, actions, self._universal, self._word_bit, self._compact_of_word,
                         self._offsets, self._reward_mode, self._scale, self._win_shaping, self.seat, self.masks,
                         self._obs_out, self.rewards, self.score_change, self.last_deal, self.deal_done,
                         self.episode_done, final_observer, final_obs, self._cards)
        return self._result()

    def advance(self, actions: np.ndarray) -> None:
        """One decision in each game, as :meth:`step` (negative: leave the game), except that a deal
        that ends stays at its end, not credited and no next deal dealt: the playouts of a search,
        which read :meth:`contract_outcomes` and :meth:`deal_changes` after. An illegal action (or
        one in a finished deal) raises :class:`IllegalActionError` and no game changes."""
        actions = self._check_actions(actions)
        _step.advance_games(self._state, self._opts, actions, self._universal, self._word_bit)
        self._refresh(np.flatnonzero(actions >= 0))

    def _check_actions(self, actions: Any) -> np.ndarray:
        actions = np.asarray(actions)
        if actions.shape != (self.num_games,) or not np.issubdtype(actions.dtype, np.integer):
            raise ValueError(f"actions must be {self.num_games} integer action ids, got shape {actions.shape} "
                             f"of {actions.dtype}")
        if np.issubdtype(actions.dtype, np.unsignedinteger) and actions.size and actions.max() > np.iinfo(np.int64).max:
            game = int(np.argmax(actions > np.iinfo(np.int64).max))
            raise ValueError(f"game {game}: action {int(actions[game])} is out of range (action ids are "
                             f"0..{self.num_actions - 1}, or negative to leave a game)")
        actions = actions.astype(np.int64, copy=False)
        bad = _step.first_illegal(self._state, actions, self._universal, self._word_bit, self._word_kind)
        if bad >= 0:
            a = int(actions[bad])
            name = self.actions.to_str(a) if a < self.num_actions else "out of range"
            legal = ", ".join(f"{c} ({self.actions.to_str(c)})" for c in self.legal_actions(bad))
            raise IllegalActionError(f"game {bad}: action {a} ({name}) is not legal for seat {self.seat[bad]}; "
                                     f"legal actions: {legal}")
        return actions

    def sample_actions(self, out: np.ndarray | None = None) -> np.ndarray:
        """A uniformly random legal action for every game (from each game's seeded stream)."""
        out = output_buffer(out, (self.num_games,), np.int64, "out")
        _step.sample_actions(self._state, self._compact_of_word, out)
        return out

    # -- views ----------------------------------------------------------------------------------------
    def legal_actions(self, game: int) -> list[int]:
        """The legal compact action ids of game ``game``'s acting seat."""
        self._check_game(game)
        return np.flatnonzero(self.masks[game]).tolist()

    def observe(self, seats: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Every game's observation from ``seats[b]`` (``[B, obs_size]`` ``int8``), into ``out``."""
        seats = self._check_seats(seats, "seats")
        out = output_buffer(out, (self.num_games, self.obs_size), np.int8, "out")
        _step.observe_games(self._state, self._opts, seats, self._offsets, out)
        return out

    def state(self, out: np.ndarray | None = None, *, seats: np.ndarray | None = None) -> np.ndarray:
        """Every game's global state (``[B, state_size]`` ``int8``), into ``out``: ``env.state()``
        (every hand, the kitty, the discards, then an observation with the true phase, oriented to
        seat 0), or with ``seats`` game ``b``'s ``env.state(agent)`` for seat ``seats[b]``."""
        observers = self._seat_zero if seats is None else self._check_seats(seats, "seats")
        out = output_buffer(out, (self.num_games, self.state_size), np.int8, "out")
        _step.states(self._state, self._opts, observers, self._offsets, out)
        return out

    def _check_game(self, game: Any) -> None:
        if not isinstance(game, (int, np.integer)) or isinstance(game, bool) or not 0 <= game < self.num_games:
            raise ValueError(f"game must be an index 0..{self.num_games - 1}, got {game!r}")

    def _check_seats(self, seats: Any, name: str) -> np.ndarray:
        seats = np.asarray(seats)
        if (seats.shape != (self.num_games,) or not np.issubdtype(seats.dtype, np.integer)
                or ((seats < 0) | (seats >= self.num_players)).any()):
            raise ValueError(f"{name} must be {self.num_games} seats 0..{self.num_players - 1}")
        return seats.astype(np.int64)

    @property
    def scores(self) -> np.ndarray:
        """Each game's score per side (a copy, ``[B, sides]``)."""
        return self._state[:, F_SCORES:F_SCORES + self.rules.num_sides].copy()

    def _refresh(self, games: np.ndarray) -> None:
        _step.refresh(self._state, self._opts, games.astype(np.int64), self._compact_of_word, self._offsets,
                      self.seat, self.masks, self._obs_out)

    def _result(self) -> VectorStep:
        return VectorStep(self.seat, self.obs, self.masks, self.rewards, self.deal_done, self.episode_done)
