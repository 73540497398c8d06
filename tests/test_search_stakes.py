"""The search's game stakes (agents/search/values.py ``GameStakes``): a deal valued in the game to 500.

RULES.md §9: "A side wins when it reaches the target (500 ...) by making a contract [AU, IT] ...
A side that sinks to −500 or less loses and the game ends". A deal that ends the game is worth
``win_bonus`` points more to the winners (zero-sum); the winners are judged by the engine's
``Game``, and the batched playouts must value every candidate as the scalar ones do.
"""

from __future__ import annotations

import random

import pytest
from test_search_positions import kinds_of, position

from agents import HeuristicAgent
from agents.registry import agent_factory
from agents.search.pimc import PIMCAgent
from agents.search.values import (
    BatchPlayOut,
    GameStakes,
    action_values,
    policy_play_out,
    solved_result,
    world_action_values,
    worlds_action_values,
)
from five_hundred_env.actions import ActionTable
from five_hundred_env.engine import Deal, Game, Phase
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules, make_rules
from five_hundred_env.sampling import InfoSet, WorldSampler
from five_hundred_env.scoring import zero_sum_result

BONUS = 1000.0


def _heuristic_deals(rules: Rules, count: int, seed: int) -> list[Deal]:
    """Whole deals played by the heuristic (none thrown in)."""
    rng = random.Random(seed)
    agent, encoder, table = HeuristicAgent(rules, seed=0), ObservationEncoder(rules), ActionTable(rules)
    out = []
    while len(out) < count:
        deal = Deal.new(rules, rng, rng.randrange(rules.num_players))
        while not deal.is_over:
            deal.apply_action(table.universal[agent.act(encoder.encode_turn(deal, table))])
        if not deal.thrown_in:
            out.append(deal)
    return out


def _game_winners(rules: Rules, deal: Deal, scores: list[int]) -> list[int]:
    """The sides that win when ``deal`` is played from ``scores``, as the engine's Game decides (§9)."""
    replay = Deal(rules, deal.dealt, deal.kitty, deal.dealer)
    game = Game(rules, first_deal=replay, scores=scores)
    for action in deal.history:
        game.apply_action(action)
    return game.winners


def _near_the_ends(rules: Rules, deal: Deal, rng: random.Random) -> list[int]:
    """Side scores that this deal's result takes close to, across or short of 500 or −500."""
    change = deal.score_change
    scores = []
    for side in range(rules.num_sides):
        edge = rng.choice([rules.target, rules.losing_score])
        score = edge - change[side] + rng.choice([-10, 0, 10])
        scores.append(min(max(score, rules.losing_score + 10), rules.target - 10))
    return scores


@pytest.mark.parametrize("preset", ["australian", "italian_3p", "french_46"])
def test_stakes_add_the_bonus_to_the_sides_the_game_engine_says_win(preset):
    rules = make_rules(preset)
    rng = random.Random(3)
    ended = 0
    for deal in _heuristic_deals(rules, 40, seed=5):
        scores = _near_the_ends(rules, deal, rng)
        winners = _game_winners(rules, deal, scores)
        ended += bool(winners)
        stakes = GameStakes(tuple(scores), BONUS)
        bonus = [BONUS if s in winners else 0.0 for s in range(rules.num_sides)]
        for side in range(rules.num_sides):
            expected = deal.zero_sum_result(side) + (zero_sum_result(bonus, side) if winners else 0.0)
            assert stakes.result(deal, side) == pytest.approx(expected)
            assert GameStakes(tuple(scores)).result(deal, side) == deal.zero_sum_result(side)
    assert 5 <= ended < 40  # some deals end the game, some do not


@pytest.mark.parametrize("preset", ["australian", "italian_3p", "french_46", "two_handed", "five_handed", "six_handed"])
def test_batched_playouts_value_the_game_as_the_scalar_ones(preset):
    """Every candidate of positions of every phase, with scores near the game's ends shown to the
    playouts: one batch of compiled playouts values each as the scalar playout does, and the stakes
    change some values."""
    rules = make_rules(preset)
    rng = random.Random(11)
    batch = BatchPlayOut(rules)
    agent, encoder, table = HeuristicAgent(rules, seed=0), ObservationEncoder(rules), ActionTable(rules)
    changed = phases = 0
    seen = set()
    while phases < 24:
        deal = Deal.new(rules, rng, rng.randrange(rules.num_players))
        for _ in range(rng.randrange(45)):
            if deal.is_over:
                break
            deal.apply_action(table.universal[agent.act(encoder.encode_turn(deal, table))])
        if deal.is_over or len(deal.legal_actions()) < 2:
            continue
        phases += 1
        seen.add(deal.phase)
        scores = tuple(rng.choice([rules.losing_score + 40, 0, rules.target - 60]) for _ in range(rules.num_sides))
        stakes = GameStakes(scores, BONUS)
        legal, side = deal.legal_actions(), rules.side_of(deal.to_act)
        scalar = policy_play_out(rules, agent.act, scores)
        batched = world_action_values(deal, legal, side, batch, stakes=stakes)
        assert batched == world_action_values(deal, legal, side, scalar, stakes=stakes)
        changed += batched != world_action_values(deal, legal, side, scalar)
    assert Phase.BIDDING in seen and Phase.PLAY in seen
    assert changed >= 3


def test_pimc_takes_a_win_bonus_from_its_spec():
    agent = agent_factory("pimc:worlds=2,win_bonus=500")(make_rules("australian"), 0)
    assert agent.win_bonus == 500.0
    with pytest.raises(ValueError, match="win_bonus"):
        agent_factory("pimc:win_bonus=-1")(make_rules("australian"), 0)


def test_pimc_values_the_game_its_observation_shows():
    """At a bid with the bidder's side 10 points from 500 (any contract it makes wins the game, §9),
    the win bonus changes the searched means, and they differ from the same bid's at a score of
    zero: the search reads the scores from the observation."""
    rules = make_rules("australian")
    encoder, table = ObservationEncoder(rules), ActionTable(rules)
    rng = random.Random(2)
    moved = 0
    for _ in range(4):
        deal = Deal.new(rules, rng, rng.randrange(rules.num_players))
        side = rules.side_of(deal.to_act)
        near = [rules.target - 10 if s == side else 0 for s in range(rules.num_sides)]
        means = {}
        for scores in (near, [0] * rules.num_sides):
            for bonus in (0, BONUS):
                agent = PIMCAgent(rules, seed=1, bid_worlds=4, min_gain=0, win_bonus=bonus)
                agent.act(encoder.encode_turn(deal, table, scores))
                means[tuple(scores), bonus] = agent.last_search.means
        zero = tuple([0] * rules.num_sides)
        moved += means[tuple(near), 0] != means[tuple(near), BONUS] != means[zero, BONUS]
    assert moved >= 3


@pytest.mark.parametrize("preset", ["australian", "italian_3p", "five_handed"])
def test_the_solved_worlds_of_a_decision_value_each_action_as_the_solver_says(preset):
    """The endgame worlds of one decision, solved together (their results per contract and tricks
    shared), give each world's action the value of its own solved tricks, with and without stakes."""
    rules = make_rules(preset)
    rng = random.Random(3)
    batch = BatchPlayOut(rules)
    for kind in kinds_of(rules):
        deal = position(rules, rng, kind, tricks_left=3)
        seat = deal.to_act
        sampler, side = WorldSampler(InfoSet.from_deal(deal, seat)), rules.side_of(seat)
        worlds, legal = [sampler.sample(rng) for _ in range(6)], deal.legal_actions()
        for stakes in (None, GameStakes(tuple(rng.choice([0, rules.target - 40]) for _ in range(rules.num_sides)), BONUS)):
            expected = [{a: solved_result(w, action_values(w)[a], side, stakes) for a in legal} for w in worlds]
            assert worlds_action_values(worlds, legal, side, batch, solver_tricks=4, stakes=stakes) == expected
