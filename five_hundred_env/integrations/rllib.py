"""Five Hundred as an RLlib ``MultiAgentEnv`` (new API stack; ``pip install "five-hundred-env[rllib]"``).

::

    from ray.rllib.algorithms.ppo import PPOConfig
    from five_hundred_env.integrations.rllib import FiveHundredMultiAgentEnv

    config = PPOConfig().environment(FiveHundredMultiAgentEnv, env_config={"rules": "australian"})

``env_config`` holds the keyword arguments of :func:`five_hundred_env.env` (``rules``, rule
options, ``episode``, ``reward``, ``reward_scale``, ``max_deals``, ``illegal_action``,
``illegal_reward``, ``render_mode``). The adapter is a turn-based ``MultiAgentEnv``:

* **Agents**: the AEC agents, ``player_0 …``; only the agent to act gets an observation, so each
  step's ``action_dict`` holds exactly that agent's action.
* **Observations**: ``{"observations": float32 vector, "action_mask": float32 0/1 vector}``, the
  AEC observation and mask as floats: the keys and dtype that RLlib's action-masking module
  (``ray.rllib.examples.rl_modules.classes.action_masking_rlm``) and default networks expect.
  Spaces are declared per agent in ``observation_spaces`` / ``action_spaces``.
* **Rewards**: every agent's reward of the AEC step, every step (zero but when a deal ends, when
  every agent, the partner sitting out a misère included, is credited with its side's result).
  RLlib adds a reward that reaches an agent between its turns to that agent's last action, so in a
  ``"game"`` episode each seat's last action of a deal earns that deal's result, and each seat's
  returns and value bootstraps stay its own.
* **End**: when the episode ends (terminated, or a ``"game"`` episode truncated), every agent gets
  its final observation (mask all zeros) and its flag in ``terminateds`` / ``truncateds``, with
  ``"__all__"``.
* **Illegal actions**: the adapter builds the AEC environment with
  ``illegal_action="terminate"`` unless ``env_config`` says otherwise, because RLlib's own
  environment pre-check (``check_multiagent_environments``, run when an env runner starts) steps
  an action sampled from the unmasked ``Discrete`` space, and an ``IllegalActionError`` there
  stops RLlib. An illegal action therefore ends the episode with ``illegal_reward`` for the
  offender (a masked policy never picks one) and ``infos[agent]["illegal_action"]`` names it.
  Pass ``illegal_action="raise"`` to raise instead (then set RLlib's ``disable_env_checking``).

``aec`` is the wrapped AEC environment (for ``scores``, ``render()``, ``action_to_str``).
This module needs ray[rllib] but not torch.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

import five_hundred_env

try:
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
except ImportError as e:  # pragma: no cover - depends on the install
    raise ImportError("five_hundred_env.integrations.rllib needs RLlib: pip install 'five-hundred-env[rllib]'") from e

MultiAgentDict = dict[str, Any]


class FiveHundredMultiAgentEnv(MultiAgentEnv):
    """The AEC environment as a turn-based RLlib ``MultiAgentEnv``; see the module docstring.

    ``config`` (RLlib's ``env_config``, or ``None``) holds the keyword arguments of
    :func:`five_hundred_env.env`; ``illegal_action`` defaults to ``"terminate"`` here.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        if config is not None and not isinstance(config, Mapping):
            raise ValueError(f"env_config must be a mapping of five_hundred_env.env arguments, got {type(config).__name__}")
        self.aec = five_hundred_env.env(**{"illegal_action": "terminate", **(config or {})})
        self.possible_agents = list(self.aec.possible_agents)
        self.agents = list(self.possible_agents)
        inner = self.aec.observation_space(self.possible_agents[0])
        vector, mask = inner["observation"], inner["action_mask"]
        observation_space = spaces.Dict({
            "observations": spaces.Box(vector.low.astype(np.float32), vector.high.astype(np.float32), dtype=np.float32),
            "action_mask": spaces.Box(0.0, 1.0, mask.shape, dtype=np.float32),
        })
        self.observation_spaces = dict.fromkeys(self.possible_agents, observation_space)
        self.action_spaces = {a: self.aec.action_space(a) for a in self.possible_agents}
        self._episode_over = True  # until the first reset

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[MultiAgentDict, MultiAgentDict]:
        """Start an episode (``seed`` and ``options`` as the AEC env's ``reset``); the observation of
        the agent to act first."""
        self.aec.reset(seed=seed, options=options)
        self._episode_over = False
        first = self.aec.agent_selection
        return {first: self._observe(first)}, {}

    def step(self, action_dict: MultiAgentDict) -> tuple[MultiAgentDict, MultiAgentDict, MultiAgentDict, MultiAgentDict,
                                                          MultiAgentDict]:
        """Apply the action of the agent to act: ``(observations, rewards, terminateds, truncateds, infos)``."""
        if self._episode_over:
            raise RuntimeError("the episode is over (or never started): call reset() before step()")
        agent = self.aec.agent_selection
        if not isinstance(action_dict, Mapping) or list(action_dict) != [agent]:
            given = sorted(map(str, action_dict)) if isinstance(action_dict, Mapping) else type(action_dict).__name__
            raise ValueError(f"action_dict must hold one action, for {agent} (to act now); got {given}")
        action = action_dict[agent]
        illegal = action not in self.aec.legal_actions()  # only reported: the AEC env validates it
        self.aec.step(action)
        rewards = {a: float(self.aec.rewards[a]) for a in self.possible_agents}
        infos: MultiAgentDict = {agent: {"illegal_action": action}} if illegal else {}
        terminated = any(self.aec.terminations.values())
        truncated = any(self.aec.truncations.values())
        if not (terminated or truncated):
            following = self.aec.agent_selection
            return {following: self._observe(following)}, rewards, {"__all__": False}, {"__all__": False}, infos
        self._episode_over = True
        observations = {a: self._observe(a) for a in self.possible_agents}
        terminateds = {**dict.fromkeys(self.possible_agents, terminated), "__all__": terminated}
        truncateds = {**dict.fromkeys(self.possible_agents, truncated), "__all__": truncated}
        return observations, rewards, terminateds, truncateds, infos

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s AEC observation under this adapter's keys, as float32."""
        observation = self.aec.observe(agent)
        return {"observations": observation["observation"].astype(np.float32),
                "action_mask": observation["action_mask"].astype(np.float32)}

    def render(self) -> str | None:
        """The AEC env's ``render()`` (pass ``render_mode`` in ``env_config``)."""
        return self.aec.render()

    def close(self) -> None:
        """Close the AEC env."""
        self.aec.close()
