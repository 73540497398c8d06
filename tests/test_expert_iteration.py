"""Expert iteration (training/algorithms/expert_iteration.py, training/rollouts/exit_data.py, agents/search/values.py):
the targets, the fit, a tiny run end to end, exact resume, data independent of the workers."""

from __future__ import annotations

import csv
import dataclasses
import json
import random
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("pydantic")

import numpy as np  # noqa: E402

from agents.heuristic import HeuristicAgent  # noqa: E402
from agents.neural import ActorCritic, advice_weights, load_agent, read_checkpoint  # noqa: E402
from agents.search.values import policy_play_out, world_action_values  # noqa: E402
from five_hundred_env.actions import PASS, ActionTable  # noqa: E402
from five_hundred_env.engine import Deal, Game, Phase  # noqa: E402
from five_hundred_env.observation import ObservationEncoder, observation_layout  # noqa: E402
from five_hundred_env.rules import make_rules  # noqa: E402
from training.algorithms.exit_fit import NEVER  # noqa: E402
from training.algorithms.expert_iteration import FitConfig, build_model, fit, load_exit_config, main  # noqa: E402
from training.rollouts.exit_data import DECISION_KINDS, ChunkJob, game_result, generate, generate_chunk  # noqa: E402
from training.settings.config import ConfigError  # noqa: E402

torch.set_num_threads(1)
TINY = Path(__file__).resolve().parent.parent / "configs" / "exit_tiny.yaml"
RULES = make_rules("australian")


def _fresh_job(seed: int, deals: int, rates: tuple[float, float, float, float]) -> ChunkJob:
    torch.manual_seed(0)
    model = ActorCritic(1399, 80, [16], advice="heuristic")
    weights = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    return ChunkJob(RULES, seed, deals, model.spec(), weights, rates, 0.5, 2, 3)


def test_the_values_of_one_deal_are_zero_sum_between_the_two_sides():
    """§8 (zero-sum results): every candidate bid's playout scores the same deal for both sides."""
    heuristic = HeuristicAgent(RULES, seed=0)
    play_out = policy_play_out(RULES, heuristic.act)
    deal = Deal.new(RULES, random.Random(5), dealer=0)
    legal = deal.legal_actions()
    ours = world_action_values(deal, legal, 0, play_out)
    theirs = world_action_values(deal, legal, 1, play_out)
    assert set(ours) == set(legal) and PASS in ours
    assert all(ours[a] == -theirs[a] for a in legal)
    assert deal.phase == Phase.BIDDING and not deal.history  # the deal itself is left alone


def test_targets_score_the_policy_choice_at_zero_and_cover_the_legal_actions():
    """Every target row: the policy's own action is a candidate with advantage 0; card plays,
    discards and nominations score every legal action (§5, §7), bids a subset of the legal bids (§4)."""
    data = generate_chunk(_fresh_job(11, 3, (1.0, 1.0, 1.0, 0.2)))
    rows = np.arange(len(data["kind"]))
    assert len(rows) > 10 and set(data["kind"].tolist()) >= {0, 1, 3}
    assert (data["candidates"][rows, data["action"]] == 1).all()
    assert (data["advantages"][rows, data["action"]] == 0).all()
    assert (data["candidates"] <= data["mask"]).all()
    for k in (1, 2, 3):
        sel = data["kind"] == k
        assert (data["candidates"][sel] == data["mask"][sel]).all(), DECISION_KINDS[k]
    assert (data["mask"].sum(1) > 1).all()  # only decisions with a choice get targets
    assert np.isfinite(data["returns"]).all() and len(data["returns"]) > 0


def test_the_data_do_not_depend_on_the_number_of_workers():
    jobs = [_fresh_job(seed, 1, (0.5, 0.5, 1.0, 0.1)) for seed in (1, 2, 3)]
    one, two = generate(jobs, 1, 600), generate(jobs, 2, 600)
    assert one.keys() == two.keys()
    for key in one:
        np.testing.assert_array_equal(one[key], two[key], err_msg=key)
    assert len(set(one["chunk"].tolist())) == 3


def _synthetic(n: int, good: int, gain: float) -> dict[str, np.ndarray]:
    """``n`` bidding-like decisions where action ``good`` is worth ``gain`` more than the policy's (0)."""
    rng = np.random.default_rng(0)
    model = ActorCritic(1399, 80, [16], advice="heuristic")
    x = rng.integers(0, 2, size=(n, 1399 + 80)).astype(np.int8)
    x[:, 1399:] = 0
    x[:, 1399] = 1  # the advice: action 0
    offset, (width,) = observation_layout(RULES)["phase"]
    x[:, offset:offset + width] = 0
    x[:, offset + int(Phase.BIDDING)] = 1  # bids, and so are the critic's samples: nothing anchored
    mask = np.zeros((n, 80), dtype=np.int8)
    mask[:, [0, good]] = 1
    adv = np.zeros((n, 80), dtype=np.float32)
    adv[:, good] = gain
    return {"x": x, "mask": mask, "candidates": mask.copy(), "advantages": adv, "kind": np.zeros(n, np.int8),
            "action": np.zeros(n, np.int64), "chunk": np.repeat(np.arange(n // 8), 8)[:n],
            "value_x": x, "value_mask": mask, "value_extra": np.zeros((n, 0), np.int8),
            "returns": rng.normal(size=n).astype(np.float32), "value_chunk": np.repeat(np.arange(n // 8), 8)[:n],
            "spec": model.spec()}


def test_the_fit_learns_a_better_action_and_keeps_the_start_when_every_epoch_loses_held_out():
    cfg = FitConfig(epochs=6, batch_size=32, learning_rate=1e-2)
    data = _synthetic(160, 5, 1.0)
    torch.manual_seed(0)
    model = ActorCritic(**data.pop("spec"))
    history = fit(model, data, cfg, seed=1, device=torch.device("cpu"), rules=RULES, log=lambda _: None)
    assert history[0]["epoch"] == 0 and history[0]["gain"] == 0 and len(history) == cfg.epochs + 1
    assert max(h["gain"] for h in history) > 0.5 and max(h["deviation"] for h in history) > 0.5

    worse = _synthetic(160, 5, 1.0)  # ... but not on the held-out chunks: there it loses
    worse["advantages"][worse["chunk"] >= 16, 5] = -1.0
    torch.manual_seed(0)
    model = ActorCritic(**worse.pop("spec"))
    start = {k: v.clone() for k, v in model.state_dict().items()}
    fit(model, worse, cfg, seed=1, device=torch.device("cpu"), rules=RULES, log=lambda _: None)
    assert all(torch.equal(start[k], v) for k, v in model.state_dict().items())  # every epoch lost: the start kept


def test_the_regression_fit_leaves_the_advice_where_its_estimate_beats_a_held_out_threshold():
    """Action 5 gains +1 where input 0 is set and loses 1 elsewhere: the regression's estimates
    learn which, and the advice weight becomes one of ``fit.thresholds``, chosen on the held-out
    chunks, so the kept network leaves the advice where it pays (a gain near the +0.5 there is)."""
    data = _synthetic(400, 5, 1.0)
    offset, (width,) = observation_layout(RULES)["phase"]
    data["x"][:, 1:offset] = 0  # input 0, the phase (bidding) and the advice alone
    data["x"][:, offset + width:1399] = 0
    data["advantages"][:, 5] = np.where(data["x"][:, 0] == 1, 1.0, -1.0)
    torch.manual_seed(0)
    model = ActorCritic(**data.pop("spec"))
    cfg = FitConfig(objective="regression", epochs=8, batch_size=32, learning_rate=1e-2, thresholds=[0.5, 3.0])
    history = fit(model, data, cfg, seed=1, device=torch.device("cpu"), rules=RULES, log=lambda _: None)
    kept = max(reversed(history), key=lambda m: m["gain"] - 2 * m["gain_se"])
    assert history[0]["gain"] == 0 and history[0]["threshold"] == 3.0  # no deviation: the higher threshold
    assert kept["gain"] > 0.35 and kept["threshold"] == 0.5 and model.advice_weight.item() == 0.5


def test_a_network_without_advice_fitted_by_regression_plays_the_action_of_the_highest_estimate():
    """No advice input (``network.advice: none``): the logits themselves estimate each action's
    advantage, and the greedy network takes action 5 where it gains (input 0 set), the data's
    action 0 elsewhere: every decision its own, nothing to threshold."""
    data = _synthetic(400, 5, 1.0)
    offset, (width,) = observation_layout(RULES)["phase"]
    data["x"][:, 1:offset] = 0
    data["x"][:, offset + width:] = 0  # no advice columns: the network reads the observation alone
    data["x"], data["value_x"] = data["x"][:, :1399], data["x"][:, :1399]
    data["advantages"][:, 5] = np.where(data["x"][:, 0] == 1, 1.0, -1.0)
    data.pop("spec")
    torch.manual_seed(0)
    model = ActorCritic(1399, 80, [16])
    cfg = FitConfig(objective="regression", epochs=8, batch_size=32, learning_rate=1e-2)
    history = fit(model, data, cfg, seed=1, device=torch.device("cpu"), rules=RULES, log=lambda _: None)
    assert "threshold" not in history[-1] and max(h["gain"] for h in history) > 0.35
    with torch.no_grad():
        greedy = model.masked_logits(torch.from_numpy(data["x"]), torch.from_numpy(data["mask"])).argmax(-1).numpy()
    assert (greedy == np.where(data["x"][:, 0] == 1, 5, 0)).mean() > 0.9


@pytest.mark.parametrize(("bonus", "takes_five"), [(0.5, False), (0.05, True)])
def test_a_base_bonus_keeps_the_datas_action_unless_an_estimate_beats_it_by_more(bonus: float, takes_five: bool):
    """``fit.base_bonus``: the data's own action (0) gets the bonus in the targets, so a network
    without advice learns to play it and leaves it only where an advantage (here +0.3 where
    input 0 is set) is larger than the bonus; the held-out gain is measured on the true targets."""
    data = _synthetic(400, 5, 0.3)
    offset, (width,) = observation_layout(RULES)["phase"]
    data["x"][:, 1:offset] = 0
    data["x"][:, offset + width:] = 0
    data["x"], data["value_x"] = data["x"][:, :1399], data["x"][:, :1399]
    data["advantages"][:, 5] = np.where(data["x"][:, 0] == 1, 0.3, -1.0)
    data.pop("spec")
    torch.manual_seed(0)
    model = ActorCritic(1399, 80, [16])
    cfg = FitConfig(objective="regression", epochs=8, batch_size=32, learning_rate=1e-2, selection_z=0.0,
                    base_bonus={"bid": bonus})
    history = fit(model, data, cfg, seed=1, device=torch.device("cpu"), rules=RULES, log=lambda _: None)
    with torch.no_grad():
        greedy = model.masked_logits(torch.from_numpy(data["x"]), torch.from_numpy(data["mask"])).argmax(-1).numpy()
    set_rows = data["x"][:, 0] == 1
    assert (greedy[~set_rows] == 0).mean() > 0.9
    assert ((greedy[set_rows] == 5).mean() > 0.9) == takes_five
    assert max(h["gain"] for h in history) < 0.3  # the true advantage, never the bonus


def test_a_per_kind_network_gets_a_threshold_per_fitted_kind_and_never_leaves_the_advice_elsewhere():
    """With one advice weight per phase (``network.advice_per_kind``), each fitted kind's threshold
    is chosen on its own held-out decisions: the bids' action 5 gains +1 where input 0 is set (any
    threshold below 1 takes it: the highest, 0.6, is kept), the card plays' only +0.3 there (0.6
    would never take it: 0.15 is chosen); the discards, not fitted, get ``NEVER``."""
    data = _synthetic(800, 5, 1.0)
    offset, (width,) = observation_layout(RULES)["phase"]
    data["x"][:, 1:offset] = 0
    data["x"][:, offset + width:1399] = 0
    plays = np.arange(800) % 2 == 1
    data["x"][plays, offset + int(Phase.BIDDING)] = 0
    data["x"][plays, offset + int(Phase.PLAY)] = 1
    data["kind"][plays] = DECISION_KINDS.index("play")
    data["advantages"][:, 5] = np.where(data["x"][:, 0] == 1, np.where(plays, 0.3, 1.0), -1.0)
    data.pop("spec")
    torch.manual_seed(0)
    model = ActorCritic(1399, 80, [16], advice="heuristic", phase_slice=[offset, offset + width])
    cfg = FitConfig(objective="regression", kinds=["bid", "play"], epochs=8, batch_size=32, learning_rate=1e-2,
                    thresholds=[0.15, 0.6, 3.0])
    history = fit(model, data, cfg, seed=1, device=torch.device("cpu"), rules=RULES, log=lambda _: None)
    kept = max(reversed(history), key=lambda m: m["gain"] - 2 * m["gain_se"])
    assert kept["threshold_bid"] == 0.6 and kept["threshold_play"] == 0.15 and "threshold" not in kept
    weights = model.advice_weight.detach()
    assert weights[Phase.BIDDING] == 0.6 and weights[Phase.PLAY] == 0.15 and weights[Phase.DISCARD] == NEVER
    assert advice_weights(model) == pytest.approx({"bid": 0.6, "discard": NEVER, "nominate": NEVER, "play": 0.15})
    assert kept["gain"] > 0.25  # the bids' +0.5 and the plays' +0.15 on average


def _run(tmp_path: Path, name: str, *extra: str) -> int:
    return main([str(TINY), f"logging.dir={tmp_path}", f"logging.run_name={name}", *extra])


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("exit")
    assert _run(base, "full") == 0
    return base


def test_a_tiny_run_end_to_end(full_run: Path):
    run = full_run / "full"
    with (run / "progress.csv").open() as f:
        rows = list(csv.DictReader(f))
    iterations = [r for r in rows if r["kind"] == "exit"]
    assert [r["update"] for r in iterations] == ["1", "2"]
    assert all(r["eval_heuristic_mean"] and r["batch_size"] for r in iterations)
    assert len([r for r in rows if r["kind"] == "exit_fit"]) == 2 * 2
    listed = json.loads((run / "manifest.json").read_text())["files"]
    assert {"final.pt", "progress.csv", "checkpoints/latest.pt", "checkpoints/step_000002000.pt"} <= set(listed)
    assert read_checkpoint(run / "checkpoints" / "latest.pt", RULES)["counters"]["iteration"] == 2
    agent = load_agent(run / "final.pt", seed=0)
    assert agent.model.advice == "heuristic"
    torch.manual_seed(load_exit_config(TINY).seed)
    fresh = build_model(load_exit_config(TINY), RULES).state_dict()
    trained = agent.model.state_dict()
    assert any(not torch.equal(fresh[k], trained[k]) for k in fresh)  # the iterations changed the network
    assert _run(full_run, "full") == 2  # a fresh start on a finished run is refused


def test_resume_after_iteration_1_ends_as_the_uninterrupted_run(full_run: Path, tmp_path: Path):
    assert _run(tmp_path, "cut", "iterations=1") == 0
    assert _run(tmp_path, "cut", "--resume") == 0
    a = read_checkpoint(full_run / "full" / "final.pt")["model"]
    b = read_checkpoint(tmp_path / "cut" / "final.pt")["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    with (tmp_path / "cut" / "progress.csv").open() as f:
        assert [r["update"] for r in csv.DictReader(f) if r["kind"] == "exit"] == ["1", "2"]


def test_config_errors_name_the_key_and_the_override(tmp_path: Path):
    with pytest.raises(ConfigError, match=r"generation\.worlds.*override 'generation.worlds=0'"):
        load_exit_config(TINY, ["generation.worlds=0"])
    with pytest.raises(ConfigError, match=r"fit\.epoch: unknown key"):
        load_exit_config(TINY, ["fit.epoch=3"])
    with pytest.raises(ConfigError, match=r"network\.advice: heuristic, init_from, or generation\.base: heuristic"):
        load_exit_config(TINY, ["network.advice=none"])
    with pytest.raises(ConfigError, match=r"fit\.thresholds\.1: Input should be less than or equal to 100"):
        load_exit_config(TINY, ["fit.thresholds=[0.5,200]"])  # an advice weight above NEVER: refused now, not after the fit
    config = load_exit_config(TINY, ["iterations=5"])
    assert config.iterations == 5 and config.logging.run_name == "exit_tiny"
    assert build_model(config, RULES).spec()["critic_extra"] > 0


def test_on_a_tie_the_best_candidate_is_the_policys_own_choice():
    """No candidate beats the policy's choice (action 5, advised): imitating "the best candidate"
    keeps it, rather than drifting to the lowest-numbered action of the tie."""
    data = _synthetic(80, 5, 0.0)
    data["x"][:, 1399:] = 0
    data["x"][:, 1399 + 5] = 1
    data["action"][:] = 5
    torch.manual_seed(0)
    model = ActorCritic(**data.pop("spec"))
    history = fit(model, data, FitConfig(objective="cross_entropy", epochs=2, batch_size=16, learning_rate=1e-2),
                  seed=1, device=torch.device("cpu"), rules=RULES, log=lambda _: None)
    assert all(h["agreement"] == 1.0 and h["deviation"] == 0.0 for h in history)


def test_an_epoch_whose_held_out_gain_is_within_the_noise_is_not_kept():
    """Held out, the better action gains +0.25 on average but ±2.75 from one decision to the next:
    with ``selection_z`` 2 the fit keeps the start; by the gain alone (0) a trained epoch."""
    kept = {}
    for z in (0.0, 2.0):
        data = _synthetic(160, 5, 1.0)
        held = np.flatnonzero(data["chunk"] >= 16)
        data["advantages"][held, 5] = np.where(np.arange(len(held)) % 2, 3.0, -2.5)
        torch.manual_seed(0)
        model = ActorCritic(**data.pop("spec"))
        start = {k: v.clone() for k, v in model.state_dict().items()}
        fit(model, data, FitConfig(epochs=4, batch_size=32, learning_rate=1e-2, selection_z=z), seed=1,
            device=torch.device("cpu"), rules=RULES, log=lambda _: None)
        kept[z] = all(torch.equal(start[k], v) for k, v in model.state_dict().items())
    assert kept == {0.0: False, 2.0: True}


def test_the_heuristic_as_base_policy_plays_the_deals_and_card_plays_are_rolled_out_on_the_deal():
    """``generation.base: heuristic``: every target's own action is the heuristic's move (advantage 0),
    and with ``play_targets: rollout`` a card play's advantages are single playouts of the real deal
    (§7: every legal card a candidate), hence the same numbers as ``world_action_values`` there."""
    job = _fresh_job(4, 2, (0.0, 0.0, 0.0, 1.0))
    job = ChunkJob(**{**job.__dict__, "base": "heuristic", "play_targets": "rollout"})
    data = generate_chunk(job)
    heuristic = HeuristicAgent(RULES, seed=0)
    play_out = policy_play_out(RULES, heuristic.act)
    rng = random.Random(job.seed)
    deal = Deal.new(RULES, rng, dealer=rng.randrange(RULES.num_players))
    from five_hundred_env.actions import ActionTable
    from five_hundred_env.observation import ObservationEncoder

    table, encoder, checked = ActionTable(RULES), ObservationEncoder(RULES), 0
    while not deal.is_over and checked < 3:
        obs = encoder.encode_turn(deal, table)
        move = table.universal[heuristic.act(obs)]
        if deal.phase == Phase.PLAY and len(deal.legal_actions()) > 1:
            values = world_action_values(deal, deal.legal_actions(), RULES.side_of(deal.to_act), play_out)
            row = data["advantages"][checked]
            assert data["action"][checked] == table.compact[move]
            for a, v in values.items():
                assert row[table.compact[a]] == pytest.approx((v - values[move]) / 100, abs=1e-4)
            checked += 1
        deal.apply_action(move)
    assert checked == 3


def test_an_iteration_reads_its_cached_data_instead_of_playing_again(tmp_path: Path, monkeypatch):
    """``generation.cache``: a second run over the same deals reads data_1.npz (``generate`` is not
    called) and ends with the very same network; other settings mean other deals, played again."""
    import training.rollouts.exit_data as exit_data

    extra = ("iterations=1", "generation.cache=true", "generation.base=heuristic", "generation.play_targets=rollout")
    assert _run(tmp_path, "a", *extra) == 0
    assert (tmp_path / "a" / "data_1.npz").is_file()
    for name in ("b", "c"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "data_1.npz").write_bytes((tmp_path / "a" / "data_1.npz").read_bytes())

    def refuse(*args, **kwargs):
        raise AssertionError("the data should have come from the cache")

    monkeypatch.setattr(exit_data, "generate", refuse)
    assert _run(tmp_path, "b", *extra) == 0
    a, b = (read_checkpoint(tmp_path / name / "final.pt")["model"] for name in ("a", "b"))
    assert all(torch.equal(a[k], b[k]) for k in a)
    with pytest.raises(AssertionError, match="from the cache"):  # other deals: the cache is stale
        _run(tmp_path, "c", *extra, "generation.deals=5")


def test_decisions_of_the_kinds_not_fitted_keep_the_starting_choice():
    """``fit.kinds: [bid]``: the critic's samples are card plays (§7: their phase, and a block of
    other bits); the fit moves the bids to the better action, and the anchor keeps the plays on
    the starting network's choice, which without it (``anchor_coef: 0``) drift along."""
    offset, (width,) = observation_layout(RULES)["phase"]
    kept = {}
    for coef in (0.0, 1.0):
        data = _synthetic(320, 5, 1.0)
        data["x"][:, 600:1000] = 0
        data["value_x"] = data["x"].copy()
        data["value_x"][:, 600:1000] = 1
        data["value_x"][:, offset:offset + width] = 0
        data["value_x"][:, offset + int(Phase.PLAY)] = 1
        torch.manual_seed(0)
        model = ActorCritic(**data.pop("spec"))
        history = fit(model, data, FitConfig(epochs=6, batch_size=32, learning_rate=1e-2, kinds=["bid"], anchor_coef=coef),
                      seed=1, device=torch.device("cpu"), rules=RULES, log=lambda _: None)
        assert history[-1]["gain"] > 0.5  # the bids did move
        kept[coef] = history[-1]["kept"]
    assert kept[1.0] > 0.95 and kept[0.0] < 0.5, kept


def test_the_fit_evaluated_in_slices_is_the_fit_evaluated_at_once(monkeypatch):
    """The held-out metrics and the anchored choices are computed in slices of ``EVAL_SLICE`` rows
    (the float inputs of 750,000 decisions at once passed the machine's memory): any slice size,
    here 7 rows against every row at once, gives the same history and the same weights."""
    from training.algorithms import exit_fit

    offset, (width,) = observation_layout(RULES)["phase"]
    runs = []
    for rows in (7, 10**9):
        monkeypatch.setattr(exit_fit, "EVAL_SLICE", rows)
        data = _synthetic(320, 5, 1.0)
        data["x"][:, 600:1000] = 0
        data["value_x"] = data["x"].copy()
        data["value_x"][::2, 600:1000] = 1  # half the critic's samples are card plays, anchored
        data["value_x"][::2, offset:offset + width] = 0
        data["value_x"][::2, offset + int(Phase.PLAY)] = 1
        torch.manual_seed(0)
        model = ActorCritic(**data.pop("spec"))
        history = fit(model, data, FitConfig(epochs=6, batch_size=32, learning_rate=1e-2, kinds=["bid"]),
                      seed=1, device=torch.device("cpu"), rules=RULES, log=lambda _: None)
        runs.append((history, model.state_dict()))
    (sliced, sliced_weights), (whole, whole_weights) = runs
    assert sliced[-1]["gain"] > 0.5 and 0.5 < sliced[-1]["kept"] <= 1.0  # the bids moved, the anchored plays measured
    for a, b in zip(sliced, whole, strict=True):
        assert a.keys() == b.keys() and all(a[k] == pytest.approx(b[k], rel=1e-5, abs=1e-7, nan_ok=True) for k in a)
    assert all(torch.allclose(sliced_weights[k], whole_weights[k], atol=1e-6) for k in whole_weights)


def test_uniform_starting_scores_show_in_every_observation_of_the_data():
    """``starting_scores: uniform``: each deal's side scores (§9: strictly between the losing score
    and the target, on a grid of 10) are in the observations of its targets and critic samples;
    with ``zero`` they are 0, as before."""
    at, (k,) = observation_layout(RULES)["scores"]
    job = _fresh_job(11, 3, (1.0, 1.0, 1.0, 0.1))
    zero = generate_chunk(job)
    drawn = generate_chunk(dataclasses.replace(job, starting_scores="uniform"))
    assert not zero["x"][:, at:at + k].any() and not zero["value_x"][:, at:at + k].any()
    for rows in (drawn["x"], drawn["value_x"]):
        scores = rows[:, at:at + k].astype(int) * 10
        assert scores.any(axis=1).all()
        assert ((scores > RULES.losing_score) & (scores < RULES.target)).all()
    assert len(np.unique(drawn["value_x"][:, at:at + k], axis=0)) > 1  # drawn again for each deal


def test_the_win_bonus_goes_to_the_side_whose_deal_wins_the_game():
    """RULES.md §9 ("A side wins when it reaches the target (500 ...) by making a contract"): from
    490–490 the deal that ends the game gives the winners ``win_bonus`` points on top of the deal's
    zero-sum result, and the losers as many less; a deal that ends nothing adds nothing."""
    heuristic = HeuristicAgent(RULES, seed=0)
    table, encoder = ActionTable(RULES), ObservationEncoder(RULES)
    seen = set()
    for seed in range(12):
        scores = [490, 490] if seed % 2 else [0, 0]
        game = Game(RULES, seed=seed, scores=scores)
        deal = game.deal
        while game.deal is deal and not game.is_over:
            game.apply_action(table.universal[heuristic.act(encoder.encode_turn(deal, table, game.scores))])
        result = game_result(RULES, scores, 100.0)
        for side in (0, 1):
            extra = result(deal, side) - deal.zero_sum_result(side)
            expected = 0.0 if not game.is_over else (100.0 if side in game.winners else -100.0)
            assert extra == expected
        seen.add(game.is_over)
    assert seen == {True, False}
