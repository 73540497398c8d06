"""A rule-based Five Hundred player: hand evaluation for bidding, sensible discards and card play.

The agent sees only its own observation (decoded with the layout of
:class:`~five_hundred_env.observation.ObservationEncoder`) and chooses among the actions its mask
allows. It uses the engine's *rule tables* (the card order of each trump context: which cards are
trumps, what beats what), never the environment's state.

How it thinks, the way a decent club player does:

* **Bidding** — an estimate of the tricks its side takes in each strain, from the jokers, bowers,
  trump length, side aces and kings, voids and singletons, with the partner's average help and the
  kitty's expected help folded in (the constants are fitted to this agent's own card play, see
  ``benchmarks/calibrate_heuristic.py``). The partner's bids raise the estimate in the partner's
  strain; the opponents' bids are judged by how many tricks this hand can take against them.
  Every legal bid gets an expected score (``value × (2·P(make) − 1)`` minus the defence points
  conceded) and it bids the best one when that beats the expected score of passing.
  Misère and open misère come from a "danger" count: a card is dangerous when the opponents hold
  more low cards of its suit than they can spend before it has to be played.
* **Discards** — keep trumps and winners, throw short side suits to make voids; for misère throw
  the joker and the dangerous high cards.
* **Play** — the contractor draws trumps while the opponents may still hold some; winners are
  cashed; defenders cash aces, lead the partner's suit or a singleton to ruff; second hand low,
  third hand high; a partner's safe winner is never overtaken; tricks are won as cheaply as is
  safe; losers are discarded. In misère the contractor ducks as high as it can and throws its
  dangerous cards, while the defenders lead low and stay under the contractor's card. A suitless
  joker wins a trick when void in the suit led, is led naming the contractor side's long suit,
  and is nominated (Australian rules) to the suit where it adds most tricks.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from agents.base import Agent
from five_hundred_env.actions import (
    FIRST_CARD_ACTION,
    FIRST_JOKER_LEAD,
    FIRST_NOMINATE,
    MISERE,
    NO_NOMINATION,
    OPEN_MISERE,
    PASS,
    ActionTable,
    bid_strain,
    bid_tricks,
    bid_value,
    is_trick_bid,
)
from five_hundred_env.cards import JOKER1, NUM_CARDS, mask_to_cards
from five_hundred_env.engine import EFFECTIVE_SUIT, NO_TRUMP_CTX, SUIT_CARDS, SUITLESS, WIN_KEY, bid_rank
from five_hundred_env.observation import NUM_BIDS, ObservationEncoder
from five_hundred_env.rules import Rules

_CARD_MASK = (1 << NUM_CARDS) - 1
_PHASE_BIDDING, _PHASE_DISCARD, _PHASE_NOMINATE, _PHASE_PLAY = 0, 1, 2, 3

# How much a trump (or, with NT, a suit card) is worth as a trick, by how many higher cards of
# its suit the hand lacks beyond those it can draw with its own higher cards: the top card of a
# solid run always wins, a card behind one missing honour usually does, and so on.
_W_TRUMP = (1.0, 0.7, 0.45, 0.28, 0.15)
_W_SIDE = ((0.9, 0.35, 0.1), (0.75, 0.25, 0.05), (0.35, 0.1, 0.0))  # [round][missing higher]
_W_NT = (1.0, 0.5, 0.25, 0.1)

# Misère danger of one card by its *slack*: the opponents' lower cards in the suit minus the two
# they spend per round of the suit before this card must be played.
_MISERE_DANGER = (0.0, 0.3, 0.6, 0.9, 1.2)


def _phi(x: float) -> float:
    """The standard normal distribution function."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


class _Tables:
    """Card-order facts of one trump context restricted to a deck (rules knowledge, not state)."""

    __slots__ = ("eff", "higher", "key", "lower", "strength", "suit", "top_down")

    def __init__(self, ctx: int, deck: int) -> None:
        self.eff = EFFECTIVE_SUIT[ctx]
        self.key = WIN_KEY[ctx]
        self.suit = [SUIT_CARDS[ctx][s] & deck for s in range(5)]
        # strength of a card inside its own effective suit (the key it has when its suit is led)
        self.strength = [0] * NUM_CARDS
        for c in range(NUM_CARDS):
            e = self.eff[c]
            self.strength[c] = WIN_KEY[ctx][e if e < 4 else 0][c]
        self.top_down = [sorted(mask_to_cards(self.suit[s]), key=lambda c: -self.strength[c]) for s in range(5)]
        self.higher = [0] * NUM_CARDS
        self.lower = [0] * NUM_CARDS
        for s in range(5):
            for c in self.top_down[s]:
                for d in self.top_down[s]:
                    if self.strength[d] > self.strength[c]:
                        self.higher[c] |= 1 << d
                    elif self.strength[d] < self.strength[c]:
                        self.lower[c] |= 1 << d


class _View:
    """One observation, decoded into plain ints and masks (relative seats: 0 is the observer)."""

    __slots__ = (
        "bids", "contract", "contractor", "ctx", "dealer", "discards", "enemies", "exposed", "friends",
        "hand", "joker_suit", "kitty", "leader", "led_suit", "n", "passed", "phase", "played", "possible",
        "scores", "shown_void", "sitting_out", "suits_led", "t", "trick", "trick_cards", "tricks_won",
        "trump", "unseen",
    )


class HeuristicAgent(Agent):
    """A competent rule-based player for every preset and rule option (see the module docstring).

    A pure function of its observation (the seeded generator only backs up the impossible case
    of a chosen action missing from the mask), so identical seats play identically: this is what
    makes a duplicate match of the heuristic against itself come out at exactly zero.
    """

    name = "heuristic"

    def __init__(self, rules: Rules | str = "australian", seed: int | None = None) -> None:
        super().__init__(rules, seed)
        rules = self.rules
        self.table = ActionTable(rules)
        self._universal = np.array(self.table.universal, dtype=np.int64)
        self._compact = self.table.compact
        self.encoder = ObservationEncoder(rules)
        self._off = {name: off for name, (off, _shape) in self.encoder.layout.items()}
        self._nbits = self.encoder.num_bits
        self.n = rules.num_players
        self.deck = rules.deck
        self._tables = [_Tables(ctx, self.deck) for ctx in range(9)]
        self._eval_cache: dict[int, dict[str, Any]] = {}
        # The side's expected tricks are an affine function of this hand's own estimate: the
        # intercept is the partner's and the kitty's average help. Fitted by
        # benchmarks/calibrate_heuristic.py to this agent's own play.
        self._fit = _CALIBRATION.get(rules.preset, _CALIBRATION["australian"])

    # ------------------------------------------------------------------------------------------
    def act(self, observation: dict[str, Any]) -> int:
        """The compact id of the chosen legal action."""
        mask = np.asarray(observation["action_mask"])
        legal_compact = np.flatnonzero(mask)
        if len(legal_compact) == 0:
            raise ValueError("no legal action in the mask: is it this agent's turn?")
        if len(legal_compact) == 1:
            return int(legal_compact[0])
        legal = self._universal[legal_compact].tolist()
        v = self._parse(observation["observation"])
        if v.phase == _PHASE_BIDDING:
            action = self._bid(v, legal)
        elif v.phase == _PHASE_DISCARD:
            action = self._discard(v, legal)
        elif v.phase == _PHASE_NOMINATE:
            action = self._nominate(v, legal)
        else:
            action = self._play(v, legal)
        if action not in legal:  # a safety net: a heuristic slip must never become an illegal move
            action = legal[int(self.rng.integers(len(legal)))]
        return int(self._compact[action])

    # -- decoding --------------------------------------------------------------------------------
    def _parse(self, vector: Any) -> _View:
        arr = np.asarray(vector)
        if arr.dtype != np.int8:
            arr = arr.astype(np.int8)
        bits = int.from_bytes(np.packbits(arr[: self._nbits].view(np.uint8), bitorder="little").tobytes(), "little")
        o = self._off
        n = self.n

        def one(name: str, width: int) -> int:
            return (bits >> o[name] & ((1 << width) - 1)).bit_length() - 1

        v = _View()
        v.n = n
        v.hand = bits >> o["hand"] & _CARD_MASK
        v.phase = one("phase", 5)
        v.dealer = one("dealer", n)
        bids: list[tuple[int, int]] = []
        block = bits >> o["bids"] & ((1 << (NUM_BIDS * n)) - 1)
        while block:
            low = block & -block
            i = low.bit_length() - 1
            bids.append((i // n + 1, i % n))
            block ^= low
        v.bids = bids  # (universal bid id, relative seat), in bid order
        passed = 0
        block = bits >> o["passes"] & ((1 << ((NUM_BIDS + 1) * n)) - 1)
        while block:
            low = block & -block
            passed |= 1 << ((low.bit_length() - 1) % n)
            block ^= low
        v.passed = passed
        v.contract = one("contract", NUM_BIDS) + 1  # universal id; 0 = none yet
        v.contractor = one("contractor", n)
        trump = one("trump", 5)
        v.sitting_out = one("sitting_out", n)
        v.kitty = bits >> o["kitty"] & _CARD_MASK
        v.discards = bits >> o["discards"] & _CARD_MASK
        v.joker_suit = one("joker_suit", 4)
        v.exposed = bits >> o["exposed"] & _CARD_MASK
        v.played = [bits >> (o["played"] + NUM_CARDS * r) & _CARD_MASK for r in range(n)]
        trick_cards = [bits >> (o["trick"] + NUM_CARDS * r) & _CARD_MASK for r in range(n)]
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
        v.t = self._tables[v.ctx]
        # the current trick in playing order, from the leader clockwise (skipping a sitting-out seat)
        trick: list[tuple[int, int]] = []
        if v.leader >= 0:
            seat = v.leader
            for _ in range(n):
                if trick_cards[seat]:
                    trick.append((seat, trick_cards[seat].bit_length() - 1))
                seat = (seat + 1) % n
        v.trick = trick
        v.trick_cards = trick_cards
        v.scores = arr[self._nbits:].astype(np.int64).tolist()
        return v

    def _setup_play(self, v: _View) -> None:
        """Who is with whom, and which cards each other seat may still hold."""
        n = v.n
        c = v.contractor
        active = [r for r in range(n) if r != v.sitting_out]
        if n == 4:
            friends = [2] if v.sitting_out != 2 else []
        else:
            friends = [r for r in range(1, n) if r != c] if c != 0 else []
        v.friends = friends
        v.enemies = [r for r in active if r != 0 and r not in friends]
        played = 0
        for p in v.played:
            played |= p
        unseen = self.deck & ~v.hand & ~played & ~v.discards
        v.unseen = unseen
        t = v.t
        possible = [0] * n
        for r in active:
            if r == 0:
                continue
            if v.exposed and r == c:
                pos = v.exposed
            else:
                pos = unseen & ~v.exposed
            voids = v.shown_void[r]
            for s in range(4):
                if voids >> s & 1:
                    pos &= ~t.suit[s]
            possible[r] = pos
        v.possible = possible

    # -- bidding ---------------------------------------------------------------------------------
    def _evaluate(self, hand: int) -> dict[str, Any]:
        """Own-hand trick estimates per strain (0-3 suits, 4 NT) and the misère dangers (cached)."""
        cached = self._eval_cache.get(hand)
        if cached is not None:
            return cached
        own = [self._suit_tricks(hand, s) for s in range(4)]
        own.append(self._nt_tricks(hand))
        defence = [self._defence_tricks(hand, s) for s in range(5)]
        if self.rules.misere == "none" and self.rules.open_misere == "none":
            danger = open_danger = math.inf  # no misère in these rules: skip the costly count
        else:
            danger, open_danger = self._misere_danger(hand)
        out = {"own": own, "defence": defence, "danger": danger, "open_danger": open_danger}
        if len(self._eval_cache) > 256:
            self._eval_cache.clear()
        self._eval_cache[hand] = out
        return out

    def _suit_tricks(self, hand: int, trump: int) -> float:
        """Tricks this hand should take itself with ``trump`` as trumps."""
        t = self._tables[trump]
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

    def _nt_tricks(self, hand: int) -> float:
        """Tricks this hand should take itself at no trumps (the best nomination, if any)."""
        base = self._nt_value(hand, NO_TRUMP_CTX)
        if self.rules.joker_nomination in ("nt_and_misere",) and hand >> JOKER1 & 1:
            base = max(base, max(self._nt_value(hand, NO_TRUMP_CTX + 1 + s) for s in range(4)))
        return base

    def _nt_value(self, hand: int, ctx: int) -> float:
        t = self._tables[ctx]
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

    def _defence_tricks(self, hand: int, strain: int) -> float:
        """Tricks this hand should take defending against a contract in ``strain``."""
        if strain == 4:
            return 0.8 * max(0.0, self._nt_value(hand, NO_TRUMP_CTX) + 0.3)
        t = self._tables[strain]
        value = 0.0
        trumps = [i for i, c in enumerate(t.top_down[strain]) if hand >> c & 1]
        for i, p in enumerate(trumps):
            value += (1.0, 0.6, 0.35, 0.2, 0.1)[min(p - i, 4)]
        for s in range(4):
            if s == strain:
                continue
            order = t.top_down[s]
            mine = [i for i, c in enumerate(order) if hand >> c & 1]
            for rnd, p in enumerate(mine[:2]):
                value += ((0.8, 0.25, 0.05), (0.5, 0.15, 0.0))[rnd][min(p - rnd, 2)]
        return value

    def _misere_hand_danger(self, hand: int, outside: int) -> float:
        """How likely this hand is to be forced to win a trick at misère (in danger units).

        In each suit, the ``i``-th lowest card is played on about the ``i``-th round of the suit;
        by then the opponents have spent about ``2·i`` cards of it, so the card is at risk when
        they held more lower cards than that (``outside`` is where their cards may be).
        """
        t = self._tables[NO_TRUMP_CTX]
        danger = 3.0 * (hand & t.suit[SUITLESS]).bit_count()  # a suitless joker wins any trick it is played to
        for s in range(4):
            danger += self._misere_suit_danger([c for c in reversed(t.top_down[s]) if hand >> c & 1], outside)
        return danger

    def _misere_throw(self, hand: int, cards: list[int], outside: int) -> int:
        """The card whose loss makes the rest of the hand safest (ties: the higher card)."""
        t = self._tables[NO_TRUMP_CTX]
        return min(cards, key=lambda c: (self._misere_hand_danger(hand & ~(1 << c), outside), -t.strength[c]))

    def _misere_suit_danger(self, cards: list[int], outside: int) -> float:
        """The danger of one suit's cards (listed low to high); see :meth:`_misere_hand_danger`."""
        t = self._tables[NO_TRUMP_CTX]
        danger = 0.0
        for i, c in enumerate(cards):
            slack = (t.lower[c] & outside).bit_count() - 2 * i
            if slack > 0:
                danger += _MISERE_DANGER[min(slack, 4)] + 0.25 * max(0, slack - 4)
        return danger

    def _misere_best_throw(self, hand: int, k: int, outside: int) -> tuple[float, int]:
        """The least danger left after throwing exactly ``k`` cards, and those cards (a mask).

        The danger adds up over suits, so each suit's best throws of 0…k cards are found by trying
        every choice, then the suits are combined by dynamic programming.
        """
        t = self._tables[NO_TRUMP_CTX]
        jokers = mask_to_cards(hand & t.suit[SUITLESS])
        # best[j] = (danger, thrown mask) with j cards thrown so far
        best: list[tuple[float, int]] = [(0.0, 0)] + [(math.inf, 0)] * k
        groups: list[list[tuple[float, int]]] = []
        # a suitless joker is worth throwing before anything (it wins any trick it is played to)
        groups.append([(3.0 * (len(jokers) - j), sum(1 << c for c in jokers[:j])) for j in range(min(k, len(jokers)) + 1)])
        for s in range(4):
            cards = [c for c in reversed(t.top_down[s]) if hand >> c & 1]  # low to high
            options: list[tuple[float, int]] = []
            for j in range(min(k, len(cards)) + 1):
                options.append(min(
                    ((self._misere_suit_danger([c for c in cards if c not in combo], outside), sum(1 << c for c in combo))
                     for combo in itertools.combinations(cards, j)),
                    key=lambda x: (x[0], -x[1]),  # ties: throw the higher cards
                ))
            groups.append(options)
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

    def _misere_danger(self, hand: int) -> tuple[float, float]:
        """The hand's misère danger once the kitty's worth of its worst cards is thrown, and the same
        for open misère (the kitty may bring bad cards too: the calibration accounts for that)."""
        danger, _thrown = self._misere_best_throw(hand, self.rules.kitty_size, self.deck & ~hand)
        return danger, danger

    def _tricks(self, own: float, strain: int) -> tuple[float, float]:
        """Expected side tricks (and their spread) for an own-hand estimate, partner unknown."""
        a, b, sigma = self._fit["nt"] if strain == 4 else self._fit["suit"]
        return a + b * own, sigma

    def _shown_own(self, bid: int) -> float:
        """The own-hand estimate a trick bid shows (this agent bids about what it expects to make)."""
        a, b, _sigma = self._fit["nt"] if bid_strain(bid) == 4 else self._fit["suit"]
        return (bid_tricks(bid) - a) / b + 0.3

    def _bid(self, v: _View, legal: list[int]) -> int:
        """The legal bid with the best expected score, if it beats the expected score of passing.

        A contract is worth ``value × (2·P(make) − 1)`` less the opponents' defence points; the
        side's tricks are normal around the calibrated estimate. The partner's bids add what they
        showed (in their strain), a pass or a misère subtracts; passing is worth what the current
        contract is expected to score for (the partner's) or against (an opponent's) this side.
        """
        rules = self.rules
        ev = self._evaluate(v.hand)
        fit = self._fit
        n = v.n
        partner = 2 if n == 4 else -1
        high, high_seat = 0, -1
        for b, r in v.bids:
            if high == 0 or bid_rank(b, rules) > bid_rank(high, rules):
                high, high_seat = b, r
        partner_bids = [b for b, r in v.bids if r == partner]
        partner_best = max(partner_bids, key=lambda b: bid_rank(b, rules)) if partner_bids else 0
        partner_passed = partner >= 0 and bool(v.passed >> partner & 1)
        # strains an opponent bid: they hold its high cards, so it plays worse for this side
        opponent_strains = {bid_strain(b) for b, r in v.bids if r not in (0, partner) and is_trick_bid(b)}
        support = fit["support"]  # a partner's hand is worth a little less than the contractor's own

        def side_tricks(strain: int) -> tuple[float, float]:
            tricks, sigma = self._tricks(ev["own"][strain], strain)
            if strain in opponent_strains:
                tricks -= fit["opponent_strain"]
            if partner < 0:
                return tricks, sigma
            if partner_best and is_trick_bid(partner_best):
                s = bid_strain(partner_best)
                if s == strain:
                    avg = fit["own_avg_nt"] if s == 4 else fit["own_avg"]
                    tricks += support * self._fit_b(s) * (self._shown_own(partner_best) - avg)
                else:
                    tricks += fit["other_suit_help"]
            elif partner_best:
                tricks -= 0.8  # a misère bidder holds few tricks
            elif partner_passed:
                tricks -= fit["pass_penalty"]
            return tricks, sigma

        defence_points = rules.defence_tricks == "10_per_trick"
        scale_opp = 1.0 if n == 4 else 0.5  # with three players an opponent's result is shared
        # The game's ends count too: a contract whose loss sinks this side to the losing score loses
        # the game (worth a contract's worth more), and one whose making reaches the target wins it.
        own_score = 10 * v.scores[0] if v.scores else 0
        best_action, best_ev = PASS, -1e9
        for a in legal:
            if a == PASS:
                continue
            value = bid_value(a, rules.misere_value)
            if is_trick_bid(a):
                k, s = bid_tricks(a), bid_strain(a)
                tricks, sigma = side_tricks(s)
                p = _phi((tricks + 0.5 - k) / sigma)
                e = value * (2 * p - 1)
                if rules.slam_bonus and value < 250:
                    e += (250 - value) * _phi((tricks - 9.5) / sigma)
                if defence_points:
                    e -= 10 * max(0.0, 10 - tricks) * scale_opp
            elif a == MISERE:
                p = self._misere_probability(ev["danger"], open_=False)
                e = value * (2 * p - 1)
            elif a == OPEN_MISERE:
                p = self._misere_probability(ev["open_danger"], open_=True)
                e = value * (2 * p - 1)
            else:
                continue
            if own_score - value <= rules.losing_score:
                e -= fit["game_end"] * (1 - p)
            if own_score + value >= rules.target:
                e += 0.5 * fit["game_end"] * p
            if e > best_ev:
                best_action, best_ev = a, e

        pass_ev = 0.0
        if high:
            value = bid_value(high, rules.misere_value)
            if high_seat == partner:
                if is_trick_bid(high):
                    s = bid_strain(high)
                    tricks, sigma = self._tricks(self._shown_own(high), s)
                    avg = fit["own_avg_nt"] if s == 4 else fit["own_avg"]
                    tricks += support * self._fit_b(s) * (ev["own"][s] - avg)
                    p = _phi((tricks + 0.5 - bid_tricks(high)) / sigma)
                    pass_ev = value * (2 * p - 1) - (10 * max(0.0, 10 - tricks) if defence_points else 0.0)
                else:
                    pass_ev = 0.3 * value
            elif is_trick_bid(high):
                s = bid_strain(high)
                _t, sigma = self._tricks(0.0, s)
                # they bid what they expect to make; this hand's defence beyond the average spoils it
                theirs = bid_tricks(high) + 0.3 - fit["defence_weight"] * (ev["defence"][s] - fit["defence_avg"])
                p = _phi((theirs + 0.5 - bid_tricks(high)) / sigma)
                pass_ev = -value * (2 * p - 1) * scale_opp
                if defence_points:
                    pass_ev += 10 * max(0.0, 10 - theirs) * (1.0 if n == 4 else 0.5)
            else:
                pass_ev = -0.3 * value * scale_opp
        if best_action != PASS and (best_ev > pass_ev + fit["margin"] or PASS not in legal):
            return best_action
        return PASS if PASS in legal else best_action

    def _fit_b(self, strain: int) -> float:
        return self._fit["nt"][1] if strain == 4 else self._fit["suit"][1]

    def _misere_probability(self, danger: float, open_: bool) -> float:
        fit = self._fit
        a, b = fit["open_misere"] if open_ else fit["misere"]
        return 1.0 / (1.0 + math.exp(-(a - b * danger)))

    # -- the kitty -------------------------------------------------------------------------------
    def _discard(self, v: _View, legal: list[int]) -> int:
        t = v.t
        hand = v.hand
        if v.contract in (MISERE, OPEN_MISERE):
            cards = [a - FIRST_CARD_ACTION for a in legal]
            left = self.rules.kitty_size - v.discards.bit_count()
            _danger, thrown = self._misere_best_throw(hand, left, self.deck & ~hand & ~v.discards)
            choice = [c for c in cards if thrown >> c & 1] or cards
            return FIRST_CARD_ACTION + max(choice, key=lambda c: t.strength[c])
        trump = v.trump
        nt = trump < 0
        best, best_score = legal[0], -1e9
        for a in legal:
            c = a - FIRST_CARD_ACTION
            rest = hand & ~(1 << c)
            # keep the hand that is worth most tricks (voids for ruffing, stoppers at no trumps);
            # among equals, throw the card that matters least
            value = self._nt_tricks(rest) if nt else self._suit_tricks(rest, trump)
            score = 10.0 * value - self._discard_keep(t, hand, c, trump) / 1000.0
            if score > best_score:
                best, best_score = a, score
        return best

    def _discard_keep(self, t: _Tables, hand: int, c: int, trump: int) -> float:
        """How much a card is worth keeping, as a tie-break between equally good discards."""
        e = t.eff[c]
        if e == SUITLESS:
            return 1000.0
        if trump >= 0 and e == trump:
            return 500.0 + t.strength[c]
        higher_out = t.higher[c] & ~hand
        length = (hand & t.suit[e]).bit_count()
        if not higher_out:
            return 200.0 + t.strength[c]  # a winner
        missing = higher_out.bit_count()
        if trump < 0:
            # keep stoppers and long suits: a king with a guard, a queen with two
            return t.strength[c] + 3.0 * length + (40.0 if missing < length else 0.0)
        return t.strength[c] + 2.0 * length + (15.0 if missing == 1 and length >= 2 else 0.0)

    # -- joker nomination ------------------------------------------------------------------------
    def _nominate(self, v: _View, legal: list[int]) -> int:
        if v.contract in (MISERE, OPEN_MISERE):
            return NO_NOMINATION
        hand = v.hand
        best, best_value = NO_NOMINATION, self._nt_value(hand, NO_TRUMP_CTX) - 0.2
        for s in range(4):
            a = FIRST_NOMINATE + s
            if a not in legal:
                continue
            value = self._nt_value(hand, NO_TRUMP_CTX + 1 + s)
            if value > best_value:
                best, best_value = a, value
        return best

    # -- card play -------------------------------------------------------------------------------
    def _play(self, v: _View, legal: list[int]) -> int:
        self._setup_play(v)
        if v.contract in (MISERE, OPEN_MISERE):
            if v.contractor == 0:
                return self._misere_declarer(v, legal)
            return self._misere_defender(v, legal)
        if v.trick:
            return self._follow(v, legal)
        return self._lead(v, legal)

    def _enemy_possible(self, v: _View) -> int:
        m = 0
        for e in v.enemies:
            m |= v.possible[e]
        return m

    def _may_ruff(self, v: _View, e: int, suit: int) -> bool:
        """Whether enemy ``e`` may be void in ``suit`` and hold a trump."""
        t = v.t
        if v.trump < 0 or suit == v.trump:
            return False
        pos = v.possible[e]
        if not pos & t.suit[v.trump]:
            return False
        return not pos & t.suit[suit] or (v.unseen & t.suit[suit]).bit_count() <= 2

    def _beats(self, v: _View, e: int, led: int, key: int) -> bool:
        """Whether enemy ``e``, still to play, may beat a card of strength ``key`` in a trick led ``led``."""
        t = v.t
        keys = t.key[led]
        pos = v.possible[e]
        follow = pos & t.suit[led]
        for c in mask_to_cards(follow):
            if keys[c] > key:
                return True
        void_possible = not follow or (v.unseen & t.suit[led]).bit_count() <= 2
        if not void_possible:
            return False
        for c in mask_to_cards(pos & ~t.suit[led]):
            if keys[c] > key:
                return True
        return False

    def _rest(self, v: _View) -> list[int]:
        """Seats still to play to this trick after the observer."""
        out = []
        seat = 1 % v.n
        for _ in range(v.n):
            if seat == v.leader or seat == 0:
                break
            if seat != v.sitting_out and not v.trick_cards[seat]:
                out.append(seat)
            seat = (seat + 1) % v.n
        return out

    def _winner(self, v: _View) -> tuple[int, int, int]:
        """The seat, card and key winning the current trick so far."""
        keys = v.t.key[v.led_suit]
        best_seat, best_card, best_key = -1, -1, -1
        for seat, card in v.trick:
            if keys[card] > best_key:
                best_seat, best_card, best_key = seat, card, keys[card]
        return best_seat, best_card, best_key

    def _keep_value(self, v: _View, c: int, enemy: int) -> float:
        """How much this card is worth keeping (lowest is thrown first)."""
        t = v.t
        e = t.eff[c]
        if e == SUITLESS:
            return 1000.0
        if v.trump >= 0 and e == v.trump:
            return 500.0 + t.strength[c]
        if not t.higher[c] & enemy:
            return 200.0 + t.strength[c]
        length = (v.hand & t.suit[e]).bit_count()
        if v.trump >= 0:
            return t.strength[c] + 2.0 * length
        return t.strength[c] + 3.0 * length

    def _throw(self, v: _View, cards: list[int]) -> int:
        enemy = self._enemy_possible(v)
        best = min(cards, key=lambda c: self._keep_value(v, c, enemy))
        return FIRST_CARD_ACTION + best

    def _follow(self, v: _View, legal: list[int]) -> int:
        t = v.t
        led = v.led_suit
        keys = t.key[led]
        cards = [a - FIRST_CARD_ACTION for a in legal]
        w_seat, _w_card, w_key = self._winner(v)
        rest = self._rest(v)
        rest_enemies = [r for r in rest if r in v.enemies]
        winners = sorted((c for c in cards if keys[c] > w_key), key=lambda c: keys[c])

        def safe(key: int) -> bool:
            return not any(self._beats(v, e, led, key) for e in rest_enemies)

        if w_seat in v.friends:
            if safe(w_key) or not winners:
                return self._throw(v, cards)
            # the partner's card may be beaten: take over only with a sure, cheap winner
            for c in winners:
                if safe(keys[c]):
                    if t.eff[c] == v.trump and led != v.trump and t.strength[c] >= 19:
                        break
                    return FIRST_CARD_ACTION + c
            return self._throw(v, cards)
        if not winners:
            return self._throw(v, cards)
        for c in winners:
            if safe(keys[c]):
                return FIRST_CARD_ACTION + c  # the cheapest sure winner
        if not rest_enemies:
            return FIRST_CARD_ACTION + winners[0]
        following = t.eff[winners[0]] == led
        if len(v.trick) == 1 and following and any(r in v.friends for r in rest):
            return self._throw(v, cards)  # second hand low: the partner still plays after
        if following:
            return FIRST_CARD_ACTION + winners[-1]  # third hand high
        # ruffing with no sure winner: ruff low and hope (an overruff is only possible, not known)
        return FIRST_CARD_ACTION + winners[0]

    def _is_boss(self, v: _View, c: int, enemy: int) -> bool:
        """A card no enemy can beat when it is led."""
        t = v.t
        if t.higher[c] & enemy:
            return False
        e = t.eff[c]
        if e == SUITLESS or (v.trump >= 0 and e == v.trump):
            return True
        if v.trump < 0:
            # only a suitless joker can beat it, played by an enemy who may be void in the suit
            short = (v.unseen & t.suit[e]).bit_count() <= 2
            return not any(v.possible[x] & t.suit[SUITLESS] and (short or not v.possible[x] & t.suit[e])
                           for x in v.enemies)
        return not any(self._may_ruff(v, x, e) for x in v.enemies)

    def _lead(self, v: _View, legal: list[int]) -> int:
        t = v.t
        hand = v.hand
        cards = [a - FIRST_CARD_ACTION for a in legal if a < FIRST_JOKER_LEAD]
        joker_leads = [a for a in legal if FIRST_JOKER_LEAD <= a < FIRST_NOMINATE]
        enemy = self._enemy_possible(v)
        trump = v.trump
        declaring = v.contractor == 0 or (v.n == 4 and v.contractor == 2)
        bosses = [c for c in cards if self._is_boss(v, c, enemy)]

        def suit_len(c: int) -> int:
            return (hand & t.suit[t.eff[c]]).bit_count()

        if trump >= 0:
            tm = t.suit[trump]
            my_trumps = [c for c in cards if t.eff[c] == trump]
            enemy_trumps = enemy & tm
            if declaring and enemy_trumps and my_trumps:
                top = max(my_trumps, key=lambda c: t.strength[c])
                if not t.higher[top] & enemy:
                    return FIRST_CARD_ACTION + top  # draw trumps with a sure winner
                if v.contractor == 0 and len(my_trumps) >= 3:
                    return FIRST_CARD_ACTION + min(my_trumps, key=lambda c: t.strength[c])  # flush the honours
                if v.contractor == 2 and not v.shown_void[2] >> trump & 1:
                    return FIRST_CARD_ACTION + min(my_trumps, key=lambda c: t.strength[c])  # to the contractor
            side_bosses = [c for c in bosses if t.eff[c] != trump]
            if side_bosses:
                return FIRST_CARD_ACTION + max(side_bosses, key=lambda c: (suit_len(c), t.strength[c]))
            if bosses and declaring:
                return FIRST_CARD_ACTION + max(bosses, key=lambda c: t.strength[c])
            side = [c for c in cards if t.eff[c] != trump]
            if not declaring and side:
                if my_trumps:
                    singles = [c for c in side if suit_len(c) == 1]
                    if singles:
                        return FIRST_CARD_ACTION + min(singles, key=lambda c: t.strength[c])
                lead = self._partner_suit_lead(v, side)
                if lead is not None:
                    return lead
            if side:
                return self._lead_from_long(v, side, enemy)
            return FIRST_CARD_ACTION + min(cards, key=lambda c: t.strength[c])

        # no trumps: run the long suits' winners, develop the longest suit, and keep the short
        # suits' aces as stoppers and ways back in
        regular = [c for c in bosses if t.eff[c] != SUITLESS]
        running = [c for c in regular if suit_len(c) >= 3]
        if running:
            return FIRST_CARD_ACTION + max(running, key=lambda c: (suit_len(c), t.strength[c]))
        if joker_leads and declaring:
            # a sure trick that also pulls the others' cards of our long suit
            return max(joker_leads, key=lambda a: ((hand & t.suit[(a - FIRST_JOKER_LEAD) % 4]).bit_count(), -a))
        if not declaring and cards:
            lead = self._partner_suit_lead(v, cards)
            if lead is not None:
                return lead
        long_cards = [c for c in cards if t.eff[c] != SUITLESS and suit_len(c) >= 3]
        if long_cards:
            return self._lead_from_long(v, long_cards, enemy)
        if regular:
            return FIRST_CARD_ACTION + max(regular, key=lambda c: (suit_len(c), t.strength[c]))
        if cards:
            return self._lead_from_long(v, cards, enemy)
        return joker_leads[0] if joker_leads else legal[0]

    def _partner_suit_lead(self, v: _View, cards: list[int]) -> int | None:
        """Lead the suit the partner bid, if we hold it (top of a doubleton, else low)."""
        if v.n != 4 or v.sitting_out == 2:
            return None
        t = v.t
        suits = {bid_strain(b) for b, r in v.bids if r == 2 and is_trick_bid(b)}
        for s in sorted(suits, reverse=True):
            if s >= 4 or s == v.trump:
                continue
            mine = [c for c in cards if t.eff[c] == s]
            if mine:
                pick = max(mine, key=lambda c: t.strength[c]) if len(mine) <= 2 else min(mine, key=lambda c: t.strength[c])
                return FIRST_CARD_ACTION + pick
        return None

    def _lead_from_long(self, v: _View, cards: list[int], enemy: int) -> int:
        """Lead from the longest suit: the top of a sequence that knocks out one honour, else low."""
        t = v.t
        by_suit: dict[int, list[int]] = {}
        for c in cards:
            by_suit.setdefault(t.eff[c], []).append(c)
        declaring = v.contractor == 0 or (v.n == 4 and v.contractor == 2)

        def score(s: int) -> tuple:
            mine = by_suit[s]
            ruffable = v.trump >= 0 and s != v.trump and any(self._may_ruff(v, e, s) for e in v.enemies)
            # defenders avoid leading into the contractor's void; everyone avoids trumps unless forced
            return (not ruffable, s != v.trump or declaring, len(mine), s)

        s = max(by_suit, key=score)
        mine = sorted(by_suit[s], key=lambda c: -t.strength[c])
        top = mine[0]
        if (len(mine) >= 2 and (t.higher[top] & enemy).bit_count() == 1
                and t.higher[mine[1]] & v.unseen == t.higher[top] & v.unseen):
            return FIRST_CARD_ACTION + top
        return FIRST_CARD_ACTION + mine[-1]

    # -- misère ----------------------------------------------------------------------------------
    def _misere_declarer(self, v: _View, legal: list[int]) -> int:
        t = v.t
        hand = v.hand
        enemy = self._enemy_possible(v)
        cards = [a - FIRST_CARD_ACTION for a in legal if a < FIRST_JOKER_LEAD]
        if not v.trick:
            if not cards:
                return legal[0]
            # lead a card the enemies cannot get under, in a suit they still hold, and among those
            # the one whose loss leaves the rest of the hand safest (low cards guard high ones)
            def lead_score(c: int) -> float:
                e = t.eff[c]
                if e == SUITLESS:
                    return 1e6
                held = sum(1 for x in v.enemies if v.possible[x] & t.suit[e])
                risk = 0.6 * (t.lower[c] & enemy).bit_count()
                if held == 0:
                    risk += 10.0  # nobody can follow: the lead wins
                elif held < len(v.enemies) or (v.unseen & t.suit[e]).bit_count() <= 2:
                    risk += 0.5
                return 3.0 * risk + self._misere_hand_danger(hand & ~(1 << c), enemy)

            return FIRST_CARD_ACTION + min(cards, key=lead_score)
        keys = t.key[v.led_suit]
        _w_seat, _w_card, w_key = self._winner(v)
        following = [c for c in cards if t.eff[c] == v.led_suit]
        if following:
            under = [c for c in following if keys[c] < w_key]
            if under:
                return FIRST_CARD_ACTION + max(under, key=lambda c: keys[c])  # duck as high as possible
            return FIRST_CARD_ACTION + min(following, key=lambda c: keys[c])
        # void: throw the most dangerous card, never a suitless joker (it would win the trick)
        safe = [c for c in cards if t.eff[c] != SUITLESS] or cards
        return FIRST_CARD_ACTION + self._misere_throw(hand, safe, enemy)

    def _misere_defender(self, v: _View, legal: list[int]) -> int:
        t = v.t
        c_seat = v.contractor
        decl = v.possible[c_seat]
        cards = [a - FIRST_CARD_ACTION for a in legal if a < FIRST_JOKER_LEAD]
        not_joker = [c for c in cards if t.eff[c] != SUITLESS] or cards
        if not v.trick:
            if not not_joker:
                return legal[0]

            def attack(c: int) -> tuple:
                e = t.eff[c]
                held = decl & t.suit[e]
                if not held:
                    return (1, 0, 0)
                # the contractor must win if all its cards of the suit are above ours
                under = (t.lower[c] & held).bit_count()
                return (0, under, t.strength[c])

            return FIRST_CARD_ACTION + min(not_joker, key=attack)
        keys = t.key[v.led_suit]
        w_seat, _w_card, w_key = self._winner(v)
        following = [c for c in not_joker if t.eff[c] == v.led_suit]
        decl_played = bool(v.trick_cards[c_seat])
        if decl_played:
            if w_seat == c_seat:
                if not following:  # void: any card stays under; throw a high one, keep low ones to lead
                    return FIRST_CARD_ACTION + max(not_joker, key=lambda c: t.strength[c])
                under = [c for c in following if keys[c] < w_key]
                if under:
                    return FIRST_CARD_ACTION + max(under, key=lambda c: keys[c])
            return FIRST_CARD_ACTION + max(following or not_joker, key=lambda c: keys[c] if following else t.strength[c])
        if following:
            return FIRST_CARD_ACTION + min(following, key=lambda c: keys[c])
        # void: keep the bar low for the contractor and throw a high card
        return FIRST_CARD_ACTION + max(not_joker, key=lambda c: t.strength[c])


# "suit"/"nt" (a, b, sigma): the side's tricks ≈ a + b · own-hand estimate, with spread sigma;
# "own_avg", "own_avg_nt", "defence_avg": the estimates of an average hand; "misere"/"open_misere"
# (a, b): P(make) = 1 / (1 + exp(-(a - b · danger))). These are fitted to the agent's own play by
# benchmarks/calibrate_heuristic.py. The rest were set by duplicate matches of variants against
# each other: "support" (a partner's hand is worth this share of the contractor's own),
# "other_suit_help", "pass_penalty", "opponent_strain" (tricks), "defence_weight", "margin"
# (points a bid must beat passing by) and "game_end" (what losing or winning the game is worth).
_CALIBRATION: dict[str, dict[str, Any]] = {
    "australian": {
        "suit": (4.21, 0.62, 1.6), "nt": (3.82, 0.66, 1.78), "own_avg": 2.57, "own_avg_nt": 1.79,
        "defence_avg": 1.64, "defence_weight": 0.6, "support": 0.8, "other_suit_help": 0.3, "pass_penalty": 0.4,
        "opponent_strain": 0.8, "misere": (0.74, 0.7), "open_misere": (0.36, 0.71), "margin": 10.0, "game_end": 500.0,
    },
    "italian_3p": {
        "suit": (1.87, 0.85, 1.39), "nt": (0.64, 0.9, 1.97), "own_avg": 3.17, "own_avg_nt": 2.72,
        "defence_avg": 2.24, "defence_weight": 0.8, "support": 0.8, "other_suit_help": 0.0, "pass_penalty": 0.0,
        "opponent_strain": 0.8, "misere": (0.53, 1.32), "open_misere": (0.17, 1.34), "margin": 10.0, "game_end": 500.0,
    },
    "french_46": {
        "suit": (5.27, 0.52, 1.66), "nt": (3.26, 0.87, 1.75), "own_avg": 2.61, "own_avg_nt": 1.69,
        "defence_avg": 1.62, "defence_weight": 0.6, "support": 0.8, "other_suit_help": 0.3, "pass_penalty": 0.4,
        "opponent_strain": 0.8, "misere": (0.74, 0.7), "open_misere": (0.36, 0.71), "margin": 10.0, "game_end": 500.0,
    },
}
