"""A picture of the table (the environment's ``"rgb_array"`` mode): an ``H×W×3 uint8`` array.

The seats sit around a green table with the viewer at the bottom: each seat's name, side, bids
and tricks; the current trick (or the last one) in the middle; the contract, the joker's
nomination and the scores on top; the viewer's hand face up along the bottom, sorted as the text
rendering sorts it, with **each trump framed by a thin gold border** (as the French rules' own
table marks them); the other hands face down, except an exposed open-misère hand. Only what the
viewer may see is drawn. Suit symbols are drawn as shapes, so no system font is needed (Pillow's
built-in font draws the text).

Pillow is imported only when a picture is asked for (``pip install pillow``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from five_hundred_env.actions import action_to_str
from five_hundred_env.cards import JOKER1, card_suit, is_joker, rank_letter
from five_hundred_env.engine import Deal, Game, Phase
from five_hundred_env.render import TRUMPS, call_text, hand_groups, is_trump, side_labels

if TYPE_CHECKING:
    from PIL import ImageDraw

WIDTH, HEIGHT = 960, 640
CARD_W, CARD_H = 48, 68
FELT, FELT_DARK, INK, RED, GOLD, BACK = (22, 101, 52), (15, 74, 38), (20, 20, 20), (200, 30, 30), (212, 175, 55), (40, 60, 140)
TEXT, MUTED = (245, 245, 235), (190, 215, 195)


def _pil() -> Any:
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError as e:  # pragma: no cover - depends on the install
        raise ImportError("render_mode='rgb_array' needs Pillow: pip install pillow") from e
    return Image, ImageDraw, ImageFont


def _font(size: int) -> Any:
    return _pil()[2].load_default(size=size)


def _suit_shape(draw: ImageDraw.ImageDraw, suit: int, cx: float, cy: float, r: float, colour: tuple[int, int, int]) -> None:
    """Spade, club, diamond or heart, centred at (cx, cy) with half-size r."""
    if suit == 2:  # diamond
        draw.polygon([(cx, cy - r), (cx + 0.75 * r, cy), (cx, cy + r), (cx - 0.75 * r, cy)], fill=colour)
    elif suit == 3:  # heart: two lobes over a point
        lobe = 0.52 * r
        draw.ellipse([cx - 2 * lobe, cy - r, cx, cy - r + 2 * lobe], fill=colour)
        draw.ellipse([cx, cy - r, cx + 2 * lobe, cy - r + 2 * lobe], fill=colour)
        base = cy - r + 1.3 * lobe
        draw.polygon([(cx - 2 * lobe + 1, base), (cx + 2 * lobe - 1, base), (cx, cy + r)], fill=colour)
    elif suit == 0:  # spade: an upside-down heart and a stem
        lobe = 0.5 * r
        draw.polygon([(cx, cy - r), (cx + 2 * lobe, cy + 0.2 * r), (cx - 2 * lobe, cy + 0.2 * r)], fill=colour)
        draw.ellipse([cx - 2 * lobe, cy - 0.25 * r, cx, cy - 0.25 * r + 2 * lobe], fill=colour)
        draw.ellipse([cx, cy - 0.25 * r, cx + 2 * lobe, cy - 0.25 * r + 2 * lobe], fill=colour)
        draw.polygon([(cx, cy + 0.3 * r), (cx + 0.4 * r, cy + r), (cx - 0.4 * r, cy + r)], fill=colour)
    else:  # club: three balls and a stem
        ball = 0.42 * r
        for bx, by in ((cx, cy - 0.5 * r), (cx - 0.5 * r, cy + 0.1 * r), (cx + 0.5 * r, cy + 0.1 * r)):
            draw.ellipse([bx - ball, by - ball, bx + ball, by + ball], fill=colour)
        draw.polygon([(cx, cy), (cx + 0.4 * r, cy + r), (cx - 0.4 * r, cy + r)], fill=colour)


def _card(draw: ImageDraw.ImageDraw, card: int, x: float, y: float, two_jokers: bool, trump: bool) -> None:
    """A card face at (x, y); a trump gets a thin gold frame."""
    if trump:
        draw.rounded_rectangle([x - 3, y - 3, x + CARD_W + 3, y + CARD_H + 3], radius=7, outline=GOLD, width=3)
    draw.rounded_rectangle([x, y, x + CARD_W, y + CARD_H], radius=5, fill=(252, 252, 248), outline=(120, 120, 120))
    if is_joker(card):
        label = ("JK1" if card == JOKER1 else "JK2") if two_jokers else "JK"
        draw.text((x + 5, y + 4), label, fill=INK, font=_font(15))
        cx, cy, r = x + CARD_W / 2, y + CARD_H / 2 + 8, 12
        star = [(cx + (r if i % 2 == 0 else r / 2.4) * math.sin(i * math.pi / 5),
                 cy - (r if i % 2 == 0 else r / 2.4) * math.cos(i * math.pi / 5)) for i in range(10)]
        draw.polygon(star, fill=(150, 40, 160))
        return
    suit = card_suit(card)
    colour = RED if suit in (2, 3) else INK
    rank = rank_letter(card)
    draw.text((x + 5, y + 3), _RANK_FACES.get(rank, rank), fill=colour, font=_font(18))
    _suit_shape(draw, suit, x + CARD_W / 2 + 4, y + CARD_H / 2 + 10, 13, colour)


_RANK_FACES = {"T": "10", "E": "11", "W": "12", "X": "13"}
"""Ranks printed with their number on the card face."""


def _back(draw: ImageDraw.ImageDraw, x: float, y: float, w: float = 30, h: float = 42) -> None:
    draw.rounded_rectangle([x, y, x + w, y + h], radius=4, fill=BACK, outline=(230, 230, 230), width=2)


def _around(n: int, rx: float, ry: float, cx: float, cy: float) -> list[tuple[float, float]]:
    """``n`` points on an ellipse, relative seat 0 at the bottom, the others clockwise (to its left first)."""
    return [(cx - rx * math.sin(2 * math.pi * rel / n), cy + ry * math.cos(2 * math.pi * rel / n)) for rel in range(n)]


def _seat_positions(n: int) -> list[tuple[float, float]]:
    """Centres of the seat labels around the table."""
    return _around(n, WIDTH / 2 - 150, HEIGHT / 2 - 115, WIDTH / 2, HEIGHT / 2 - 35)


def _trick_offsets(n: int) -> list[tuple[float, float]]:
    """Where each seat's card of the trick lies, towards its seat."""
    return [(x - WIDTH / 2, y) for x, y in _around(n, 75, 55, WIDTH / 2, 0)]


def table_image(game: Game, agents: list[str], viewer: int, deal: Deal | None = None) -> np.ndarray:
    """The table seen by seat ``viewer`` (its hand face up), as an ``HEIGHT×WIDTH×3 uint8`` array."""
    image_cls, draw_mod, _ = _pil()
    deal = game.deal if deal is None else deal
    rules = deal.rules
    n = rules.num_players
    img = image_cls.new("RGB", (WIDTH, HEIGHT), FELT)
    draw = draw_mod.Draw(img)
    draw.ellipse([140, 110, WIDTH - 140, HEIGHT - 190], fill=FELT_DARK)
    small, mid = _font(15), _font(18)

    # the contract and the scores, on top
    phase = Phase.GAME_OVER if game.is_over else deal.phase
    if deal.contract >= 0:
        top = f"contract {action_to_str(deal.contract, rules)} by {agents[deal.contractor]}"
        if deal.nominated >= 0:
            top += f", joker nominated {'SCDH'[deal.nominated]}"
        top += call_text(deal, agents, viewer)
    else:
        top = "all passed: thrown in" if deal.thrown_in else "bidding"
    draw.text((16, 10), f"{top}   ·   {phase.name.lower().replace('_', ' ')}", fill=TEXT, font=mid)
    labels = side_labels(rules, viewer)
    own = rules.side_of(viewer)
    order = sorted(range(rules.num_sides), key=lambda side: (side - own) % rules.num_sides)  # the viewer's side first
    scores = "   ".join(f"{labels[side]} {game.scores[side]}" for side in order)
    draw.text((16, 34), f"scores: {scores}", fill=MUTED, font=small)

    # the seats, the viewer at the bottom
    positions = _seat_positions(n)
    side_tricks = deal.side_tricks()
    for rel in range(n):
        seat = (viewer + rel) % n
        cx, cy = positions[rel]
        bids = [action_to_str(a, rules) for s, a in deal.bids if s == seat]
        name = agents[seat] + (" (dealer)" if seat == deal.dealer else "") + ("  to act" if seat == deal.to_act else "")
        colour = GOLD if seat == deal.to_act else TEXT
        draw.text((cx, cy - 12), name, fill=colour, font=mid, anchor="mm")
        info = f"{labels[rules.side_of(seat)]}, tricks: {side_tricks[rules.side_of(seat)]}"
        if seat in deal.sitting_out_seats:
            info += ", sits out"
        draw.text((cx, cy + 8), info, fill=MUTED, font=small, anchor="mm")
        if bids:  # on a line of its own, so that a side seat's text stays inside the picture
            draw.text((cx, cy + 24), "bids " + " ".join(bids[-3:]), fill=MUTED, font=small, anchor="mm")
        if rel != 0:
            exposed = deal.exposed and seat == deal.contractor
            _other_hand(draw, deal, seat, cx, cy, exposed)

    # the trick in the middle (or the last trick once the deal is over)
    trick = deal.trick if deal.trick or not deal.tricks else list(deal.tricks[-1][2])
    offsets = _trick_offsets(n)
    for seat, card in trick:
        dx, dy = offsets[(seat - viewer) % n]
        _card(draw, card, WIDTH / 2 + dx - CARD_W / 2, (HEIGHT - 80) / 2 + dy - CARD_H / 2, rules.two_jokers,
              is_trump(deal, card))

    # the viewer's hand along the bottom, trumps first and framed in gold
    cards = [(card, group == TRUMPS) for group, group_cards in hand_groups(deal, viewer) for card in group_cards]
    step = min(CARD_W + 8, (WIDTH - 40 - CARD_W) / max(1, len(cards) - 1)) if cards else 0
    x0 = (WIDTH - (step * (len(cards) - 1) + CARD_W)) / 2 if cards else 0
    for i, (card, trump) in enumerate(cards):
        _card(draw, card, x0 + i * step, HEIGHT - CARD_H - 22, rules.two_jokers, trump)
    return np.asarray(img, dtype=np.uint8)


def _other_hand(draw: ImageDraw.ImageDraw, deal: Deal, seat: int, cx: float, cy: float, exposed: bool) -> None:
    """Another seat's cards: face down (how many), or face up when exposed (open misère)."""
    if exposed:
        cards = [card for _group, group_cards in hand_groups(deal, seat) for card in group_cards]
        for i, card in enumerate(cards):
            _card(draw, card, cx - len(cards) * 14 + i * 28, cy + 36, deal.rules.two_jokers, False)
        return
    count = deal.hands[seat].bit_count()
    for i in range(count):
        _back(draw, cx - count * 6 - 9 + i * 12, cy + 36)
