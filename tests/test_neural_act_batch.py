"""A network agent over a batch (``NeuralAgent.act_batch``: datasets, the vector environment's
opponents): the choices ``act`` makes row by row, and the heuristic's advice batched."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numba")

import random  # noqa: E402

import numpy as np  # noqa: E402

from agents.heuristic import RowByRowHeuristic, batch_heuristic  # noqa: E402
from agents.neural import ActorCritic, NeuralAgent  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from agents.search.values import BatchPlayOut, GameStakes, batch_play_out, policy_play_out, world_action_values  # noqa: E402
from five_hundred_env.engine import Deal, IllegalActionError  # noqa: E402
from five_hundred_env.rules import make_rules  # noqa: E402
from five_hundred_env.vector import BatchEngine  # noqa: E402
from training.rollouts.selfplay import draw_starting_scores  # noqa: E402

torch.set_num_threads(1)


def _decisions(preset: str, games: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """The observations and masks of every decision of a few heuristic deals from drawn game scores."""
    rules = make_rules(preset)
    engine = BatchEngine(rules, games, seed=5, observations=True)
    rng = np.random.default_rng(5)
    for game in range(games):
        engine.set_scores(game, draw_starting_scores(rules, rng))
    heuristic = batch_heuristic(rules)
    observations, masks = [], []
    done = np.zeros(games, dtype=bool)
    while not done.all():
        live = np.flatnonzero(~done)
        observations.append(engine.obs[live].copy())
        masks.append(engine.masks[live].copy())
        step = np.full(games, -1, dtype=np.int64)
        step[live] = heuristic.act_batch(engine.obs[live], engine.masks[live])
        engine.step(step)
        done |= engine.deal_done
    return np.concatenate(observations), np.concatenate(masks)


@pytest.mark.parametrize("preset", ["australian", "two_handed"])
def test_a_batch_gets_the_actions_act_chooses_row_by_row(preset):
    """The shipped network (australian: advised by the heuristic; two_handed: every decision its
    own) chooses in one batch what it chooses one observation at a time, at every decision kind."""
    agent = make_agent("pretrained", preset, seed=0)
    obs, masks = _decisions(preset)
    batch = agent.act_batch(obs, masks)
    alone = [agent.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks, strict=True)]
    assert len(obs) >= 300
    assert batch.tolist() == alone


def test_the_row_by_row_heuristic_decides_as_the_compiled_one():
    """The fallback behind ``batch_heuristic`` (no numba, uncompiled rules) makes the compiled heuristic's choices."""
    rules = make_rules("australian")
    obs, masks = _decisions("australian", games=6)
    compiled = batch_heuristic(rules)
    assert compiled.compiled and not RowByRowHeuristic(rules).compiled
    assert RowByRowHeuristic(rules).act_batch(obs, masks).tolist() == compiled.act_batch(obs, masks).tolist()


def test_a_sampled_batch_draws_legal_actions_reproducibly():
    """A sampling agent draws only legal actions, from its own generator: the same seed, the same draws."""
    rules = make_rules("australian")
    obs, masks = _decisions("australian", games=4)
    torch.manual_seed(0)
    model = ActorCritic.for_rules(rules, [32])

    def draws(seed: int) -> np.ndarray:
        return NeuralAgent(rules, seed, model=model, greedy=False).act_batch(obs, masks)

    first = draws(1)
    assert masks[np.arange(len(masks)), first].all()
    assert first.tolist() == draws(1).tolist()
    assert first.tolist() != draws(2).tolist()


def test_a_batch_without_a_legal_action_is_refused():
    """A row with an empty mask (not this agent's turn) or mismatched shapes: a clear error, nothing chosen."""
    agent = make_agent("pretrained", "two_handed", seed=0)
    obs, masks = _decisions("two_handed", games=2)
    empty = masks[:3].copy()
    empty[1] = 0
    with pytest.raises(ValueError, match="legal action in every row"):
        agent.act_batch(obs[:3], empty)
    with pytest.raises(ValueError, match=r"\[B, obs\]"):
        agent.act_batch(obs[:3], masks[:2])


def _positions(rules, count: int, seed: int) -> list[Deal]:
    """Deals stopped anywhere (the auction, the kitty, the call, the card play) after random actions."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        deal = Deal.new(rules, rng, rng.randrange(rules.num_players))
        for _ in range(rng.randrange(60)):
            if deal.is_over:
                break
            deal.apply_action(rng.choice(deal.legal_actions()))
        if not deal.is_over:
            out.append(deal)
    return out


@pytest.mark.parametrize(("preset", "spec"), [("australian", "pretrained"), ("two_handed", "pretrained"),
                                              ("five_handed", None)])
def test_a_network_plays_a_search_s_worlds_out_in_batches_as_deal_by_deal(preset, spec):
    """pimc's playouts by a network (``BatchPlayOut`` with its ``act_batch``: every world and
    candidate stepped together on the batched engine) value every candidate as the network's
    own playouts deal by deal; with game scores and a win bonus (the contracting team read from
    the engine: five-handed's called partner)."""
    rules = make_rules(preset)
    if spec is None:
        torch.manual_seed(1)
        agent = NeuralAgent(rules, 0, model=ActorCritic.for_rules(rules, [64]))
    else:
        agent = make_agent(spec, rules, seed=0)
    batch = batch_play_out(rules, agent)
    assert isinstance(batch, BatchPlayOut) and batch.policy is agent
    scores = (120, -60, 300, 0, 40)[:rules.num_sides]
    stakes = GameStakes(scores, win_bonus=150.0)
    scalar = policy_play_out(rules, agent.act, scores)
    for number, deal in enumerate(_positions(rules, 10, seed=3)):
        legal = deal.legal_actions()
        side = rules.side_of(deal.to_act)
        assert (world_action_values(deal, legal, side, batch, stakes=stakes)
                == world_action_values(deal, legal, side, scalar, result=stakes.result)), number


def test_advance_leaves_a_finished_deal_at_its_end():
    """``BatchEngine.advance`` stops each deal at its end (not credited, no next deal): stepped by
    the heuristic's choices it ends as the compiled playout ends, with the same score changes
    and contract outcomes; an action in a finished deal is refused."""
    rules = make_rules("australian")
    deals = _positions(rules, 6, seed=4)
    stepped, played = BatchEngine(rules, 6, seed=0, observations=True), BatchEngine(rules, 6, seed=0)
    for engine in (stepped, played):
        for game, deal in enumerate(deals):
            engine.load_position(game, deal)
    with pytest.raises(ValueError, match="are not over"):
        stepped.deal_changes(np.arange(6))  # nothing is over yet: no change to read
    heuristic, games = batch_heuristic(rules), np.arange(6)
    while not stepped.deals_over(games).all():
        live = games[~stepped.deals_over(games)]
        actions = np.full(6, -1, dtype=np.int64)
        actions[live] = heuristic.act_batch(stepped.obs[live], stepped.masks[live])
        stepped.advance(actions)
    from agents.heuristic.compiled import play_out

    assert stepped.deal_changes(games).tolist() == play_out(played, games=games)[:, :rules.num_sides].tolist()
    for a, b in zip(stepped.contract_outcomes(games), played.contract_outcomes(games), strict=True):
        assert a.tolist() == b.tolist()
    with pytest.raises(IllegalActionError):
        stepped.advance(np.zeros(6, dtype=np.int64))
