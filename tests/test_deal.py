"""docs/rules.md §3: the deal — ten cards each, the rest to the kitty, a uniform shuffle, explicit deals."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from conftest import PRESET_NAMES, deck_names, hand, make_deal, names

from five_hundred_env import Deal, make_rules
from five_hundred_env.cards import mask_to_cards


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_shuffled_deal_sizes(preset):
    """§3: "Each player gets 10 cards; the rest (3, or 6 [FR]) form the kitty, face down"."""
    rules = make_rules(preset)
    for seed in range(20):
        deal = Deal.new(rules, random.Random(seed), seed % rules.num_players)
        assert [len(h) for h in (hand(deal, s) for s in range(rules.num_players))] == [10] * rules.num_players
        assert len(names(deal, deal.kitty)) == rules.kitty_size
        everything = 0
        for mask in [*deal.hands, deal.kitty]:
            assert everything & mask == 0
            everything |= mask
        assert everything == rules.deck
        assert deal.dealer == seed % rules.num_players


def test_shuffle_is_uniform_enough():
    """§3: "a uniform shuffle is correct": over 4000 seeded deals every card lands in the kitty
    and in each hand about as often as its share (fixed seeds: deterministic)."""
    rules = make_rules("australian")
    kitty, seat0 = Counter(), Counter()
    rng = random.Random(12345)
    deals = 4000
    for _ in range(deals):
        deal = Deal.new(rules, rng, 0)
        kitty.update(mask_to_cards(deal.kitty))
        seat0.update(mask_to_cards(deal.hands[0]))
    for card in mask_to_cards(rules.deck):
        assert abs(kitty[card] - deals * 3 / 43) < 0.35 * deals * 3 / 43
        assert abs(seat0[card] - deals * 10 / 43) < 0.15 * deals * 10 / 43


def test_same_seed_same_deal():
    """§3: "The first dealer is drawn at random (from the seed)": shuffles come from the seeded generator."""
    rules = make_rules("french_46")
    a, b = Deal.new(rules, random.Random(9), 2), Deal.new(rules, random.Random(9), 2)
    assert a.hands == b.hands and a.kitty == b.kitty
    c = Deal.new(rules, random.Random(10), 2)
    assert c.hands != a.hands


def test_explicit_deal():
    """§3: "A deal can also be set explicitly (hands, kitty, dealer)"."""
    rules = make_rules("italian_3p")
    cards = deck_names(rules)
    deal = Deal.from_cards(rules, [cards[0:10], cards[10:20], cards[20:30]], cards[30:], dealer=1)
    assert hand(deal, 0) == set(cards[0:10]) and names(deal, deal.kitty) == set(cards[30:])
    assert deal.dealer == 1 and deal.to_act == 2
    # Card names in any accepted spelling (§1) give the same deal.
    respelled = [[{"Th": "10h", "Jh": "JH"}.get(c, c) for c in cards[i * 10:(i + 1) * 10]] for i in range(3)]
    assert any("10h" in h for h in respelled) and any("JH" in h for h in respelled)
    again = Deal.from_cards(rules, respelled, cards[30:], dealer=1)
    assert again.hands == deal.hands and again.kitty == deal.kitty


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda h, k: (h[:3], k), "4 hands"),
        (lambda h, k: ([h[0][:9], *h[1:]], k), "10 cards"),
        (lambda h, k: (h, k[:2]), "3 cards"),
        (lambda h, k: ([[h[1][0], *h[0][1:]], *h[1:]], k), "twice"),
        (lambda h, k: ([["4s", *h[0][1:]], *h[1:]], k), "not in the australian deck"),
        (lambda h, k: ([["Zz", *h[0][1:]], *h[1:]], k), "rank"),
    ],
)
def test_explicit_deal_errors(change, says):
    """§3: an explicit deal with wrong counts, a duplicate or a foreign card is an error."""
    rules = make_rules("australian")
    cards = deck_names(rules)
    hands, kitty = [cards[i * 10:(i + 1) * 10] for i in range(4)], cards[40:]
    hands, kitty = change(hands, kitty)
    with pytest.raises(ValueError, match=says):
        Deal.from_cards(rules, hands, kitty, dealer=0)


@pytest.mark.parametrize("dealer", [-1, 4, "0", None, True])
def test_explicit_deal_bad_dealer(dealer):
    """§3/§1: the dealer is a seat `0 … n-1`."""
    with pytest.raises(ValueError, match="dealer"):
        make_deal("australian", [None] * 4, dealer=dealer)


def test_clone_is_independent_and_plays_identically():
    """A clone (`Deal.clone`) plays on exactly as the original would, and changes neither."""
    import random as _random

    from five_hundred_env import Deal, Game, make_rules

    for preset in ("australian", "italian_3p", "french_46"):
        rules = make_rules(preset)
        rng = _random.Random(7)
        deal = Deal.new(rules, rng, dealer=1)
        for _ in range(20):  # into the play
            deal.apply_action(rng.choice(deal.legal_actions()))
        before = (deal.history.copy(), deal.hands.copy(), deal.tricks.copy())
        copy = deal.clone()
        pick = _random.Random(3)
        while not copy.is_over:
            copy.apply_action(pick.choice(copy.legal_actions()))
        assert (deal.history, deal.hands, deal.tricks) == before  # the original did not move
        pick = _random.Random(3)
        while not deal.is_over:
            deal.apply_action(pick.choice(deal.legal_actions()))
        assert deal.history == copy.history and deal.score_change == copy.score_change
        game = Game(rules, seed=5)
        for _ in range(30):
            game.apply_action(game.legal_actions()[0])
        g2 = game.clone()
        for g in (game, g2):
            pick = _random.Random(11)
            while not g.is_over and len(g.deals) < 4:
                g.apply_action(pick.choice(g.legal_actions()))
        assert [d.history for d in game.deals] == [d.history for d in g2.deals]
        assert game.scores == g2.scores
