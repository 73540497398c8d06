"""The batched engine's vector environment as a Stable-Baselines3 ``VecEnv``, for sb3-contrib's
``MaskablePPO`` (``pip install sb3-contrib``; this module imports stable_baselines3, nothing
else of the package does)::

    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecMonitor
    from agents.vector import vector_env          # or five_hundred_env.vector.SingleAgentVectorEnv
    from five_hundred_env.integrations.sb3 import SB3VecEnv

    env = VecMonitor(SB3VecEnv(vector_env("australian", num_envs=64, opponent="heuristic", seed=0)))
    model = MaskablePPO("MlpPolicy", env, n_steps=128).learn(100_000)

SB3 steps a ``VecEnv`` of its own interface (``reset() -> obs``, ``step_wait() -> obs, rewards,
dones, infos``), not a Gymnasium vector environment, and sb3-contrib asks it for the masks with
``env_method("action_masks")``. :class:`SB3VecEnv` does both over one
:class:`~five_hundred_env.vector.SingleAgentVectorEnv`: every game steps in the one batched
call, an ended episode's last observation is in its ``infos[i]["terminal_observation"]`` (the
game has already started its next one, as SB3 expects), and ``seed(s)`` seeds the next reset.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvObs, VecEnvStepReturn

from five_hundred_env.vector import SingleAgentVectorEnv


class SB3VecEnv(VecEnv):
    """``env``'s games as SB3's vector environment (see the module docstring); ``env`` is kept as
    ``self.env`` (its ``engine``, ``learner_seats``)."""

    def __init__(self, env: SingleAgentVectorEnv) -> None:
        if not isinstance(env, SingleAgentVectorEnv):
            raise TypeError(f"SB3VecEnv takes a SingleAgentVectorEnv, got {type(env).__name__}")
        self.env = env
        self.render_mode = None
        self._actions: np.ndarray | None = None
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)

    def reset(self) -> VecEnvObs:
        obs, _info = self.env.reset(seed=self._seeds[0])
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async(actions)")
        obs, rewards, terminated, truncated, info = self.env.step(self._actions)
        self._actions = None
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones):
            infos[i]["terminal_observation"] = info["final_obs"][i]
            infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return obs, rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every game, ``[B, A]`` bool."""
        return self.env.action_masks()

    def close(self) -> None:
        self.env.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """An attribute of the one batched environment, once per game asked for."""
        value = None if attr_name == "render_mode" else getattr(self.env, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        """``action_masks`` per game (what sb3-contrib calls); the games are one batched
        environment, so other methods are called on ``self.env`` directly."""
        if method_name != "action_masks":
            raise AttributeError(f"env_method({method_name!r}): the games are one batched environment; "
                                 f"call it on SB3VecEnv.env")
        masks = self.env.action_masks()
        return [masks[i] for i in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None for _ in range(self.num_envs)]


__all__ = ["SB3VecEnv"]
