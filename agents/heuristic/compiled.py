"""The heuristic compiled: :class:`~agents.heuristic.HeuristicAgent`'s decisions over a batch, in numba.

:class:`HeuristicPolicy` chooses, for every row of a batch of observations and action masks (the
AEC environment's, or a :class:`~five_hundred_env.vector.BatchEngine`'s), exactly the action
``HeuristicAgent.act`` chooses, with no Python per decision (the kernels: the package :mod:`._kernels`).
:func:`play_out` plays every game of a batched engine to the end of its deal with the heuristic
(or at random) inside one kernel call, for search and data generation.

Needs numba (the ``vector`` extra), as :mod:`five_hundred_env.vector`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from agents.heuristic._kernels import agent as kernels
from agents.heuristic._kernels import view as k
from agents.heuristic._kernels.evaluation import ESTIMATE_CACHE_BITS
from agents.heuristic.bidding import _contract_scores
from agents.heuristic.calibration import calibration_for
from agents.heuristic.view import card_tables
from five_hundred_env.actions import (
    FIRST_BID,
    FIRST_CARD_ACTION,
    FIRST_JOKER_LEAD,
    FIRST_NOMINATE,
    FIRST_PARTNER,
    OPEN_MISERE,
    ActionTable,
    action_card,
    is_card_action,
    is_joker_lead,
    is_nomination,
)
from five_hundred_env.cards import KERNEL_MASK_BITS, NUM_CARD_IDS, kernel_card_ids, mask_to_cards
from five_hundred_env.engine.bidding import OPEN_MISERE_RANKS
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import PRESETS, Rules, make_rules
from five_hundred_env.vector import BatchEngine
from five_hundred_env.vector._layout import OBS_SLICES
from five_hundred_env.vector.batch import output_buffer

POLICIES = ("heuristic", "random")
COMPILED_PRESETS = tuple(PRESETS)
"""The presets whose decisions the differential tests hold equal to HeuristicAgent's (any options): every one."""


class PolicyTables(NamedTuple):
    """The numbers the kernels decide with, built once per rules object (see :mod:`._kernels`), and
    their cache of hand estimates (filled as they decide)."""

    made_for: Rules  # the rules these tables are of
    cards: np.ndarray  # ct: the card tables of each trump context
    numbers: np.ndarray  # ri: the rules' integers
    fit: np.ndarray  # rf: the calibration's floats
    contracts: np.ndarray  # cs: each contract's §8 scores
    estimate_keys: np.ndarray  # a cache of recent hands' estimates (a pure function of the hand):
    estimates: np.ndarray  # the hand of each slot, and its estimates


def policy_card_bits(deck: int) -> tuple[int, ...]:
    """Each universal card id's bit in the kernels' card masks for the pack ``deck`` (-1 for an id
    not in it): its id where every id fits in one ``int64`` (as :func:`~five_hundred_env.cards.kernel_card_ids`),
    else (``six_handed``, ids to 65) its place in the pack's id order. The bits keep the ids' order,
    because HeuristicAgent breaks ties between equal cards by their ids (the first in id order)."""
    if deck < 1 << KERNEL_MASK_BITS:
        return kernel_card_ids(deck)
    bits, place = [], 0
    for c in range(NUM_CARD_IDS):
        bits.append(place if deck >> c & 1 else -1)
        place += deck >> c & 1
    return tuple(bits)


def _card_runs(bits: tuple[int, ...], width: int) -> list[tuple[int, int, int]]:
    """The runs (first id, how many ids, first bit) of a ``width``-wide card slice whose bits follow
    on (an id outside the pack, always 0 in a slice, continues a run)."""
    runs: list[list[int]] = []
    for c in range(width):
        if bits[c] < 0:
            continue
        if runs and runs[-1][2] - runs[-1][0] == bits[c] - c and c - runs[-1][0] < KERNEL_MASK_BITS - 1:
            runs[-1][1] = c - runs[-1][0] + 1
        else:
            runs.append([c, 1, bits[c]])
    return [(first, count, bit) for first, count, bit in runs]


def _bit_mask(cards: int, bits: tuple[int, ...]) -> int:
    """A mask of universal card ids as a mask of card bits."""
    return sum(1 << bits[c] for c in mask_to_cards(cards))


def _scaled(strength: float) -> int:
    """A strength or key as the kernels table it: an int, times STRENGTH_SCALE."""
    scaled = strength * k.STRENGTH_SCALE
    if scaled != int(scaled):
        raise ValueError(f"a card strength of {strength} is no multiple of 1/{k.STRENGTH_SCALE}")
    return int(scaled)


def _card_columns(rules: Rules, bits: tuple[int, ...]) -> np.ndarray:
    """ct: the card tables of each trump context (:func:`~agents.heuristic.view.card_tables`) by card bit."""
    tables = card_tables(rules)
    ct = np.zeros((len(tables), k.NUM_CT), dtype=np.int64)
    for ctx, t in enumerate(tables):
        for c in mask_to_cards(rules.deck):
            b = bits[c]
            ct[ctx, k.C_EFF + b] = t.eff[c]
            ct[ctx, k.C_STRENGTH + b] = _scaled(t.strength[c])
            ct[ctx, k.C_HIGHER + b] = _bit_mask(t.higher[c], bits)
            ct[ctx, k.C_LOWER + b] = _bit_mask(t.lower[c], bits)
            for led in range(4):
                ct[ctx, k.C_KEY + k.NUM_BITS * led + b] = _scaled(t.key[led][c])
        for s in range(5):
            ct[ctx, k.C_SUIT + s] = _bit_mask(t.suit[s], bits)
            order = [bits[c] for c in t.top_down[s]]
            if len(order) > k.TD_WIDTH:
                raise ValueError(f"a suit of {len(order)} cards is longer than the kernels' tables ({k.TD_WIDTH})")
            ct[ctx, k.C_TOP_DOWN + k.TD_WIDTH * s:k.C_TOP_DOWN + k.TD_WIDTH * s + len(order)] = order
            ct[ctx, k.C_TD_LEN + s] = len(order)
    return ct


def _rule_numbers(rules: Rules, bits: tuple[int, ...]) -> np.ndarray:
    """ri: the rules' integers (and where the five-player slices and each card slice's runs lie)."""
    encoder = ObservationEncoder(rules)
    ri = np.zeros(k.NUM_RI, dtype=np.int64)
    ri[k.R_N] = rules.num_players
    ri[k.R_MATES] = sum(1 << m for m in rules.partners_of(0))
    ri[k.R_DECK] = _bit_mask(rules.deck, bits)
    ri[k.R_HAND_SIZE] = rules.hand_size
    ri[k.R_KITTY] = rules.kitty_size
    ri[k.R_NOMINATE_NT] = rules.joker_nomination == "nt_and_misere"
    ri[k.R_NO_MISERE] = rules.misere == "none" and rules.open_misere == "none"
    ri[k.R_LOSING] = rules.losing_score
    ri[k.R_TARGET] = rules.target
    ri[k.R_OPEN_RANK] = OPEN_MISERE_RANKS.get(rules.open_misere, -1)
    ri[k.R_PHASE_WIDTH] = encoder.layout["phase"][1][0]
    ri[k.R_WIDTH] = rules.card_slots
    ri[k.R_CALL] = rules.has_partner_call
    ri[k.R_CALL_SEAT] = rules.has_partner_call and rules.partner_call == "seat"
    if rules.has_partner_call:
        ri[k.R_PARTNER_AT] = encoder.layout["partner"][0]
        ri[k.R_SEAT_AT] = encoder.layout["seat"][0]
    runs = [] if rules.deck < 1 << KERNEL_MASK_BITS else _card_runs(bits, rules.card_slots)  # ids are bits
    if len(runs) > k.MAX_RUNS:
        raise ValueError(f"the pack's card slices read in {len(runs)} runs, more than the kernels' {k.MAX_RUNS}")
    ri[k.R_NUM_RUNS] = len(runs)
    for i, run in enumerate(runs):
        ri[k.R_RUNS + 3 * i:k.R_RUNS + 3 * i + 3] = run
    return ri


def policy_tables(rules: Rules) -> PolicyTables:
    """The kernels' tables for ``rules``: the same card tables, calibration and §8 scores the
    Python heuristic uses (:func:`~agents.heuristic.view.card_tables`, :mod:`.calibration`,
    :mod:`five_hundred_env.scoring`), by card bit (:func:`policy_card_bits`)."""
    bits = policy_card_bits(rules.deck)
    fit = calibration_for(rules.preset)
    rf = np.zeros(k.NUM_RF)
    rf[[k.K_SUIT_A, k.K_SUIT_B, k.K_SUIT_SIGMA]] = fit["suit"]
    rf[[k.K_NT_A, k.K_NT_B, k.K_NT_SIGMA]] = fit["nt"]
    rf[[k.K_MISERE_A, k.K_MISERE_B]] = fit["misere"]
    rf[[k.K_OPEN_MISERE_A, k.K_OPEN_MISERE_B]] = fit["open_misere"]
    for index, name in ((k.K_OWN_AVG, "own_avg"), (k.K_OWN_AVG_NT, "own_avg_nt"), (k.K_DEFENCE_AVG, "defence_avg"),
                        (k.K_DEFENCE_WEIGHT, "defence_weight"), (k.K_SUPPORT, "support"),
                        (k.K_OTHER_SUIT_HELP, "other_suit_help"), (k.K_PASS_PENALTY, "pass_penalty"),
                        (k.K_OPPONENT_STRAIN, "opponent_strain"), (k.K_MARGIN, "margin"), (k.K_GAME_END, "game_end")):
        rf[index] = fit[name]
    rf[k.K_SHARE] = 1.0 / (rules.num_sides - 1)
    cs = np.zeros((OPEN_MISERE + 1, 5), dtype=np.int64)
    for contract in range(FIRST_BID, OPEN_MISERE + 1):
        cs[contract] = _contract_scores(rules, contract)
    slots = 1 << ESTIMATE_CACHE_BITS
    return PolicyTables(rules, _card_columns(rules, bits), _rule_numbers(rules, bits), rf, cs,
                        np.zeros(slots, dtype=np.int64), np.zeros((slots, 11)))


def action_codes(actions: ActionTable, bits: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(kind, code) of each compact action in the kernels' terms (:func:`._kernels.agent.act_rows`),
    and the compact action of each (kind, code)."""
    kind = np.zeros(len(actions), dtype=np.int64)
    code = np.zeros(len(actions), dtype=np.int64)
    for a, u in enumerate(actions.universal):
        if u < FIRST_CARD_ACTION:
            kind[a], code[a] = 0, u
        elif is_card_action(u):
            kind[a], code[a] = 1, bits[action_card(u)]
        elif is_joker_lead(u):
            kind[a], code[a] = 1, k.LEAD_CHOICE + u - FIRST_JOKER_LEAD
        elif is_nomination(u):
            kind[a], code[a] = 2, u - FIRST_NOMINATE
        else:
            kind[a], code[a] = 3, u - FIRST_PARTNER
    compact_of_code = np.full((4, k.LEAD_CHOICE + 8), -1, dtype=np.int64)
    compact_of_code[kind, code] = np.arange(len(actions))
    return kind, code, compact_of_code


class HeuristicPolicy:
    """:class:`~agents.heuristic.HeuristicAgent` over a batch: the same decisions, compiled.

    ``act_batch(obs, mask)`` takes ``[B, obs_size]`` observations and ``[B, num_actions]``
    masks (each row the acting seat's, as ``env.observe`` or :class:`BatchEngine` give them)
    and returns the compact action of each row; :meth:`act_engine` does it for a batched
    engine's current decisions. Every preset and rule option (:data:`COMPILED_PRESETS`).
    """

    compiled = True

    def __init__(self, rules: Rules | str = "australian") -> None:
        self.rules = make_rules(rules) if isinstance(rules, str) else rules
        if not isinstance(self.rules, Rules):
            raise ValueError(f"rules must be a preset name or a Rules object, got {rules!r}")
        self.actions = ActionTable(self.rules)
        self.encoder = ObservationEncoder(self.rules)
        self.tables = policy_tables(self.rules)
        self._kind, self._code, self._compact_of_code = action_codes(self.actions, policy_card_bits(self.rules.deck))
        # the classic slices' offsets (the five-player slices after them: in the rules' numbers)
        self._offsets = np.array([self.encoder.layout[name][0] for name in OBS_SLICES] + [self.encoder.size])

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """The compact action ``HeuristicAgent.act`` chooses for every row (``int64``; -1 for a row
        whose mask is empty). Written into ``out`` when given."""
        obs = np.ascontiguousarray(obs, dtype=np.int8)
        mask = np.ascontiguousarray(mask, dtype=np.int8)
        if obs.ndim != 2 or obs.shape[1] != self.encoder.size:
            raise ValueError(f"obs must be [B, {self.encoder.size}] observations, got shape {obs.shape}")
        if mask.shape != (obs.shape[0], len(self.actions)):
            raise ValueError(f"mask must be [{obs.shape[0]}, {len(self.actions)}] action masks, got shape {mask.shape}")
        out = output_buffer(out, (obs.shape[0],), np.int64, "out")
        t = self.tables
        kernels.act_rows(obs, mask, self._kind, self._code, self._compact_of_code, t.cards, t.numbers, t.fit,
                         t.contracts, t.estimate_keys, t.estimates, self._offsets, out)
        if (out == -2).any():  # never seen: HeuristicAgent would fall back to a random legal action
            raise RuntimeError(f"the compiled heuristic chose an illegal action in row {int(np.argmax(out == -2))}")
        return out

    def act_engine(self, engine: BatchEngine, out: np.ndarray | None = None) -> np.ndarray:
        """The heuristic's action in every game of ``engine`` (built with ``observations=True``),
        for ``engine.step``: games whose deal is over get -1 (left as they are)."""
        self._check_engine(engine)
        return self.act_batch(engine.obs, engine.masks, out)

    def _check_engine(self, engine: BatchEngine) -> None:
        if not isinstance(engine, BatchEngine) or engine.rules != self.rules:
            raise ValueError(f"engine must be a BatchEngine of this policy's rules ({self.rules.describe()})")


def _bit_translations(deck: int) -> tuple[np.ndarray, np.ndarray]:
    """Each card's policy bit by its kernel bit in the batched engine (kernel_card_ids), and back."""
    policy_bit = np.zeros(KERNEL_MASK_BITS, dtype=np.int64)
    engine_bit = np.zeros(KERNEL_MASK_BITS, dtype=np.int64)
    for engine, policy in zip(kernel_card_ids(deck), policy_card_bits(deck), strict=True):
        if engine >= 0:
            policy_bit[engine], engine_bit[policy] = policy, engine
    return policy_bit, engine_bit


def play_out(engine: BatchEngine, policy: str = "heuristic", games: np.ndarray | None = None,
             tables: PolicyTables | None = None) -> np.ndarray:
    """Play the deal of every game of ``engine`` (or of ``games``) to its end, inside one kernel
    call: every seat plays the heuristic (exactly as ``HeuristicAgent`` from its own observation)
    or, with ``policy="random"``, uniformly random legal actions from each game's seeded stream.

    Returns each game's score change per side (``[B, sides]`` ``int64``; 0 for a deal thrown in,
    and for games not listed). The games are left at the end of their deal: load positions
    (:meth:`BatchEngine.load_position`, ``set_deal``) or ``reset()`` before stepping them again.
    ``tables`` (:func:`policy_tables`) saves rebuilding them on every call.
    """
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}; got {policy!r}")
    if not isinstance(engine, BatchEngine):
        raise ValueError(f"engine must be a BatchEngine, got {type(engine).__name__}")
    rules = engine.rules
    if tables is None:
        tables = policy_tables(rules)
    elif tables.made_for != rules:
        raise ValueError(f"tables are of other rules ({tables.made_for.describe()}) than the engine's ({rules.describe()})")
    chosen = np.arange(engine.num_games) if games is None else np.asarray(games, dtype=np.int64)
    if chosen.ndim != 1 or ((chosen < 0) | (chosen >= engine.num_games)).any():
        raise ValueError(f"games must be indices 0..{engine.num_games - 1}")
    arrays = engine.kernel_arrays()
    out = np.zeros((engine.num_games, rules.num_sides), dtype=np.int64)
    policy_bit, engine_bit = _bit_translations(rules.deck)
    kernels.play_out_games(arrays.state, arrays.options, chosen, policy == "heuristic", tables.cards, tables.numbers,
                           tables.fit, tables.contracts, tables.estimate_keys, tables.estimates, arrays.obs_offsets,
                           policy_bit, engine_bit, out)
    engine.refresh(chosen)
    return out


__all__ = ["COMPILED_PRESETS", "HeuristicPolicy", "PolicyTables", "play_out", "policy_card_bits",
           "policy_tables"]
