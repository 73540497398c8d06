"""The tables that map the environment's action ids to the kernels' legal-set words (:mod:`._kernels`)."""

from __future__ import annotations

import numpy as np

from five_hundred_env.actions import (
    FIRST_JOKER_LEAD,
    FIRST_NOMINATE,
    FIRST_PARTNER,
    NO_NOMINATION,
    NUM_UNIVERSAL_ACTIONS,
    ActionTable,
    action_card,
    is_card_action,
)
from five_hundred_env.cards import KERNEL_MASK_BITS, kernel_card_ids
from five_hundred_env.vector._layout import LEAD_BIT_HIGH, LEAD_BIT_IN_WORD, PARTNER_BIT

LEGAL_BITS = 2 * KERNEL_MASK_BITS
"""The bits of a legal set (two words, :mod:`._kernels`)."""


def action_word_tables(actions: ActionTable) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(universal id of each compact id, legal-set bit and word kind of each universal id (kind -1:
    no action of these rules), compact id of each (kind, bit)); see :mod:`._kernels` for the
    legal set: kind 0 bids, 1 cards, joker leads and partner calls, 2 nominations."""
    rules = actions.rules
    card_bit = kernel_card_ids(rules.deck)
    lead_bit = LEAD_BIT_IN_WORD if max(card_bit) < LEAD_BIT_IN_WORD else LEAD_BIT_HIGH
    word_bit = np.zeros(NUM_UNIVERSAL_ACTIONS, dtype=np.int64)
    word_kind = np.full(NUM_UNIVERSAL_ACTIONS, -1, dtype=np.int64)
    for u in actions.universal:
        if is_card_action(u):
            word_kind[u], word_bit[u] = 1, card_bit[action_card(u)]
        elif FIRST_JOKER_LEAD <= u < FIRST_NOMINATE:
            word_kind[u], word_bit[u] = 1, lead_bit + u - FIRST_JOKER_LEAD
        elif FIRST_NOMINATE <= u <= NO_NOMINATION:
            word_kind[u], word_bit[u] = 2, u - FIRST_NOMINATE
        elif u >= FIRST_PARTNER:
            word_kind[u], word_bit[u] = 1, PARTNER_BIT + u - FIRST_PARTNER
        else:
            word_kind[u], word_bit[u] = 0, u
    compact_of_word = np.full((3, LEGAL_BITS), -1, dtype=np.int64)
    for compact, u in enumerate(actions.universal):
        compact_of_word[word_kind[u], word_bit[u]] = compact
    return np.array(actions.universal, dtype=np.int64), word_bit, word_kind, compact_of_word
