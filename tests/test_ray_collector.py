"""The PPO collector on Ray (``distributed.backend: ray``, docs/distributed.md "PPO collector"):
a rollout's games in shards, one Ray task each, put together in shard order. Runs on the local
one-node cluster of ``tests/test_distributed.py``."""

from __future__ import annotations

import copy
import csv
import math

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("ray")
pytest.importorskip("numba")  # the collector steps the batched engine

import numpy as np  # noqa: E402
from test_distributed import ray_address  # noqa: E402, F401  (the module's cluster)
from training_helpers import tiny  # noqa: E402

import five_hundred_env  # noqa: E402
from agents.neural import ActorCritic  # noqa: E402
from training.algorithms.ppo import train  # noqa: E402
from training.rollouts import selfplay  # noqa: E402
from training.rollouts.selfplay import ShardedCollector, collect_shard, concatenate_rollouts, make_collector  # noqa: E402
from training.workers.distributed import Backend  # noqa: E402

ARRAY_FIELDS = ("obs", "masks", "extras", "actions", "logprobs", "values")
LIST_FIELDS = ("rewards", "done", "next_index", "owner")


def _model(rules, seed: int) -> ActorCritic:
    torch.manual_seed(seed)
    probe = five_hundred_env.env(rules=rules)
    return ActorCritic(probe.unwrapped.encoder.size, int(probe.action_space("player_0").n), [16],
                       num_sides=rules.num_sides)


def test_a_rollout_on_ray_equals_its_shards_collected_here(ray_address, tmp_path, monkeypatch):  # noqa: F811
    """Five games in shards of two (2, 2, 1), a snapshot in the pool: the rollout of the Ray tasks
    is, array for array, the three shards collected in this process, one after the other."""
    monkeypatch.setattr(selfplay, "GAMES_PER_SHARD", 2)
    config = tiny(tmp_path, "shards", train={"num_envs": 5, "num_steps": 16},
                  distributed={"backend": "ray", "address": ray_address})
    rules = config.to_rules()
    model, snapshot = _model(rules, 1), _model(rules, 2)

    def collector(backend: Backend) -> ShardedCollector:
        return ShardedCollector(rules, config, model, [snapshot], np.random.default_rng(11), backend)

    assert isinstance(make_collector(rules, config, model, [snapshot], np.random.default_rng(11),
                                     torch.device("cpu")), ShardedCollector)
    on_ray = collector(Backend("ray", ray_address)).collect()
    here_collector = collector(Backend("ray", ray_address))
    here = concatenate_rollouts([collect_shard(job) for job in here_collector.jobs()], [2, 2, 1])
    for name in ARRAY_FIELDS:
        assert len(getattr(on_ray, name)) == len(getattr(here, name)), name
        for a, b in zip(getattr(on_ray, name), getattr(here, name), strict=True):
            assert np.array_equal(a, b), name
    for name in LIST_FIELDS:
        assert getattr(on_ray, name) == getattr(here, name), name
    assert (on_ray.env_steps, on_ray.deals, dict(on_ray.stats)) == (here.env_steps, here.deals, dict(here.stats))
    # Whole deals of every game, each shard at least its quota, each chain within one seat of one game.
    assert {game for game, _seat in on_ray.owner} == set(range(5))
    assert len(on_ray) >= 5 * 16
    for i, j in enumerate(on_ray.next_index):
        assert (j > i and on_ray.owner[j] == on_ray.owner[i]) if j >= 0 else on_ray.done[i]


def test_shards_differ_by_seed_and_weights(tmp_path):
    """A shard is a function of its job: the same job twice, the same rollout; another seed or
    other weights, another one (so the Ray test above compares something that could differ)."""
    config = tiny(tmp_path, "seeds", train={"num_envs": 2, "num_steps": 16})
    rules = config.to_rules()
    job = selfplay.ShardJob(rules, config, _model(rules, 1), [], seed=3)
    first, again = collect_shard(job), collect_shard(copy.deepcopy(job))
    assert first.actions and all(np.array_equal(a, b) for a, b in zip(first.actions, again.actions, strict=True))
    for other in (selfplay.ShardJob(rules, config, job.model, [], seed=4),
                  selfplay.ShardJob(rules, config, _model(rules, 5), [], seed=3)):
        ro = collect_shard(other)
        assert len(ro) != len(first) or any(not np.array_equal(a, b) for a, b in
                                            zip(ro.logprobs, first.logprobs, strict=True))


def test_a_tiny_training_run_on_ray_completes_with_finite_statistics(ray_address, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setattr(selfplay, "GAMES_PER_SHARD", 2)
    config = tiny(tmp_path, "ray", train={"total_steps": 700},
                  distributed={"backend": "ray", "address": ray_address})
    result = train(config)
    assert result.global_step >= 700 and result.updates >= 2
    with (result.run_dir / "progress.csv").open() as f:
        rows = [r for r in csv.DictReader(f) if r["kind"] == "update"]
    assert len(rows) == result.updates
    for row in rows:
        for key in ("policy_loss", "value_loss", "entropy", "approx_kl", "return_learner", "bid_won_rate",
                    "batch_size"):
            assert math.isfinite(float(row[key])), (key, row[key])
        assert float(row["batch_size"]) >= 4 * 64  # every shard's quota: 2 shards of 2 games × 64 steps
