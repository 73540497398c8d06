"""Misère and open misère play (docs/rules.md §7, §8): the contractor must take no trick.

The contractor leads what the enemies can get under, ducks as high as it can and throws its most
dangerous cards (:meth:`~agents.heuristic.evaluation.HandEvaluator.misere_hand_danger`); the
defenders lead low into the contractor's cards and stay under the contractor's card.
"""

from __future__ import annotations

from agents.heuristic.evaluation import HandEvaluator
from agents.heuristic.view import TableView
from five_hundred_env.actions import action_card, card_action, is_card_action
from five_hundred_env.engine import SUITLESS

_NOBODY_FOLLOWS = 10.0
"""Lead risk of a suit no enemy may hold: the lead wins the trick."""
_FEW_FOLLOW = 0.5
"""Lead risk of a suit some enemy may be out of, or with two cards or fewer out."""


def misere_declarer(v: TableView, legal: list[int], evaluator: HandEvaluator) -> int:
    """The misère contractor's card."""
    t = v.t
    hand = v.hand
    enemy = v.enemy_possible()
    cards = [action_card(a) for a in legal if is_card_action(a)]
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
                risk += _NOBODY_FOLLOWS
            elif held < len(v.enemies) or (v.unseen & t.suit[e]).bit_count() <= 2:
                risk += _FEW_FOLLOW
            return 3.0 * risk + evaluator.misere_hand_danger(hand & ~(1 << c), enemy)

        return card_action(min(cards, key=lead_score))
    keys = t.key[v.led_suit]
    _w_seat, _w_card, w_key = v.winner()
    following = [c for c in cards if t.eff[c] == v.led_suit]
    if following:
        under = [c for c in following if keys[c] < w_key]
        if under:
            return card_action(max(under, key=lambda c: keys[c]))  # duck as high as possible
        return card_action(min(following, key=lambda c: keys[c]))
    # void: throw the most dangerous card, never a suitless joker (it would win the trick)
    safe = [c for c in cards if t.eff[c] != SUITLESS] or cards
    return card_action(evaluator.misere_throw(hand, safe, enemy))


def misere_defender(v: TableView, legal: list[int]) -> int:
    """A defender's card against a misère."""
    t = v.t
    c_seat = v.contractor
    cards = [action_card(a) for a in legal if is_card_action(a)]
    not_joker = [c for c in cards if t.eff[c] != SUITLESS] or cards
    if not v.trick:
        if not not_joker:
            return legal[0]
        decl = v.possible[c_seat]

        def attack(c: int) -> tuple[int, int, int]:
            held = decl & t.suit[t.eff[c]]
            if not held:
                return (1, 0, 0)
            # the contractor must win if all its cards of the suit are above ours
            under = (t.lower[c] & held).bit_count()
            return (0, under, t.strength[c])

        return card_action(min(not_joker, key=attack))
    keys = t.key[v.led_suit]
    w_seat, _w_card, w_key = v.winner()
    following = [c for c in not_joker if t.eff[c] == v.led_suit]
    if v.trick_cards[c_seat]:
        if w_seat == c_seat:
            if not following:  # void: any card stays under; throw a high one, keep low ones to lead
                return card_action(max(not_joker, key=lambda c: t.strength[c]))
            under = [c for c in following if keys[c] < w_key]
            if under:
                return card_action(max(under, key=lambda c: keys[c]))
        return card_action(max(following or not_joker, key=lambda c: keys[c] if following else t.strength[c]))
    if following:
        return card_action(min(following, key=lambda c: keys[c]))
    # void: keep the bar low for the contractor and throw a high card
    return card_action(max(not_joker, key=lambda c: t.strength[c]))
