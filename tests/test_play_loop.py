"""The one play loop (agents.play): agents act on their observations until the deal or game ends;
every action reaches ``on_turn`` with the phase it was taken in."""

from __future__ import annotations

import pytest

from agents import Agent, HeuristicAgent, RandomAgent
from agents.play import play_deal, play_episode, play_game
from five_hundred_env.engine import Phase, deal_to_cards
from five_hundred_env.env import raw_env


class Recording(Agent):
    """A random agent that remembers every observation it was asked to act on."""

    def __init__(self, rules, seed=None) -> None:
        super().__init__(rules, seed)
        self.inner = RandomAgent(rules, seed)
        self.seen: list = []

    def act(self, observation):
        self.seen.append(observation)
        return self.inner.act(observation)


@pytest.mark.parametrize("preset", ["australian", "italian_3p", "french_46"])
def test_play_deal_plays_the_deal_out_and_reports_every_turn(preset):
    env = raw_env(rules=preset)
    seats = [Recording(env.rules, seed=s) for s in range(env.rules.num_players)]
    turns = []
    deal = play_deal(env, seats, seed=3, on_turn=turns.append)
    assert deal.is_over and deal is env.deal
    assert [env.actions.universal[t.action] for t in turns] == deal.history  # every action, in order
    assert [len(a.seen) for a in seats] == [sum(t.seat == s for t in turns) for s in range(len(seats))]
    assert all(t.deal is deal for t in turns) and turns[-1].deal.is_over
    assert turns[0].phase == Phase.BIDDING
    if not deal.thrown_in:
        assert any(t.phase == Phase.DISCARD for t in turns) and turns[-1].phase == Phase.PLAY
        assert all(t.seat == deal.contractor for t in turns if t.phase == Phase.DISCARD)  # §5: the contractor discards
    for turn in turns:
        assert turn.observation["action_mask"][turn.action]  # each seat chose from its own legal moves


def test_play_deal_takes_an_explicit_deal_and_is_reproducible():
    env = raw_env(rules="australian")
    first = play_deal(env, [HeuristicAgent(env.rules, seed=s) for s in range(4)], seed=1)
    options = {"dealer": first.dealer, **deal_to_cards(env.rules, first.dealt, first.kitty)}
    again = play_deal(env, [HeuristicAgent(env.rules, seed=s) for s in range(4)], seed=1, options=options)
    assert again.history == first.history and again.score_change == first.score_change


def test_play_game_plays_to_the_end_or_the_deal_limit():
    env = raw_env(rules="italian_3p", episode="game", max_deals=3)
    game = play_game(env, [HeuristicAgent(env.rules, seed=s) for s in range(3)], seed=2)
    assert game is env.game and all(d.is_over for d in game.deals)
    assert game.is_over or len(game.deals) == 3
    full = raw_env(rules="australian", episode="game", max_deals=400)
    assert play_game(full, [HeuristicAgent(full.rules, seed=s) for s in range(4)], seed=0).is_over


def test_the_loop_refuses_a_wrong_table():
    env = raw_env(rules="australian")
    with pytest.raises(ValueError, match="3 agents for the 4 seats"):
        play_deal(env, [RandomAgent(env.rules)] * 3, seed=0)
    with pytest.raises(ValueError, match="episode='game'"):
        play_game(env, [RandomAgent(env.rules)] * 4, seed=0)
    with pytest.raises(ValueError, match="episode='deal'"):
        play_deal(raw_env(rules="australian", episode="game"), [RandomAgent(env.rules)] * 4)


def test_play_episode_continues_an_environment_already_reset():
    env = raw_env(rules="french_46")
    env.reset(seed=8)
    game = play_episode(env, [RandomAgent(env.rules, seed=s) for s in range(4)])
    assert game.deals[0].is_over and not env.agents
