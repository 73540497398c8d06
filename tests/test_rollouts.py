"""The rollout warm start ``pretrain.rollouts`` (training/algorithms/warmstart.py, training/rollouts/exit_data.py): one
step of policy iteration over the heuristic at every sampled kind of decision, fitted by the
expert-iteration fit; and the run's own start as an opponent, with the verdict on learning."""

from __future__ import annotations

import csv
import json
import random

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("pydantic")

import numpy as np  # noqa: E402

import five_hundred_env  # noqa: E402
from agents.heuristic import HeuristicAgent  # noqa: E402
from agents.neural import ActorCritic, read_checkpoint  # noqa: E402
from agents.search.values import bid_candidates  # noqa: E402
from five_hundred_env.actions import MISERE, OPEN_MISERE, PASS, ActionTable, bid_action  # noqa: E402
from five_hundred_env.engine import Deal, Phase, deal_to_cards  # noqa: E402
from five_hundred_env.rules import make_rules  # noqa: E402
from training.algorithms.ppo import _initial_state, _torch_device, train  # noqa: E402
from training.algorithms.warmstart import learning_line, learning_verdict  # noqa: E402
from training.cli import main  # noqa: E402
from training.evaluation.evaluate import duplicate_match  # noqa: E402
from training.rollouts.exit_data import DECISION_KINDS, heuristic_rollouts  # noqa: E402
from training.settings.config import ConfigError, config_from_dict  # noqa: E402
from training.settings.improvement_config import RolloutsConfig, SampleConfig  # noqa: E402

torch.set_num_threads(1)
RULES = make_rules("australian")
BIDS_ONLY = SampleConfig(bid=1, discard=0, nominate=0, play=0)


def _network(seed: int = 0, critic_extra: int = 0) -> ActorCritic:
    torch.manual_seed(seed)
    env = five_hundred_env.env(rules=RULES)
    return ActorCritic(env.unwrapped.encoder.size, int(env.action_space("player_0").n), [16],
                       num_sides=RULES.num_sides, advice="heuristic", critic_extra=critic_extra)


def test_candidates_are_pass_the_advice_the_cheapest_bid_of_each_strain_and_misere():
    legal = [PASS, *range(bid_action(7, 0), bid_action(10, 4) + 1), MISERE, OPEN_MISERE]
    advised = bid_action(8, 3)  # 8 hearts: not the cheapest hearts bid, rolled out because advised
    cands = bid_candidates(legal, advised)
    cheapest = [bid_action(7, s) for s in range(5)]
    assert cands == sorted({PASS, advised, MISERE, OPEN_MISERE, *cheapest})
    assert bid_candidates([PASS, bid_action(9, 4)], PASS) == [PASS, bid_action(9, 4)]


def test_rollout_data_do_not_depend_on_the_workers_nor_on_the_weights():
    cfg = RolloutsConfig(deals=6, chunk_deals=2, sample=SampleConfig(bid=1, discard=1, nominate=1, play=0.2))
    alone = heuristic_rollouts(RULES, _network(0), cfg, [11, 12, 13])
    shared = heuristic_rollouts(RULES, _network(5), cfg.model_copy(update={"workers": 3}), [11, 12, 13])
    assert alone.keys() == shared.keys() and len(np.unique(alone["chunk"])) == 3
    kinds = {DECISION_KINDS[k] for k in np.unique(alone["kind"])}
    assert kinds >= {"bid", "discard", "play"}  # nominations (a joker's suit, §7) are rare
    for key in alone:
        assert np.array_equal(alone[key], shared[key]), key
    with pytest.raises(ValueError, match="3 chunks of deals need as many seeds, got 2"):
        heuristic_rollouts(RULES, _network(0), cfg, [11, 12])


def test_the_cache_is_read_for_the_same_deals_and_played_again_for_others(tmp_path, monkeypatch):
    import training.rollouts.exit_data as exit_data

    cfg, cache = RolloutsConfig(deals=2, chunk_deals=1, sample=BIDS_ONLY), tmp_path / "rollouts.npz"
    made = heuristic_rollouts(RULES, _network(), cfg, [1, 2], cache)

    def refuse(*args, **kwargs):
        raise AssertionError("the data should have come from the cache")

    monkeypatch.setattr(exit_data, "generate", refuse)
    read = heuristic_rollouts(RULES, _network(3), cfg.model_copy(update={"workers": 2}), [1, 2], cache)
    assert all(np.array_equal(made[k], read[k]) for k in made)
    for other in ({"seeds": [1, 3]}, {"cfg": cfg.model_copy(update={"value_rate": 0.5})},
                  {"model": _network(critic_extra=3)}):  # other deals, settings or critic input: played again
        args = {"model": _network(), "cfg": cfg, "seeds": [1, 2], **other}
        with pytest.raises(AssertionError, match="from the cache"):
            heuristic_rollouts(RULES, args["model"], args["cfg"], args["seeds"], cache)


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
            if decision == decisions:
                bidder, action = seat, table.compact[bid]
            decisions += 1
        env.step(action)
    assert bidder is not None
    return float(results[bidder])


def test_rollout_advantages_match_the_environment():
    """§4 (the auction): every candidate bid of the first bidding decision, played out by the
    heuristic through the environment, differs from the heuristic's bid by the stored advantage."""
    seed = 1234
    data = heuristic_rollouts(RULES, _network(), RolloutsConfig(deals=1, sample=BIDS_ONLY), [seed])
    table = ActionTable(RULES)
    assert len(data["x"]) >= 1 and (data["kind"] == 0).all()
    rows = np.arange(len(data["x"]))
    assert (data["candidates"][rows, data["action"]] == 1).all() and (data["advantages"][rows, data["action"]] == 0).all()
    assert ((data["candidates"] == 1) <= (data["mask"] == 1)).all()  # only legal bids are rolled out
    base = _env_result(seed, 0, table.universal[data["action"][0]])
    for c in np.flatnonzero(data["candidates"][0]):
        assert _env_result(seed, 0, table.universal[c]) - base == pytest.approx(100 * data["advantages"][0, c])


def test_config_refuses_rollouts_without_advice_and_names_the_old_section():
    with pytest.raises(ConfigError, match=r"needs network\.advice: heuristic"):
        config_from_dict({"pretrain": {"rollouts": {"deals": 10}}})
    with pytest.raises(ConfigError, match="held_out"):
        config_from_dict({"network": {"advice": "heuristic"}, "pretrain": {"rollouts": {"fit": {"held_out": 0.7}}}})
    with pytest.raises(ConfigError, match=r"pretrain: bid_rollouts is now pretrain\.rollouts .*go under rollouts\.fit"):
        config_from_dict({"network": {"advice": "heuristic"}, "pretrain": {"bid_rollouts": {"deals": 10}}})


def _report(mean: float | None, lo: float | None, hi: float | None, deals: int = 1000) -> dict:
    return {"deals": deals, "score_diff_per_deal": {"mean": mean, "ci95": [lo, hi]}}


@pytest.mark.parametrize(("report", "line"), [
    (_report(12.34, 6.1, 18.5), "learning: +12.3 [+6.1, +18.5] points per deal over its start (1,000 boards): stronger"),
    (_report(1.0, -2.0, 4.0, 400), "learning: +1.0 [-2.0, +4.0] points per deal over its start (400 boards): "
                                   "not measurably different"),
    (_report(0.0, 0.0, 0.0), "learning: +0.0 [+0.0, +0.0] points per deal over its start (1,000 boards): "
                             "not measurably different"),
    (_report(-7.5, -11.0, -4.0), "learning: -7.5 [-11.0, -4.0] points per deal over its start (1,000 boards): weaker"),
    (_report(None, None, None), "learning: no finite difference over its start (1,000 boards): not measurably different"),
])
def test_the_learning_line_says_whether_the_interval_is_above_around_or_below_zero(report, line):
    assert learning_line(learning_verdict(report)) == line


def _tiny_config(tmp_path, **sections):
    base = {
        "seed": 3, "torch_threads": 1,
        "train": {"total_steps": 0},
        "network": {"hidden_sizes": [32], "advice": "heuristic", "critic": "local"},
        "pretrain": {"rollouts": {"deals": 24, "chunk_deals": 4, "workers": 2,
                                  "sample": {"bid": 1, "discard": 1, "nominate": 1, "play": 0.1},
                                  "fit": {"epochs": 2, "selection_z": 0}}},
        "evaluation": {"interval": 0, "final_deals": 6, "opponents": ["heuristic", "start"]},
        "logging": {"dir": str(tmp_path), "run_name": "roll", "tensorboard": False, "progress": False},
    }
    return config_from_dict({**base, **sections})


def test_a_run_of_rollouts_alone_against_its_start(tmp_path):
    config = _tiny_config(tmp_path)
    logs: list[str] = []
    result = train(config, log=logs.append)
    run = tmp_path / "roll"
    assert result.global_step == 0 and result.final_checkpoint is not None
    with (run / "progress.csv").open() as f:
        rows = list(csv.DictReader(f))
    fits = [r for r in rows if r["kind"] == "rollouts"]
    assert len(fits) == 2 and all(r["rollout_gain"] != "" and r["rollout_deviation"] != "" for r in fits)
    assert [r["eval_start_mean"] != "" for r in rows if r["kind"] == "final_eval"] == [False, True]
    # The start is the network before the warm start: fresh, advised, so it plays as the heuristic.
    start = read_checkpoint(run / "start.pt")
    assert "start.pt" in json.loads((run / "manifest.json").read_text())["files"]
    final = read_checkpoint(result.final_checkpoint)
    assert any(not torch.equal(start["model"][k], final["model"][k]) for k in final["model"])  # the fit moved it
    saved = json.loads((run / "final_eval.json").read_text())
    assert saved["start"] == result.evaluations["start"]
    assert saved["learning"] == learning_verdict(saved["start"]) and logs[-2].strip() == learning_line(saved["learning"])
    assert main(["plot", str(run)]) == 0 and (run / "curves.png").stat().st_size > 10_000
    # A fresh run over the same deals reads the cached rollouts (here: doctored, to tell them apart).
    cache = run / "rollouts.npz"
    with np.load(cache) as cached:
        doctored = {k: cached[k] for k in cached.files}
    doctored["advantages"] = doctored["advantages"] + doctored["candidates"] * np.float32(1.0)
    np.savez(cache, **doctored)
    train(config, overwrite=True, log=logs.append)
    with (run / "progress.csv").open() as f:
        again = [r for r in csv.DictReader(f) if r["kind"] == "rollouts"]
    assert [r["rollout_gain"] for r in again] != [r["rollout_gain"] for r in fits]


def test_a_resumed_run_evaluates_against_the_same_start(tmp_path):
    """Stopped in PPO after an imitation warm start, resumed: start.pt is still the fresh network
    (not the imitated one), and the final report against it is the match final.pt vs start.pt."""
    config = _tiny_config(
        tmp_path, train={"total_steps": 256, "num_envs": 2, "num_steps": 32, "num_minibatches": 2},
        network={"hidden_sizes": [16], "critic": "local"},
        pretrain={"deals": 4, "epochs": 1}, checkpoint={"interval": 64})
    _torch_device(config)  # the generators as train() seeds them, then the network it builds first
    fresh = _initial_state(config, RULES, torch.device("cpu")).model.state_dict()
    train(config, stop_after_updates=1, log=lambda _: None)
    run = tmp_path / "roll"
    start = read_checkpoint(run / "start.pt")["model"]
    assert all(torch.equal(fresh[k], v) for k, v in start.items())
    latest = read_checkpoint(run / "checkpoints" / "latest.pt")["model"]
    assert any(not torch.equal(start[k], latest[k]) for k in start)  # imitation and PPO moved the network
    result = train(config, resume=True, log=lambda _: None)
    assert all(torch.equal(read_checkpoint(run / "start.pt")["model"][k], v) for k, v in start.items())
    again = duplicate_match(RULES, str(result.final_checkpoint), str(run / "start.pt"), 6, seed=config.evaluation.seed)
    assert result.evaluations["start"]["score_diff_per_deal"] == again.to_dict()["score_diff_per_deal"]


def test_evaluating_against_the_start_leaves_the_training_generators_alone(tmp_path):
    """Loading start.pt builds a network (which draws from torch's generator): a resumed run must
    draw what the uninterrupted one drew, so the evaluation puts every generator back."""
    from agents.weights_files import save_checkpoint
    from training.algorithms.warmstart import evaluate_policy

    model = _network()
    save_checkpoint(tmp_path / "start.pt", {"rules": RULES.to_dict(), "model_spec": model.spec(),
                                            "model": model.state_dict()})
    torch.manual_seed(7)
    before = torch.get_rng_state()
    report = evaluate_policy(model, RULES, "start", 2, seed=5, start=tmp_path / "start.pt")
    assert torch.equal(torch.get_rng_state(), before)
    assert report.to_dict()["score_diff_per_deal"]["mean"] == 0  # the same network on both sides
    with pytest.raises(ValueError, match=r"needs the run's start\.pt"):
        evaluate_policy(model, RULES, "start", 2, seed=5)
