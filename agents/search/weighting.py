"""Worlds weighted by how likely a network makes the other seats' bids in them (``pimc:bid_weights=β``).

The uniform worlds ignore what the bids say; :class:`~agents.search.inference.AuctionInference`
keeps only the worlds where every other seat bid exactly as the heuristic would, which fails
against any other bidder. :class:`BidLikelihood` is the soft form with a network: each world's
auction is replayed from its dealt hands, each other seat whose hand is hidden is shown its own
observation at each of its bidding turns, and the world is weighted by the product of the
network's probabilities of the bids actually made, raised to the power ``β`` (``weights`` of the
worlds: normalised, the largest 1). ``β = 1`` is Bayes' rule with the network as the model of the
other seats; a smaller ``β`` tempers a confident network (a greedy player's probabilities are
near 0 or 1, and one world would otherwise take all the weight).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from agents.search.inference import inferred_turns
from five_hundred_env.actions import ActionTable
from five_hundred_env.engine import Deal
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules
from five_hundred_env.sampling import InfoSet


class BidLikelihood:
    """The weights of a decision's worlds under ``policy`` (an agent with ``logits_batch``: a
    :class:`~agents.neural.NeuralAgent`), each the product of its bids' probabilities to the ``power``."""

    def __init__(self, rules: Rules, policy: object, power: float) -> None:
        if not callable(getattr(policy, "logits_batch", None)):
            raise ValueError(f"bid_weights needs a base network that gives probabilities (a policy file, a PPO or "
                             f"distillation checkpoint, pretrained), not {type(policy).__name__}")
        self.rules, self.policy, self.power = rules, policy, power
        self.table = ActionTable(rules)
        self.encoder = ObservationEncoder(rules)

    def weights(self, worlds: Sequence[Deal], info: InfoSet, scores: Sequence[int] | None = None) -> np.ndarray:
        """Each world's weight (the largest 1); all 1 when no hidden seat has bid yet."""
        deals = [Deal(self.rules, world.dealt, world.kitty, info.dealer) for world in worlds]
        alive = list(range(len(deals)))  # every world: each is a deal its auction led to
        rows: list[np.ndarray] = []
        masks: list[np.ndarray] = []
        owners: list[int] = []
        chosen: list[int] = []
        for action in inferred_turns(deals, info, alive):
            for w in alive:
                turn = self.encoder.encode_turn(deals[w], self.table, scores)
                rows.append(turn["observation"])
                masks.append(turn["action_mask"])
                owners.append(w)
                chosen.append(self.table.compact[action])
        log_weight = np.zeros(len(worlds))
        if rows:
            logits = self.policy.logits_batch(np.stack(rows), np.stack(masks))  # type: ignore[attr-defined]
            log_p = torch.log_softmax(logits.double(), dim=1)[torch.arange(len(rows)), torch.tensor(chosen)].numpy()
            np.add.at(log_weight, np.array(owners), self.power * log_p)
        return np.exp(log_weight - log_weight.max())


__all__ = ["BidLikelihood"]
