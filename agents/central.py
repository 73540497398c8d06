"""The hidden facts a centralised critic reads (PPO's ``critic_extra``, expert iteration's value
fit): every hand, the kitty and the discards, oriented to the acting seat. Used in training only,
never to act: a policy reads its seat's observation alone."""

from __future__ import annotations

import numpy as np

from five_hundred_env.engine import Deal
from five_hundred_env.rules import Rules


def central_features(state: np.ndarray, rules: Rules) -> np.ndarray:
    """The hidden facts for a centralised critic: the head of a global state oriented to the
    acting seat (``env.state(agent)``, or rows of ``BatchEngine.state(seats=...)``), every hand
    in relative seat order (the seat itself first), the kitty and the discards, then the dead hand
    (``two_handed``) and the deal's partner as a relative seat (five players), each card set
    :attr:`~five_hundred_env.rules.Rules.card_slots` wide (:func:`central_size` values). The rest
    of the state (the seat's observation) is left out: the critic already reads it."""
    return state[..., :central_size(rules)]


def hidden_cards(deal: Deal, seat: int) -> np.ndarray:
    """:func:`central_features` straight from the engine's deal (what ``env.state(agent)``
    encodes), without encoding the rest of the state: the trainer calls it at every learner
    decision."""
    rules, n = deal.rules, deal.n
    width = rules.card_slots
    bits = 0
    for r in range(n):
        bits |= deal.hands[(seat + r) % n] << (width * r)
    bits |= deal.kitty << (width * n) | deal.discards << (width * (n + 1))
    at = width * (n + 2)
    if rules.dead_hand_size:
        bits |= deal.dead_hand << at
        at += width
    if rules.has_partner_call and deal.partner >= 0:
        bits |= 1 << (at + (deal.partner - seat) % n)
    size = central_size(rules)
    return np.unpackbits(np.frombuffer(bits.to_bytes((size + 7) // 8, "little"), dtype=np.uint8),
                         count=size, bitorder="little").view(np.int8)


def central_size(rules: Rules) -> int:
    """The length of :func:`central_features`: ``(n + 2) × W`` (hands, kitty, discards), ``W``
    more for a dead hand, ``n`` more for a called partner (``W`` = the rules' card slots)."""
    n, width = rules.num_players, rules.card_slots
    return (n + 2 + bool(rules.dead_hand_size)) * width + (n if rules.has_partner_call else 0)


__all__ = ["central_features", "central_size", "hidden_cards"]
