"""A Gymnasium vector environment: a learner's seats against opponents, in ``num_envs`` games.

Each sub-environment is a game of :class:`~five_hundred_env.vector.BatchEngine`; the learner
plays ``learner_seats`` (one side: a seat, or both partners), and every other seat is played by
``opponent`` until a learner seat is to act again. Autoreset is ``SAME_STEP``: the step that
ends an episode returns the next episode's first observation and mask, and the finished
episode's last observation in ``info["final_obs"]`` (rows flagged by ``info["_final_obs"]``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from five_hundred_env.rules import Rules
from five_hundred_env.vector.batch import BatchEngine

Opponent = Any
"""``"random"`` (uniform over the legal actions, inside the engine), an ``agents.Agent``-like
object with ``act({"observation", "action_mask"}) -> int``, a callable of that dict, or an object
with ``act_batch(obs [k, D], masks [k, A]) -> actions [k]`` (one call for every waiting game)."""


def opponent_policy(opponent: Opponent, engine: BatchEngine) -> Callable[[np.ndarray], np.ndarray]:
    """A function of the games waiting on an opponent (indices) → their actions."""
    if isinstance(opponent, str):
        if opponent != "random":
            raise ValueError(f"unknown built-in opponent {opponent!r}: the environment plays only 'random' itself; "
                             f"for an agent spec use agents.vector.vector_env(rules, num_envs, opponent={opponent!r}), "
                             "or pass an agent")
        sampled = np.empty(engine.num_games, dtype=np.int64)
        return lambda games: engine.sample_actions(sampled)[games]
    act_batch = getattr(opponent, "act_batch", None)
    if callable(act_batch):
        return lambda games: _action_ids(act_batch(engine.obs[games], engine.masks[games]), games, "act_batch")
    act = getattr(opponent, "act", opponent)
    if not callable(act):
        raise ValueError(f"opponent must be 'random', an agent with act(observation) or a callable; got {opponent!r}")
    return lambda games: _action_ids([act({"observation": engine.obs[g], "action_mask": engine.masks[g]})
                                      for g in games], games, "act")


def _action_ids(chosen: Any, games: np.ndarray, call: str) -> np.ndarray:
    """The opponent's choices as int64 action ids, one per waiting game, or a ``ValueError`` that says
    what came back instead (``None``, a wrong count)."""
    if chosen is None or any(a is None for a in np.ravel(np.asarray(chosen, dtype=object))):
        raise ValueError(f"the opponent's {call} returned None for a game waiting on it, not an action id")
    actions = np.asarray(chosen)
    if actions.shape != (len(games),):
        raise ValueError(f"the opponent's {call} returned {actions.shape} for {len(games)} games waiting on it: "
                         f"one action id per game (shape ({len(games)},))")
    return actions.astype(np.int64)


class SingleAgentVectorEnv(VectorEnv):
    """``num_envs`` games of a learner (``learner_seats``, one side) against ``opponent``.

    ``step(actions)`` takes one action id per game for the learner seat to act and returns
    ``obs [B, D]`` int8, ``rewards [B]`` float32 (the learner side's deal results, as the AEC
    environment's rewards), ``terminated [B]``, ``truncated [B]`` (always False) and ``info``
    with ``action_mask [B, A]`` int8 (also :meth:`action_masks`, as sb3-contrib asks), ``seat
    [B]``, and ``final_obs``/``_final_obs`` for the games whose episode ended. ``episode``,
    ``reward`` (``"win"`` included), ``reward_scale``, ``win_shaping`` and rule options are those of :class:`BatchEngine`.
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP}  # noqa: RUF012 (gymnasium's convention)

    def __init__(
        self,
        rules: str | Rules = "australian",
        num_envs: int = 64,
        *,
        learner_seats: Sequence[int] = (0,),
        opponent: Opponent = "random",
        episode: str = "deal",
        reward: str = "zero_sum",
        reward_scale: float = 100.0,
        win_shaping: float = 0.0,
        seed: int | None = None,
        **options: Any,
    ) -> None:
        self.engine = engine = BatchEngine(rules, num_envs, episode=episode, reward=reward,
                                           reward_scale=reward_scale, win_shaping=win_shaping, seed=seed,
                                           **options)
        rules_obj = engine.rules
        seats = sorted({int(s) for s in learner_seats})
        if not seats or any(not 0 <= s < rules_obj.num_players for s in seats):
            raise ValueError(f"learner_seats must be seats 0..{rules_obj.num_players - 1}, got {learner_seats!r}")
        if len({rules_obj.side_of(s) for s in seats}) != 1:
            raise ValueError(f"learner_seats {seats} must all be on one side (one reward per game)")
        self.learner_seats = tuple(seats)
        self._is_learner = np.zeros(rules_obj.num_players, dtype=np.bool_)
        self._is_learner[seats] = True
        self._opponent = opponent_policy(opponent, engine)
        self.num_envs = num_envs
        self.single_observation_space = spaces.Box(engine.encoder.low, engine.encoder.high, dtype=np.int8)
        self.single_action_space = spaces.Discrete(engine.num_actions)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._final_observer = np.zeros(num_envs, dtype=np.int64)
        self._final_obs = np.zeros((num_envs, engine.obs_size), dtype=np.int8)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """New episodes in every game, played on to the learner's first decision (``options``: none)."""
        if options:
            raise ValueError(f"reset options are not supported here (got {sorted(options)}); use engine.set_deal")
        self.engine.reset(seed)
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        done = np.zeros(self.num_envs, dtype=np.bool_)
        self._play_opponents(rewards, done)
        return self.engine.obs.copy(), self._info(done)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """The learner's action in every game, then the opponents' until the learner is to act again
        (a finished episode is reset at once: see the module docstring). An illegal learner action
        raises :class:`~five_hundred_env.IllegalActionError` (a negative one ``ValueError``) and no game changes; an opponent's
        raises it too, every game left valid where it stood."""
        engine = self.engine
        actions = np.asarray(actions)
        # The engine reads a negative id as "leave this game": here the learner acts in every game.
        if np.issubdtype(actions.dtype, np.signedinteger) and actions.shape == (self.num_envs,) and (actions < 0).any():
            game = int(np.argmax(actions < 0))
            raise ValueError(f"game {game}: action {int(actions[game])} is negative; the learner acts in every game "
                             f"(an action id 0..{engine.num_actions - 1})")
        self._final_observer[:] = engine.seat  # a learner seat acts in every game now
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        done = np.zeros(self.num_envs, dtype=np.bool_)
        result = engine.step(actions, self._final_observer, self._final_obs)
        self._credit(result, rewards, done)
        self._play_opponents(rewards, done)
        return engine.obs.copy(), rewards, done, np.zeros(self.num_envs, dtype=np.bool_), self._info(done)

    def action_masks(self) -> np.ndarray:
        """The legal actions of every game's learner seat now, ``[B, A]`` bool (sb3-contrib)."""
        return self.engine.masks.astype(np.bool_)

    def _play_opponents(self, rewards: np.ndarray, done: np.ndarray) -> None:
        """Step the opponents of every game until a learner seat is to act everywhere."""
        engine = self.engine
        actions = np.full(self.num_envs, -1, dtype=np.int64)
        while True:
            waiting = np.flatnonzero(~self._is_learner[engine.seat])
            if not len(waiting):
                return
            actions[:] = -1
            actions[waiting] = self._opponent(waiting)
            self._credit(engine.step(actions, self._final_observer, self._final_obs), rewards, done)

    def _credit(self, result: Any, rewards: np.ndarray, done: np.ndarray) -> None:
        rewards += result.rewards[:, self.learner_seats[0]]
        done |= result.episode_done

    def _info(self, done: np.ndarray) -> dict[str, Any]:
        return {"action_mask": self.engine.masks.copy(), "seat": self.engine.seat.copy(),
                "final_obs": self._final_obs.copy(), "_final_obs": done.copy()}
