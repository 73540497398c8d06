"""The chance to win the game from a pair of scores (agents/search/game_values.py ``GameValues``).

RULES.md §9: "A side wins when it reaches the target (500: "reach" means a score ≥ 500) by making a
contract [AU, IT] ... A side that sinks to −500 or less loses and the game ends [AU, IT, FR],
whatever the other scores are". The table's game end must be the engine's, its values those of
the game its outcomes describe, and a search that takes it must value deals by it.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from agents.registry import agent_factory
from agents.search.game_values import GameValues, _game_end
from agents.search.pimc import PIMCAgent
from agents.search.values import GameStakes, Outcome
from five_hundred_env.actions import ActionTable
from five_hundred_env.engine import Deal, contract_winners
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import make_rules
from training.evaluation.matches import board_results, match_outcomes


@pytest.mark.parametrize("preset", ["australian", "french_46", "two_handed", "six_handed"])
def test_the_tables_game_end_is_the_engines(preset):
    """§9 for two sides, on arrays, against ``contract_winners`` at random score pairs around both
    ends (french_46 counts defence points towards 500: ``win_needs_contract=False``)."""
    rules = make_rules(preset)
    rng = random.Random(0)
    own = np.array([rng.randrange(-700, 800, 10) for _ in range(3000)])
    other = np.array([rng.randrange(-700, 800, 10) for _ in range(3000)])
    for contractor in (-1, 0, 1):
        for made in (False, True):
            ended, won = _game_end(rules, own, other, contractor, made)
            for k in range(len(own)):
                team = [] if contractor < 0 else [contractor]
                winners = contract_winners(rules, [int(own[k]), int(other[k])], team, made)
                assert bool(winners) == ended[k]
                if winners:
                    assert (0 in winners) == (won[k] == 1.0)


def test_a_fair_250_point_walk_is_the_gamblers_ruin():
    """Each deal the side makes or fails a 250-point contract, even odds, the other side's score
    unchanged: from 0 it wins half its games, from 250 three in four, from −250 one in four (§9:
    500 made wins, −500 loses), whatever the other side's score."""
    rules = make_rules("australian")
    table = GameValues.fit(rules, [(250, 0, 0, True), (-250, 0, 0, False)])
    for other in (-400, 0, 300):
        assert table.chance(0, other) == pytest.approx(0.5, abs=1e-5)
        assert table.chance(250, other) == pytest.approx(0.75, abs=1e-5)
        assert table.chance(-250, other) == pytest.approx(0.25, abs=1e-5)


def test_mirrored_outcomes_make_a_fair_game_and_scores_help():
    """Outcomes and their mirror images in equal numbers: each side's chance is the other's
    complement, 50% at equal scores, and more points mean a better chance."""
    rules = make_rules("australian")
    rng = random.Random(1)
    outcomes = []
    for _ in range(40):
        bid = rng.choice([40, 80, 140, 250, 500])
        made = rng.random() < 0.6
        change = (bid if made else -bid, rng.choice([0, 10, 30]))
        outcomes += [(change[0], change[1], 0, made), (change[1], change[0], 1, made), (0, 0, -1, False)]
    table = GameValues.fit(rules, outcomes)
    assert table.chance(0, 0) == pytest.approx(0.5, abs=1e-4)
    assert table.chance(200, -100) == pytest.approx(1 - table.chance(-100, 200), abs=1e-4)
    assert table.chance(300, 0) > table.chance(100, 0) > table.chance(0, 0) > table.chance(0, 100)


def test_a_deal_is_worth_the_change_in_the_chance_to_win():
    rules = make_rules("australian")
    table = GameValues.fit(rules, [(250, 0, 0, True), (-250, 0, 0, False)], scale=1000)
    assert table.value((250, 0), (250, 0), (0,), True, 0) == pytest.approx(250, abs=0.01)  # 0.75 → a win
    assert table.value((250, 0), (-250, 0), (0,), False, 0) == pytest.approx(-250, abs=0.01)  # 0.75 → 0.5
    assert table.value((0, 250), (0, 250), (1,), True, 0) == pytest.approx(-500, abs=0.01)  # the other side wins
    assert table.value((0, 0), (0, 0), (), False, 0) == 0.0  # thrown in
    stakes = GameStakes((250, 0), game_values=table)
    assert stakes.value(rules, Outcome([250, 0], (0,), True), 0) == pytest.approx(250, abs=0.01)


def test_a_table_saves_loads_and_refuses_what_is_not_its_own(tmp_path):
    rules = make_rules("australian")
    table = GameValues.fit(rules, [(100, 0, 0, True), (-60, 20, 0, False), (0, 80, 1, True)])
    table.save(tmp_path / "t.npz")
    loaded = GameValues.load(tmp_path / "t.npz", rules)
    assert np.array_equal(loaded.win, table.win) and (loaded.top, loaded.scale) == (table.top, table.scale)
    with pytest.raises(ValueError, match="a game-value table of australian, not of two_handed"):
        GameValues.load(tmp_path / "t.npz", make_rules("two_handed"))
    (tmp_path / "bad.npz").write_bytes(b"not a table")
    with pytest.raises(ValueError, match="not a game-value table"):
        GameValues.load(tmp_path / "bad.npz", rules)
    with pytest.raises(ValueError, match="two sides"):
        GameValues(make_rules("italian_3p"), table.win, table.top)
    with pytest.raises(ValueError, match="no outcomes"):
        GameValues.fit(rules, [])


def test_match_outcomes_are_the_plays_as_a_saw_them():
    rules = make_rules("australian")
    outcomes = match_outcomes(rules, "heuristic", "random", deals=3, seed=4)
    plays = [play for board in board_results(rules, "heuristic", "random", 4, 0, 3) for play in board]
    assert len(outcomes) == len(plays) == 6
    for (own, other, contractor, made), play in zip(outcomes, plays, strict=True):
        a_side = play.seats.index("A") % 2
        assert (own, other) == (play.score_change[a_side], play.score_change[1 - a_side])
        assert contractor == (-1 if play.contractor < 0 else int(play.contractor % 2 != a_side))
        assert made == play.made
    with pytest.raises(ValueError, match="two sides"):
        match_outcomes(make_rules("italian_3p"), "heuristic", "random", deals=1, seed=0)


def test_pimc_values_its_bids_by_a_table(tmp_path):
    """With a table the searched means are changes in the chance to win (``scale`` for the whole
    game), not points: a bid's means differ from the points' and stay within ±scale."""
    rules = make_rules("australian")
    table = GameValues.fit(rules, [(250, 0, 0, True), (-250, 0, 0, False), (0, 100, 1, True)])
    table.save(tmp_path / "t.npz")
    agent = agent_factory(f"pimc:bid_worlds=4,min_gain=0,game_values={tmp_path / 't.npz'}")(rules, 1)
    assert isinstance(agent, PIMCAgent) and agent.game_values is not None
    plain = PIMCAgent(rules, seed=1, bid_worlds=4, min_gain=0)
    encoder, actions = ObservationEncoder(rules), ActionTable(rules)
    deal = Deal.new(rules, random.Random(5), 0)
    observation = encoder.encode_turn(deal, actions, [200, 100])
    agent.act(observation)
    plain.act(observation)
    assert agent.last_search.means != plain.last_search.means
    assert all(-table.scale <= mean <= table.scale for mean in agent.last_search.means.values())
    with pytest.raises(ValueError, match="give one"):
        PIMCAgent(rules, win_bonus=100, game_values=table)
    with pytest.raises(ValueError, match="not of two_handed"):
        agent_factory(f"pimc:game_values={tmp_path / 't.npz'}")(make_rules("two_handed"), 0)
