"""The Five Hundred PettingZoo AEC environment (``five_hundred_v1``).

=====================  ==========================================================================
Agents                 ``player_0 … player_{n-1}`` (n = 4; 3 for ``italian_3p``; 2, 5, 6 for
                       ``two_handed``, ``five_handed``, ``six_handed``); seats {0, 2} and
                       {1, 3} are partners with four players, {0, 2, 4} and {1, 3, 5} with six
Action space           ``Discrete(A)``: A = 80 (``australian``), 70 (``italian_3p``,
                       ``two_handed``), 82 (``french_46``), 95 (``five_handed``), 100
                       (``six_handed``); ids in :class:`~five_hundred_env.actions.ActionTable`
                       (universal order: bids 0-27, the cards, joker leads, nominations, the
                       extended ranks' cards, ``PARTNER_0-4``)
Observation space      ``Dict(observation=Box(int8, (size,)), action_mask=Box(int8, (A,)))``;
                       the vector (perfect recall of the deal) is laid out in
                       :mod:`five_hundred_env.observation`; ``observation_dtype="float32"``
                       gives the same values as ``float32``
State space            ``Box(int8, (state_size,))``: every hand, the kitty, the discards, then
                       an observation with the true phase; ``state()`` oriented to seat 0,
                       ``state(agent)`` to that agent (for centralised critics)
Rewards                at the end of each deal, every agent gets its side's result (below)
=====================  ==========================================================================

Turns. Every decision is an AEC turn with an action mask: each bid or pass, each kitty discard
(one card per turn), the five-handed partner call, the joker nomination, each card played (a
suitless joker is led with ``JK:x``, naming the suit). The team-mates who sit out a misère (four
and six players) never get a turn.

Rewards and their timing. Rewards are given only when a deal ends. Then *every* agent (the
partner who sat out included) is credited at once with its side's result, in ``env.rewards``
and added to its cumulative reward; ``last()`` shows an agent its cumulative reward the next
time that agent is selected, which is either its next turn (``"game"`` episodes) or its final
``last()`` once the episode is over (every agent is selected once more, terminated, and must
step ``None``). Acting resets the actor's cumulative reward to 0. ``reward``:

* ``"zero_sum"`` (default): the side's score change minus the mean change of the other sides,
  divided by ``reward_scale`` (default 100);
* ``"score"``: the side's own score change ÷ ``reward_scale``;
* ``"win"`` (``"game"`` episodes only): 0 per deal, +1 to the winners and −1 to the others at
  the end of the game. ``win_shaping`` (default 0) adds a shaping by the deal's result: each
  deal also gives ``win_shaping`` × the ``"zero_sum"`` reward, so a game's rewards sum to its
  outcome (±1) plus ``win_shaping`` × the sum of its deals' zero-sum rewards.

A thrown-in deal gives 0. A ``"game"`` episode is truncated after ``max_deals`` deals, or
after :data:`~five_hundred_env.engine.MAX_THROWN_IN_IN_ROW` (20) thrown-in deals in a row, so
that players who always pass still end. ``env.unwrapped.scores`` maps each agent to its side's cumulative
score in the episode, and ``env.unwrapped.winners`` lists the winning agents of a finished
``"game"`` episode.

Illegal actions (not in the mask, out of range, not an integer, not ``None`` for a finished
agent) raise :class:`~five_hundred_env.engine.IllegalActionError`, naming the action, the agent
and the legal actions, and change nothing; with ``illegal_action="terminate"`` the offender
gets ``illegal_reward`` instead and the episode ends (like PettingZoo's
``TerminateIllegalWrapper``).

Version history: v1 — the observation recalls the whole deal (new slices ``tricks`` and
``joker_leads`` after the v0 ones, whose offsets are unchanged); ``state()`` shows the
contractor's nomination turn (v0's was identical before and after ``NO_NOMINATION`` unless seat
0 was the contractor) and ``state(agent)`` is oriented to an agent; ``render_mode="rgb_array"``;
``observation_dtype``. v0 — first release.
"""

from __future__ import annotations

import math
import operator
import random
import warnings
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from five_hundred_env.actions import ActionTable
from five_hundred_env.engine import Deal, Game, IllegalActionError, check_scores
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.picture import table_image
from five_hundred_env.render import colour_supported, render_table
from five_hundred_env.rules import Rules, make_rules

EPISODE_MODES = ("deal", "game")
REWARD_MODES = ("zero_sum", "score", "win")
ILLEGAL_MODES = ("raise", "terminate")
OBSERVATION_DTYPES = ("int8", "float32")
RESET_OPTION_KEYS = ("dealer", "hands", "kitty", "scores")


def env(**kwargs: Any) -> raw_env:
    """The environment as users should create it.

    Order and legality are checked natively (and cheaply) inside :class:`raw_env`, so no
    generic PettingZoo wrapper is stacked on top: they would add nothing but cost.
    """
    return raw_env(**kwargs)


def is_finite_number(value: Any) -> bool:
    """A real number (numpy's included), not a bool, neither NaN nor infinite."""
    return (isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
            and math.isfinite(value))


def check_seed(seed: Any) -> int:
    """A reset seed as a plain ``int``: any integer type (numpy's included) that is not negative."""
    if not isinstance(seed, (bool, np.bool_)):
        try:
            value = operator.index(seed)
        except TypeError:
            value = -1
        if value >= 0:
            return value
    raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")


class raw_env(AECEnv):
    """Five Hundred as a PettingZoo AEC environment. See the module docstring for the spec.

    Keyword arguments: ``rules`` (a preset name or a :class:`Rules`; default ``australian``),
    any rule option of docs/rules.md §2 as an override, ``episode`` (``"deal"`` or ``"game"``),
    ``render_mode`` (``None``, ``"ansi"``, ``"human"``, ``"rgb_array"``), ``reward``,
    ``reward_scale``, ``win_shaping`` (``reward="win"`` only), ``illegal_action`` (``"raise"`` or
    ``"terminate"``), ``illegal_reward``,
    ``max_deals`` (truncate a ``"game"`` episode after that many deals; default: no limit but 20
    thrown-in deals in a row) and ``observation_dtype`` (``"int8"`` or ``"float32"``: the
    observation vector's and the state's dtype; the action mask stays ``int8``).
    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "five_hundred_v1", "render_modes": ["ansi", "human", "rgb_array"], "render_fps": 2,
        "is_parallelizable": False,
    }

    def __init__(
        self,
        rules: str | Rules = "australian",
        episode: str = "deal",
        render_mode: str | None = None,
        reward: str = "zero_sum",
        reward_scale: float = 100.0,
        win_shaping: float = 0.0,
        illegal_action: str = "raise",
        illegal_reward: float = -1.0,
        max_deals: int | None = None,
        observation_dtype: str = "int8",
        **options: Any,
    ) -> None:
        super().__init__()
        self.rules = make_rules(rules, **options) if options or isinstance(rules, str) else rules
        if not isinstance(self.rules, Rules):
            raise ValueError(f"rules must be a preset name or a Rules object, got {rules!r}")
        for name, value, choices in (("episode", episode, EPISODE_MODES), ("reward", reward, REWARD_MODES),
                                     ("illegal_action", illegal_action, ILLEGAL_MODES),
                                     ("observation_dtype", observation_dtype, OBSERVATION_DTYPES)):
            if value not in choices:
                raise ValueError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
        if reward == "win" and episode != "game":
            raise ValueError("reward='win' needs episode='game' (a deal has no winner)")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be None, 'ansi', 'human' or 'rgb_array'; got {render_mode!r}")
        if not is_finite_number(reward_scale) or reward_scale <= 0:
            raise ValueError(f"reward_scale must be a positive finite number, got {reward_scale!r}")
        if not is_finite_number(win_shaping) or (win_shaping != 0 and reward != "win"):
            raise ValueError(f"win_shaping must be a finite number, and non-zero only with reward='win'; got {win_shaping!r}")
        if not is_finite_number(illegal_reward):
            raise ValueError(f"illegal_reward must be a finite number, got {illegal_reward!r}")
        if max_deals is not None and (not isinstance(max_deals, (int, np.integer)) or isinstance(max_deals, bool)
                                      or max_deals < 1):
            raise ValueError(f"max_deals must be a positive integer or None, got {max_deals!r}")
        self.episode = episode
        self.render_mode = render_mode
        self.reward_mode = reward
        self.reward_scale = float(reward_scale)
        self.win_shaping = float(win_shaping)
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self.max_deals = None if max_deals is None else int(max_deals)
        self._float_obs = observation_dtype == "float32"

        n = self.rules.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        self.actions = ActionTable(self.rules)
        self._universal = self.actions.universal
        self.encoder = ObservationEncoder(self.rules)
        num_actions = len(self.actions)
        self.action_spaces = {a: spaces.Discrete(num_actions) for a in self.possible_agents}
        dtype = np.dtype(observation_dtype)
        self.observation_spaces = {
            a: spaces.Dict({
                "observation": spaces.Box(self.encoder.low.astype(dtype), self.encoder.high.astype(dtype), dtype=dtype),
                "action_mask": spaces.Box(0, 1, (num_actions,), dtype=np.int8),
            })
            for a in self.possible_agents
        }
        self.state_space = spaces.Box(-127, 127, (self.encoder.state_size,), dtype=dtype)
        self._rng: random.Random | None = None
        self.game: Game | None = None
        self.agents = []
        self.winners: list[str] = []

    # -- spaces ------------------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        """``agent``'s observation space (the same for every agent)."""
        return self.observation_spaces[self.possible_agents[self._seat_of(agent)]]

    def action_space(self, agent: str) -> spaces.Space:
        """``agent``'s action space, ``Discrete(A)``."""
        return self.action_spaces[self.possible_agents[self._seat_of(agent)]]

    def _seat_of(self, agent: str) -> int:
        """The seat of an agent name; an unknown one is an error naming the known agents."""
        try:
            return self._seat[agent]
        except (KeyError, TypeError):  # TypeError: not even hashable
            raise ValueError(f"unknown agent {agent!r}; the agents are {', '.join(self.possible_agents)}") from None

    # -- notation ----------------------------------------------------------------------------
    def action_to_str(self, action: int) -> str:
        """The docs/rules.md §1 spelling of an action id of this environment (an int or numpy integer)."""
        if isinstance(action, (bool, np.bool_)):
            raise ValueError(f"action id {action!r} is not an integer")
        try:
            return self.actions.to_str(operator.index(action))
        except TypeError:
            raise ValueError(f"action id {action!r} is not an integer") from None

    def str_to_action(self, text: str) -> int:
        """The action id of an action written in the docs/rules.md §1 notation."""
        compact = self.actions.from_str(text)
        if compact < 0:
            raise ValueError(f"{text!r} is not an action of the {self.rules.preset} deck")
        return compact

    # -- episode -----------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start an episode. ``seed`` reproduces it exactly; a later ``reset()`` without a seed
        continues the same random sequence. ``options``: ``dealer``, ``hands`` + ``kitty`` (card
        names) set up the first deal; ``scores`` (one per seat, partners equal) the starting scores."""
        if seed is not None:
            seed = check_seed(seed)
            self._rng = random.Random(seed)
            for i, a in enumerate(self.possible_agents):
                self.action_spaces[a].seed(seed + i)
        elif self._rng is None:
            self._rng = random.Random()
        self.game = self._new_game(options or {})
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self.winners = []
        self._rewards_dirty = False
        self.agent_selection = self.possible_agents[self.game.to_act]
        if self.render_mode == "human":
            self.render()

    def _new_game(self, options: dict[str, Any]) -> Game:
        if not isinstance(options, dict):
            raise ValueError(f"reset options must be a dict, got {type(options).__name__}")
        unknown = sorted(str(k) for k in options if k not in RESET_OPTION_KEYS)
        if unknown:
            warnings.warn(f"ignoring unknown reset options {unknown}; known: {', '.join(RESET_OPTION_KEYS)}",
                          stacklevel=3)
        rules = self.rules
        rng = self._rng
        assert rng is not None
        scores = check_scores(rules, options["scores"]) if "scores" in options else None
        if ("hands" in options) != ("kitty" in options):
            raise ValueError("reset options 'hands' and 'kitty' must be given together")
        dealer = options.get("dealer")
        if dealer is None:
            dealer = rng.randrange(rules.num_players)
        elif not isinstance(dealer, (int, np.integer)) or isinstance(dealer, bool) or not 0 <= dealer < rules.num_players:
            raise ValueError(f"reset option 'dealer' must be a seat 0..{rules.num_players - 1}, got {dealer!r}")
        if "hands" in options:
            first = Deal.from_cards(rules, options["hands"], options["kitty"], int(dealer))
        else:
            first = Deal.new(rules, rng, int(dealer))
        # A "deal" episode deals once: the finished deal stays visible, and no unused shuffle advances the RNG.
        max_deals = 1 if self.episode == "deal" else self.max_deals
        return Game(rules, first_deal=first, scores=scores, rng=rng, max_deals=max_deals)

    @property
    def deal(self) -> Deal:
        """The deal in progress, or once a ``"deal"`` episode is over the deal just played (the
        engine's state; read only)."""
        if self.game is None:
            raise RuntimeError("call reset() before using the environment")
        return self.game.deal

    @property
    def scores(self) -> dict[str, int]:
        """Each agent's side's cumulative score in this episode."""
        if self.game is None:
            return {}
        side_of = self.rules.side_of
        return {a: self.game.scores[side_of(i)] for i, a in enumerate(self.possible_agents)}

    # -- observations ------------------------------------------------------------------------
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s own view, whoever is to act; its mask is all zeros when not its turn."""
        game = self.game
        if game is None:
            raise RuntimeError("call reset() before observe()")
        seat = self._seat_of(agent)
        deal = game.deal
        mask = 0
        # An agent that is done (its entries removed, or terminated/truncated) gets an all-zero mask.
        if deal.to_act == seat and not self.terminations.get(agent, True) and not self.truncations.get(agent, True):
            mask_bit = self.actions.mask_bit
            for u in deal.legal_actions():
                mask |= mask_bit[u]
        size = self.encoder.size
        vec = self.encoder.encode(deal, seat, game.scores, mask, len(self._universal))
        observation = vec[:size].astype(np.float32) if self._float_obs else vec[:size]
        return {"observation": observation, "action_mask": vec[size:]}

    def state(self, agent: str | None = None) -> np.ndarray:
        """The full global state: every hand, the kitty, the discards, then an observation with
        the true phase (the contractor's nomination turn included), so that every decision point
        has its own state. Oriented to seat 0 (its relative seats are the absolute seats), or with
        ``agent`` to that agent (hands and observation in its relative seats)."""
        if self.game is None:
            raise RuntimeError("call reset() before state()")
        seat = 0 if agent is None else self._seat_of(agent)
        state = self.encoder.encode_state(self.deal, self.game.scores, seat)
        return state.astype(np.float32) if self._float_obs else state

    def last(self, observe: bool = True) -> tuple[dict[str, np.ndarray] | None, float, bool, bool, dict[str, Any]]:
        """The selected agent's (observation, cumulative reward, terminated, truncated, info)."""
        if self.game is None:
            raise RuntimeError("call reset() before last()")
        return super().last(observe)

    def agent_iter(self, max_iter: int = 2**63) -> Any:
        """The agents to act, one at a time, until every agent is done (PettingZoo's iterator); before
        ``reset()`` a ``RuntimeError`` (it would otherwise yield nothing, silently)."""
        if self.game is None:
            raise RuntimeError("call reset() before agent_iter()")
        return super().agent_iter(max_iter)

    def legal_actions(self) -> list[int]:
        """The legal action ids of the agent to act (none once it is done: it must step ``None``)."""
        if self.game is None:
            raise RuntimeError("call reset() before legal_actions()")
        agent = self.agent_selection
        if self.terminations.get(agent, True) or self.truncations.get(agent, True):
            return []
        return [self.actions.compact[u] for u in self.game.legal_actions()]

    # -- stepping ----------------------------------------------------------------------------
    def step(self, action: Any) -> None:
        game = self.game
        if game is None:
            raise RuntimeError("call reset() before step()")
        agent = self.agent_selection
        if not self.agents:
            raise IllegalActionError(f"the episode is over: call reset() before stepping again (got {action!r})")
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise IllegalActionError(
                    f"illegal action {action!r} for {agent}: the episode is over for it; step None")
            self._was_dead_step(action)
            return
        universal = self._to_universal(action, agent, game)
        if universal < 0:  # penalty mode: the offender is punished and the episode ends
            self._clear_rewards()
            self.rewards[agent] = self.illegal_reward
            self._cumulative_rewards[agent] = 0.0
            self._end_episode(truncated=False)
            self._accumulate_rewards()
            return
        self._cumulative_rewards[agent] = 0.0
        if self._rewards_dirty:
            self._clear_rewards()
            self._rewards_dirty = False
        deal = game.deal
        game.apply_action(universal)
        if deal.is_over:
            self._deal_rewards(deal, game)
        if game.to_act >= 0:
            self.agent_selection = self.possible_agents[game.to_act]
        if self.render_mode == "human":
            self.render()

    def _to_universal(self, action: Any, agent: str, game: Game) -> int:
        """Validate an action id; illegal ones raise (or, in penalty mode, give -1)."""
        try:
            if isinstance(action, (bool, np.bool_)):
                raise TypeError
            compact = operator.index(action)
        except TypeError:
            compact = None
        legal = game.legal_actions()
        if compact is not None and 0 <= compact < len(self._universal):
            universal = self._universal[compact]
            if universal in legal:
                return universal
        if self.illegal_action == "terminate" and compact is not None:
            return -1
        names = ", ".join(f"{self.actions.compact[u]} ({self.actions.to_str(self.actions.compact[u])})" for u in legal)
        if compact is None:
            what = f"{action!r} is not an integer action id"
        elif not 0 <= compact < len(self._universal):
            what = f"action {compact} is out of range 0..{len(self._universal) - 1}"
        else:
            what = f"action {compact} ({self.actions.to_str(compact)}) is not legal now"
        raise IllegalActionError(f"{what} for {agent}; legal actions: {names}")

    def _deal_rewards(self, deal: Deal, game: Game) -> None:
        rules = self.rules
        change = deal.score_change or [0] * rules.num_sides
        for seat, agent in enumerate(self.possible_agents):
            side = rules.side_of(seat)
            if self.reward_mode == "win":
                r = self.win_shaping * deal.zero_sum_result(side) / self.reward_scale
            elif self.reward_mode == "score":
                r = change[side] / self.reward_scale
            else:
                r = deal.zero_sum_result(side) / self.reward_scale
            self.rewards[agent] = r
        over = self.episode == "deal" or game.is_over
        if game.is_over:
            winning = set(game.winning_seats())
            self.winners = [a for i, a in enumerate(self.possible_agents) if i in winning]
            if self.reward_mode == "win":
                for i, a in enumerate(self.possible_agents):
                    self.rewards[a] += 1.0 if i in winning else -1.0
        truncated = not over and game.dealing_stopped  # max_deals, or too many thrown-in deals in a row
        if over or truncated:
            self._end_episode(truncated)
        self._rewards_dirty = True
        self._accumulate_rewards()

    def _end_episode(self, truncated: bool) -> None:
        for a in self.agents:
            if truncated:
                self.truncations[a] = True
            else:
                self.terminations[a] = True
        # Every agent gets one final turn to see its reward; start with the one to act next.
        self.agent_selection = self.agents[0]

    # -- rendering ---------------------------------------------------------------------------
    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: return the table as text; ``"human"``: print it; ``"rgb_array"``: return
        the picture of the table seen by the selected agent (the one to act) as an ``H×W×3
        uint8`` array (:func:`~five_hundred_env.picture.table_image`; needs Pillow)."""
        if self.render_mode is None:
            warnings.warn("render() called without a render_mode; pass render_mode='ansi', 'human' or 'rgb_array'",
                          stacklevel=2)
            return None
        if self.game is None:
            raise RuntimeError("call reset() before render()")
        if self.render_mode == "rgb_array":
            viewer = self._seat[self.agent_selection]
            return table_image(self.game, self.possible_agents, viewer=viewer, deal=self.deal)
        colour = self.render_mode == "human" and colour_supported()  # a terminal, and NO_COLOR unset
        text = render_table(self.game, self.possible_agents, colour=colour, deal=self.deal)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass
