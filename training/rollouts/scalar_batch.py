"""What :class:`training.rollouts.selfplay.SelfPlayCollector` asks of the batched engine, played by
scalar AEC environments: PPO's rollouts for the presets the compiled kernels do not play
(``five_hundred_env.vector.batch.VECTOR_PRESETS``; the two-, five- and six-player presets of
docs/rules.md §10 for now).

:class:`ScalarBatch` keeps ``num_games`` ``episode="deal"`` environments side by side and offers
the part of :class:`~five_hundred_env.vector.BatchEngine`'s interface the collector uses, with the
same meaning: ``seat``, ``obs``, ``masks`` (the acting seat's, in every game), :meth:`step`
(negative actions leave a game as it is; a finished deal is replaced at once by the game's next
one, from the same starting scores), ``rewards``, ``score_change`` and ``last_deal`` of the deals
that ended, :meth:`set_scores`, :meth:`sample_actions` and :meth:`state`. Each decision is a
Python step of one environment, much slower than the kernels (docs/training.md gives its rate):
it serves until they play these presets.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from five_hundred_env.engine import check_scores, deal_to_cards
from five_hundred_env.env import raw_env
from five_hundred_env.rules import Rules
from five_hundred_env.vector import VectorStep


class ScalarBatch:
    """``num_games`` scalar environments stepped together, one deal per episode (see the module)."""

    def __init__(self, rules: Rules, num_games: int, *, reward: str = "zero_sum", reward_scale: float = 100.0,
                 seed: int | None = None) -> None:
        self.rules, self.num_games, self.num_players = rules, num_games, rules.num_players
        self.envs = [raw_env(rules=rules, episode="deal", reward=reward, reward_scale=reward_scale)
                     for _ in range(num_games)]
        probe = self.envs[0]
        self.agents = list(probe.possible_agents)
        self.num_actions = int(probe.action_space(self.agents[0]).n)
        self.obs_size, self.state_size = probe.encoder.size, probe.encoder.state_size
        b, n = num_games, self.num_players
        self.seat = np.zeros(b, dtype=np.int64)
        self.masks = np.zeros((b, self.num_actions), dtype=np.int8)
        self.obs = np.zeros((b, self.obs_size), dtype=np.int8)
        self.rewards = np.zeros((b, n), dtype=np.float32)
        self.score_change = np.zeros((b, rules.num_sides), dtype=np.int64)
        self.last_deal = np.full((b, 4), -1, dtype=np.int64)
        """As the batched engine's: contract (bid id), contractor, made (0/1), and 0 (no game is won in a deal)."""
        self.deal_done = np.zeros(b, dtype=np.bool_)
        self.episode_done = self.deal_done  # one deal per episode
        self._starting: list[list[int] | None] = [None] * b
        self._rng = np.random.default_rng(seed)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> VectorStep:
        """A new deal in every game; ``seed`` fixes every game's deals and :meth:`sample_actions`."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        seeds = self._rng.integers(2**31, size=self.num_games).tolist()
        for game, env in enumerate(self.envs):
            env.reset(seed=seeds[game], options=self._options(game))
            self._refresh(game)
        self.rewards[:] = 0
        self.deal_done[:] = False
        return self._result()

    def set_scores(self, game: int, scores: Sequence[int]) -> None:
        """Set game ``game``'s scores (per seat or per side) and those its deals start from, keeping
        its current deal, which must not have begun (the trainer sets them as a deal starts)."""
        env = self.envs[game]
        deal = env.deal
        if deal.history:
            raise ValueError(f"game {game}: scores are set before the deal's first action")
        self._starting[game] = check_scores(self.rules, scores)
        env.reset(options={**deal_to_cards(self.rules, deal.dealt, deal.kitty), "dealer": deal.dealer,
                           **self._options(game)})
        self._refresh(game)

    def step(self, actions: np.ndarray) -> VectorStep:
        """Play ``actions[b]`` (a compact action id, or negative to wait) in every game; a deal
        that ends is recorded (``rewards``, ``score_change``, ``last_deal``, ``deal_done``) and
        the game's next deal dealt."""
        self.rewards[:] = 0
        self.deal_done[:] = False
        for game in np.flatnonzero(np.asarray(actions) >= 0).tolist():
            env = self.envs[game]
            env.step(int(actions[game]))
            if all(env.terminations.values()):
                deal = env.deal
                self.rewards[game] = [env.rewards[agent] for agent in self.agents]
                self.score_change[game] = deal.score_change or 0
                self.last_deal[game] = (deal.contract, deal.contractor, int(deal.contract_made()), 0)
                self.deal_done[game] = True
                env.reset(options=self._options(game))  # the game's stream goes on
            self._refresh(game)
        return self._result()

    def sample_actions(self, out: np.ndarray | None = None) -> np.ndarray:
        """A uniformly random legal action for every game."""
        out = np.zeros(self.num_games, dtype=np.int64) if out is None else out
        for game in range(self.num_games):
            out[game] = self._rng.choice(np.flatnonzero(self.masks[game]))
        return out

    def state(self, *, seats: np.ndarray | None = None) -> np.ndarray:
        """Every game's ``env.state()``, or with ``seats`` game ``b``'s ``env.state(agent)`` of seat ``seats[b]``."""
        return np.stack([env.state(None if seats is None else self.agents[int(seats[game])])
                         for game, env in enumerate(self.envs)])

    def _options(self, game: int) -> dict[str, list[int]]:
        starting = self._starting[game]
        return {} if starting is None else {"scores": starting}

    def _refresh(self, game: int) -> None:
        env = self.envs[game]
        view = env.observe(env.agent_selection)
        self.seat[game] = self.agents.index(env.agent_selection)
        self.obs[game], self.masks[game] = view["observation"], view["action_mask"]

    def _result(self) -> VectorStep:
        return VectorStep(self.seat, self.obs, self.masks, self.rewards, self.deal_done, self.episode_done)
