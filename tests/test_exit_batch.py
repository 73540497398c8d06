"""Expert-iteration data on the batched engine (training/rollouts/exit_batch.py): the rows the
scalar engine (training/rollouts/exit_data.py, a deal at a time, every playout through the Python
agents) makes from the same chunk, byte for byte, for each compiled preset, with game scores and
the win bonus (§9), and with the network as the base policy (PIMC worlds, the exact solver)."""

from __future__ import annotations

import dataclasses

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numba")
pytest.importorskip("pydantic")

import numpy as np  # noqa: E402

from agents.central import central_size  # noqa: E402
from agents.neural import ActorCritic  # noqa: E402
from five_hundred_env.actions import ActionTable  # noqa: E402
from five_hundred_env.observation import ObservationEncoder  # noqa: E402
from five_hundred_env.rules import make_rules  # noqa: E402
from training.rollouts import exit_data  # noqa: E402
from training.rollouts.exit_batch import batch_plays, generate_batch_chunk  # noqa: E402
from training.rollouts.exit_data import ChunkJob, generate_chunk, generate_scalar_chunk  # noqa: E402

torch.set_num_threads(1)
EVERY_DECISION = (1.0, 1.0, 1.0, 1.0)


def _job(preset: str, seed: int, deals: int, **changes: object) -> ChunkJob:
    """A chunk of the shipped recipe (the heuristic plays; card plays rolled out on the real deal;
    game scores drawn; a win bonus), every decision scored, a small central-critic network."""
    rules = make_rules(preset)
    torch.manual_seed(0)
    model = ActorCritic(ObservationEncoder(rules).size, len(ActionTable(rules)), [16], advice="heuristic",
                        critic_extra=central_size(rules), num_sides=rules.num_sides)
    weights = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    job = ChunkJob(rules, seed, deals, model.spec(), weights, EVERY_DECISION, 0.5, worlds=2, solver_tricks=3,
                   base="heuristic", play_targets="rollout", starting_scores="uniform", win_bonus=250.0)
    return dataclasses.replace(job, **changes)


PRESETS = ("australian", "italian_3p", "french_46", "two_handed", "five_handed", "six_handed")


def _assert_same(scalar: dict[str, np.ndarray], batched: dict[str, np.ndarray]) -> None:
    assert scalar.keys() == batched.keys()
    for key in scalar:
        assert scalar[key].dtype == batched[key].dtype, key
        np.testing.assert_array_equal(scalar[key], batched[key], err_msg=key)


@pytest.mark.parametrize("preset", PRESETS)
def test_the_batched_engine_makes_the_scalar_engines_rows(preset):
    """Every bid, discard, nomination and card play of a few deals scored both ways: the same
    candidates, advantages (with the win bonus of the deals that end the game, §9), critic samples
    and returns."""
    job = _job(preset, 7, 3)
    scalar, batched = generate_scalar_chunk(job), generate_batch_chunk(job)
    _assert_same(scalar, batched)
    assert len(batched["kind"]) > 30 and set(batched["kind"].tolist()) >= {0, 1, 3}
    assert (batched["advantages"] != 0).any()


def test_a_win_bonus_changes_the_targets_of_a_deal_that_can_end_the_game():
    """§9: from scores near the target, the win bonus moves some advantages (both engines alike)."""
    job = _job("australian", 3, 4)
    plain = generate_batch_chunk(dataclasses.replace(job, win_bonus=0.0))
    bonus = generate_batch_chunk(job)
    np.testing.assert_array_equal(plain["x"], bonus["x"])  # the same deals and decisions
    assert not np.array_equal(plain["advantages"], bonus["advantages"])
    _assert_same(generate_scalar_chunk(job), bonus)


@pytest.mark.parametrize("advice", ["heuristic", "none"])
def test_the_network_as_the_base_policy_with_pimc_card_play(advice):
    """The network plays the deals and the playouts (a forward pass over the games: the batched
    one sums its first layer over the nonzero inputs), card plays scored over sampled worlds, the
    last tricks solved exactly (the compiled solver): as the scalar engine does, with the
    heuristic's advice and without it (the network's own logits decide)."""
    job = _job("australian", 5, 2, base="policy", play_targets="pimc", rates=(1.0, 1.0, 1.0, 0.5))
    if advice == "none":
        rules = job.rules
        torch.manual_seed(1)
        model = ActorCritic(ObservationEncoder(rules).size, len(ActionTable(rules)), [16], critic_extra=central_size(rules),
                            num_sides=rules.num_sides)
        job = dataclasses.replace(job, model_spec=model.spec(),
                                  weights={k: v.numpy().copy() for k, v in model.state_dict().items()})
    _assert_same(generate_scalar_chunk(job), generate_batch_chunk(job))


def test_generate_chunk_plays_compiled_presets_on_the_batched_engine(monkeypatch):
    job = _job("australian", 2, 1)

    def refuse(_job: ChunkJob) -> dict[str, np.ndarray]:
        raise AssertionError("a compiled preset went to the scalar engine")

    monkeypatch.setattr(exit_data, "generate_scalar_chunk", refuse)
    assert batch_plays(job)
    assert len(generate_chunk(job)["kind"]) > 0
    assert all(batch_plays(dataclasses.replace(job, rules=make_rules(p))) for p in PRESETS)
