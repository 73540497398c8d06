"""An optional warm start for PPO: imitate a teacher agent (behaviour cloning), then self-play.

PPO from a random network in Five Hundred first learns that bidding loses points (random card
play goes down in almost every contract), stops bidding altogether, and then never sees the
contracts it would need to learn to play: the "everybody passes" trap. Starting the policy from
a competent player avoids it. With ``pretrain.deals > 0``, :func:`pretrain` has the teacher
(the heuristic agent) play that many deals in every seat, then fits

* the actor to the teacher's choices (cross-entropy over the *masked* logits, so it is a
  distribution over the legal actions only), and
* the critic to each decision's Monte-Carlo return (the seat's side's result of the deal),

so PPO starts from the teacher's play with a critic that already judges positions. Self-play
then has to *improve* on the teacher: the final evaluation against it says by how much.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

import five_hundred_env
from agents.base import Agent
from agents.central import hidden_cards
from agents.neural import ActorCritic, policy_input
from agents.play import play_deal
from five_hundred_env.rules import Rules
from training.settings.config import PretrainConfig


class _Recorder(Agent):
    """The teacher at one seat, writing down each decision as it makes it: the network's input,
    the mask, the hidden cards of that moment (for a centralised critic) and the action."""

    def __init__(self, teacher: Agent, seat: int, log: _Demonstrations) -> None:
        super().__init__(teacher.rules)
        self.teacher, self.seat, self.log = teacher, seat, log

    def seed(self, seed: int | None) -> None:
        self.teacher.seed(seed)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        action = self.teacher.act(observation)
        self.log.record(self.seat, observation, action)
        return action


class _Demonstrations:
    def __init__(self, env: five_hundred_env.raw_env, central: bool, adviser: Any) -> None:
        self.env, self.central, self.adviser = env, central, adviser
        self.obs: list[np.ndarray] = []
        self.mask: list[np.ndarray] = []
        self.extra: list[np.ndarray] = []
        self.actions: list[int] = []
        self.returns: list[float] = []
        self.chains: dict[int, list[int]] = {}

    def record(self, seat: int, observation: dict[str, np.ndarray], action: int) -> None:
        self.chains.setdefault(seat, []).append(len(self.actions))
        self.obs.append(policy_input(observation, self.adviser))
        self.mask.append(observation["action_mask"].astype(bool))
        if self.central:
            self.extra.append(hidden_cards(self.env.deal, seat))  # before the action is applied
        self.actions.append(action)
        self.returns.append(0.0)

    def end_of_deal(self, gamma: float) -> None:
        """Rewards come only at the end of a deal: a decision ``k`` steps before a seat's last one
        returns ``γ^k ·`` the reward the environment credits that seat (``env.rewards`` now)."""
        for seat, chain in self.chains.items():
            result = float(self.env.rewards[self.env.possible_agents[seat]])
            for k, i in enumerate(reversed(chain)):
                self.returns[i] = result * gamma**k
        self.chains = {}


def teacher_demonstrations(rules: Rules, teacher: Agent, deals: int, rng: np.random.Generator, central: bool,
                           reward: str = "zero_sum", reward_scale: float = 100.0, gamma: float = 1.0,
                           progress: bool = False, adviser: Any = None) -> dict[str, np.ndarray]:
    """Every decision of ``deals`` deals played by ``teacher`` in all seats (through the one play
    loop, :func:`agents.play.play_deal`): the network's inputs (observations, plus ``adviser``'s
    advice for a network that takes it, see :func:`agents.neural.policy_input`), masks, hidden
    cards (for a centralised critic), the teacher's actions and each decision's return."""
    env = five_hundred_env.raw_env(rules=rules, episode="deal", reward=reward, reward_scale=reward_scale)
    demos = _Demonstrations(env, central, adviser)
    seats = [_Recorder(teacher, seat, demos) for seat in range(rules.num_players)]
    bar = _bar(deals, "teacher deals", "deal", progress)
    for _ in range(deals):
        teacher.seed(int(rng.integers(2**31)))
        play_deal(env, seats, seed=int(rng.integers(2**31)),
                  on_turn=lambda turn: demos.end_of_deal(gamma) if turn.deal.is_over else None)
        if bar:
            bar.update(1)
    if bar:
        bar.close()
    return {
        "obs": np.stack(demos.obs), "mask": np.stack(demos.mask),
        "extra": np.stack(demos.extra) if central else np.zeros((len(demos.actions), 0), dtype=np.int8),
        "actions": np.asarray(demos.actions, dtype=np.int64), "returns": np.asarray(demos.returns, dtype=np.float32),
    }


def behaviour_clone(model: ActorCritic, data: dict[str, np.ndarray], cfg: PretrainConfig, rng: np.random.Generator,
                    device: torch.device, log: Any = print,
                    on_epoch: Callable[[dict[str, float]], None] | None = None,
                    progress: bool = False) -> list[dict[str, float]]:
    """Fit the actor to the teacher's actions and the critic to the returns; one metrics dict per
    epoch (also passed to ``on_epoch``). A tenth of the decisions is held out to report how well
    the policy generalises. ``progress`` shows a bar over the minibatches of all epochs."""
    n = len(data["actions"])
    order = rng.permutation(n)
    held = order[: max(1, n // 10)]
    train_idx = order[len(held):]
    tensors = {k: torch.from_numpy(v).to(device) for k, v in data.items()}
    central = model.critic_extra > 0
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate)
    history = []
    batches = math.ceil(len(train_idx) / cfg.batch_size)
    bar = _bar(cfg.epochs * batches, "imitation", "batch", progress)
    for epoch in range(cfg.epochs):
        # Linear decay to zero over the epochs: the last passes polish rather than jump around.
        for group in optimizer.param_groups:
            group["lr"] = cfg.learning_rate * (1 - epoch / cfg.epochs)
        perm = train_idx[rng.permutation(len(train_idx))]
        total = {"policy_loss": 0.0, "value_loss": 0.0}
        for start in range(0, len(perm), cfg.batch_size):
            mb = torch.from_numpy(perm[start:start + cfg.batch_size]).to(device)
            logp, _, value = model.evaluate_actions(tensors["obs"][mb], tensors["mask"][mb], tensors["actions"][mb],
                                                    tensors["extra"][mb] if central else None)
            policy_loss = -logp.mean()
            value_loss = 0.5 * ((value - tensors["returns"][mb]) ** 2).mean()
            loss = policy_loss + cfg.value_coef * value_loss
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
            optimizer.step()
            total["policy_loss"] += policy_loss.item() * len(mb)
            total["value_loss"] += value_loss.item() * len(mb)
            if bar:
                bar.update(1)
        metrics = {k: v / len(perm) for k, v in total.items()}
        metrics.update(_held_out(model, tensors, held, central))
        metrics["epoch"] = float(epoch + 1)
        history.append(metrics)
        if on_epoch:
            on_epoch(metrics)
        log(f"imitation epoch {epoch + 1}/{cfg.epochs}: policy loss {metrics['policy_loss']:.3f}, value loss "
            f"{metrics['value_loss']:.3f}; held out: agreement {metrics['agreement']:.1%}, "
            f"bidding {metrics['bid_agreement']:.1%}")
    if bar:
        bar.close()
    return history


def _bar(total: int, desc: str, unit: str, enabled: bool) -> Any:
    """A tqdm bar, or ``None`` without progress display."""
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, desc=desc, dynamic_ncols=True)


def _held_out(model: ActorCritic, t: dict[str, torch.Tensor], held: np.ndarray, central: bool) -> dict[str, float]:
    """How often the greedy policy picks the teacher's action on decisions it was not trained on
    (overall, and in the auction: decisions where PASS is legal)."""
    agree = bids = bid_agree = 0
    with torch.no_grad():
        for start in range(0, len(held), 4096):
            mb = torch.from_numpy(held[start:start + 4096])
            greedy = model.masked_logits(t["obs"][mb], t["mask"][mb]).argmax(-1)
            same = greedy == t["actions"][mb]
            auction = t["mask"][mb][:, 0]  # PASS (action 0) is legal only in the auction
            agree += int(same.sum())
            bids += int(auction.sum())
            bid_agree += int((same & auction).sum())
    return {"agreement": agree / len(held), "bid_agreement": bid_agree / bids if bids else math.nan}
