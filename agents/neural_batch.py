"""A network's greedy choices over a batch of inputs, for inference on the CPU (numba: the ``vector`` extra).

The network's input is mostly zeros: an Australian observation holds about 60 nonzero entries of
1,399 (the cards held, seen and played, the auction so far), and its first layer is four fifths
of a ``[256, 256]`` actor's arithmetic. :class:`GreedyActor` computes that layer as the sum of the
weight rows of the nonzero entries (a numba kernel: no multiply by zero), then the rest of the
actor in torch, and returns the greedy legal action of every row: what
``ActorCritic.masked_logits(...).argmax(-1)`` chooses, about four times cheaper at a few hundred
rows. The sums are the same numbers added in another order, so a logit may differ from the dense
layer's in its last bits (as the dense layer's own differ between batch sizes): a choice differs
only between actions whose logits tie to about a millionth.
"""

from __future__ import annotations

import numpy as np
import torch
from numba import njit

from agents.neural import MASK_VALUE, ActorCritic


@njit(cache=True)
def _sparse_first_layer(x: np.ndarray, rows: np.ndarray, table: np.ndarray, bias: np.ndarray,
                        out: np.ndarray) -> None:
    """``out[i] = bias + Σ_j x[rows[i], j] · table[j]`` over the nonzero ``x[rows[i], j]`` (int8, or float32 inputs)."""
    width, hidden = table.shape
    for i in range(len(rows)):
        r = rows[i]
        for k in range(hidden):
            out[i, k] = bias[k]
        for j in range(width):
            v = np.float32(x[r, j])
            if v != 0:
                for k in range(hidden):
                    out[i, k] += v * table[j, k]


class GreedyActor:
    """The greedy action of ``model``'s actor for each row of a batch of its inputs
    (:func:`~agents.neural.policy_input`'s vectors, ``int8``) and legal-action masks; the model's
    weights are read once, at construction."""

    def __init__(self, model: ActorCritic) -> None:
        first = model.actor[0]
        width = len(model.input_scale)
        with torch.no_grad():
            # each input's column of the first layer, with the input's scale (the scores' ÷ 500)
            self.table = (first.weight[:, :width] * model.input_scale).T.contiguous().numpy().copy()
            self.bias = first.bias.detach().numpy().copy()
            # the card-order inputs (agents.card_features) after the observation: sparse too (the hand's cards only)
            self.card_features = model.card_features
            self.card_table = first.weight[:, width:].T.contiguous().numpy().copy()
            self.no_bias = np.zeros_like(self.bias)
        self.rest = model.actor[1:]
        self.advice = model.advice != "none"
        self.advice_weight = model.advice_weight.detach().clone() if self.advice else None
        self.phase_slice = model.phase_slice
        self.num_actions = model.num_actions

    def __call__(self, x: np.ndarray, masks: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """The greedy compact action of each of ``rows`` (default: every row) of ``x`` and ``masks``."""
        rows = np.arange(len(x)) if rows is None else rows
        hidden = np.empty((len(rows), len(self.bias)), dtype=np.float32)
        _sparse_first_layer(x, rows, self.table, self.bias, hidden)
        if self.card_features is not None:
            with torch.inference_mode():
                features = self.card_features(torch.from_numpy(x[rows])).numpy()
            extra = np.empty_like(hidden)
            _sparse_first_layer(features, np.arange(len(rows)), self.card_table, self.no_bias, extra)
            hidden += extra
        with torch.inference_mode():
            logits = self.rest(torch.from_numpy(hidden))
            if self.advice:
                # the advice's one-hot, the input's last columns, adds the advice weight (of the row's
                # phase, with a phase slice) to its action's logit
                weight = self.advice_weight if self.phase_slice is None else \
                    (torch.from_numpy(x[rows, self.phase_slice]).float() @ self.advice_weight).unsqueeze(-1)
                logits = logits + weight * torch.from_numpy(x[rows, -self.num_actions:]).float()
            logits = logits.masked_fill(~torch.from_numpy(masks[rows]).bool(), MASK_VALUE)
            return torch.argmax(logits, dim=1).numpy()


__all__ = ["GreedyActor"]
