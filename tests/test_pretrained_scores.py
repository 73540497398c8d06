"""The advised networks read the game scores without losing games by it (issue 18, item 6): those
shipped before the distilled ones, kept in ``agents/pretrained/stages/`` as their teachers.

A network whose training never showed a game score other than zero decides, in a real game, on
score inputs its weights never learned: its choices move away from anything it was trained on
(the networks shipped before the score tuning lost 82–97% of their games to 500 against the
heuristic that way, while score-blind they won 21–47%). Playing enough games to see that takes
minutes on two cores, so the suite checks a proxy, and ``benchmarks/bench_game_scores.py``
measures the games themselves (docs/agents.md, "Pretrained agents").

The proxy, over every decision of a few games to 500 between heuristics (the game scores as a
shipped agent meets them): wherever the network's choice with the scores differs from its choice
with the score inputs zeroed (its zero-score play, which its training measured), it is the
heuristic's, whose bidding counts the game's end (RULES.md §9: "A side wins when it reaches the
target (500 ...) by making a contract"; "A side that sinks to −500 or less loses"). The old
files broke this at 9.6%, 12.3% and 21.9% of these decisions (australian, italian_3p, french_46).
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import numpy as np  # noqa: E402

from agents.neural import ActorCritic, load_agent  # noqa: E402
from agents.pretrained import available_presets, pretrained_path  # noqa: E402
from five_hundred_env.actions import ActionTable  # noqa: E402
from five_hundred_env.observation import ObservationEncoder  # noqa: E402
from five_hundred_env.rules import make_rules  # noqa: E402
from training.algorithms.score_tuning import game_positions, greedy_actions, score_blind, scores_offset, tune  # noqa: E402

torch.set_num_threads(1)

MAX_UNTRAINED_SHARE = 0.02
"""The most decisions at real scores that may be neither the zero-score choice nor the heuristic's."""


STAGES = Path(__file__).resolve().parent.parent / "agents" / "pretrained" / "stages"
"""The advised networks shipped before the distilled ones, kept as the distillations' teachers."""


def advised_networks() -> list[str]:
    """The policy files advised by the heuristic (a correction of its choices), which the proxy is
    about: the shipped ones and those kept in ``agents/pretrained/stages/``, which the distillation
    recipes imitate. A network that makes every decision itself (search distillation,
    docs/distill.md) is fitted on deals at game scores drawn over the game, so its score inputs
    were trained, and its choices need not be the heuristic's anywhere."""
    files = [str(pretrained_path(p)) for p in available_presets()] + sorted(str(f) for f in STAGES.glob("*.pt"))
    return [f for f in files if load_agent(f, seed=0).model.advice == "heuristic"]


@pytest.mark.parametrize("path", advised_networks(), ids=lambda path: Path(path).stem)
def test_an_advised_network_departs_from_its_zero_score_play_only_towards_the_heuristic(path: str):
    agent = load_agent(path, seed=0)
    rules, model = agent.rules, agent.model
    positions = game_positions(rules, games=6, seed=3)
    scored = positions.scores.any(axis=1)
    assert scored.mean() > 0.5  # most decisions of a game are at a score other than zero
    own = greedy_actions(model, positions.x, positions.mask)
    blind = greedy_actions(score_blind(model, rules), positions.x, positions.mask)
    untrained = (own != blind) & (own != positions.heuristic)
    assert not untrained[~scored].any()  # at a score of zero the scores cannot matter
    assert untrained.mean() <= MAX_UNTRAINED_SHARE, (
        f"{path}: {untrained.sum()} of {len(untrained)} decisions at real game scores are neither the network's "
        "zero-score choice nor the heuristic's: its score inputs were not trained (python -m training.algorithms.score_tuning)")


def _tiny(rules) -> ActorCritic:
    """A small advised network whose own logits (not only the advice) decide, like a trained one's."""
    torch.manual_seed(0)
    model = ActorCritic(ObservationEncoder(rules).size, len(ActionTable(rules)), [32], num_sides=rules.num_sides,
                        advice="heuristic")
    with torch.no_grad():
        model.actor[-1].weight.mul_(3000.0)
    return model


def test_score_blind_plays_as_the_network_at_zero_and_ignores_the_scores():
    rules = make_rules("australian")
    model = _tiny(rules)
    positions = game_positions(rules, games=2, seed=5)
    blind = score_blind(model, rules)
    at, k = scores_offset(rules), rules.num_sides
    zero = positions.x.copy()
    zero[:, at:at + k] = 0
    np.testing.assert_array_equal(greedy_actions(blind, positions.x, positions.mask),
                                  greedy_actions(model, zero, positions.mask))
    assert blind.spec()["scores_at"] == at and model.spec()["scores_at"] is None


def test_tuning_moves_the_decisions_near_the_games_end_to_the_targets():
    """The fit raises the agreement with the targets (the heuristic's choices near the end, §9)."""
    rules = make_rules("australian")
    tuned, stats = tune(rules, _tiny(rules), games=10, seed=2, margin=200, epochs=6, learning_rate=3e-3)
    assert stats["blind_near_end"] < 0.9 and stats["blind_away"] == 1.0
    assert stats["tuned_near_end"] > stats["blind_near_end"] + 0.05
    assert tuned.spec()["scores_at"] == scores_offset(rules)  # the score inputs scaled to about ±1
