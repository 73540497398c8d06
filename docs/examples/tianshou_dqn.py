"""Train Tianshou's masked DQN on Five Hundred: one Q-network for seat 0 and its partner against random legal play.

    PYTHONPATH=. python docs/examples/tianshou_dqn.py --epochs 5

Needs ``pip install "five-hundred-env[tianshou]"`` (tianshou 2 and torch). The AEC environment goes
to Tianshou's ``PettingZooEnv`` as it is: Tianshou reads the ``"observation"`` vector and the
``"action_mask"``, and its Q-learning policy takes the arg-max over legal actions only (its
ε-greedy exploration too). The other side's seats play uniformly random legal actions
(``MARLRandomDiscreteMaskedOffPolicyAlgorithm``); the printed return is seat 0's zero-sum result
per deal, ÷ 100.

Caveat (see docs/integrations-rl.md): Tianshou keeps one buffer for all seats, in the order of
play, so a transition's next observation and its n-step return belong to whoever plays next, not
to the seat that acted. ``n_step`` = the number of seats makes every seat's last card of a deal
see the deal's result; the bootstrap is still from another seat's view, so treat this as a
baseline, not as a correct per-seat learner.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import torch
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.data.stats import InfoStats
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

import five_hundred_env


def make_env(**env_kwargs: Any) -> PettingZooEnv:
    """The AEC environment (``env_kwargs`` as :func:`five_hundred_env.env`) in Tianshou's wrapper."""
    return PettingZooEnv(five_hundred_env.env(**env_kwargs))


def build_algorithm(env: PettingZooEnv, hidden: tuple[int, ...] = (256, 256), lr: float = 1e-4,
                    gamma: float = 0.99, target_update_freq: int = 320) -> MultiAgentOffPolicyAlgorithm:
    """One DQN shared by seat 0's side (seats 0 and 2 with four players), random legal play in the other seats."""
    vector_space = env.observation_space["observation"]
    net = Net(state_shape=vector_space.shape, action_shape=int(env.action_space.n), hidden_sizes=list(hidden))
    policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1, eps_inference=0.0)
    learner = DQN(policy=policy, optim=AdamOptimizerFactory(lr=lr), gamma=gamma,
                  n_step_return_horizon=len(env.agents), target_update_freq=target_update_freq)
    random_play = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    side_of = env.env.rules.side_of
    algorithms = [learner if side_of(seat) == side_of(0) else random_play for seat in range(len(env.agents))]
    return MultiAgentOffPolicyAlgorithm(algorithms=algorithms, env=env)


def seat_0_return(rewards: np.ndarray) -> np.ndarray:
    """The return Tianshou reports: seat 0's column of the per-seat rewards."""
    return rewards[:, 0]


def train(epochs: int = 5, epoch_steps: int = 5000, num_envs: int = 4, test_deals: int = 40, batch_size: int = 64,
          seed: int = 0, **env_kwargs: Any) -> tuple[InfoStats, MultiAgentOffPolicyAlgorithm, float]:
    """Train for ``epochs`` × ``epoch_steps`` environment steps (about 45 a deal) and test on
    ``test_deals`` deals after each epoch; the training statistics, the trained algorithm, and
    seat 0's mean return over ``test_deals`` more test deals of the trained policy."""
    np.random.seed(seed)
    torch.manual_seed(seed)
    training_envs = DummyVectorEnv([lambda: make_env(**env_kwargs) for _ in range(num_envs)])
    test_envs = DummyVectorEnv([lambda: make_env(**env_kwargs) for _ in range(num_envs)])
    training_envs.seed(seed)
    test_envs.seed(seed + 10_000)
    algorithm = build_algorithm(make_env(**env_kwargs))
    training_collector = Collector[CollectStats](algorithm, training_envs, VectorReplayBuffer(50_000, num_envs),
                                                 exploration_noise=True)
    test_collector = Collector[CollectStats](algorithm, test_envs, exploration_noise=True)
    training_collector.reset()
    training_collector.collect(n_step=batch_size * num_envs)  # something to sample before the first update
    stats = algorithm.run_training(OffPolicyTrainerParams(
        training_collector=training_collector, test_collector=test_collector, max_epochs=epochs,
        epoch_num_steps=epoch_steps, collection_step_num_env_steps=10 * num_envs, test_step_num_episodes=test_deals,
        batch_size=batch_size, update_step_num_gradient_steps_per_sample=0.1, multi_agent_return_reduction=seat_0_return,
    ))
    # Tianshou's best_reward counts the test before the first update too: test the trained policy itself.
    trained = test_collector.collect(n_episode=test_deals, reset_before_collect=True)
    return stats, algorithm, float(seat_0_return(trained.returns).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--epoch-steps", type=int, default=5000, help="environment steps per epoch")
    parser.add_argument("--rules", default="australian", help="preset: australian, italian_3p, french_46")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    _stats, _, trained_return = train(epochs=args.epochs, epoch_steps=args.epoch_steps, seed=args.seed, rules=args.rules)
    print(f"test return of the trained policy, seat 0 (zero-sum ÷ 100, against random play): {trained_return:+.3f}")


if __name__ == "__main__":
    main()
