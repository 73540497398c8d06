"""The networks of a Deep Monte-Carlo run (``training.algorithms.dmc``): the Q-network that plays,
and two that only train it.

* :func:`build_q_network`: the Q-network (:class:`agents.dmc.QNetwork`) over the seat's observation;
  :func:`load_init` starts it from ``network.init``'s file.
* :func:`build_baseline` (``network.baseline: central``): a value of the global state (every hand)
  taken from each return before the Q fit.
* :class:`OracleInput` (``network.oracle_steps``): oracle guiding, as Suphx trains. The Q-network's
  first layer also reads the hidden cards (every hand, the kitty, the discards: the global state's
  part before the seat's own observation), each entry kept with a probability falling linearly
  from 1 to 0 over ``oracle_steps`` learner steps. Early on the network plays and learns with the
  cards in sight, where the value of a card is far easier to learn; as the oracle fades, its
  observation's part of the first layer takes over. Training only: from then on, and at play
  always, the Q-network reads its observation alone, and the exported file holds no oracle.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from agents.dmc import DMC_FORMAT, QNetwork, read_dmc_checkpoint
from five_hundred_env.actions import ActionTable
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules
from training.settings.config import ConfigError
from training.settings.dmc_config import DmcConfig, linear_fade


def build_q_network(config: DmcConfig, rules: Rules) -> QNetwork:
    """The config's Q-network, fresh (seeded by torch's global generator)."""
    encoder = ObservationEncoder(rules)
    return QNetwork(encoder.size, len(ActionTable(rules)), config.network.hidden_sizes, config.network.activation,
                    scores_at=encoder.layout["scores"][0], num_sides=rules.num_sides, actions=config.network.actions)


def build_baseline(config: DmcConfig, rules: Rules) -> QNetwork | None:
    """``network.baseline: central``'s value network over the global state (every hand; the state
    ends with the seat's observation, whose scores it scales as the Q-network does), else ``None``."""
    if config.network.baseline != "central":
        return None
    encoder = ObservationEncoder(rules)
    state_size = encoder.state_size
    return QNetwork(state_size, 1, config.network.hidden_sizes, config.network.activation,
                    scores_at=state_size - encoder.size + encoder.layout["scores"][0], num_sides=rules.num_sides,
                    actions="output")


class OracleInput(nn.Module):
    """The hidden cards' columns of the Q-network's first layer (oracle guiding: training only).

    :meth:`features` returns ``[B, H]``, added to the Q-network's own first-layer features: a sum of
    this table's rows over the non-zero entries of each state's hidden part, each entry kept with
    probability ``keep`` (dropped independently, as Suphx's dropout of the perfect features)."""

    def __init__(self, hidden_size: int, first_layer: int) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.table = nn.EmbeddingBag(hidden_size, first_layer, mode="sum")
        nn.init.uniform_(self.table.weight, -hidden_size ** -0.5, hidden_size ** -0.5)

    def features(self, states: np.ndarray, keep: float, rng: np.random.Generator) -> torch.Tensor:
        """``states`` ``[B, state_size]`` (the global state: its hidden part comes first)."""
        games, columns = np.nonzero(states[:, :self.hidden_size])
        kept = rng.random(len(games)) < keep
        games, columns = games[kept], columns[kept]
        offsets = np.zeros(len(states), dtype=np.int64)
        offsets[1:] = np.bincount(games, minlength=len(states)).cumsum()[:-1]
        return self.table(torch.from_numpy(columns.astype(np.int64)), torch.from_numpy(offsets))


def build_oracle(config: DmcConfig, rules: Rules) -> OracleInput | None:
    """``network.oracle_steps``' oracle input (fresh), else ``None``."""
    if not config.network.oracle_steps:
        return None
    encoder = ObservationEncoder(rules)
    return OracleInput(encoder.state_size - encoder.size, config.network.hidden_sizes[0])


def oracle_keep(config: DmcConfig, step: int) -> float:
    """The probability that the oracle keeps each hidden entry at learner step ``step``."""
    return linear_fade(step, config.network.oracle_steps)


def load_init(config: DmcConfig, rules: Rules, model: QNetwork, baseline: QNetwork | None) -> None:
    """Start from ``network.init`` (a DMC policy file or checkpoint of these rules): its Q-network's
    weights, which must match the config's network (a ``ConfigError`` names what differs), and a
    checkpoint's baseline where both have one (a policy file has none: the baseline starts fresh)."""
    path = config.network.init
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many types for a missing or damaged file
        raise ConfigError(f"network.init {path}: not a readable DMC policy file or checkpoint ({type(e).__name__})") from None
    if not isinstance(data, dict) or data.get("format") != DMC_FORMAT:
        raise ConfigError(f"network.init {path}: not a DMC policy file or checkpoint (format {DMC_FORMAT!r})")
    theirs, _ = read_dmc_checkpoint(data, path, rules)
    ours_spec, their_spec = model.spec(), theirs.spec()
    differ = [k for k in ours_spec if ours_spec[k] != their_spec.get(k)]
    if differ:
        raise ConfigError(f"network.init {path}: its Q-network differs from the config's in "
                          + ", ".join(f"{k} ({their_spec.get(k)!r}, the config {ours_spec[k]!r})" for k in differ))
    model.load_state_dict(theirs.state_dict())
    if baseline is not None and "baseline" in data and data.get("baseline_spec") == baseline.spec():
        baseline.load_state_dict(data["baseline"])
