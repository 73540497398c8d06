"""Differential play: the same random legal actions through the batched engine and B AEC envs."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import five_hundred_env
from five_hundred_env.engine import deal_to_cards
from five_hundred_env.rules import Rules
from five_hundred_env.vector import BatchEngine


def load_aec_deal(batch: BatchEngine, game: int, aec: five_hundred_env.raw_env) -> None:
    """Give game ``game`` of the batch the AEC env's current deal and scores."""
    deal = aec.deal
    cards = deal_to_cards(aec.rules, deal.dealt, deal.kitty)
    batch.set_deal(game, cards["hands"], cards["kitty"], deal.dealer,
                   scores=list(aec.game.scores))


Policy = Callable[[int, dict], int]
"""A chooser of game ``b``'s action from the AEC env's ``observe(agent)`` of the seat to act."""


def play_differential(rules: Rules, episode: str, num_games: int, steps: int, seed: int,
                      start_scores: list[int] | None = None, reward: str = "zero_sum", win_shaping: float = 0.0,
                      policy: Policy | None = None) -> int:
    """Play ``steps`` batched steps, asserting at every step that each game's acting seat, mask,
    observation, the observation of another seat, the global state (oriented to seat 0, and to that
    other seat: ``env.state(agent)``) equal the AEC env's, and at
    each deal end its rewards and scores. The actions are random legal ones, or ``policy``'s.
    Returns the number of deals finished (so callers can check that deals did end)."""
    rng = np.random.default_rng(seed)
    batch = BatchEngine(rules, num_games, episode=episode, reward=reward, win_shaping=win_shaping, seed=seed)
    envs = [five_hundred_env.env(rules=rules, episode=episode, reward=reward, win_shaping=win_shaping)
            for _ in range(num_games)]
    options = {"scores": start_scores} if start_scores else None
    for b, aec in enumerate(envs):
        aec.reset(seed=seed * 1000 + b, options=options)
        load_aec_deal(batch, b, aec)
    deals = 0
    actions = np.zeros(num_games, dtype=np.int64)
    n = rules.num_players
    for t in range(steps):
        states = batch.state()
        others = (batch.seat + 1 + t % (n - 1)) % n  # a seat not to act, a different one each step
        views_of_others = batch.observe(others)
        states_of_others = batch.state(seats=others)
        for b, aec in enumerate(envs):
            agent = aec.agent_selection
            seat = aec.possible_agents.index(agent)
            view = aec.observe(agent)
            assert batch.seat[b] == seat, f"game {b}: batch seat {batch.seat[b]} != AEC seat {seat}"
            np.testing.assert_array_equal(batch.masks[b], view["action_mask"], err_msg=f"mask of game {b}")
            np.testing.assert_array_equal(batch.obs[b], view["observation"], err_msg=f"observation of game {b}")
            np.testing.assert_array_equal(states[b], aec.state(), err_msg=f"state of game {b}")
            other_agent = aec.possible_agents[others[b]]
            other = aec.observe(other_agent)["observation"]
            np.testing.assert_array_equal(views_of_others[b], other, err_msg=f"game {b}, seat {others[b]}'s view")
            np.testing.assert_array_equal(states_of_others[b], aec.state(other_agent),
                                          err_msg=f"game {b}, state oriented to seat {others[b]}")
            actions[b] = policy(b, view) if policy else rng.choice(np.flatnonzero(view["action_mask"]))
        step = batch.step(actions)
        for b, aec in enumerate(envs):
            aec.step(int(actions[b]))
            if not step.deal_done[b]:
                continue
            deals += 1
            game = aec.game
            deal = game.deal if episode == "deal" or game.is_over else game.deals[-2]  # the deal just finished
            expected = np.array([aec.rewards[a] for a in aec.possible_agents], dtype=np.float32)
            assert step.rewards[b].tobytes() == expected.tobytes(), f"rewards of game {b}: {step.rewards[b]} != {expected}"
            assert batch.score_change[b, :rules.num_sides].tolist() == deal.score_change, f"score change of game {b}"
            assert bool(step.episode_done[b]) == (not aec.agents or all(aec.terminations.values()))
            assert batch.last_deal[b, 3] == sum(1 << side for side in game.winners), f"winners of game {b}"
            if not step.episode_done[b]:  # the game goes on: its scores so far (§9)
                assert batch.scores[b].tolist() == game.scores, f"scores of game {b}"
            if step.episode_done[b]:
                aec.reset(seed=int(rng.integers(1 << 30)), options=options)
            load_aec_deal(batch, b, aec)
    return deals
