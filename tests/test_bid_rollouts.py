"""Rollout policy improvement of the auction: candidates, measured advantages, the fit."""

from __future__ import annotations

import csv
import random

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("pydantic")

import numpy as np  # noqa: E402

import five_hundred_env  # noqa: E402
from agents.heuristic import HeuristicAgent  # noqa: E402
from agents.neural import ActorCritic, load_agent  # noqa: E402
from agents.search.values import bid_candidates  # noqa: E402
from five_hundred_env.actions import MISERE, OPEN_MISERE, PASS, ActionTable, bid_action  # noqa: E402
from five_hundred_env.engine import Deal, Phase, deal_to_cards  # noqa: E402
from five_hundred_env.rules import make_rules  # noqa: E402
from training.bid_rollouts import _chunk, _held_out_start, improve_bidding, rollout_targets  # noqa: E402
from training.cli import main  # noqa: E402
from training.config import BidRolloutConfig, ConfigError, config_from_dict  # noqa: E402
from training.ppo import train  # noqa: E402

torch.set_num_threads(1)
RULES = make_rules("australian")


def test_candidates_are_pass_the_advice_the_cheapest_bid_of_each_strain_and_misere():
    legal = [PASS, *range(bid_action(7, 0), bid_action(10, 4) + 1), MISERE, OPEN_MISERE]
    advised = bid_action(8, 3)  # 8 hearts: not the cheapest hearts bid, rolled out because advised
    cands = bid_candidates(legal, advised)
    cheapest = [bid_action(7, s) for s in range(5)]
    assert cands == sorted({PASS, advised, MISERE, OPEN_MISERE, *cheapest})
    assert bid_candidates([PASS, bid_action(9, 4)], PASS) == [PASS, bid_action(9, 4)]


def test_rollout_data_do_not_depend_on_the_workers(monkeypatch):
    import training.bid_rollouts as bid_rollouts

    monkeypatch.setattr(bid_rollouts, "CHUNK_DEALS", 2)  # five chunks of two deals (the chunks are cut here)
    cfg = BidRolloutConfig(deals=10, play_sample_rate=0.2)
    alone = rollout_targets(RULES, cfg, np.random.default_rng(8))
    shared = rollout_targets(RULES, cfg.model_copy(update={"workers": 3}), np.random.default_rng(8))
    assert alone.keys() == shared.keys() and len(np.unique(alone["bid_chunk"])) == 5
    for key in alone:
        assert np.array_equal(alone[key], shared[key]), key


def test_held_out_decisions_start_at_a_chunk_boundary():
    chunks = np.array([5] * 40 + [9] * 35 + [3] * 25)
    assert _held_out_start(chunks, 0.1) == 75  # not 90: the last chunk's deals stay together
    assert _held_out_start(np.array([1] * 50), 0.1) == 45


def _env_result(seed: int, decision: int, bid: int) -> float:
    """The same rollout through the AEC environment: the chunk's first deal, its auction up to
    ``decision`` (heuristic bids), then ``bid``, then the heuristic in every seat; the bidder's
    side's zero-sum result in points."""
    rng = random.Random(seed)
    deal = Deal.new(RULES, rng, dealer=rng.randrange(RULES.num_players))  # as the generator draws it
    cards = deal_to_cards(RULES, deal.dealt, deal.kitty)
    env = five_hundred_env.env(rules=RULES, episode="deal", reward_scale=1)
    env.reset(options={"hands": cards["hands"], "kitty": cards["kitty"], "dealer": deal.dealer})
    heuristic, table = HeuristicAgent(RULES, seed=0), ActionTable(RULES)
    bidder, decisions, results = None, 0, {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        seat = int(agent.rsplit("_", 1)[1])
        if term or trunc:
            results[seat] = reward
            env.step(None)
            continue
        action = heuristic.act(obs)
        if env.unwrapped.deal.phase == Phase.BIDDING and obs["action_mask"].sum() > 1:
            if decisions == decision:
                bidder, action = seat, table.compact[bid]
            decisions += 1
        env.step(action)
    assert bidder is not None
    return float(results[bidder])


def test_rollout_advantages_match_the_environment():
    seed = 1234
    data = _chunk((RULES, seed, 2, 0.2))
    table = ActionTable(RULES)
    n = len(data["bid_x"])
    assert n >= 2 and len(data["play_x"]) > 0
    advised = data["bid_x"][:, -len(table):].argmax(1)
    rows = np.arange(n)
    assert (data["candidates"][rows, advised] == 1).all() and (data["advantages"][rows, advised] == 0).all()
    assert ((data["candidates"] == 1) <= (data["bid_mask"] == 1)).all()  # only legal bids are rolled out
    assert (data["play_mask"][np.arange(len(data["play_x"])), data["play_action"]] == 1).all()
    # Recompute the first deal's first decision through the environment, for every candidate.
    first = 0
    base = _env_result(seed, first, table.universal[advised[first]])
    for c in np.flatnonzero(data["candidates"][first]):
        assert _env_result(seed, first, table.universal[c]) - base == pytest.approx(data["advantages"][first, c])


def _network(seed: int = 0) -> ActorCritic:
    torch.manual_seed(seed)
    env = five_hundred_env.env(rules=RULES)
    return ActorCritic(env.unwrapped.encoder.size, int(env.action_space("player_0").n), [64],
                       num_sides=RULES.num_sides, advice="heuristic")


def test_the_fit_learns_a_better_bid_and_keeps_the_rest_on_the_heuristic():
    data = _chunk((RULES, 99, 60, 0.2))
    data["advantages"][:] = 0.0
    passing = data["candidates"][:, PASS] == 1
    data["advantages"][passing, PASS] = 2.0  # a world where passing is always worth 200 points more
    advised = data["bid_x"][:, -80:].argmax(1)
    data["advantages"][passing & (advised == PASS)] = 0.0
    cfg = BidRolloutConfig(deals=60, epochs=6, learning_rate=3e-3, batch_size=64)
    model = _network()
    history = improve_bidding(model, data, cfg, torch.device("cpu"), log=lambda _: None)
    assert history[0]["deviation"] >= 0.0 and max(h["gain"] for h in history) > 0.5
    assert history[-1]["play_agreement"] > 0.97  # the other decisions stay the heuristic's
    cfg_margin = cfg.model_copy(update={"margin": 30.0})
    improve_bidding(model, data, cfg_margin, torch.device("cpu"), log=lambda _: None)
    assert model.advice_weight.item() == pytest.approx(30.0)


def test_the_fit_needs_an_advised_network():
    env = five_hundred_env.env(rules=RULES)
    plain = ActorCritic(env.unwrapped.encoder.size, int(env.action_space("player_0").n), [16])
    with pytest.raises(ValueError, match="advice='heuristic'"):
        improve_bidding(plain, _chunk((RULES, 1, 1, 0.2)), BidRolloutConfig(deals=1), torch.device("cpu"))


def test_config_refuses_rollouts_without_advice():
    with pytest.raises(ConfigError, match=r"needs network\.advice: heuristic"):
        config_from_dict({"pretrain": {"bid_rollouts": {"deals": 10}}})
    with pytest.raises(ConfigError, match="held_out"):
        config_from_dict({"network": {"advice": "heuristic"}, "pretrain": {"bid_rollouts": {"held_out": 0.7}}})


def test_a_run_of_bid_rollouts_alone(tmp_path):
    config = config_from_dict({
        "seed": 3, "torch_threads": 1,
        "train": {"total_steps": 0},
        "network": {"hidden_sizes": [32], "advice": "heuristic", "critic": "local"},
        "pretrain": {"bid_rollouts": {"deals": 24, "epochs": 2, "workers": 2, "margin": 6.0}},
        "evaluation": {"interval": 0, "final_deals": 4, "opponents": ["heuristic"]},
        "logging": {"dir": str(tmp_path), "run_name": "bids", "tensorboard": False, "progress": False},
    })
    result = train(config, log=lambda _: None)
    assert result.global_step == 0 and result.final_checkpoint is not None
    with (tmp_path / "bids" / "progress.csv").open() as f:
        rows = [r for r in csv.DictReader(f) if r["kind"] == "bid_rollouts"]
    assert len(rows) == 2 and all(r["rollout_deviation"] != "" for r in rows)
    agent = load_agent(result.final_checkpoint)
    assert agent.model.advice_weight.item() >= 6.0
    assert "heuristic" in result.evaluations
    assert main(["plot", str(tmp_path / "bids")]) == 0 and (tmp_path / "bids" / "curves.png").stat().st_size > 10_000
    # A fresh run over the same deals reads the cached rollouts (here: doctored, to tell them apart).
    cache = tmp_path / "bids" / "bid_rollouts.npz"
    with np.load(cache) as saved:
        doctored = {k: saved[k] for k in saved.files}
    doctored["advantages"] = doctored["advantages"] + 1.0
    np.savez(cache, **doctored)
    logs: list[str] = []
    train(config, overwrite=True, log=logs.append)
    with (tmp_path / "bids" / "progress.csv").open() as f:
        again = [r for r in csv.DictReader(f) if r["kind"] == "bid_rollouts"]
    assert [r["rollout_gain"] for r in again] != [r["rollout_gain"] for r in rows]
    train(config.model_copy(update={"seed": 4}), overwrite=True, log=logs.append)  # other deals: played again
    with np.load(cache) as saved:
        assert not np.array_equal(saved["advantages"][:5], doctored["advantages"][:5])
