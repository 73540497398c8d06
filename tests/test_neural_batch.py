"""The network's greedy choices over a batch (agents/neural_batch.py): those of ``masked_logits``."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numba")

import numpy as np  # noqa: E402

from agents.heuristic.compiled import HeuristicPolicy  # noqa: E402
from agents.neural import ActorCritic  # noqa: E402
from agents.neural_batch import GreedyActor  # noqa: E402
from five_hundred_env.observation import ObservationEncoder  # noqa: E402
from five_hundred_env.rules import make_rules  # noqa: E402
from five_hundred_env.vector import BatchEngine  # noqa: E402
from training.rollouts.selfplay import draw_starting_scores  # noqa: E402

torch.set_num_threads(1)


def _inputs(preset: str, advice: str) -> tuple[np.ndarray, np.ndarray]:
    """The network inputs and masks of every decision of a few heuristic deals from drawn game scores."""
    rules = make_rules(preset)
    engine = BatchEngine(rules, 16, seed=3, observations=True)
    scores = np.random.default_rng(3)
    for game in range(16):
        engine.set_scores(game, draw_starting_scores(rules, scores))
    heuristic = HeuristicPolicy(rules)
    xs, masks = [], []
    done = np.zeros(16, dtype=bool)
    while not done.all():
        live = np.flatnonzero(~done)
        obs, mask = engine.obs[live], engine.masks[live]
        advised = heuristic.act_batch(obs, mask)
        onehot = np.zeros(mask.shape, dtype=np.int8)
        onehot[np.arange(len(live)), advised] = 1
        xs.append(np.concatenate([obs, onehot], axis=1) if advice != "none" else obs.copy())
        masks.append(mask.copy())
        step = np.full(16, -1, dtype=np.int64)
        step[live] = advised
        engine.step(step)
        done |= engine.deal_done
    return np.concatenate(xs), np.concatenate(masks)


@pytest.mark.parametrize(("preset", "advice", "activation", "per_kind"), [("australian", "heuristic", "relu", False),
                                                                          ("australian", "heuristic", "relu", True),
                                                                          ("australian", "none", "tanh", False),
                                                                          ("six_handed", "none", "relu", False)])
def test_the_greedy_actor_chooses_what_the_masked_logits_choose(preset, advice, activation, per_kind):
    """Every decision of a few deals (the score inputs scaled, the advice's one-hot): the same
    action as ``masked_logits(...).argmax``, on a network whose own logits decide (its policy head
    made large: the advice does not settle the choice), for every row and for a subset of rows;
    with one advice weight per phase, each row gets its phase's."""
    x, masks = _inputs(preset, advice)
    rules = make_rules(preset)
    encoder = ObservationEncoder(rules)
    torch.manual_seed(0)
    model = ActorCritic(x.shape[1] - (masks.shape[1] if advice != "none" else 0), masks.shape[1], [64, 32],
                        activation=activation, num_sides=rules.num_sides, advice=advice,
                        scores_at=encoder.layout["scores"][0],
                        phase_slice=encoder.phase_slice() if per_kind else None).eval()
    with torch.no_grad():
        model.actor[-1].weight.mul_(50.0)
        if per_kind:  # the bids always advised, the card play never (weights of another scale per phase)
            model.advice_weight.copy_(torch.tensor([1e3, 2.0, 0.5, -1e3, 0.0]))
    with torch.inference_mode():
        expected = model.masked_logits(torch.from_numpy(x), torch.from_numpy(masks)).argmax(-1).numpy()
    greedy = GreedyActor(model)
    assert len(np.unique(expected)) > 10  # the network's choices, not one action
    np.testing.assert_array_equal(greedy(x, masks), expected)
    rows = np.arange(1, len(x), 3)
    np.testing.assert_array_equal(greedy(x, masks, rows), expected[rows])
