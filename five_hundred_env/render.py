"""Text rendering of the table (the environment's ``"ansi"`` and ``"human"`` modes, and the CLI).

Shows the contract and contractor, the bidding, the current trick, tricks won, the scores and
the acting player's hand sorted by suit, trumps first and marked with ``*`` (and, in colour
mode, highlighted in yellow; hearts and diamonds in red).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from five_hundred_env.actions import action_to_str
from five_hundred_env.cards import SUIT_SYMBOLS, card_to_str, mask_to_cards
from five_hundred_env.engine import EFFECTIVE_SUIT, SUITLESS, WIN_KEY, Deal, Game, Phase
from five_hundred_env.rules import Rules

_RED, _TRUMP, _RESET = "\033[31m", "\033[1;33m", "\033[0m"


def colour_supported(stream: object = None) -> bool:
    """Whether to print ANSI colours: a terminal, and ``NO_COLOR`` not set."""
    stream = stream or sys.stdout
    return bool(getattr(stream, "isatty", lambda: False)()) and "NO_COLOR" not in os.environ


TRUMPS = -1
"""The group of trumps in :func:`hand_groups` (sorted first)."""


def hand_groups(deal: Deal, seat: int) -> list[tuple[int, list[int]]]:
    """A seat's cards grouped by effective suit, high cards first: trumps first (group
    :data:`TRUMPS`), then S, C, D, H, then a suitless joker (group ``SUITLESS``)."""
    trump = deal.trump
    eff = EFFECTIVE_SUIT[deal.ctx]
    groups: dict[int, list[tuple[int, int]]] = {}
    for card in mask_to_cards(deal.hands[seat]):
        suit = eff[card]
        group = TRUMPS if trump >= 0 and suit == trump else suit
        strength = WIN_KEY[deal.ctx][suit if suit < 4 else 0][card]
        groups.setdefault(group, []).append((strength, card))
    return [(group, [card for _, card in sorted(groups[group], reverse=True)]) for group in sorted(groups)]


def hand_text(deal: Deal, seat: int, colour: bool = False) -> str:
    """A seat's hand grouped by effective suit (trumps first, marked ``*``), high cards first."""
    two = deal.rules.two_jokers
    parts = []
    for group, cards in hand_groups(deal, seat):
        names = []
        for card in cards:
            name = card_to_str(card, two)
            if group == TRUMPS:
                name = f"{_TRUMP}{name}*{_RESET}" if colour else f"{name}*"
            elif colour and group in (2, 3):
                name = f"{_RED}{name}{_RESET}"
            names.append(name)
        label = "trumps" if group == TRUMPS else ("joker" if group == SUITLESS else SUIT_SYMBOLS[group])
        parts.append(f"{label}: {' '.join(names)}")
    return " | ".join(parts) if parts else "(no cards)"


def side_labels(rules: Rules, viewer: int) -> list[str]:
    """Each side's name as the seat ``viewer`` would say it: "you & partner" and "opponents" with
    partners, "you" and the other players' seats when each plays alone."""
    labels = []
    for side in range(rules.num_sides):
        if side == rules.side_of(viewer):
            labels.append("you & partner" if rules.has_partners else "you")
        elif rules.has_partners:
            labels.append("opponents")
        else:
            labels.append(f"player_{rules.seats_of(side)[0]}")
    return labels


def render_table(game: Game, agents: Sequence[str], colour: bool = False, deal: Deal | None = None) -> str:
    """The table as text: contract, bidding, current trick, tricks won, scores, the hand to act.
    ``deal``: the deal to show (default: the game's current deal)."""
    deal = game.deal if deal is None else deal
    rules = deal.rules
    phase = Phase.GAME_OVER if game.is_over else deal.phase
    lines = [f"Five Hundred ({rules.describe()}) — dealer {agents[deal.dealer]}, phase {phase.name.lower()}"]
    auction = " ".join(f"{agents[s][-1]}:{action_to_str(a, rules)}" for s, a in deal.bids)
    lines.append(f"bidding: {auction or '-'}")
    if deal.contract >= 0:
        contract = action_to_str(deal.contract, rules)
        extra = f", joker nominated {'SCDH'[deal.nominated]}" if deal.nominated >= 0 else ""
        out = f", {agents[deal.sitting_out]} sits out" if deal.sitting_out >= 0 else ""
        lines.append(f"contract: {contract} by {agents[deal.contractor]}{extra}{out}")
    elif deal.thrown_in:
        lines.append("contract: none (all passed, thrown in)")
    if deal.phase == Phase.PLAY:
        trick = " ".join(f"{agents[s]}:{card_to_str(c, rules.two_jokers)}" for s, c in deal.trick)
        led = f" (led {'SCDH'[deal.led_suit]})" if deal.led_suit >= 0 else ""
        lines.append(f"trick {len(deal.tricks) + 1}: {trick or '-'}{led}")
    elif deal.tricks:  # the deal is over: its last trick
        _, _, last, winner = deal.tricks[-1]
        trick = " ".join(f"{agents[s]}:{card_to_str(c, rules.two_jokers)}" for s, c in last)
        lines.append(f"last trick: {trick}, won by {agents[winner]}")
    if deal.phase == Phase.PLAY or deal.tricks:
        lines.append("tricks won: " + ", ".join(f"side {i}: {t}" for i, t in enumerate(deal.side_tricks())))
    if deal.exposed:
        lines.append(f"exposed ({agents[deal.contractor]}): {hand_text(deal, deal.contractor, colour)}")
    lines.append("scores: " + ", ".join(f"side {i}: {s}" for i, s in enumerate(game.scores)))
    if game.is_over:
        lines.append("game over; winners: " + ", ".join(f"side {s}" for s in game.winners))
    elif deal.to_act >= 0:
        lines.append(f"{agents[deal.to_act]} to act, hand: {hand_text(deal, deal.to_act, colour)}")
    return "\n".join(lines)
