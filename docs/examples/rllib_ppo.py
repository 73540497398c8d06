"""Train RLlib's PPO (new API stack) on Five Hundred: one policy shared by every seat, with action masking.

    PYTHONPATH=. python docs/examples/rllib_ppo.py --iterations 10

Needs ``pip install "five-hundred-env[rllib]"`` (ray[rllib] and torch). The environment is
:class:`~five_hundred_env.integrations.rllib.FiveHundredMultiAgentEnv`; the network is RLlib's
``ActionMaskingTorchRLModule`` (from RLlib's examples), which reads the ``"observations"`` and
``"action_mask"`` keys and gives illegal actions a probability of zero.

The rewards are ``reward="score"`` (each side's own score change ÷ 100): with the default
zero-sum rewards and one policy in every seat, an episode's return summed over the agents is 0
by construction, so it could not show learning. Under ``"score"`` random bidding loses heavily
(most contracts fail), and the mean return rises as the policy learns which bids it can make.
RLlib keeps one episode per agent, so every seat's advantages bootstrap from its own next turn.
"""

from __future__ import annotations

import argparse
from typing import Any

from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

from five_hundred_env.integrations.rllib import FiveHundredMultiAgentEnv

SHARED_POLICY = "shared"


def share_one_policy(agent_id: str, episode: Any, **kwargs: Any) -> str:
    """Every seat plays the same policy (RLlib's ``policy_mapping_fn``)."""
    return SHARED_POLICY


def build_config(batch_size: int = 4000, minibatch_size: int = 256, epochs: int = 4,
                 hidden: tuple[int, ...] = (256, 256), seed: int = 0, **env_config: Any) -> PPOConfig:
    """PPO over Five Hundred with one masked policy for every seat, sampling in this process.

    ``batch_size`` is the number of agent steps per training iteration (a deal is about 45);
    ``env_config`` goes to :func:`five_hundred_env.env` (default ``reward="score"``).
    """
    model_config = DefaultModelConfig(fcnet_hiddens=list(hidden), head_fcnet_hiddens=[])
    return (
        PPOConfig()
        .environment(FiveHundredMultiAgentEnv, env_config={"reward": "score", **env_config})
        .env_runners(num_env_runners=0, num_envs_per_env_runner=1)
        .multi_agent(policies={SHARED_POLICY}, policy_mapping_fn=share_one_policy)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            SHARED_POLICY: RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=model_config),
        }))
        .training(train_batch_size_per_learner=batch_size, minibatch_size=minibatch_size, num_epochs=epochs, lr=3e-4)
        .debugging(seed=seed)
    )


def train(config: PPOConfig, iterations: int) -> list[dict[str, Any]]:
    """Build the algorithm and train it ``iterations`` times; print each iteration's mean episode
    return (summed over the agents) and return each iteration's ``env_runners`` metrics."""
    algo = config.build_algo()
    metrics = []
    try:
        for iteration in range(1, iterations + 1):
            metrics.append(algo.train()["env_runners"])
            print(f"iteration {iteration}: mean return {metrics[-1]['episode_return_mean']:+.3f}"
                  f" over {metrics[-1]['num_episodes']} deals")
    finally:
        algo.stop()
    return metrics


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=4000, help="agent steps per iteration")
    parser.add_argument("--rules", default="australian", help="preset: australian, italian_3p, french_46")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    train(build_config(batch_size=args.batch_size, seed=args.seed, rules=args.rules), args.iterations)


if __name__ == "__main__":
    main()
