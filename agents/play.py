"""The one play loop: agents act on the environment's observations until the episode ends.

Evaluation, the command line's ``play`` and anything else that seats agents at a table use it::

    from agents import HeuristicAgent, RandomAgent
    from agents.play import play_deal
    from five_hundred_env import raw_env

    env = raw_env(rules="australian")                      # episode="deal"
    seats = [HeuristicAgent(env.rules, seed=s) for s in range(4)]
    deal = play_deal(env, seats, seed=0)                   # the finished engine deal

The agents see only their observations (``env.last()``); the finished :class:`Deal` or
:class:`Game` is returned for the statistics. ``on_turn`` is called after every action with a
:class:`Turn` (the command line announces the others' actions from it). An agent that overrides
:meth:`Agent.notify` is also told of each deal's start (its seat, side, hand and the dealer) and
end (the contract, whether it was made, the score change) and of a game's end; the others are
told nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.base import Agent
from five_hundred_env.actions import action_to_str
from five_hundred_env.cards import card_to_str, mask_to_cards
from five_hundred_env.engine import Deal, Game, Phase
from five_hundred_env.env import raw_env


@dataclass(frozen=True)
class Turn:
    """One action just taken, as the referee sees it (the agents saw only ``observation``)."""

    seat: int
    action: int
    """The environment's action id."""
    phase: Phase
    """The phase the action was taken in (the engine's: ``NOMINATE`` even where the others see play)."""
    deal: Deal
    """The deal it was taken in, now after the action (``deal.is_over`` after its last action)."""
    observation: dict[str, np.ndarray]
    """What the acting seat saw."""


OnTurn = Callable[[Turn], None]


def play_episode(env: raw_env, seats: Sequence[Agent], on_turn: OnTurn | None = None) -> Game:
    """Run the AEC loop of an environment already reset until its episode ends, ``seats[i]``
    acting for seat ``i``; returns the environment's game."""
    if len(seats) != env.rules.num_players:
        raise ValueError(f"{len(seats)} agents for the {env.rules.num_players} seats of {env.rules.preset}")
    seat_of = {name: i for i, name in enumerate(env.possible_agents)}
    listeners = [(seat, agent) for seat, agent in enumerate(seats) if type(agent).notify is not Agent.notify]
    if listeners:  # agents that want the table's news (deal starts and ends): told through on_turn
        on_turn = _TableNews(env, listeners, on_turn)
    for name in env.agent_iter():
        obs, _reward, term, trunc, _info = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = seat_of[name]
        action = seats[seat].act(obs)
        if on_turn is None:
            env.step(action)
            continue
        deal = env.deal
        phase = deal.phase
        env.step(action)
        on_turn(Turn(seat, int(action), phase, deal, obs))
    assert env.game is not None
    return env.game


class _TableNews:
    """An ``on_turn`` that tells the listening seats (:meth:`Agent.notify`) of each deal's start
    and end and of the game's end, then calls the ``on_turn`` it wraps. Made as the episode starts,
    it tells the first deal's start at once."""

    def __init__(self, env: raw_env, listeners: list[tuple[int, Agent]], inner: OnTurn | None) -> None:
        self.env, self.listeners, self.inner = env, listeners, inner
        self.rules = env.rules
        self.deals = 0
        self._deal_start(env.deal)

    def _tell(self, event: dict[str, Any], extra: Callable[[int], dict[str, Any]] | None = None) -> None:
        for seat, agent in self.listeners:
            agent.notify({**event, "seat": seat, **(extra(seat) if extra else {})})

    def _scores(self) -> list[int]:
        game = self.env.game
        assert game is not None
        return list(game.scores)

    def _deal_start(self, deal: Deal) -> None:
        self.deals += 1
        two = self.rules.two_jokers
        self._tell({"type": "deal_start", "deal": self.deals, "dealer": deal.dealer, "scores": self._scores()},
                   lambda seat: {"side": self.rules.side_of(seat),
                                 "hand": [card_to_str(c, two) for c in mask_to_cards(deal.hands[seat])]})

    def __call__(self, turn: Turn) -> None:
        if self.inner is not None:
            self.inner(turn)
        deal = turn.deal
        if not deal.is_over:
            return
        made = None if deal.thrown_in else deal.contract_made()
        self._tell({"type": "deal_end", "deal": self.deals, "thrown_in": deal.thrown_in,
                    "contract": None if deal.thrown_in else action_to_str(deal.contract, self.rules),
                    "contractor": None if deal.thrown_in else deal.contractor, "made": made,
                    "score_change": list(deal.score_change or [0] * self.rules.num_sides), "scores": self._scores()})
        game = self.env.game
        assert game is not None
        if self.env.episode != "game":
            return
        if game.is_over or game.dealing_stopped:
            self._tell({"type": "game_end", "deals": self.deals, "winners": list(game.winners),
                        "scores": self._scores()})
        else:
            self._deal_start(game.deal)


def _check_episode(env: raw_env, wanted: str) -> None:
    if env.episode != wanted:
        raise ValueError(f"play_{wanted} needs an environment with episode={wanted!r}, got episode={env.episode!r}")


def play_deal(
    env: raw_env, seats: Sequence[Agent], *, seed: int | None = None, options: dict[str, Any] | None = None,
    on_turn: OnTurn | None = None,
) -> Deal:
    """Reset ``env`` (``episode="deal"``) with ``seed`` and reset ``options`` (e.g. ``dealer``,
    ``hands`` and ``kitty`` for an explicit deal), play the deal out and return it, finished."""
    _check_episode(env, "deal")
    env.reset(seed=seed, options=options)
    return play_episode(env, seats, on_turn).deals[0]


def play_game(
    env: raw_env, seats: Sequence[Agent], *, seed: int | None = None, options: dict[str, Any] | None = None,
    on_turn: OnTurn | None = None,
) -> Game:
    """Reset ``env`` (``episode="game"``) and play until the game is won, or truncated after the
    environment's ``max_deals``; returns the game (``game.is_over`` tells which)."""
    _check_episode(env, "game")
    env.reset(seed=seed, options=options)
    return play_episode(env, seats, on_turn)


__all__ = ["OnTurn", "Turn", "play_deal", "play_episode", "play_game"]
