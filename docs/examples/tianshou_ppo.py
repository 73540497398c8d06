"""Train Tianshou's PPO on Five Hundred with per-seat returns: seat 0 and its partner (one shared
policy) against random legal play.

    PYTHONPATH=. python docs/examples/tianshou_ppo.py --epochs 5

Needs ``pip install "five-hundred-env[tianshou]"`` (tianshou 2 and torch).

Why the glue. Tianshou's ``PettingZooEnv`` stores every seat's turns in one buffer in the order of
play, and its multi-agent PPO computes each seat's advantages over that seat's own transitions as
if they followed one another: a transition's next observation is the *next player's*, its reward
is the seat's reward on that one step only, and its episode ends only if its own action ended the
deal. A seat that did not play the deal's last card never sees the deal's result, and its
advantages run on into its next deal. :class:`PerSeatPPO` rewrites each seat's transitions before
the usual PPO update so that, as in the project's own trainer (``training/algorithms/ppo.py``, per-seat GAE):

* the reward is everything the seat received from its action up to its next turn (the deal's
  result, for its last action of a deal, whoever ended the deal);
* the next observation is the seat's own at its next turn, and the episode ends for the seat when
  the deal (episode) ends before it acts again (value 0 after it).

It needs whole episodes in the buffer (``collection_step_num_episodes``, not steps). A
``"game"`` episode cut by ``max_deals`` (truncated) is treated as ended there, without a bootstrap.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import torch
from tianshou.algorithm import PPO, MARLRandomDiscreteMaskedOffPolicyAlgorithm
from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy
from tianshou.algorithm.multiagent.marl import MultiAgentOnPolicyAlgorithm
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Batch, Collector, CollectStats, ReplayBuffer, VectorReplayBuffer
from tianshou.data.stats import InfoStats
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.trainer import OnPolicyTrainerParams
from tianshou.utils.net.common import Net
from torch import nn

import five_hundred_env


def per_seat_transitions(batch: Batch, buffer: ReplayBuffer, indices: np.ndarray) -> Batch:
    """Rewrite one seat's transitions (``batch`` = ``buffer[indices]``, in the order of play, and
    ``buffer.rew`` that seat's rewards, as Tianshou's multi-agent dispatcher sets them) so that each
    runs from the seat's turn to its next turn: ``rew``, ``obs_next`` and ``terminated`` (the
    episode ended before the seat acted again); ``truncated`` is cleared."""
    seat = batch.obs.agent_id[0]
    acting, rewards, done = buffer.obs.agent_id, buffer.rew, buffer.done
    following = buffer.next(np.arange(buffer.maxsize))
    seat_rewards = np.zeros(len(indices))
    ended = np.zeros(len(indices), dtype=bool)
    next_turn = np.array(indices)
    for k, index in enumerate(indices):
        step = index
        while True:
            seat_rewards[k] += rewards[step]
            if done[step]:
                ended[k] = True
                break
            if following[step] == step:
                raise ValueError("per-seat returns need whole episodes: collect with collection_step_num_episodes")
            step = following[step]
            if acting[step] == seat:
                next_turn[k] = step
                break
    if not np.array_equal(next_turn[:-1][~ended[:-1]], np.asarray(indices)[1:][~ended[:-1]]):
        raise ValueError("a seat's transitions must come in the order of play, one episode after another")
    batch.rew = seat_rewards
    batch.obs_next = buffer.obs[next_turn]  # unused where the episode ended (value 0)
    batch.terminated = ended
    batch.truncated = np.zeros(len(indices), dtype=bool)
    return batch


class PerSeatPPO(PPO):
    """PPO whose advantages bootstrap from each seat's own next turn (see the module docstring)."""

    def _preprocess_batch(self, batch: Batch, buffer: ReplayBuffer, indices: np.ndarray) -> Batch:
        return super()._preprocess_batch(per_seat_transitions(batch, buffer, indices), buffer, indices)

    def compute_episodic_return(self, batch: Batch, buffer: ReplayBuffer, indices: np.ndarray,
                                v_s_: torch.Tensor | np.ndarray | None = None, v_s: torch.Tensor | np.ndarray | None = None,
                                gamma: float = 0.99, gae_lambda: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """GAE over the rewritten transitions: the buffer's own end flags belong to other seats' turns."""
        ended = np.asarray(batch.terminated, dtype=bool)
        values = np.asarray(torch.as_tensor(v_s).flatten())
        next_values = np.asarray(torch.as_tensor(v_s_).flatten()) * ~ended
        deltas = np.asarray(batch.rew, dtype=np.float64) + gamma * next_values - values
        advantages = np.zeros_like(deltas)
        running = 0.0
        for k in range(len(deltas) - 1, -1, -1):
            running = deltas[k] + (0.0 if ended[k] else gamma * gae_lambda * running)
            advantages[k] = running
        return advantages + values, advantages


class RandomLegalPlay(MARLRandomDiscreteMaskedOffPolicyAlgorithm):
    """Tianshou's random legal player, accepted among on-policy learners (it never learns)."""

    def _update_with_batch(self, batch: Batch, batch_size: int | None = None, repeat: int = 1) -> Any:
        return super()._update_with_batch(batch)


class MaskedActor(nn.Module):
    """Logits over the actions, illegal ones (``obs.mask`` false) pushed to a probability of 0."""

    def __init__(self, observation_size: int, num_actions: int, hidden: tuple[int, ...]) -> None:
        super().__init__()
        self.net = Net(state_shape=observation_size, action_shape=num_actions, hidden_sizes=list(hidden))

    def forward(self, obs: Batch, state: Any = None, info: Any = None) -> tuple[torch.Tensor, Any]:
        logits, _ = self.net(obs.obs)
        legal = torch.as_tensor(np.asarray(obs.mask), dtype=torch.bool)
        return logits.masked_fill(~legal, torch.finfo(logits.dtype).min), state


class Critic(nn.Module):
    """The value of an observation (its vector; the mask and agent id are not inputs)."""

    def __init__(self, observation_size: int, hidden: tuple[int, ...]) -> None:
        super().__init__()
        self.net = Net(state_shape=observation_size, action_shape=1, hidden_sizes=list(hidden))

    def forward(self, obs: Batch, **kwargs: Any) -> torch.Tensor:
        values, _ = self.net(obs.obs)
        return values


def make_env(**env_kwargs: Any) -> PettingZooEnv:
    """The AEC environment (``env_kwargs`` as :func:`five_hundred_env.env`) in Tianshou's wrapper."""
    return PettingZooEnv(five_hundred_env.env(**env_kwargs))


def build_algorithm(env: PettingZooEnv, hidden: tuple[int, ...] = (256, 256), lr: float = 3e-4) -> MultiAgentOnPolicyAlgorithm:
    """One :class:`PerSeatPPO` shared by seat 0's side, random legal play in the other seats."""
    size, num_actions = env.observation_space["observation"].shape[0], int(env.action_space.n)
    policy = DiscreteActorPolicy(actor=MaskedActor(size, num_actions, hidden), action_space=env.action_space)
    learner = PerSeatPPO(policy=policy, critic=Critic(size, hidden), optim=AdamOptimizerFactory(lr=lr))
    random_play = RandomLegalPlay(action_space=env.action_space)
    side_of = env.env.rules.side_of
    algorithms = [learner if side_of(seat) == side_of(0) else random_play for seat in range(len(env.agents))]
    return MultiAgentOnPolicyAlgorithm(algorithms=algorithms, env=env)


def seat_0_return(rewards: np.ndarray) -> np.ndarray:
    """The return Tianshou reports: seat 0's column of the per-seat rewards."""
    return rewards[:, 0]


def train(epochs: int = 5, epoch_steps: int = 5000, deals_per_update: int = 40, num_envs: int = 4,
          test_deals: int = 40, batch_size: int = 256, seed: int = 0,
          **env_kwargs: Any) -> tuple[InfoStats, MultiAgentOnPolicyAlgorithm, float]:
    """Train for ``epochs`` × ``epoch_steps`` environment steps, updating after every
    ``deals_per_update`` whole deals, and test on ``test_deals`` deals after each epoch; the
    training statistics, the trained algorithm, and seat 0's mean return over ``test_deals`` more
    test deals of the trained policy."""
    np.random.seed(seed)
    torch.manual_seed(seed)
    training_envs = DummyVectorEnv([lambda: make_env(**env_kwargs) for _ in range(num_envs)])
    test_envs = DummyVectorEnv([lambda: make_env(**env_kwargs) for _ in range(num_envs)])
    training_envs.seed(seed)
    test_envs.seed(seed + 10_000)
    algorithm = build_algorithm(make_env(**env_kwargs))
    buffer = VectorReplayBuffer(100 * deals_per_update * num_envs, num_envs)
    training_collector = Collector[CollectStats](algorithm, training_envs, buffer)
    test_collector = Collector[CollectStats](algorithm, test_envs)
    stats = algorithm.run_training(OnPolicyTrainerParams(
        training_collector=training_collector, test_collector=test_collector, max_epochs=epochs,
        epoch_num_steps=epoch_steps, collection_step_num_env_steps=None, collection_step_num_episodes=deals_per_update,
        test_step_num_episodes=test_deals, batch_size=batch_size, update_step_num_repetitions=2,
        multi_agent_return_reduction=seat_0_return,
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
