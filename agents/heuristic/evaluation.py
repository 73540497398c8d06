"""Hand evaluation: the tricks a hand should take itself in each strain, as contractor or defender,
and its misère danger (how likely it is to be forced to win a trick).

The weights are rules of thumb of card play (docs/rules.md §6 card order); what the estimates are worth
in side tricks is fitted separately (:mod:`agents.heuristic.calibration`).
"""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple

from agents.heuristic.view import CardTables
from five_hundred_env.cards import JOKER1, mask_to_cards
from five_hundred_env.engine import NO_TRUMP_CTX, SUITLESS
from five_hundred_env.rules import Rules

# How much a trump (or, with NT, a suit card) is worth as a trick, by how many higher cards of
# its suit the hand lacks beyond those it can draw with its own higher cards: the top card of a
# solid run always wins, a card behind one missing honour usually does, and so on.
_W_TRUMP = (1.0, 0.7, 0.45, 0.28, 0.15)
_W_SIDE = ((0.9, 0.35, 0.1), (0.75, 0.25, 0.05), (0.35, 0.1, 0.0))  # [round][missing higher]
_W_NT = (1.0, 0.5, 0.25, 0.1)
# The same for a defender: its trumps and its side suits' first two rounds.
_W_DEFENCE_TRUMP = (1.0, 0.6, 0.35, 0.2, 0.1)
_W_DEFENCE_SIDE = ((0.8, 0.25, 0.05), (0.5, 0.15, 0.0))

# Misère danger of one card by its *slack*: the opponents' lower cards in the suit minus the two
# they spend per round of the suit before this card must be played.
_MISERE_DANGER = (0.0, 0.3, 0.6, 0.9, 1.2)
JOKER_DANGER = 3.0
"""The misère danger of a suitless joker: it wins any trick it is played to."""

_CACHE_SIZE = 256


class HandEstimate(NamedTuple):
    """What a hand is worth before the kitty: trick estimates and misère dangers."""

    own: list[float]
    """Tricks it takes itself as contractor, by strain (0-3 the suits, 4 no trumps)."""
    defence: list[float]
    """Tricks it takes defending against a contract, by strain."""
    danger: float
    """Misère danger after the best discards (``inf`` when the rules have no misère)."""
    open_danger: float
    """The same for open misère."""


class HandEvaluator:
    """Hand estimates for one rule set (the estimates of recent hands are cached)."""

    def __init__(self, rules: Rules, tables: list[CardTables]) -> None:
        self.rules = rules
        self.deck = rules.deck
        self.tables = tables
        self._no_trumps = tables[NO_TRUMP_CTX]
        self._cache: dict[int, HandEstimate] = {}

    def evaluate(self, hand: int) -> HandEstimate:
        """Own-hand trick estimates per strain (0-3 suits, 4 NT) and the misère dangers (cached)."""
        cached = self._cache.get(hand)
        if cached is not None:
            return cached
        own = [self.suit_tricks(hand, s) for s in range(4)]
        own.append(self.nt_tricks(hand))
        defence = [self.defence_tricks(hand, s) for s in range(5)]
        if self.rules.misere == "none" and self.rules.open_misere == "none":
            danger = open_danger = math.inf  # no misère in these rules: skip the costly count
        else:
            danger, open_danger = self.misere_danger(hand)
        out = HandEstimate(own, defence, danger, open_danger)
        if len(self._cache) > _CACHE_SIZE:
            self._cache.clear()
        self._cache[hand] = out
        return out

    # -- trick estimates ---------------------------------------------------------------------------
    def suit_tricks(self, hand: int, trump: int) -> float:
        """Tricks this hand should take itself with ``trump`` as trumps."""
        t = self.tables[trump]
        trumps = [c for c in t.top_down[trump] if hand >> c & 1]
        n_t = len(trumps)
        pos = {c: i for i, c in enumerate(t.top_down[trump])}
        value = 0.0
        for i, c in enumerate(trumps):
            missing = pos[c] - i
            w = _W_TRUMP[min(missing, len(_W_TRUMP) - 1)]
            if i >= 3:  # long trumps win once the others' trumps are drawn
                w = max(w, 0.55 if i == 3 else 0.8)
            value += w
        spare = max(0, n_t - 3)
        ruffs = 0.0
        for s in range(4):
            if s == trump:
                continue
            order = t.top_down[s]
            mine = [i for i, c in enumerate(order) if hand >> c & 1]
            for rnd, p in enumerate(mine[:3]):
                missing = p - rnd
                value += _W_SIDE[rnd][min(missing, 2)]
            if not mine:
                ruffs += 0.9
            elif len(mine) == 1 and mine[0] > 0:
                ruffs += 0.45
        value += min(ruffs, spare * 0.9)
        return value

    def nt_tricks(self, hand: int) -> float:
        """Tricks this hand should take itself at no trumps (the best nomination, if any)."""
        base = self.nt_value(hand, NO_TRUMP_CTX)
        if self.rules.joker_nomination in ("nt_and_misere",) and hand >> JOKER1 & 1:
            base = max(base, max(self.nt_value(hand, NO_TRUMP_CTX + 1 + s) for s in range(4)))
        return base

    def nt_value(self, hand: int, ctx: int) -> float:
        """Tricks this hand should take at no trumps in trump context ``ctx`` (a joker nomination)."""
        t = self.tables[ctx]
        value = float((hand & t.suit[SUITLESS]).bit_count())  # a suitless joker always wins a trick
        unstopped = 0
        for s in range(4):
            order = t.top_down[s]
            mine = [i for i, c in enumerate(order) if hand >> c & 1]
            top = 0.0
            for rnd, p in enumerate(mine):
                missing = p - rnd
                top += _W_NT[min(missing, 3)] if rnd < 4 else (0.6 if missing <= 1 else 0.1)
            length = len(mine)
            if length >= 5 and mine[0] <= 1:
                top += 0.4 * (length - 4)
            stopped = bool(mine) and (mine[0] == 0 or (mine[0] == 1 and length >= 2) or (mine[0] == 2 and length >= 3))
            if not stopped:
                unstopped += 1
            value += top
        value -= 0.6 * unstopped
        return value

    def defence_tricks(self, hand: int, strain: int) -> float:
        """Tricks this hand should take defending against a contract in ``strain``."""
        if strain == 4:
            return 0.8 * max(0.0, self.nt_value(hand, NO_TRUMP_CTX) + 0.3)
        t = self.tables[strain]
        value = 0.0
        trumps = [i for i, c in enumerate(t.top_down[strain]) if hand >> c & 1]
        for i, p in enumerate(trumps):
            value += _W_DEFENCE_TRUMP[min(p - i, 4)]
        for s in range(4):
            if s == strain:
                continue
            order = t.top_down[s]
            mine = [i for i, c in enumerate(order) if hand >> c & 1]
            for rnd, p in enumerate(mine[:2]):
                value += _W_DEFENCE_SIDE[rnd][min(p - rnd, 2)]
        return value

    # -- misère danger -----------------------------------------------------------------------------
    def misere_hand_danger(self, hand: int, outside: int) -> float:
        """How likely this hand is to be forced to win a trick at misère (in danger units).

        In each suit, the ``i``-th lowest card is played on about the ``i``-th round of the suit;
        by then the opponents have spent about ``2·i`` cards of it, so the card is at risk when
        they held more lower cards than that (``outside`` is where their cards may be).
        """
        t = self._no_trumps
        danger = JOKER_DANGER * (hand & t.suit[SUITLESS]).bit_count()
        for s in range(4):
            danger += self._misere_suit_danger([c for c in reversed(t.top_down[s]) if hand >> c & 1], outside)
        return danger

    def misere_throw(self, hand: int, cards: list[int], outside: int) -> int:
        """The card whose loss makes the rest of the hand safest (ties: the higher card)."""
        t = self._no_trumps
        return min(cards, key=lambda c: (self.misere_hand_danger(hand & ~(1 << c), outside), -t.strength[c]))

    def _misere_suit_danger(self, cards: list[int], outside: int) -> float:
        """The danger of one suit's cards (listed low to high); see :meth:`misere_hand_danger`."""
        t = self._no_trumps
        danger = 0.0
        for i, c in enumerate(cards):
            slack = (t.lower[c] & outside).bit_count() - 2 * i
            if slack > 0:
                danger += _MISERE_DANGER[min(slack, 4)] + 0.25 * max(0, slack - 4)
        return danger

    def _suit_throws(self, cards: list[int], k: int, outside: int) -> list[tuple[float, int]]:
        """For 0…k cards thrown from one suit's ``cards`` (low to high), the least danger left and
        the thrown cards (a mask), found by trying every choice (ties: throw the higher cards)."""
        options: list[tuple[float, int]] = []
        for j in range(min(k, len(cards)) + 1):
            options.append(min(
                ((self._misere_suit_danger([c for c in cards if c not in combo], outside), sum(1 << c for c in combo))
                 for combo in itertools.combinations(cards, j)),
                key=lambda x: (x[0], -x[1]),
            ))
        return options

    def misere_best_throw(self, hand: int, k: int, outside: int) -> tuple[float, int]:
        """The least danger left after throwing exactly ``k`` cards, and those cards (a mask).

        The danger adds up over suits, so each suit's best throws of 0…k cards are found by trying
        every choice, then the suits are combined by dynamic programming.
        """
        t = self._no_trumps
        jokers = mask_to_cards(hand & t.suit[SUITLESS])
        # a suitless joker is worth throwing before anything (it wins any trick it is played to)
        groups = [[(JOKER_DANGER * (len(jokers) - j), sum(1 << c for c in jokers[:j]))
                   for j in range(min(k, len(jokers)) + 1)]]
        groups += [self._suit_throws([c for c in reversed(t.top_down[s]) if hand >> c & 1], k, outside)
                   for s in range(4)]
        # best[j] = (danger, thrown mask) with j cards thrown so far
        best: list[tuple[float, int]] = [(0.0, 0)] + [(math.inf, 0)] * k
        for options in groups:
            new: list[tuple[float, int]] = [(math.inf, 0)] * (k + 1)
            for j, (d0, m0) in enumerate(best):
                if d0 == math.inf:
                    continue
                for jj, (d1, m1) in enumerate(options):
                    if j + jj <= k and d0 + d1 < new[j + jj][0]:
                        new[j + jj] = (d0 + d1, m0 | m1)
            best = new
        return best[k]

    def misere_danger(self, hand: int) -> tuple[float, float]:
        """The hand's misère danger once the kitty's worth of its worst cards is thrown, and the same
        for open misère (the kitty may bring bad cards too: the calibration accounts for that)."""
        danger, _thrown = self.misere_best_throw(hand, self.rules.kitty_size, self.deck & ~hand)
        return danger, danger
