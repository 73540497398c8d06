"""Adapters of the Five Hundred environment to other reinforcement-learning libraries.

Each adapter is its own module and imports its library only when imported itself, so
``import five_hundred_env`` never needs them:

* :mod:`five_hundred_env.integrations.rllib` — an RLlib ``MultiAgentEnv``
  (``pip install "five-hundred-env[rllib]"``).
* :mod:`five_hundred_env.integrations.sb3` — the batched engine's vector environment as a
  Stable-Baselines3 ``VecEnv``, for sb3-contrib's ``MaskablePPO`` (``pip install sb3-contrib``).

Tianshou needs no adapter: its ``PettingZooEnv`` takes the AEC environment as it is (see
``docs/integrations-rl.md``).
"""
