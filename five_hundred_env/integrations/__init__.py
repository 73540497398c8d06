"""Adapters of the Five Hundred environment to other reinforcement-learning libraries.

Each adapter is its own module and imports its library only when imported itself, so
``import five_hundred_env`` never needs them:

* :mod:`five_hundred_env.integrations.rllib` — an RLlib ``MultiAgentEnv``
  (``pip install "five-hundred-env[rllib]"``).

Tianshou needs no adapter: its ``PettingZooEnv`` takes the AEC environment as it is (see
``docs/integrations-rl.md``).
"""
