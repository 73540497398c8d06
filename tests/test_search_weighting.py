"""Worlds weighted by a network's probabilities of the other seats' bids (agents/search/weighting.py,
``pimc:bid_weights``): the weights are Bayes' rule with the network as the bidders' model."""

from __future__ import annotations

import random

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numba")

import numpy as np  # noqa: E402

from agents.neural import policy_input  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from agents.search.pimc import PIMCAgent  # noqa: E402
from agents.search.weighting import BidLikelihood  # noqa: E402
from five_hundred_env.actions import ActionTable  # noqa: E402
from five_hundred_env.engine import Deal, Phase  # noqa: E402
from five_hundred_env.observation import ObservationEncoder  # noqa: E402
from five_hundred_env.rules import make_rules  # noqa: E402
from five_hundred_env.sampling import InfoSet, WorldSampler  # noqa: E402


def _after_the_auction(rules, seed: int) -> Deal:
    """A deal of the pretrained network in every seat, stopped at the first card play (bids made)."""
    agent = make_agent("pretrained", rules, seed=0)
    encoder, table = ObservationEncoder(rules), ActionTable(rules)
    rng = random.Random(seed)
    while True:
        deal = Deal.new(rules, rng, rng.randrange(rules.num_players))
        while deal.phase != Phase.PLAY and not deal.is_over:
            deal.apply_action(table.universal[agent.act(encoder.encode_turn(deal, table))])
        if not deal.is_over and sum(a != 0 for _s, a in deal.bids) >= 2:
            return deal


def test_a_world_s_weight_is_the_product_of_its_bids_probabilities_to_the_power():
    """Each world's weight is Π over the other hidden seats' bids of the network's probability of
    that bid from the seat's own observation in the world, to the power β, the largest 1 — a
    brute force, one observation at a time, gives the same; the observer's own bids count for nothing."""
    rules = make_rules("australian")
    deal = _after_the_auction(rules, seed=2)
    observer = (deal.contractor + 1) % rules.num_players  # a defender: the contractor's hand is hidden
    info = InfoSet.from_deal(deal, observer)
    rng = random.Random(0)
    worlds = [WorldSampler(info).sample(rng) for _ in range(12)] + [deal]
    network = make_agent("pretrained", rules, seed=0)
    weights = BidLikelihood(rules, network, 0.5).weights(worlds, info)
    encoder, table = ObservationEncoder(rules), ActionTable(rules)
    expected = []
    for world in worlds:
        replay, log_p = Deal(rules, world.dealt, world.kitty, info.dealer), 0.0
        for seat, action in info.bids:
            if seat != observer:
                turn = encoder.encode_turn(replay, table)
                x = torch.from_numpy(policy_input(turn, network.adviser)).unsqueeze(0)
                with torch.no_grad():
                    logits = network.model.masked_logits(x, torch.from_numpy(turn["action_mask"]).unsqueeze(0))[0]
                log_p += float(torch.log_softmax(logits.double(), 0)[table.compact[action]])
            replay.apply_action(action)
        expected.append(0.5 * log_p)
    expected = np.exp(np.array(expected) - max(expected))
    assert weights.max() == 1.0 and np.allclose(weights, expected, rtol=1e-6)
    assert len(set(np.round(weights, 6))) > 2  # the bids tell the worlds apart


def test_before_any_other_seat_bids_every_world_weighs_the_same():
    rules = make_rules("australian")
    rng = random.Random(1)
    deal = Deal.new(rules, rng, 3)  # seat 0 bids first: nobody has bid
    info = InfoSet.from_deal(deal, deal.to_act)
    worlds = [WorldSampler(info).sample(rng) for _ in range(5)]
    weights = BidLikelihood(rules, make_agent("pretrained", rules, seed=0), 1.0).weights(worlds, info)
    assert weights.tolist() == [1.0] * 5


def test_bid_weights_need_a_network_and_a_power_in_range():
    """``bid_weights`` with the heuristic as the base (no probabilities), or a power out of range, is refused."""
    rules = make_rules("australian")
    deal = _after_the_auction(rules, seed=2)
    obs = ObservationEncoder(rules).encode_turn(deal, ActionTable(rules))
    with pytest.raises(ValueError, match="bid_weights needs a base network"):
        PIMCAgent(rules, seed=0, worlds=2, base="heuristic", bid_weights=1.0).act(obs)
    for bad in (-1, 11, True, "1"):
        with pytest.raises(ValueError, match="bid_weights must be a power"):
            PIMCAgent(rules, seed=0, bid_weights=bad)
