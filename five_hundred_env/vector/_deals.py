"""The checks of what is loaded into a batched engine's games: scores (``set_deal``,
``load_position``, ``set_scores``, ``load_deals``) and deals given by card id (``load_deals``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from five_hundred_env.engine import check_scores
from five_hundred_env.rules import Rules

MAX_SCORE = 2**31 - 1
"""The largest score (either sign) a batched game holds; the engine's rows are int64."""


def check_sides(rules: Rules, scores: Sequence[int]) -> list[int]:
    """``check_scores`` (per side) for a batched game, whose scores must also fit its int64 rows."""
    sides = check_scores(rules, scores)
    if any(abs(v) > MAX_SCORE for v in sides):
        raise ValueError(f"scores must lie within ±{MAX_SCORE:,}, got {sides}")
    return sides


def check_side_rows(rules: Rules, scores: Any, games: np.ndarray) -> np.ndarray:
    """:func:`check_sides` of many games' scores at once (``[len(games), sides]`` whole numbers)."""
    rows = np.asarray(scores)
    if rows.shape != (len(games), rules.num_sides) or not np.issubdtype(rows.dtype, np.integer):
        raise ValueError(f"scores must be [{len(games)}, {rules.num_sides}] whole numbers (one per side), got shape "
                         f"{rows.shape} of {rows.dtype}")
    # A side at the target from defence points alone has not won while a contract is needed (§9).
    top = MAX_SCORE + 1 if rules.win_needs_contract else min(rules.target, MAX_SCORE + 1)
    bad = ((rows >= top) | (rows <= max(rules.losing_score, -MAX_SCORE - 1))).any(axis=1)
    if bad.any():
        first = int(np.argmax(bad))
        try:
            check_sides(rules, rows[first].tolist())
        except ValueError as e:
            raise ValueError(f"game {games[first]}: {e}") from None
    return rows


def deal_masks(rules: Rules, bit_of_card: np.ndarray, games: np.ndarray, cards: Any, dealers: Any
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kernel masks (``uint64``, bits ``bit_of_card[id]``) of ``games``' hands (``[G, n]``) and
    kitties (``[G]``), and their dealers, from ``cards[i]``: game ``games[i]``'s hands in seat order,
    then its kitty, by universal card id. A wrong shape, a card outside the pack or dealt twice,
    or a dealer out of range raises ``ValueError`` naming the first game at fault."""
    n, size = rules.num_players, rules.hand_size
    width = n * size + rules.kitty_size
    cards = np.asarray(cards)
    if cards.shape != (len(games), width) or not np.issubdtype(cards.dtype, np.integer):
        raise ValueError(f"cards must be [{len(games)}, {width}] card ids ({n} hands of {size}, then the kitty "
                         f"of {rules.kitty_size}), got shape {cards.shape} of {cards.dtype}")
    dealers = np.asarray(dealers)
    if dealers.shape != games.shape or not np.issubdtype(dealers.dtype, np.integer) or ((dealers < 0) | (dealers >= n)).any():
        raise ValueError(f"dealers must be {len(games)} seats 0..{n - 1}, got {dealers!r}")
    inside = (cards >= 0) & (cards < len(bit_of_card))
    bits = np.where(inside, bit_of_card[np.where(inside, cards, 0)], -1)
    if (bits < 0).any():
        row, column = np.argwhere(bits < 0)[0]
        raise ValueError(f"game {games[row]}: card id {cards[row, column]} is not in the {rules.preset} pack")
    ones = np.left_shift(np.uint64(1), bits.astype(np.uint64))
    hands = np.bitwise_or.reduce(ones[:, :n * size].reshape(len(games), n, size), axis=2)
    kitty = np.bitwise_or.reduce(ones[:, n * size:], axis=1)
    repeated = np.bitwise_count(np.bitwise_or.reduce(hands, axis=1) | kitty) != width
    if repeated.any():
        raise ValueError(f"game {games[np.argmax(repeated)]}: a card is dealt twice")
    return hands, kitty, dealers.astype(np.int64)
