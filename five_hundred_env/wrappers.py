"""A single-agent Gymnasium view of the AEC environment: a learner plays one seat, or one team,
against given opponent policies.

::

    from sb3_contrib import MaskablePPO
    from five_hundred_env import SingleAgentEnv

    env = SingleAgentEnv(team=0, rules="australian")       # the learner plays seats 0 and 2
    model = MaskablePPO("MlpPolicy", env).learn(10_000)     # masks come from env.action_masks()

* **Observation**: the AEC observation vector (``Box`` of ``int8``, or of ``float32`` with
  ``observation_dtype="float32"``) of the learner's seat to act, oriented to that seat; the mask
  is in ``info["action_mask"]`` and from :meth:`action_masks` (a ``bool`` array, as sb3-contrib's
  ``MaskablePPO`` expects). With ``dict_obs=True`` the observation is the AEC dict
  ``{"observation": vector, "action_mask": int8 mask}`` instead, for libraries that read the mask
  from the observation.
* **Action**: ``Discrete(A)``, the action ids of the AEC environment.
* **Reward**: the learner's accumulated reward since its previous action (the AEC reward of its
  seat — for a team, its side's result, counted once), so the episode's rewards sum to the
  learner's side's result(s).
* **Opponents**: ``opponents`` is one callable ``policy(observation_dict) -> action_id`` for every
  other seat, or a mapping from seat (or agent name) to such a callable; an agent spec
  (``"heuristic"``, ``"pretrained"``, a checkpoint's path …) stands for the agent it names, built
  for every opponent seat by the agents package once it is imported (``import agents``: this
  package knows no agents, so the agents package hands it its builder); seats left out play
  uniformly random legal actions drawn from the wrapper's ``np_random``, which ``reset(seed=s)``
  seeds. A policy object with a ``seed(int)`` method is reseeded on a seeded reset. An opponent's
  illegal action raises :class:`~five_hundred_env.engine.IllegalActionError`.
* **Illegal learner actions**: by default the AEC env's ``illegal_action="terminate"`` mode — the
  episode ends and the learner gets ``illegal_reward`` (Gymnasium's ``check_env`` and unmasked
  algorithms step arbitrary actions); pass ``illegal_action="raise"`` to raise instead.

Every other keyword argument (``rules``, rule options, ``episode``, ``reward``, ``reward_scale``,
``render_mode`` — ``"rgb_array"`` included, for Gymnasium's ``RecordVideo`` —, ``max_deals``,
``observation_dtype`` …) goes to :class:`~five_hundred_env.env.raw_env`; ``reset``'s
``options`` go to its ``reset``. This module needs only numpy and gymnasium (and Pillow for
``"rgb_array"``).

Importing :mod:`five_hundred_env` registers this class with Gymnasium as
:data:`GYMNASIUM_ID`: ``gymnasium.make("FiveHundred-v1", team=0, rules="italian_3p")``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import gymnasium
import numpy as np

from five_hundred_env.engine import IllegalActionError
from five_hundred_env.env import check_seed, raw_env

Policy = Callable[[dict[str, np.ndarray]], int]
"""An opponent: the AEC observation dict of its seat in, a legal action id out."""

SpecBuilder = Callable[[str, Any, int | None], Policy]
"""Builds the agent an agent spec names, for rules and a seed (``agents.registry.make_agent``)."""

_spec_builder: SpecBuilder | None = None


def set_spec_builder(builder: SpecBuilder) -> None:
    """Let :class:`SingleAgentEnv` take agent specs as opponents (the agents package calls this as it
    is imported: the environment package cannot import it)."""
    global _spec_builder
    _spec_builder = builder


GYMNASIUM_ID = "FiveHundred-v1"
"""The Gymnasium id of :class:`SingleAgentEnv` (its version follows the AEC env's ``five_hundred_v1``)."""


def register_with_gymnasium() -> None:
    """Register :class:`SingleAgentEnv` as :data:`GYMNASIUM_ID` (once; ``import five_hundred_env``
    does it)."""
    if GYMNASIUM_ID not in gymnasium.registry:
        gymnasium.register(id=GYMNASIUM_ID, entry_point="five_hundred_env.wrappers:SingleAgentEnv")


class SingleAgentEnv(gymnasium.Env):
    """One seat (``seat=k``, the default ``seat=0``) or one side (``team=k``: the learner acts for
    every seat of side ``k``, both partners with four players) against opponent policies."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": list(raw_env.metadata["render_modes"]), "render_fps": raw_env.metadata["render_fps"],
    }

    def __init__(
        self,
        seat: int | None = None,
        team: int | None = None,
        opponents: Policy | Mapping[int | str, Policy] | None = None,
        dict_obs: bool = False,
        **env_kwargs: Any,
    ) -> None:
        env_kwargs.setdefault("illegal_action", "terminate")
        self.aec_env = raw_env(**env_kwargs)
        """The underlying PettingZoo AEC environment."""
        rules = self.aec_env.rules
        n = rules.num_players
        if seat is not None and team is not None:
            raise ValueError("give either seat or team, not both")
        if team is not None:
            if not isinstance(team, int) or isinstance(team, bool) or not 0 <= team < rules.num_sides:
                raise ValueError(f"team must be a side 0..{rules.num_sides - 1}, got {team!r}")
            seats = list(rules.seats_of(team))
        else:
            seat = 0 if seat is None else seat
            if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < n:
                raise ValueError(f"seat must be 0..{n - 1}, got {seat!r}")
            seats = [seat]
        agents = self.aec_env.possible_agents
        self.learner_agents: list[str] = [agents[s] for s in seats]
        """The agents the learner plays."""
        self._policies = self._opponent_policies(opponents, seats)
        if not isinstance(dict_obs, bool):
            raise ValueError(f"dict_obs must be True or False, got {dict_obs!r}")
        self._dict_obs = dict_obs
        aec_space = self.aec_env.observation_space(agents[0])
        self.observation_space = aec_space if dict_obs else aec_space["observation"]
        self.action_space = self.aec_env.action_space(agents[0])
        self.render_mode = self.aec_env.render_mode
        self._agent = self.learner_agents[0]  # the learner's agent to act now (or last to act)
        self._done = True

    def _opponent_policies(self, opponents: Any, seats: list[int]) -> dict[str, Policy | None]:
        agents = self.aec_env.possible_agents
        others = [a for i, a in enumerate(agents) if i not in seats]
        if isinstance(opponents, str):
            return {agent: self._built(opponents, seat) for seat, agent in enumerate(agents) if agent in others}
        if opponents is None or callable(opponents):
            return dict.fromkeys(others, opponents)
        if not isinstance(opponents, Mapping):
            raise ValueError("opponents must be a callable, a mapping seat -> callable, or None")
        policies: dict[str, Policy | None] = dict.fromkeys(others)
        for key, policy in opponents.items():
            agent = agents[key] if isinstance(key, int) and 0 <= key < len(agents) else key
            if agent not in policies:
                raise ValueError(f"opponents: {key!r} is not an opponent seat (opponents: {', '.join(others)})")
            if isinstance(policy, str):
                policy = self._built(policy, agents.index(agent))
            if not callable(policy):
                raise ValueError(f"opponents: the policy for {key!r} is not callable")
            policies[agent] = policy
        return policies

    def _built(self, spec: str, seat: int) -> Policy:
        """The agent an opponent's spec names (seeded by its seat; a seeded reset reseeds it)."""
        if _spec_builder is None:
            raise ValueError(f"opponents: {spec!r} is an agent spec, which the agents package builds: "
                             f"`import agents` first, or pass the agent itself (agents.make_agent({spec!r}, rules))")
        return _spec_builder(spec, self.aec_env.rules, seat)

    # -- Gymnasium API ------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Start an AEC episode (``options`` as for ``raw_env.reset``) and play the opponents up
        to the learner's first turn."""
        seed = None if seed is None else check_seed(seed)
        super().reset(seed=seed)
        if seed is not None:
            for i, policy in enumerate(self._policies.values()):
                reseed = getattr(policy, "seed", None)
                if callable(reseed):
                    reseed(seed + 1 + i)
        self.aec_env.reset(seed=seed, options=options)
        self._done = False
        self._advance()
        if self._done:  # the rules give everyone a turn in the first round of bidding
            raise RuntimeError("the episode ended before the learner's first turn")
        return self._observation(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Play the learner's action, then the opponents' until the learner's next turn or the end."""
        if self._done:
            raise RuntimeError("the episode is over: call reset()")
        env = self.aec_env
        agent = self._agent
        env.step(action)  # raises on a non-integer action, or on an illegal one in "raise" mode
        if env.terminations[agent] and not env.deal.is_over:  # the penalty mode ended the episode
            self._done = True
            return self._observation(), float(env.rewards[agent]), True, False, self._info()
        reward = float(env.rewards[self.learner_agents[0]]) + self._advance()
        return self._observation(), reward, self._terminated(), self._truncated(), self._info()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions now, as a ``bool`` array (all ``False`` once the episode is over)."""
        return self.aec_env.observe(self._agent)["action_mask"].astype(bool)

    def render(self) -> str | np.ndarray | None:
        """The AEC environment's rendering (``"rgb_array"``: the table seen by the learner's seat
        to act — once the episode is over, by the AEC env's selected agent — as an ``H×W×3
        uint8`` array)."""
        return self.aec_env.render()

    def close(self) -> None:
        self.aec_env.close()

    # -- internals ----------------------------------------------------------------------------
    def _advance(self) -> float:
        """Play the opponents until a learner agent is to act or the episode is over; return the
        learner's reward over those steps."""
        env = self.aec_env
        rep = self.learner_agents[0]
        reward = 0.0
        while True:
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                self._done = True
                return reward
            if agent in self.learner_agents:
                self._agent = agent
                return reward
            obs = env.observe(agent)
            policy = self._policies[agent]
            if policy is None:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[self.np_random.integers(len(legal))])
            else:
                action = policy(obs)
                if not (isinstance(action, (int, np.integer)) and 0 <= action < len(obs["action_mask"])
                        and obs["action_mask"][action]):
                    raise IllegalActionError(f"the opponent policy of {agent} chose {action!r}, not a legal action; "
                                             f"legal actions: {np.flatnonzero(obs['action_mask']).tolist()}")
            env.step(action)
            reward += float(env.rewards[rep])

    def _observation(self) -> np.ndarray | dict[str, np.ndarray]:
        observation = self.aec_env.observe(self._agent)
        return observation if self._dict_obs else observation["observation"]

    def _info(self) -> dict[str, Any]:
        return {"agent": self._agent, "action_mask": self.action_masks()}

    def _terminated(self) -> bool:
        return bool(self.aec_env.terminations[self._agent])

    def _truncated(self) -> bool:
        return bool(self.aec_env.truncations[self._agent])
