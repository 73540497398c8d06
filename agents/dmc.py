"""Deep Monte-Carlo agents: a Q-network over the observation and each legal action, played greedily.

:class:`QNetwork` scores a (observation, action) pair in one of two shapes (``actions``):

* ``"input"``, as DouZero's: the observation and the action's one-hot over the preset's compact
  action ids go, concatenated, into an MLP whose one output is the expected return of playing that
  action. Concatenating then applying the first layer is the sum of two first-layer parts, one per
  input, so the observation's part is computed once per decision (over its non-zero entries only)
  and added to each legal action's row (:meth:`QNetwork.legal_q`): a decision costs one sparse
  observation row plus the hidden rows of every legal action.
* ``"output"``, as DQN's: the MLP reads the observation alone and has one output per action id, the
  expected return of each; a decision costs one pass whatever the number of legal actions (the
  action spaces here are small: 70-100 ids), several times cheaper where many actions are legal.

Checkpoints written by ``training.algorithms.dmc`` carry the format :data:`DMC_FORMAT`;
:func:`load_checkpoint_agent` (what ``agents.make_agent(path)`` calls for a checkpoint) plays
them with :class:`DMCAgent` and hands every other checkpoint to :func:`agents.neural.load_agent`.
"""

from __future__ import annotations

import hashlib
import itertools
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.base import Agent
from agents.neural import ACTIVATIONS, MAX_PARAMETERS, SCORE_SCALE, load_agent
from agents.weights_files import CheckpointError, check_rules, check_tensors_digest, init_provenance
from five_hundred_env.rules import Rules, make_rules

DMC_FORMAT = "five-hundred-dmc-v1"
"""The ``format`` entry of a DMC checkpoint."""

ACTION_SHAPES = ("input", "output")
"""Where a :class:`QNetwork` takes the action: as an input beside the observation, or as one output per action id."""


class QNetwork(nn.Module):
    """``Q(o, a)``: an MLP over the observation concatenated with the action's one-hot.
    ``spec()`` returns the constructor arguments, stored in checkpoints."""

    def __init__(self, obs_size: int, num_actions: int, hidden_sizes: list[int], activation: str = "relu",
                 scores_at: int | None = None, num_sides: int = 2, actions: str = "input") -> None:
        super().__init__()
        if activation not in ACTIVATIONS or not hidden_sizes or min(hidden_sizes) < 1 or actions not in ACTION_SHAPES:
            raise ValueError(f"a Q-network needs positive hidden sizes, an activation of {ACTIVATIONS} and actions "
                             f"of {ACTION_SHAPES}, got {hidden_sizes!r}, {activation!r}, {actions!r}")
        self._spec = dict(obs_size=int(obs_size), num_actions=int(num_actions), hidden_sizes=[int(h) for h in hidden_sizes],
                          activation=str(activation), scores_at=None if scores_at is None else int(scores_at),
                          num_sides=int(num_sides), actions=str(actions))
        self.action_output = actions == "output"
        scale = torch.ones(obs_size)
        if scores_at is not None:  # the scores slice holds score ÷ 10: brought near [-1, 1], as ActorCritic does
            scale[scores_at:scores_at + num_sides] = SCORE_SCALE
        self.register_buffer("input_scale", scale)
        act = dict(zip(ACTIVATIONS, (nn.ReLU, nn.Tanh), strict=True))[activation]
        first = hidden_sizes[0]
        # The first layer's observation columns, summed over the observation's non-zero entries
        # (about 60 of 1399): the observation is sparse, and a dense product would cost most of a decision.
        self.obs_in = nn.EmbeddingBag(obs_size, first, mode="sum")
        self.bias = nn.Parameter(torch.zeros(first))
        tables = [self.obs_in.weight, self.bias]
        if not self.action_output:
            self.action_in = nn.Embedding(num_actions, first)  # its one-hot action columns
            tables.append(self.action_in.weight)
        bound = (obs_size + (0 if self.action_output else num_actions)) ** -0.5  # nn.Linear's initialisation
        for table in tables:
            nn.init.uniform_(table, -bound, bound)
        layers: list[nn.Module] = [act()]
        for a, b in itertools.pairwise(hidden_sizes):
            layers += [nn.Linear(a, b), act()]
        layers.append(nn.Linear(hidden_sizes[-1], num_actions if self.action_output else 1))
        self.body = nn.Sequential(*layers)

    def spec(self) -> dict[str, Any]:
        return dict(self._spec)

    def features(self, obs: torch.Tensor) -> torch.Tensor:
        """``[B, H]``: the first layer's observation part (with its bias) of every row, over its non-zero entries."""
        games, columns = torch.nonzero(obs, as_tuple=True)
        values = obs[games, columns].float() * self.input_scale[columns]
        offsets = torch.zeros(len(obs), dtype=torch.int64)
        offsets[1:] = torch.bincount(games, minlength=len(obs)).cumsum(0)[:-1]
        return self.obs_in(columns, offsets, per_sample_weights=values) + self.bias

    def _first_layer(self, obs: torch.Tensor, extra: torch.Tensor | None) -> torch.Tensor:
        return self.features(obs) if extra is None else self.features(obs) + extra

    def q(self, obs: torch.Tensor, rows: torch.Tensor, actions: torch.Tensor, extra: torch.Tensor | None = None) -> torch.Tensor:
        """``Q(obs[rows[i]], actions[i])`` for every pair ``i``: ``obs`` ``[B, D]``, ``rows`` and ``actions`` ``[N]``;
        ``extra`` ``[B, H]`` (training only: an oracle's input) is added to the first layer's features."""
        features = self._first_layer(obs, extra)
        if self.action_output:
            return self.body(features)[rows, actions]
        return self.body(features[rows] + self.action_in(actions)).squeeze(-1)

    def legal_q(self, obs: torch.Tensor, mask: torch.Tensor, extra: torch.Tensor | None = None) -> torch.Tensor:
        """``[B, A]``: the Q-value of every legal action, ``-inf`` elsewhere (``extra``: as :meth:`q`'s)."""
        if self.action_output:
            return self.body(self._first_layer(obs, extra)).masked_fill(~mask.bool(), -torch.inf)
        rows, actions = torch.nonzero(mask, as_tuple=True)
        out = torch.full(mask.shape, -torch.inf)
        out[rows, actions] = self.q(obs, rows, actions, extra)
        return out

    def greedy(self, obs: torch.Tensor, mask: torch.Tensor, extra: torch.Tensor | None = None) -> torch.Tensor:
        """``[B]``: each row's legal action of highest Q-value (``extra``: as :meth:`q`'s)."""
        return self.legal_q(obs, mask.bool(), extra).argmax(dim=1)


class DMCAgent(Agent):
    """A trained :class:`QNetwork`, playing the legal action of highest Q-value."""

    name = "dmc"

    def __init__(self, rules: Rules | str = "australian", seed: int | None = None, *, model: QNetwork) -> None:
        super().__init__(rules, seed)
        self.model = model.eval()

    def act(self, observation: dict[str, Any]) -> int:
        mask = np.asarray(observation["action_mask"])
        if not mask.any():
            raise ValueError("no legal action in the mask: is it this agent's turn?")
        return int(self.act_batch(np.asarray(observation["observation"])[None], mask[None])[0])

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The greedy action of every row (``obs [k, D]``, ``masks [k, A]``): one network call."""
        with torch.inference_mode():
            return self.model.greedy(torch.from_numpy(np.ascontiguousarray(obs)),
                                     torch.from_numpy(np.ascontiguousarray(masks))).numpy()


def q_network_from(data: dict[str, Any], path: str | Path) -> QNetwork:
    """The network of a DMC checkpoint's ``model_spec`` and ``model``, checked before anything big is allocated."""
    spec = data.get("model_spec")
    keys = {"obs_size", "num_actions", "hidden_sizes", "activation", "scores_at", "num_sides"}
    if not isinstance(spec, dict) or not keys <= set(spec) <= keys | {"actions"}:  # "actions" came later: "input" without it
        raise CheckpointError(f"{path}: a DMC model_spec must have the keys {sorted(keys)} (and optionally 'actions')")
    sizes = spec["hidden_sizes"]
    if (not all(isinstance(spec[k], int) and spec[k] > 0 for k in ("obs_size", "num_actions", "num_sides"))
            or not isinstance(sizes, list) or not sizes or not all(isinstance(h, int) and 0 < h <= 4096 for h in sizes)
            or len(sizes) > 8 or spec.get("actions", "input") not in ACTION_SHAPES):
        raise CheckpointError(f"{path}: the DMC model_spec is malformed: {spec}")
    outputs = spec["num_actions"] if spec.get("actions") == "output" else 1
    count = ((spec["obs_size"] + spec["num_actions"] + 1) * sizes[0] + sum((a + 1) * b for a, b in itertools.pairwise(sizes))
             + (sizes[-1] + 1) * outputs)
    if count > MAX_PARAMETERS:
        raise CheckpointError(f"{path}: the DMC network would have {count:,} parameters (at most {MAX_PARAMETERS:,})")
    try:
        model = QNetwork(**spec)
        model.load_state_dict(data["model"])
    except (TypeError, ValueError, RuntimeError, KeyError) as e:
        raise CheckpointError(f"{path}: the DMC network does not load: {e}") from None
    if not all(bool(torch.isfinite(t).all()) for t in model.state_dict().values()):
        raise CheckpointError(f"{path}: the DMC network's weights are not finite")
    return model


def read_dmc_checkpoint(data: dict[str, Any], path: str | Path, rules: Rules | str | None) -> tuple[QNetwork, Rules]:
    """The network and rules of a loaded DMC checkpoint (its tensors checked against the digest
    recorded when written: :func:`~agents.weights_files.check_tensors_digest`); ``rules`` (if given) checked
    against its preset."""
    check_tensors_digest(data, path)
    try:
        trained = Rules.from_dict(data["rules"])
    except (KeyError, ValueError, TypeError) as e:
        raise CheckpointError(f"{path} holds unusable rules: {e}") from None
    model = q_network_from(data, path)
    if rules is None:
        return model, trained
    wanted = make_rules(rules) if isinstance(rules, str) else rules
    check_rules(Path(path), trained, wanted)
    return model, wanted


def export_dmc_policy(source: str | Path, out: str | Path, dtype: str = "float16", note: str = "") -> dict[str, Any]:
    """Write ``out``, the *policy file* of a DMC checkpoint (``latest.pt``, ``step_N.pt`` or
    ``final.pt``): its rules, ``model_spec`` and weights (as ``dtype``, played in float32), and a
    ``provenance`` dict: the source's file name and sha256, the export time, ``note``, and what
    made it, ``recipe`` (the run's config) and ``budget`` (its learner steps, deals, training
    CPU-seconds and wall-clock). Loads as any DMC checkpoint does (:func:`load_checkpoint_agent`);
    written whole or not at all, never over ``source``."""
    from agents.policy_files import POLICY_DTYPES
    from five_hundred_env.files import check_output, write_atomic

    source = Path(source)
    out = check_output(out, inputs=[source])
    if dtype not in POLICY_DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(POLICY_DTYPES)}, got {dtype!r}")
    try:
        data = torch.load(source, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many types for a damaged file
        raise CheckpointError(f"{source} is not a readable checkpoint: {type(e).__name__}") from None
    if not isinstance(data, dict) or data.get("format") != DMC_FORMAT:
        raise CheckpointError(f"{source} is not a DMC checkpoint (format {DMC_FORMAT!r})")
    model, rules = read_dmc_checkpoint(data, source, None)
    largest = max(float(t.abs().max()) for t in model.state_dict().values())
    if largest > torch.finfo(POLICY_DTYPES[dtype]).max:
        raise ValueError(f"{source}: a weight of {largest:.6g} does not fit {dtype}: export with --dtype float32")
    counters = data.get("counters", {})
    provenance = {"source": source.name, "sha256": hashlib.sha256(source.read_bytes()).hexdigest(),
                  "exported": datetime.now(timezone.utc).isoformat(timespec="seconds"), "dtype": dtype, "note": str(note),
                  "recipe": data.get("config", {}),
                  "budget": {key: counters.get(key) for key in ("global_step", "deals", "cpu_s", "time_s")}}
    if "data_cpu_s" in counters:  # a search distillation's (training.algorithms.distill_q): its data's share
        provenance["budget"]["data_cpu_s"] = counters["data_cpu_s"]
    if (init := init_provenance(data.get("config"))) is not None:  # where the network it started from came from
        provenance["init"] = init
    weights = {name: t.to(POLICY_DTYPES[dtype]) if t.is_floating_point() and name != "input_scale" else t
               for name, t in model.state_dict().items()}
    payload = {"format": DMC_FORMAT, "kind": "dmc_policy", "rules": rules.to_dict(), "model_spec": model.spec(),
               "model": weights, "provenance": provenance}
    write_atomic(out, lambda f: torch.save(payload, f))
    return provenance


def is_dmc_file(path: str | Path) -> bool:
    """Whether ``path`` is a readable DMC checkpoint or policy file."""
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception:  # not ours to diagnose here
        return False
    return isinstance(data, dict) and data.get("format") == DMC_FORMAT


def load_checkpoint_agent(path: str | Path, rules: Rules | str | None = None, seed: int | None = None) -> Agent:
    """The agent of any training checkpoint: a :class:`DMCAgent` for a DMC one, else
    :func:`agents.neural.load_agent`'s (which also reports a missing, corrupt or foreign file)."""
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception:  # not ours to diagnose: load_agent explains a damaged or foreign file
        data = None
    if isinstance(data, dict) and data.get("format") == DMC_FORMAT:
        model, played = read_dmc_checkpoint(data, path, rules)
        return DMCAgent(played, seed, model=model)
    return load_agent(path, rules, seed)
