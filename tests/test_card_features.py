"""The networks' card-order inputs (agents.card_features): each number checked on hand-made deals
against docs/rules.md §6 (card order: bowers, jokers, trumps) and §7 (who wins a trick), and the
networks that read them (greedy batch inference, policy files, specs, ensembles, distillation)."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from conftest import act, discard_kitty, hand, make_deal
from network_helpers import write_checkpoint

from agents.card_features import FEATURES_PER_CARD, CardFeatures
from agents.ensemble import ensemble_network
from agents.neural import ActorCritic, CheckpointError, check_model_spec, load_agent, parameter_count
from agents.neural_batch import GreedyActor
from agents.policy_files import write_policy
from five_hundred_env.actions import ActionTable
from five_hundred_env.cards import parse_card
from five_hundred_env.engine import Deal
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import make_rules

NAMES = ("higher", "suit_left", "wins_now", "trump")


def features(deal, seat: int) -> dict[str, dict[str, float]]:
    """Each feature of each card ``seat`` holds, by card name (the rest of the slots must be 0)."""
    rules = deal.rules
    obs = ObservationEncoder(rules).encode(deal, seat)
    out = CardFeatures(rules.to_dict())(torch.from_numpy(obs[None])).reshape(FEATURES_PER_CARD, -1).numpy()
    held = {name: parse_card(name, rules.two_jokers) for name in hand(deal, seat)}
    others = np.delete(out, list(held.values()), axis=1)
    assert not others.any(), "a card the observer does not hold has nonzero inputs"
    return {name: dict(zip(NAMES, out[:, card].tolist(), strict=True)) for name, card in held.items()}


HEARTS_DEAL = ["Jh Jd Qh 5h 5s 6s 7s 7c 8c 9c",   # seat 0: bids 7H, holds both bowers
               "Ks 8s Kh Tc 6d 7d 8d 9d Td Qd",   # seat 1
               "Ah 9s Ts Js Qs As Jc Qc Kc Ac",   # seat 2
               "JK 6h 7h 8h 9h Th 4h Ad Kd 4d"]   # seat 3


def hearts_contract():
    deal = make_deal("australian", HEARTS_DEAL, dealer=3)
    act(deal, "7H PASS PASS PASS")
    discard_kitty(deal)
    return deal


def test_higher_and_suit_left_follow_the_trump_order():
    """§6: with hearts trumps the joker ranks above the right bower (J♥), which ranks above the left
    bower (J♦), then A K Q … 4 of hearts; the left bower is a heart for the whole deal."""
    f = features(hearts_contract(), 0)
    assert f["Jh"]["higher"] * 4 == 1  # only the joker
    assert f["Jd"]["higher"] * 4 == 1  # the joker (the right bower is the observer's own)
    assert f["Qh"]["higher"] * 4 == 3  # joker, A♥, K♥
    assert f["5h"]["higher"] * 4 == 8  # joker, A K T 9 8 7 6 of hearts
    assert f["Qh"]["suit_left"] * 8 == 9  # the 13 trumps less the observer's 4
    assert f["7s"]["higher"] * 4 == 7  # 8 9 T J Q K A of spades: the jack of spades stays a spade
    assert {name for name, v in f.items() if v["trump"]} == {"Jh", "Jd", "Qh", "5h"}


def test_wins_now_compares_with_the_trick_so_far():
    """§7: a trick is won by the highest trump in it, else the highest card of the suit led."""
    deal = hearts_contract()
    act(deal, "6s")  # seat 0 leads the 6 of spades
    f = features(deal, 1)
    assert f["Ks"]["wins_now"] == 1 and f["8s"]["wins_now"] == 1  # follow and beat
    assert f["Kh"]["wins_now"] == 1  # a trump beats a plain card
    assert f["Tc"]["wins_now"] == 0 and f["Qd"]["wins_now"] == 0  # another plain suit never wins
    act(deal, "Ks")
    f = features(deal, 2)
    assert f["As"]["wins_now"] == 1 and f["Qs"]["wins_now"] == 0 and f["Ah"]["wins_now"] == 1
    lead = features(hearts_contract(), 0)
    assert not any(v["wins_now"] for v in lead.values())  # nothing to beat on a lead


def test_no_trumps_joker_and_plain_jacks():
    """§6: in no trumps the jacks are plain cards and the joker, before it is nominated, belongs to no
    suit and beats every card."""
    deal = make_deal("australian", HEARTS_DEAL, dealer=3)
    act(deal, "7NT PASS PASS PASS")
    discard_kitty(deal)
    f = features(deal, 0)
    assert f["Jh"]["higher"] * 4 == 3  # K A of hearts and the joker (the queen is the observer's)
    assert f["Jd"]["higher"] * 4 == 4  # Q K A of diamonds and the joker
    assert not any(v["trump"] for v in f.values())
    seat3 = features(deal, 3)
    assert seat3["JK"]["higher"] == 0 and seat3["JK"]["suit_left"] == 0


def test_the_contractors_discards_are_out_for_it_alone():
    """§5: the contractor's discards take no part in the play; only the contractor knows them."""
    deal = make_deal("australian", HEARTS_DEAL, dealer=3)  # the kitty: 5c 6c 5d
    act(deal, "7H PASS PASS PASS 5h 5c 6c")
    assert features(deal, 0)["Qh"]["suit_left"] * 8 == 9  # J♥ J♦ Q♥ the contractor's, 5♥ discarded
    assert features(deal, 1)["Kh"]["suit_left"] * 8 == 12  # every other trump, the discarded 5♥ included


def random_inputs(rules, rows: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations of deals played at random (every phase), with their legal-action masks."""
    rng = random.Random(seed)
    encoder, table = ObservationEncoder(rules), ActionTable(rules)
    obs, masks = [], []
    while len(obs) < rows:
        deal = Deal.new(rules, rng, dealer=0)
        while not deal.is_over:
            turn = encoder.encode_turn(deal, table)
            obs.append(turn["observation"])
            masks.append(turn["action_mask"])
            deal.apply_action(rng.choice(deal.legal_actions()))
    return np.stack(obs[:rows]), np.stack(masks[:rows])


@pytest.mark.parametrize("preset", ["australian", "five_handed"])
def test_a_network_with_card_features_plays_the_same_everywhere(tmp_path, preset):
    """The batch inference (GreedyActor), the dense network and a policy file written and loaded
    again choose the same actions; the spec records the rules the inputs are computed for."""
    rules = make_rules(preset)
    torch.manual_seed(0)
    model = ActorCritic.for_rules(rules, [64, 64], card_features=True, policy_only=True)
    with torch.no_grad():
        model.actor[-1].weight.mul_(300.0)  # logits apart, as a trained network's
    assert model.spec()["card_features"] == rules.to_dict()
    assert model.actor[0].in_features == model.spec()["obs_size"] + FEATURES_PER_CARD * rules.card_slots
    assert parameter_count(model.spec()) > sum(p.numel() for p in model.parameters())  # the critic's counted too
    obs, masks = random_inputs(rules, 400)
    with torch.no_grad():
        dense = model.masked_logits(torch.from_numpy(obs), torch.from_numpy(masks)).argmax(1).numpy()
    assert (GreedyActor(model)(obs, masks) == dense).mean() > 0.99
    write_policy(model, rules, tmp_path / "net.pt", dtype="float32")
    loaded = load_agent(tmp_path / "net.pt")
    assert loaded.model.spec()["card_features"] == rules.to_dict()
    assert np.array_equal(loaded.act_batch(obs, masks), dense)
    blind = ActorCritic.for_rules(rules, [64, 64], policy_only=True)
    blind.load_state_dict({k: v[:, :blind.actor[0].in_features] if k == "actor.0.weight" else v
                           for k, v in model.state_dict().items()})
    with torch.no_grad():  # the card inputs change the choices: the network reads them
        assert (blind.masked_logits(torch.from_numpy(obs), torch.from_numpy(masks)).argmax(1).numpy() != dense).any()


def test_a_malformed_card_features_spec_is_refused():
    rules = make_rules("australian")
    spec = ActorCritic.for_rules(rules, [8], card_features=True).spec()
    check_model_spec(spec)
    for bad in ({"preset": "no_such_game"}, make_rules("five_handed").to_dict(), "australian"):
        with pytest.raises(CheckpointError, match="card_features"):
            check_model_spec({**spec, "card_features": bad})
    with pytest.raises(CheckpointError, match="card_features"):
        check_model_spec({**spec, "advice": "heuristic"})
    with pytest.raises(ValueError, match="advice"):
        ActorCritic.for_rules(rules, [8], card_features=True, advice="heuristic")


def test_an_ensemble_keeps_the_card_features_and_refuses_a_mix():
    rules = make_rules("two_handed")
    torch.manual_seed(1)
    members = [ActorCritic.for_rules(rules, [16], card_features=True, policy_only=True) for _ in range(2)]
    merged = ensemble_network(members, rules)
    obs, masks = random_inputs(rules, 50)
    x, m = torch.from_numpy(obs), torch.from_numpy(masks)
    with torch.no_grad():
        mean = sum(net.masked_logits(x, m) for net in members) / 2
        assert torch.allclose(merged.masked_logits(x, m)[m.bool()], mean[m.bool()], atol=1e-4)
    with pytest.raises(ValueError, match="card_features"):
        ensemble_network([members[0], ActorCritic.for_rules(rules, [16], policy_only=True)], rules)


def test_distillation_init_must_match_the_card_features(tmp_path):
    from training.algorithms.distill import build_policy
    from training.settings.distill_config import DistillConfig
    write_checkpoint(tmp_path / "plain.pt")  # a network without the card inputs (and with advice)
    config = DistillConfig.model_validate({"network": {"hidden_sizes": [32, 32], "card_features": True,
                                                       "init": str(tmp_path / "plain.pt")}})
    with pytest.raises(ValueError, match="card_features"):
        build_policy(config, make_rules("australian"))
