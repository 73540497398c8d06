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
from agents.neural import ActorCritic, hidden_cards, policy_input
from five_hundred_env.rules import Rules
from training.config import PretrainConfig


def teacher_demonstrations(rules: Rules, teacher: Agent, deals: int, rng: np.random.Generator, central: bool,
                           reward: str = "zero_sum", reward_scale: float = 100.0, gamma: float = 1.0,
                           progress: bool = False, adviser: Any = None) -> dict[str, np.ndarray]:
    """Every decision of ``deals`` deals played by ``teacher`` in all seats: the network's inputs
    (observations, plus ``adviser``'s advice for a network that takes it, see
    :func:`agents.neural.policy_input`), masks, hidden cards (for a centralised critic), the
    teacher's actions and each decision's return."""
    env = five_hundred_env.env(rules=rules, episode="deal", reward=reward, reward_scale=reward_scale)
    obs_l: list[np.ndarray] = []
    mask_l: list[np.ndarray] = []
    extra_l: list[np.ndarray] = []
    act_l: list[int] = []
    ret_l: list[float] = []
    bar = _bar(deals, "teacher deals", "deal", progress)
    for _ in range(deals):
        teacher.seed(int(rng.integers(2**31)))
        env.reset(seed=int(rng.integers(2**31)))
        chains: dict[int, list[int]] = {}
        final: dict[int, float] = {}
        for name in env.agent_iter():
            obs, reward_seen, term, trunc, _ = env.last()
            seat = int(name.rsplit("_", 1)[1])
            if term or trunc:
                final[seat] = float(reward_seen)  # the deal's result, shown once it is over
                env.step(None)
                continue
            action = teacher.act(obs)
            chains.setdefault(seat, []).append(len(act_l))
            obs_l.append(policy_input(obs, adviser))
            mask_l.append(obs["action_mask"].astype(bool))
            if central:
                extra_l.append(hidden_cards(env.unwrapped.deal, seat))
            act_l.append(action)
            ret_l.append(0.0)
            env.step(action)
        for seat, chain in chains.items():  # rewards come only at the end of a deal: G = γ^k · result
            for k, i in enumerate(reversed(chain)):
                ret_l[i] = final.get(seat, 0.0) * gamma**k
        if bar:
            bar.update(1)
    if bar:
        bar.close()
    return {
        "obs": np.stack(obs_l), "mask": np.stack(mask_l),
        "extra": np.stack(extra_l) if central else np.zeros((len(act_l), 0), dtype=np.int8),
        "actions": np.asarray(act_l, dtype=np.int64), "returns": np.asarray(ret_l, dtype=np.float32),
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
