"""The card-name form of a deal (§3, §10.3): explicit hands and kitty by name, checked, and back."""

from __future__ import annotations

from collections.abc import Sequence

from five_hundred_env.cards import card_to_str, mask_to_cards, parse_card
from five_hundred_env.rules import Rules, make_rules


def deal_rules(rules: Rules | str) -> Rules:
    """The rules of an explicit deal: a :class:`Rules`, or a preset name (``ValueError`` otherwise)."""
    rules = make_rules(rules) if isinstance(rules, str) else rules
    if not isinstance(rules, Rules):
        raise ValueError(f"rules must be a Rules object or a preset name, got {type(rules).__name__}")
    return rules


def parse_deal(
    rules: Rules, hands: Sequence[Sequence[str]], kitty: Sequence[str], dealer: int
) -> tuple[list[int], int]:
    """Validate an explicit deal given by card names and return (hand masks, kitty mask)."""
    n = rules.num_players
    if not isinstance(dealer, int) or isinstance(dealer, bool) or not 0 <= dealer < n:
        raise ValueError(f"dealer must be a seat 0..{n - 1}, got {dealer!r}")
    if isinstance(hands, str) or not isinstance(hands, Sequence) or len(hands) != n:
        raise ValueError(f"hands must be a list of {n} hands (one per seat), got {hands!r}")
    seen: dict[int, str] = {}

    def parse_group(cards: Sequence[str], where: str, size: int) -> int:
        if isinstance(cards, str) or not isinstance(cards, Sequence):
            raise ValueError(f"{where} must be a list of card names, got {cards!r}")
        if len(cards) != size:
            raise ValueError(f"{where} must hold {size} cards, got {len(cards)}")
        mask = 0
        for name in cards:
            card = parse_card(name, rules.two_jokers)
            if not rules.deck >> card & 1:
                raise ValueError(f"card {name!r} in {where} is not in the {rules.preset} deck")
            if card in seen:
                raise ValueError(f"card {card_to_str(card, rules.two_jokers)} is dealt twice ({seen[card]} and {where})")
            seen[card] = where
            mask |= 1 << card
        return mask

    hand_masks = [parse_group(h, f"hand {i}", rules.hand_size) for i, h in enumerate(hands)]
    kitty_mask = parse_group(kitty, "the kitty", rules.kitty_size)
    return hand_masks, kitty_mask


def deal_to_cards(rules: Rules, hands: Sequence[int], kitty: int) -> dict[str, list]:
    """The card names of a deal's hands and kitty (the inverse of :func:`parse_deal`)."""
    two = rules.two_jokers
    return {
        "hands": [[card_to_str(c, two) for c in mask_to_cards(h)] for h in hands],
        "kitty": [card_to_str(c, two) for c in mask_to_cards(kitty)],
    }
