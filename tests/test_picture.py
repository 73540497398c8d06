"""The picture of the table (``render_mode="rgb_array"``): shape, the gold frame of trumps, and
that it shows only what the viewer may see."""

from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("PIL")

from five_hundred_env import Deal, Game, make_rules
from five_hundred_env.picture import GOLD, HEIGHT, WIDTH, table_image

AGENTS = ["player_0", "player_1", "player_2", "player_3"]


def _gold_pixels(image: np.ndarray) -> int:
    return int(np.all(image == np.array(GOLD, dtype=np.uint8), axis=-1).sum())


def _in_play(preset: str, seed: int) -> Game:
    """A game whose first deal has reached the first trick of a trump contract."""
    rules = make_rules(preset)
    rng = random.Random(seed)
    game = Game(rules, seed=seed)
    deal = game.deal
    while deal.phase.name != "PLAY":
        legal = deal.legal_actions()
        bids = [a for a in legal if 1 <= a <= 25 and (a - 1) % 5 != 4]  # a suit bid when there is one
        game.apply_action(bids[0] if bids and not deal.bids else (0 if 0 in legal else rng.choice(legal)))
    return game


@pytest.mark.parametrize("preset", ["australian", "italian_3p", "french_46"])
def test_picture_is_an_rgb_array_and_frames_trumps(preset: str) -> None:
    """§6: the trumps of the viewer's hand are framed in gold; a hand without trumps has no frame."""
    game = _in_play(preset, seed=1)
    deal = game.deal
    agents = AGENTS[: deal.rules.num_players]
    assert deal.trump >= 0
    from five_hundred_env.engine import EFFECTIVE_SUIT

    for seat in range(deal.rules.num_players):
        image = table_image(game, agents, viewer=seat)
        assert image.shape == (HEIGHT, WIDTH, 3) and image.dtype == np.uint8
        trumps = sum(1 for c in range(46) if deal.hands[seat] >> c & 1 and EFFECTIVE_SUIT[deal.ctx][c] == deal.trump)
        assert (_gold_pixels(image) > 0) == (trumps > 0 or seat == deal.to_act)  # the acting seat's name is gold too


def test_picture_hides_the_other_hands() -> None:
    """Swapping cards between two hidden hands changes nothing the viewer sees."""
    rules = make_rules("australian")
    rng = random.Random(5)
    deal = Deal.new(rules, rng, dealer=0)
    hands = list(deal.hands)
    swapped = list(hands)
    a, b = hands[2] & -hands[2], hands[3] & -hands[3]  # the lowest card of each
    swapped[2], swapped[3] = hands[2] ^ a ^ b, hands[3] ^ b ^ a
    images = []
    for h in (hands, swapped):
        d = Deal(rules, h, deal.kitty, dealer=0)
        images.append(table_image(Game(rules, first_deal=d), AGENTS, viewer=1))
    assert np.array_equal(images[0], images[1])
    # ... while the viewer's own hand is drawn: changing it changes the picture
    own = list(hands)
    c = hands[3] & -hands[3]
    d1 = hands[1] & -hands[1]
    own[1], own[3] = hands[1] ^ d1 ^ c, hands[3] ^ c ^ d1
    other = table_image(Game(rules, first_deal=Deal(rules, own, deal.kitty, dealer=0)), AGENTS, viewer=1)
    assert not np.array_equal(images[0], other)
