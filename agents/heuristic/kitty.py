"""The contractor's kitty (docs/rules.md §5), partner call (§10.5) and joker nomination (§7): which
cards to discard, which card (or seat) to call, and the suit to name a no-trumps joker.

A trick contract keeps the hand worth most tricks (trumps, winners, voids; stoppers at no trumps);
a misère throws what leaves the least danger, a suitless joker first. The five-handed call names
the card that adds most to the hand's trick estimate.
"""

from __future__ import annotations

from agents.heuristic.evaluation import HandEvaluator
from agents.heuristic.view import CardTables, TableView
from five_hundred_env.actions import (
    FIRST_NOMINATE,
    FIRST_PARTNER,
    NO_NOMINATION,
    action_card,
    bid_strain,
    card_action,
    is_trick_bid,
)
from five_hundred_env.engine import NO_TRUMP_CTX, SUITLESS, bid_rank
from five_hundred_env.rules import Rules
from five_hundred_env.scoring import is_misere

_NOMINATION_MARGIN = 0.2
"""Tricks a nomination must add before the joker is named a suit (a suitless joker keeps options)."""


def _discard_keep(t: CardTables, hand: int, c: int, trump: int) -> float:
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


class KittyPlayer:
    """Discards and nominations for one rule set."""

    def __init__(self, rules: Rules, evaluator: HandEvaluator) -> None:
        self.rules = rules
        self.kitty_size = rules.kitty_size
        self.deck = rules.deck
        self.evaluator = evaluator

    def discard(self, v: TableView, legal: list[int]) -> int:
        """The next card to discard."""
        if is_misere(v.contract):
            return self._misere_discard(v, legal)
        t = v.t
        hand = v.hand
        trump = v.trump
        evaluator = self.evaluator
        best, best_score = legal[0], -1e9
        for a in legal:
            c = action_card(a)
            rest = hand & ~(1 << c)
            # keep the hand that is worth most tricks (voids for ruffing, stoppers at no trumps);
            # among equals, throw the card that matters least
            value = evaluator.nt_tricks(rest) if trump < 0 else evaluator.suit_tricks(rest, trump)
            score = 10.0 * value - _discard_keep(t, hand, c, trump) / 1000.0
            if score > best_score:
                best, best_score = a, score
        return best

    def _misere_discard(self, v: TableView, legal: list[int]) -> int:
        """A card of the least dangerous throw of the discards still to make (the highest first)."""
        hand = v.hand
        cards = [action_card(a) for a in legal]
        left = self.kitty_size - v.discards.bit_count()
        _danger, thrown = self.evaluator.misere_best_throw(hand, left, self.deck & ~hand & ~v.discards)
        choice = [c for c in cards if thrown >> c & 1] or cards
        return card_action(max(choice, key=lambda c: v.t.strength[c]))

    def call(self, v: TableView, legal: list[int]) -> int:
        """The five-handed partner call (§10.5): the card that adds most tricks to the hand (never
        a discard: that would mean playing alone), or with ``partner_call=seat`` the seat whose
        bids showed most in the contract's strain."""
        if legal[0] >= FIRST_PARTNER:
            return self._call_seat(v, legal)
        hand = v.hand
        trump = v.trump
        evaluator = self.evaluator

        def worth(h: int) -> float:
            return evaluator.nt_tricks(h) if trump < 0 else evaluator.suit_tricks(h, trump)

        base = worth(hand)
        best, best_gain = legal[0], -1e9
        for a in legal:
            c = action_card(a)
            if v.discards >> c & 1:
                continue
            gain = worth(hand | 1 << c) - base + v.t.strength[c] / 1000.0  # ties: the higher card
            if gain > best_gain:
                best, best_gain = a, gain
        return best

    def _call_seat(self, v: TableView, legal: list[int]) -> int:
        strain = bid_strain(v.contract)
        shown = {r: bid_rank(b, self.rules) + (100 if is_trick_bid(b) and bid_strain(b) == strain else 0)
                 for b, r in v.bids if is_trick_bid(b)}
        seats = {(a - FIRST_PARTNER - v.seat) % v.n: a for a in legal}  # relative seat -> PARTNER_s
        return seats[max(seats, key=lambda r: (shown.get(r, -1), -r))]

    def nominate(self, v: TableView, legal: list[int]) -> int:
        """The suit to name the joker at no trumps, where it adds most tricks (none for a misère)."""
        if is_misere(v.contract):
            return NO_NOMINATION
        hand = v.hand
        nt_value = self.evaluator.nt_value
        best, best_value = NO_NOMINATION, nt_value(hand, NO_TRUMP_CTX) - _NOMINATION_MARGIN
        for s in range(4):
            a = FIRST_NOMINATE + s
            if a not in legal:
                continue
            value = nt_value(hand, NO_TRUMP_CTX + 1 + s)
            if value > best_value:
                best, best_value = a, value
        return best
