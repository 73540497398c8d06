"""The PPO collector on the batched engine: trajectories, opponents' seats, starting scores (§9)."""

from __future__ import annotations

from collections import defaultdict

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("pydantic")
pytest.importorskip("numba")

import numpy as np  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from agents.central import central_features, central_size  # noqa: E402
from agents.neural import ActorCritic  # noqa: E402
from five_hundred_env.engine import check_scores  # noqa: E402
from five_hundred_env.rules import make_rules  # noqa: E402
from five_hundred_env.vector import BatchEngine  # noqa: E402
from training.rollouts.selfplay import SelfPlayCollector, draw_starting_scores  # noqa: E402
from training.settings.config import config_from_dict  # noqa: E402

torch.set_num_threads(1)


def collector_for(preset: str = "australian", opponents: dict | None = None, seed: int = 0, **env) -> SelfPlayCollector:
    """A collector of 6 games and 64 learner decisions each, with a small untrained network."""
    config = config_from_dict({
        "rules": {"preset": preset}, "env": env,
        "train": {"num_envs": 6, "num_steps": 64, "num_minibatches": 2},
        "network": {"hidden_sizes": [16], "critic": "central"},
        "opponents": {"self_play": 1.0, "snapshot": 0.0, "heuristic": 0.0, "random": 0.0, **(opponents or {})},
    })
    rules = config.to_rules()
    engine = BatchEngine(rules, 1)
    torch.manual_seed(seed)
    model = ActorCritic(engine.obs_size, engine.num_actions, [16], critic_extra=central_size(rules),
                        num_sides=rules.num_sides)
    return SelfPlayCollector(rules, config, model, [], np.random.default_rng(seed), torch.device("cpu"))


def deal_chains(ro) -> dict[int, list[dict[int, list[int]]]]:
    """Per game, its deals in order, each a map seat -> that seat's decisions. A deal is over once
    every seat seen in it has made its last (``done``) decision: every seat bids first (§4)."""
    deals: dict[int, list[dict[int, list[int]]]] = defaultdict(list)
    open_seats: dict[int, set[int]] = defaultdict(set)
    for i, (game, seat) in enumerate(ro.owner):
        if not open_seats[game]:
            deals[game].append(defaultdict(list))
        deal = deals[game][-1]
        if seat not in deal:
            open_seats[game].add(seat)
        deal[seat].append(i)
        if ro.done[i]:
            open_seats[game].discard(seat)
    return deals


def test_stored_masks_are_the_ones_the_actions_were_sampled_under():
    """Actions are legal under their stored masks, and the update's recomputed log-probabilities
    under the same masks are the stored ones (illegal actions keep probability 0)."""
    collector = collector_for(opponents={"self_play": 0.5, "random": 0.5})
    ro = collector.collect()
    masks, actions = np.concatenate(ro.masks), np.concatenate(ro.actions)
    assert masks[np.arange(len(actions)), actions].all()
    obs, extra = torch.from_numpy(np.concatenate(ro.obs)), torch.from_numpy(np.concatenate(ro.extras))
    with torch.no_grad():
        logp, _, values = collector.model.evaluate_actions(obs, torch.from_numpy(masks), torch.from_numpy(actions), extra)
        probs = torch.softmax(collector.model.masked_logits(obs, torch.from_numpy(masks)), dim=-1)
    assert torch.allclose(logp, torch.from_numpy(np.concatenate(ro.logprobs)), atol=1e-5)
    assert torch.allclose(values, torch.from_numpy(np.concatenate(ro.values)), atol=1e-5)
    assert probs[torch.from_numpy(masks == 0)].max().item() == 0.0


def test_the_heuristic_acts_only_at_its_own_seats(monkeypatch):
    """Against the heuristic, each deal's learner decisions come from one side only, and the
    heuristic is asked for exactly the other side's decisions."""
    collector = collector_for(opponents={"self_play": 0.0, "heuristic": 1.0})
    engine, heuristic = collector.engine, collector.heuristic
    asked: list[tuple[int, int]] = []
    row_bytes = engine.obs.strides[0]

    def spy(observation):
        game = (observation["observation"].ctypes.data - engine.obs.ctypes.data) // row_bytes
        seat = int(engine.seat[game])
        assert not collector.learner[game, seat], f"the heuristic was asked to play learning seat {seat} of game {game}"
        asked.append((game, seat))
        return type(heuristic).act(heuristic, observation)

    monkeypatch.setattr(heuristic, "act", spy)
    ro = collector.collect()
    rules = collector.rules
    for deals in deal_chains(ro).values():
        for deal in deals:
            assert len({rules.side_of(seat) for seat in deal}) == 1  # one learning side per deal
            assert len(deal) == rules.num_players // rules.num_sides
    assert asked and ro.env_steps == len(ro) + len(asked)


@pytest.mark.parametrize("preset", ["australian", "italian_3p"])
def test_uniform_starting_scores_appear_in_every_observation_of_the_deal(preset):
    """§9: each deal starts from scores drawn strictly between losing_score and target; every
    seat's observation shows them (its own side first) throughout the deal."""
    collector = collector_for(preset, starting_scores="uniform")
    ro = collector.collect()
    rules = collector.rules
    offset, (sides,) = collector.engine.encoder.layout["scores"]
    obs = np.concatenate(ro.obs)
    seen = []
    for deals in deal_chains(ro).values():
        for deal in deals:
            absolute = set()
            for seat, chain in deal.items():
                shown = obs[chain, offset:offset + sides].astype(int) * 10
                assert (shown == shown[0]).all(), "the scores changed during a deal"
                own = rules.side_of(seat)
                absolute.add(tuple(np.roll(shown[0], own)))  # back to side 0 first
            assert len(absolute) == 1, "seats disagree on the scores"
            scores = absolute.pop()
            assert all(rules.losing_score < s < rules.target for s in scores)
            seen.extend(scores)
    assert len(set(seen)) > 10 and min(seen) < -100 and max(seen) > 100


def test_zero_starting_scores_by_default():
    collector = collector_for()
    ro = collector.collect()
    offset, (sides,) = collector.engine.encoder.layout["scores"]
    assert not np.concatenate(ro.obs)[:, offset:offset + sides].any()


@settings(max_examples=40, deadline=None)
@given(preset=st.sampled_from(["australian", "italian_3p", "french_46"]), target=st.integers(1, 2000),
       losing=st.integers(-2000, -1), seed=st.integers(0, 2**32 - 1))
def test_drawn_starting_scores_never_end_the_game_at_once(preset, target, losing, seed):
    """§9: a drawn starting score is a multiple of 10 above losing_score and below the target,
    which check_scores (what the engine and the environment accept) confirms."""
    rules = make_rules(preset, target=target, losing_score=losing)
    rng = np.random.default_rng(seed)
    for _ in range(5):
        scores = draw_starting_scores(rules, rng)
        assert check_scores(rules, scores) == scores
        assert all(losing < s < target and s % 10 == 0 for s in scores)


def test_set_scores_shows_at_once_keeps_the_deal_and_starts_the_next_deals():
    """§9 scores: set_scores changes what the acting seat sees now and the scores every later deal
    of a deal episode starts from; bad scores change nothing."""
    engine = BatchEngine("australian", 3, seed=4)
    offset, (sides,) = engine.encoder.layout["scores"]
    scores = slice(offset, offset + sides)
    before = engine.obs.copy()
    engine.set_scores(1, [120, -340])
    assert engine.scores[1].tolist() == [120, -340] and engine.scores[0].tolist() == [0, 0]
    own = int(engine.seat[1]) % 2
    assert engine.obs[1, scores].tolist() == [[12, -34][own], [12, -34][1 - own]]  # ÷ 10, own side first
    engine.obs[1, scores] = 0
    assert (engine.obs == before).all()  # nothing else changed, in any game
    engine.set_scores(1, [120, -340])
    with pytest.raises(ValueError, match="end the game"):
        engine.set_scores(1, [-500, 0])
    assert engine.scores[1].tolist() == [120, -340]
    deals = 0
    while deals < 2:
        step = engine.step(engine.sample_actions())
        if step.deal_done[1]:
            deals += 1
            assert engine.scores[1].tolist() == [120, -340]  # the next deal starts from them again


def test_rewards_stay_the_deal_result_whatever_the_starting_scores():
    """§8: the same deals and actions from other starting scores give the same rewards."""
    plain, scored = BatchEngine("australian", 8, seed=9), BatchEngine("australian", 8, seed=9)
    rng = np.random.default_rng(0)
    rules = plain.rules
    for game in range(8):
        scored.set_scores(game, draw_starting_scores(rules, rng))
    ended = np.zeros(8, dtype=bool)
    while not ended.all():
        actions = plain.sample_actions()
        actions[ended] = -1
        a, b = plain.step(actions), scored.step(actions)
        assert (a.mask == b.mask).all() and np.array_equal(a.rewards, b.rewards)
        ended |= a.deal_done
    assert scored.scores.any()


@pytest.mark.parametrize("preset", ["australian", "italian_3p"])
def test_the_batched_central_features_are_each_seats_hidden_cards(preset):
    engine = BatchEngine(preset, 5, seed=3)
    for _ in range(7):
        engine.step(engine.sample_actions())
    seats = np.array([0, 1, 2, 1, 0])
    rows = central_features(engine.state(seats=seats), engine.rules)
    n, width = engine.num_players, engine.rules.card_slots
    assert rows.shape == (5, central_size(engine.rules))
    hands = engine.state()[:, :n * width].reshape(5, n, width)  # seat 0's state: absolute seats
    for b in range(5):
        assert np.array_equal(rows[b, :n * width].reshape(n, width), np.roll(hands[b], -seats[b], axis=0))
        assert np.array_equal(rows[b, :width], engine.observe(seats)[b, :width])  # the seat's own hand first


def test_a_rollout_is_a_function_of_the_generator_and_the_weights():
    """What exact resume rests on: the same generator state and weights give the same rollout."""
    mix = {"self_play": 0.4, "heuristic": 0.3, "random": 0.3}
    a = collector_for(opponents=mix, starting_scores="uniform", seed=5).collect()
    b = collector_for(opponents=mix, starting_scores="uniform", seed=5).collect()
    assert a.owner == b.owner and a.rewards == b.rewards and a.env_steps == b.env_steps
    for x, y in zip(a.obs + a.actions, b.obs + b.actions, strict=True):
        assert np.array_equal(x, y)


def test_a_tiny_run_with_uniform_starting_scores_trains_end_to_end(tmp_path):
    """The whole loop on the batched engine with every kind of opponent and scores drawn per deal."""
    pytest.importorskip("agents.heuristic")
    from training.algorithms.ppo import train

    config = config_from_dict({
        "seed": 3, "torch_threads": 1, "env": {"starting_scores": "uniform"},
        "train": {"total_steps": 1500, "num_envs": 4, "num_steps": 64, "update_epochs": 1, "num_minibatches": 2},
        "network": {"hidden_sizes": [16]},
        "opponents": {"self_play": 0.3, "snapshot": 0.3, "heuristic": 0.2, "random": 0.2,
                      "snapshot_interval": 300, "pool_size": 2},
        "evaluation": {"interval": 0, "final_deals": 0},
        "logging": {"dir": str(tmp_path), "run_name": "scores", "tensorboard": False, "progress": False},
        "checkpoint": {"interval": 1000},
    })
    result = train(config)
    assert result.global_step >= 1500 and result.final_checkpoint.is_file()
    saved = torch.load(tmp_path / "scores" / "checkpoints" / "latest.pt", weights_only=True)
    assert len(saved["pool"]) == 2 and saved["config"]["env"]["starting_scores"] == "uniform"
