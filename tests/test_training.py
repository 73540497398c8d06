"""PPO self-play: per-seat GAE, whole-deal rollouts, a tiny run end to end, exact resume."""

from __future__ import annotations

import csv
import itertools
from collections import defaultdict

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("pydantic")
pytest.importorskip("numba")  # the collector steps the batched engine

import numpy as np  # noqa: E402
from training_helpers import tiny  # noqa: E402

from agents.central import central_size  # noqa: E402
from agents.neural import ActorCritic, load_agent  # noqa: E402
from training.algorithms.ppo import compute_gae, train  # noqa: E402
from training.cli import main  # noqa: E402
from training.records.runs import CONFIG, OUTPUT, Manifest  # noqa: E402
from training.rollouts.selfplay import SelfPlayCollector  # noqa: E402

torch.set_num_threads(1)


def test_gae_follows_each_seat_own_decisions():
    # Two seats interleaved: seat A decides at 0, 2, 4 and seat B at 1, 3; each chain ends in a
    # terminal reward. A's advantages must not see B's values (and vice versa).
    values = np.array([0.1, 0.9, 0.2, -0.5, 0.3], dtype=np.float32)
    rewards = np.array([0, 0, 0, -1.0, 1.0], dtype=np.float32)
    done = np.array([False, False, False, True, True])
    nxt = np.array([2, 3, 4, -1, -1])
    adv, ret = compute_gae(rewards, values, done, nxt, gamma=1.0, lam=1.0)
    assert np.allclose(ret, [1.0, -1.0, 1.0, -1.0, 1.0])  # every decision's return is its own side's result
    assert np.allclose(adv, ret - values)
    adv_half, _ = compute_gae(rewards, values, done, nxt, gamma=1.0, lam=0.0)
    assert np.allclose(adv_half, [0.2 - 0.1, -0.5 - 0.9, 0.3 - 0.2, -1.0 + 0.5, 1.0 - 0.3])  # TD(0) on the seat's chain
    bad = np.array([2, 3, -1, -1, -1])
    with pytest.raises(AssertionError, match="whole deals"):
        compute_gae(rewards, values, np.array([False, False, False, True, True]), bad, 1.0, 0.95)


@pytest.mark.parametrize("preset", ["australian", "italian_3p", "two_handed", "five_handed", "six_handed"])
def test_a_rollout_holds_whole_deals_and_per_seat_chains(tmp_path, preset):
    config = tiny(tmp_path, "roll", rules={"preset": preset}, opponents={"self_play": 1.0, "snapshot": 0.0, "random": 0.0},
                  network={"critic": "central", "hidden_sizes": [16]})
    rules = config.to_rules()
    n = rules.num_players
    import five_hundred_env

    probe = five_hundred_env.env(rules=rules)
    model = ActorCritic(probe.unwrapped.encoder.size, int(probe.action_space("player_0").n), [16],
                        critic_extra=central_size(rules), num_sides=rules.num_sides)
    collector = SelfPlayCollector(rules, config, model, [], np.random.default_rng(0), torch.device("cpu"))
    ro = collector.collect()
    assert len(ro) >= config.train.num_envs * config.train.num_steps
    chains: dict[tuple[int, int], list[list[int]]] = defaultdict(lambda: [[]])
    for i, owner in enumerate(ro.owner):
        chains[owner][-1].append(i)
        if ro.done[i]:
            chains[owner].append([])
    deals_per_env: dict[int, int] = {}
    for (env, seat), seq in chains.items():
        assert seq[-1] == [], "a seat's last chain ended without its deal's result"
        for chain in seq[:-1]:
            for a, b in itertools.pairwise(chain):
                assert ro.next_index[a] == b and ro.owner[b] == (env, seat) and not ro.done[a]
            assert ro.next_index[chain[-1]] == -1 and ro.done[chain[-1]]
            assert all(ro.rewards[i] == 0 for i in chain[:-1])  # rewards come only when the deal ends
        deals_per_env.setdefault(env, len(seq) - 1)
        assert deals_per_env[env] == len(seq) - 1  # every seat decides in every deal (the auction)
    assert sum(deals_per_env.values()) == ro.deals
    # Self-play: in the k-th deal of an environment, team-mates get the same reward, and the
    # zero-sum rewards of the sides cancel out (§10.6: teams of two or three; five players each alone).
    for env, count in deals_per_env.items():
        for k in range(count):
            r = [ro.rewards[chains[(env, s)][k][-1]] for s in range(n)]
            assert sum(r) == pytest.approx(0.0, abs=1e-6)
            for seat in range(n):
                assert r[seat] == r[rules.seats_of(rules.side_of(seat))[0]]


def test_tiny_training_run_end_to_end(tmp_path):
    config = tiny(tmp_path, "e2e", logging={"tensorboard": True}, network={"critic": "local"})
    pytest.importorskip("tensorboard")
    result = train(config)
    run = tmp_path / "e2e"
    assert result.global_step >= 2500 and result.final_checkpoint == run / "final.pt"
    for name in ("config.yaml", "progress.csv", "checkpoints/latest.pt", "final.pt"):
        assert (run / name).is_file(), name
    assert list((run / "tb").glob("events.*"))
    assert len(list((run / "checkpoints").glob("step_*.pt"))) == 2  # steps 1000 and 2000
    with (run / "progress.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == result.updates and float(rows[-1]["global_step"]) == result.global_step
    assert all(float(r["entropy"]) > 0 for r in rows)
    agent = load_agent(run / "final.pt", seed=0)
    import five_hundred_env

    env = five_hundred_env.env(rules="australian")
    # the network scales exactly the observation's scores slice, wherever the layout puts it
    at = env.unwrapped.encoder.layout["scores"][0]
    scale = agent.model.input_scale
    assert agent.model.spec()["scores_at"] == at and bool((scale[at:at + 2] < 1).all())
    assert int((scale < 1).sum()) == 2
    env.reset(seed=1)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else agent.act(obs))
    manifest = Manifest.load(run)  # every file the run wrote is listed, the TensorBoard events too
    written = {p for p in run.rglob("*") if p.is_file() and p.name != "manifest.json"}
    assert written == set(manifest.listed(OUTPUT, CONFIG))
    assert main(["plot", str(run)]) == 0 and (run / "curves.png").stat().st_size > 10_000
    with pytest.raises(ValueError, match="already holds a run"):
        train(config)


def test_training_with_heuristic_advice(tmp_path):
    # Residual learning over the heuristic: rollouts, snapshots and the update all feed the
    # adviser's one-hot; the trained agent carries its adviser.
    config = tiny(tmp_path, "advice", network={"advice": "heuristic", "hidden_sizes": [16]},
                  train={"total_steps": 1200})
    result = train(config)
    agent = load_agent(result.final_checkpoint, seed=0)
    assert agent.model.advice == "heuristic" and agent.adviser is not None
    assert agent.model.spec()["obs_size"] + agent.model.num_actions == agent.model.actor[0].in_features


def test_final_evaluation_table(tmp_path, capsys):
    pytest.importorskip("training.evaluation.evaluate")
    config = tiny(tmp_path, "eval", train={"total_steps": 600}, evaluation={"final_deals": 6, "opponents": ["random"]})
    result = train(config)
    assert "random" in result.evaluations
    assert "score_diff_per_deal" in result.evaluations["random"]
    assert (tmp_path / "eval" / "final_eval.json").is_file()


def _rows(path):
    with path.open() as f:
        return [{k: v for k, v in r.items() if k not in ("time_s", "steps_per_s")} for r in csv.DictReader(f)]


def test_resume_equals_an_uninterrupted_run(tmp_path):
    pytest.importorskip("agents.heuristic")
    # Every kind of opponent takes part, so their seeding is covered too.
    mix = {"self_play": 0.3, "snapshot": 0.2, "heuristic": 0.2, "random": 0.3}
    whole = train(tiny(tmp_path, "whole", opponents=mix))
    stopped = train(tiny(tmp_path, "split", opponents=mix), stop_after_updates=3)
    assert stopped.updates == 3 and stopped.final_checkpoint is None
    resumed = train(tiny(tmp_path, "split", opponents=mix), resume=True)
    assert resumed.global_step == whole.global_step and resumed.updates == whole.updates
    a = torch.load(tmp_path / "whole" / "checkpoints" / "latest.pt", weights_only=True)
    b = torch.load(tmp_path / "split" / "checkpoints" / "latest.pt", weights_only=True)
    for key in a["model"]:
        assert torch.equal(a["model"][key], b["model"][key]), key
    assert len(a["pool"]) == len(b["pool"]) > 0
    assert a["counters"]["env_steps"] == b["counters"]["env_steps"]
    assert torch.equal(a["rng"]["torch"], b["rng"]["torch"]) and a["rng"]["numpy"] == b["rng"]["numpy"]
    for x, y in zip(a["optimizer"]["state"].values(), b["optimizer"]["state"].values(), strict=True):
        assert all(torch.equal(x[k], y[k]) for k in x)
    final = torch.load(tmp_path / "split" / "final.pt", weights_only=True)
    assert all(torch.equal(final["model"][k], b["model"][k]) for k in b["model"]) and "optimizer" not in final
    assert _rows(tmp_path / "whole" / "progress.csv") == _rows(tmp_path / "split" / "progress.csv")


def test_resume_refuses_a_different_network(tmp_path):
    train(tiny(tmp_path, "net"), stop_after_updates=1)
    with pytest.raises(ValueError, match="network section differs"):
        train(tiny(tmp_path, "net", network={"hidden_sizes": [8]}), resume=True)
    with pytest.raises(FileNotFoundError, match="nothing to resume"):
        train(tiny(tmp_path, "never"), resume=True)


def test_imitation_warm_start_and_init_from(tmp_path):
    pytest.importorskip("agents.heuristic")
    pytest.importorskip("training.evaluation.evaluate")
    config = tiny(tmp_path, "warm", train={"total_steps": 300}, pretrain={"deals": 12, "epochs": 2, "batch_size": 64},
                  evaluation={"interval": 10_000, "deals": 3})
    train(config)
    with (tmp_path / "warm" / "progress.csv").open() as f:
        rows = list(csv.DictReader(f))
    imitation = [r for r in rows if r["kind"] == "imitation"]
    assert len(imitation) == 2 and all(0 <= float(r["imitation_agreement"]) <= 1 for r in imitation)
    start = [r for r in rows if r["kind"] == "eval"]  # the warm-started policy, evaluated before PPO
    assert len(start) == 1 and start[0]["global_step"] == "0" and start[0]["eval_random_mean"]
    warm = tmp_path / "warm" / "final.pt"
    # init_from: the next run starts from those weights (a vanishing learning rate keeps them).
    follow = tiny(tmp_path, "follow", train={"total_steps": 300, "learning_rate": 1e-12, "anneal_lr": False},
                  pretrain={"init_from": str(warm)})
    train(follow)
    a = torch.load(warm, weights_only=True)["model"]
    b = torch.load(tmp_path / "follow" / "final.pt", weights_only=True)["model"]
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)
    with pytest.raises(ValueError, match="holds another network"):
        train(tiny(tmp_path, "other", network={"hidden_sizes": [8]}, pretrain={"init_from": str(warm)}))


def test_messages_go_above_the_progress_bar(tmp_path, monkeypatch):
    # Printed with print(), a message lands in the middle of the bar's line; tqdm.write clears it.
    tqdm = pytest.importorskip("tqdm")
    written: list[str] = []
    monkeypatch.setattr(tqdm.tqdm, "write", classmethod(lambda cls, s, *a, **k: written.append(s)))
    train(tiny(tmp_path, "bar", logging={"progress": True}), stop_after_updates=2)
    assert any(m.startswith("stopped after 2 updates") for m in written)


def test_imitation_epochs_show_a_progress_bar(tmp_path, capsys):
    pytest.importorskip("tqdm")
    from agents.heuristic import HeuristicAgent
    from training.algorithms.imitation import behaviour_clone, teacher_demonstrations

    config = tiny(tmp_path, "bc", pretrain={"deals": 2, "epochs": 2, "batch_size": 32})
    rules = config.to_rules()
    rng = np.random.default_rng(0)
    demos = teacher_demonstrations(rules, HeuristicAgent(rules, 0), 2, rng, central=False)
    probe = ActorCritic(demos["obs"].shape[1], demos["mask"].shape[1], [8])
    behaviour_clone(probe, demos, config.pretrain, rng, torch.device("cpu"), log=lambda _: None, progress=True)
    batches = 2 * -(-(len(demos["actions"]) - max(1, len(demos["actions"]) // 10)) // 32)
    assert f"{batches}/{batches}" in capsys.readouterr().err.split("imitation")[-1]
