"""The heuristic's view of the table: its observation decoded into ints and card masks, and what
it can know about the other seats' cards.

Seats are relative (the observation is oriented so the observer is seat 0); the partnership comes
from the rules (:meth:`~five_hundred_env.rules.Rules.partners_of`), never from the seat count, and
in ``five_handed`` from the partner of the deal once the observer knows it (docs/rules.md §10.8).
The card order of each trump context (docs/rules.md §6) comes from the engine's rule tables.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from five_hundred_env.cards import NUM_CARDS, mask_to_cards
from five_hundred_env.engine import EFFECTIVE_SUIT, NO_TRUMP_CTX, SUIT_CARDS, WIN_KEY
from five_hundred_env.observation import NUM_BIDS, ObservationEncoder
from five_hundred_env.rules import Rules

PHASE_BIDDING, PHASE_DISCARD, PHASE_NOMINATE, PHASE_PLAY, PHASE_CALL = 0, 1, 2, 3, 5
NUM_CONTEXTS = 9
"""Trump contexts: the four suits, no trumps, and no trumps with the joker nominated to a suit."""


class CardTables:
    """Card-order facts of one trump context restricted to a deck (rules knowledge, not state)."""

    __slots__ = ("eff", "higher", "key", "lower", "strength", "suit", "top_down")

    def __init__(self, ctx: int, deck: int) -> None:
        self.eff = EFFECTIVE_SUIT[ctx]
        self.key = WIN_KEY[ctx]
        self.suit = [SUIT_CARDS[ctx][s] & deck for s in range(5)]
        # strength of a card inside its own effective suit (the key it has when its suit is led)
        num_cards = max(NUM_CARDS, deck.bit_length())
        self.strength: list[float] = [0] * num_cards
        for c in range(num_cards):
            e = self.eff[c]
            self.strength[c] = WIN_KEY[ctx][e if e < 4 else 0][c]
        self.top_down = [sorted(mask_to_cards(self.suit[s]), key=lambda c: -self.strength[c]) for s in range(5)]
        self.higher = [0] * num_cards
        self.lower = [0] * num_cards
        for s in range(5):
            for c in self.top_down[s]:
                for d in self.top_down[s]:
                    if self.strength[d] > self.strength[c]:
                        self.higher[c] |= 1 << d
                    elif self.strength[d] < self.strength[c]:
                        self.lower[c] |= 1 << d


def card_tables(rules: Rules) -> list[CardTables]:
    """The card tables of every trump context of the rules' deck, by context: made once per deck
    and shared by every agent and decoder of it (read them, never change them). Making them took
    1.7 ms, most of the making of a heuristic agent: the web table makes three for each new game."""
    return list(_deck_tables(rules.deck))


@functools.lru_cache(maxsize=16)
def _deck_tables(deck: int) -> tuple[CardTables, ...]:
    return tuple(CardTables(ctx, deck) for ctx in range(NUM_CONTEXTS))


class TableView:
    """One observation, decoded into plain ints and masks (relative seats: 0 is the observer).

    :meth:`ViewDecoder.decode` fills the auction and table facts; :meth:`ViewDecoder.know_cards`
    adds, for card play, who is with whom and which cards each other seat may still hold.
    """

    __slots__ = (
        "against",
        "bids",
        "called",
        "contract",
        "contractor",
        "ctx",
        "dealer",
        "discards",
        "enemies",
        "exposed",
        "friends",
        "hand",
        "joker_suit",
        "kitty",
        "leader",
        "led_suit",
        "mates",
        "n",
        "out",
        "partner",
        "passed",
        "phase",
        "played",
        "possible",
        "scores",
        "seat",
        "shown_void",
        "suits_led",
        "t",
        "trick",
        "trick_cards",
        "tricks_won",
        "trump",
        "unseen",
    )

    @property
    def declaring(self) -> bool:
        """Whether the observer is on the contractor's side (as far as it knows)."""
        return self.contractor == 0 or self.contractor in self.mates

    def enemy_possible(self) -> int:
        """The cards some enemy may hold."""
        m = 0
        for e in self.enemies:
            m |= self.possible[e]
        return m

    def may_ruff(self, e: int, suit: int) -> bool:
        """Whether enemy ``e`` may be void in ``suit`` and hold a trump."""
        t = self.t
        if self.trump < 0 or suit == self.trump:
            return False
        pos = self.possible[e]
        if not pos & t.suit[self.trump]:
            return False
        return not pos & t.suit[suit] or (self.unseen & t.suit[suit]).bit_count() <= 2

    def beats(self, e: int, led: int, key: int) -> bool:
        """Whether enemy ``e``, still to play, may beat a card of strength ``key`` in a trick led ``led``."""
        t = self.t
        keys = t.key[led]
        pos = self.possible[e]
        follow = pos & t.suit[led]
        for c in mask_to_cards(follow):
            if keys[c] > key:
                return True
        void_possible = not follow or (self.unseen & t.suit[led]).bit_count() <= 2
        if not void_possible:
            return False
        for c in mask_to_cards(pos & ~t.suit[led]):
            if keys[c] > key:
                return True
        return False

    def still_to_play(self) -> list[int]:
        """Seats still to play to this trick after the observer."""
        out = []
        seat = 1 % self.n
        for _ in range(self.n):
            if seat == self.leader or seat == 0:
                break
            if not self.out >> seat & 1 and not self.trick_cards[seat]:
                out.append(seat)
            seat = (seat + 1) % self.n
        return out

    def winner(self) -> tuple[int, int, int]:
        """The seat, card and key winning the current trick so far."""
        keys = self.t.key[self.led_suit]
        best_seat, best_card, best_key = -1, -1, -1
        for seat, card in self.trick:
            if keys[card] > best_key:
                best_seat, best_card, best_key = seat, card, keys[card]
        return best_seat, best_card, best_key


class ViewDecoder:
    """Decodes the observation vectors of one rule set (the layout of :class:`ObservationEncoder`)."""

    def __init__(self, rules: Rules, tables: list[CardTables]) -> None:
        self.encoder = ObservationEncoder(rules)
        self._off = {name: off for name, (off, _shape) in self.encoder.layout.items()}
        self._nbits = self.encoder.num_bits
        self.n = rules.num_players
        self.deck = rules.deck
        self.mates = rules.partners_of(0)  # the observer is relative seat 0
        self.partner = self.mates[0] if len(self.mates) == 1 else None
        """The one fixed partner (four players), else ``None``."""
        self.width = rules.card_slots
        self.phase_width = self.encoder.layout["phase"][1][0]
        self.card_mask = (1 << self.width) - 1
        self.tables = tables

    def decode(self, vector: Any) -> TableView:
        """The view of one observation vector."""
        arr = np.asarray(vector)
        if arr.dtype != np.int8:
            arr = arr.astype(np.int8)
        bits = int.from_bytes(np.packbits(arr[: self._nbits].view(np.uint8), bitorder="little").tobytes(), "little")
        o = self._off
        n = self.n

        def one(name: str, width: int) -> int:
            return (bits >> o[name] & ((1 << width) - 1)).bit_length() - 1

        cards, width = self.card_mask, self.width
        v = TableView()
        v.n = n
        v.hand = bits >> o["hand"] & cards
        v.phase = one("phase", self.phase_width)
        v.dealer = one("dealer", n)
        v.bids, v.passed = self._auction(bits)
        v.contract = one("contract", NUM_BIDS) + 1  # universal id; 0 = none yet
        v.contractor = one("contractor", n)
        trump = one("trump", 5)
        v.out = bits >> o["sitting_out"] & ((1 << n) - 1)
        v.kitty = bits >> o["kitty"] & cards
        v.discards = bits >> o["discards"] & cards
        v.joker_suit = one("joker_suit", 4)
        v.exposed = bits >> o["exposed"] & cards
        v.played = [bits >> (o["played"] + width * r) & cards for r in range(n)]
        v.trick_cards = [bits >> (o["trick"] + width * r) & cards for r in range(n)]
        self._partnership(v, arr)
        v.leader = one("leader", n)
        v.led_suit = one("led_suit", 4)
        v.suits_led = bits >> o["suits_led"] & 15
        v.shown_void = [bits >> (o["shown_void"] + 4 * r) & 15 for r in range(n)]
        v.tricks_won = [(bits >> (o["tricks_won"] + 10 * r) & 1023).bit_count() for r in range(n)]
        v.trump = trump if 0 <= trump < 4 else -1
        if v.trump >= 0:
            v.ctx = v.trump
        else:
            v.ctx = NO_TRUMP_CTX + 1 + v.joker_suit if v.joker_suit >= 0 else NO_TRUMP_CTX
        v.t = self.tables[v.ctx]
        v.trick = self._trick(v)
        v.scores = arr[self._nbits:].astype(np.int64).tolist()
        return v

    def _partnership(self, v: TableView, arr: np.ndarray) -> None:
        """``mates``: the observer's side for this deal as far as it knows; ``partner``: its one
        mate, if it has exactly one; ``against``: a five-handed partner known to a defender; ``called``:
        the card called and ``seat`` the observer's absolute seat (five players; -1 for none)."""
        v.mates, v.against, v.called, v.seat = self.mates, -1, -1, -1
        if "partner" in self._off:  # five players: the partner of the deal, once known (§10.8)
            o = self._off

            def one(name: str, width: int) -> int:  # these slices follow "scores": read from the array
                hit = np.flatnonzero(arr[o[name]:o[name] + width])
                return int(hit[0]) if len(hit) else -1

            v.called = one("called", self.width)
            v.seat = one("seat", v.n)
            known = one("partner", v.n)
            if known == 0:
                v.mates = (v.contractor,)
            elif known > 0 and v.contractor == 0:
                v.mates = (known,)
            elif known > 0:
                v.against = known
        v.partner = v.mates[0] if len(v.mates) == 1 else None

    def _auction(self, bits: int) -> tuple[list[tuple[int, int]], int]:
        """The bids as (universal bid id, relative seat) in bid order, and the mask of seats that passed."""
        n = self.n
        bids: list[tuple[int, int]] = []
        block = bits >> self._off["bids"] & ((1 << (NUM_BIDS * n)) - 1)
        while block:
            low = block & -block
            i = low.bit_length() - 1
            bids.append((i // n + 1, i % n))
            block ^= low
        passed = 0
        block = bits >> self._off["passes"] & ((1 << ((NUM_BIDS + 1) * n)) - 1)
        while block:
            low = block & -block
            passed |= 1 << ((low.bit_length() - 1) % n)
            block ^= low
        return bids, passed

    @staticmethod
    def _trick(v: TableView) -> list[tuple[int, int]]:
        """The current trick as (seat, card) in playing order, from the leader clockwise
        (skipping a sitting-out seat)."""
        trick: list[tuple[int, int]] = []
        if v.leader >= 0:
            seat = v.leader
            for _ in range(v.n):
                if v.trick_cards[seat]:
                    trick.append((seat, v.trick_cards[seat].bit_length() - 1))
                seat = (seat + 1) % v.n
        return trick

    def know_cards(self, v: TableView) -> None:
        """Who is with whom in the play, and which cards each other seat may still hold.

        The friends are the team-mates (or the five-handed partner, once known) when they play (not
        sitting out a misère); playing alone, the other defenders while defending (the defenders
        play together against the contractor and a partner they know).
        """
        c = v.contractor
        active = [r for r in range(v.n) if not v.out >> r & 1]
        if v.mates:
            v.friends = [m for m in v.mates if not v.out >> m & 1]
        else:
            v.friends = [r for r in range(1, v.n) if r != c and r != v.against] if c != 0 else []
        v.enemies = [r for r in active if r != 0 and r not in v.friends]
        played = 0
        for p in v.played:
            played |= p
        v.unseen = self.deck & ~v.hand & ~played & ~v.discards
        t = v.t
        possible = [0] * v.n
        for r in active:
            if r == 0:
                continue
            pos = v.exposed if v.exposed and r == c else v.unseen & ~v.exposed
            voids = v.shown_void[r]
            for s in range(4):
                if voids >> s & 1:
                    pos &= ~t.suit[s]
            possible[r] = pos
        v.possible = possible
