"""Neural agents: an actor-critic network over the observation vector, with masked logits.

The actor reads one seat's observation (the flat ``int8`` vector of
:mod:`five_hundred_env.observation`) and gives one logit per action of the preset's action space;
the logits of illegal actions are replaced by :data:`MASK_VALUE` before any softmax, so an
illegal action gets probability exactly 0 (``exp(-1e8)`` underflows) and is never sampled. The
same masking happens when the update recomputes log-probabilities, so the policy being trained
is the policy that acted.

The critic reads the same observation and, with ``critic_extra > 0`` (a *centralised* critic),
the hidden cards too (see :func:`agents.central.central_features`): it is used only in training, never to act.

With ``advice="heuristic"`` the network learns a *residual* over the heuristic agent (residual
policy learning): :func:`policy_input` appends the heuristic's choice, as a one-hot over the
actions, to the observation vector; the actor reads it and adds a learnable bonus
(:data:`ADVICE_WEIGHT` at the start) to that action's logit. A fresh network therefore plays the
heuristic's moves greedily (its policy head starts near zero), and training learns where to
deviate. The advice is computed from the seat's own observation only, so nothing hidden leaks.
With ``phase_slice`` (the observation's phase one-hot) the bonus is one learnable number per phase,
so each decision kind has its own (expert iteration's ``regression`` fit chooses one per kind).

:class:`NeuralAgent` wraps a trained network in the common :class:`~agents.base.Agent`
interface; :func:`load_agent` builds one from a checkpoint written by ``training.algorithms.ppo`` or
``training.algorithms.expert_iteration``, or from a *policy file* (:func:`agents.policy_files.export_policy`: the actor
alone, in float16 by default, what ships in ``agents/pretrained/``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

from agents.base import DECISION_KINDS, KIND_OF_PHASE, Agent
from agents.card_features import CardFeatures, card_feature_count, reads_observation_of
from agents.weights_files import (
    CHECKPOINT_FORMAT,
    DISTILL_FORMAT,
    POLICY_FORMAT,
    CheckpointError,
    check_rules,
    check_tensors_digest,
    check_weights,
    torch_load_failure,
)
from five_hundred_env.actions import ActionTable
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.rules import Rules, make_rules

MASK_VALUE = -1e8
"""The logit of an illegal action: far below any real logit, yet finite, so that softmax,
log-softmax and the entropy stay free of NaN (``0 × -1e8 = 0``, whereas ``0 × -inf`` is NaN)."""

ADVICE_WEIGHT = 4.0
"""The default starting bonus on the logit of the advised action (a learnable parameter): with
~10 legal actions the advice then has probability ~0.85, so sampling still explores, while
greedy play starts as the adviser's. Higher values explore less."""

ADVICE_KINDS = ("none", "heuristic")

SCORE_SCALE = 1 / 50
"""The ``scores`` slice holds score ÷ 10 (up to ±127); ÷ 50 more brings it near [-1, 1]."""


MAX_PARAMETERS = 300_000_000
"""The most parameters a checkpoint's network may have (1.2 GB of float32): a crafted
``model_spec`` asking for more is refused before anything is allocated. The largest network a
training config allows (8 layers of 4096) stays under it."""

ACTIVATIONS = ("relu", "tanh")


class PolicyOnlyError(CheckpointError):
    """A value (the critic) asked of a network loaded from a policy file, which has none."""


def _mlp(sizes: list[int], activation: str, out: int, out_gain: float) -> nn.Sequential:
    act = dict(zip(ACTIVATIONS, (nn.ReLU, nn.Tanh), strict=True))[activation]
    layers: list[nn.Module] = []
    for a, b in itertools.pairwise(sizes):
        layers += [_init(nn.Linear(a, b), np.sqrt(2)), act()]
    layers.append(_init(nn.Linear(sizes[-1], out), out_gain))
    return nn.Sequential(*layers)


def _init(layer: nn.Linear, gain: float) -> nn.Linear:
    # Orthogonal init as in CleanRL's PPO: a small gain on the policy head starts the policy
    # close to uniform over the legal actions.
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer


class ActorCritic(nn.Module):
    """Separate actor and critic MLPs over the observation vector (plus hidden cards for a
    centralised critic). ``spec()`` returns the constructor arguments, stored in checkpoints.

    With ``policy_only`` the critic is not built (a network loaded from a policy file, for
    playing): :meth:`value`, and everything that needs it, raises :class:`PolicyOnlyError`."""

    def __init__(
        self,
        obs_size: int,
        num_actions: int,
        hidden_sizes: list[int],
        activation: str = "relu",
        critic_extra: int = 0,
        num_sides: int = 2,
        advice: str = "none",
        advice_weight: float = ADVICE_WEIGHT,
        scores_at: int | None = None,
        phase_slice: list[int] | None = None,
        card_features: dict[str, Any] | None = None,
        policy_only: bool = False,
    ) -> None:
        super().__init__()
        if advice not in ADVICE_KINDS:
            raise ValueError(f"advice must be one of {ADVICE_KINDS}, got {advice!r}")
        if card_features is not None and advice != "none":
            raise ValueError("card_features and advice do not go together: the advice's one-hot must stay the last inputs")
        # Plain Python values only: the spec goes into checkpoints read with weights_only=True.
        self._spec = dict(obs_size=int(obs_size), num_actions=int(num_actions), hidden_sizes=[int(h) for h in hidden_sizes],
                          activation=str(activation), critic_extra=int(critic_extra), num_sides=int(num_sides),
                          advice=str(advice), advice_weight=float(advice_weight),
                          scores_at=None if scores_at is None else int(scores_at))
        if phase_slice is not None:  # a spec without the key is a network of before (one advice weight)
            self._spec["phase_slice"] = [int(v) for v in phase_slice]
        self.phase_slice = None if phase_slice is None else slice(*self._spec["phase_slice"])
        # the rules' card-order inputs (agents.card_features), after the observation; a spec without the key has none
        self.card_features = None
        if card_features is not None:
            self._spec["card_features"] = dict(card_features)
            self.card_features = CardFeatures(card_features)
        self.advice = advice
        self.num_actions = num_actions
        # The input: the observation, then (with advice) the advised action's one-hot or (with card
        # features) the card-order inputs, which are computed, not scaled.
        in_size = obs_size + (num_actions if advice != "none" else 0)
        scale = torch.ones(in_size)
        if card_features is not None:
            in_size += card_feature_count(card_features)
        if scores_at is not None:  # the offset of the observation's scores slice (its layout, observation.py)
            scale[scores_at:scores_at + num_sides] = SCORE_SCALE
        self.register_buffer("input_scale", scale)
        self.actor = _mlp([in_size, *hidden_sizes], activation, num_actions, 0.01)
        self.policy_only = policy_only
        self.critic = None if policy_only else _mlp([in_size + critic_extra, *hidden_sizes], activation, 1, 1.0)
        self.critic_extra = critic_extra
        if advice != "none":
            shape = () if phase_slice is None else (self.phase_slice.stop - self.phase_slice.start,)
            self.advice_weight = nn.Parameter(torch.full(shape, float(advice_weight)))

    @classmethod
    def for_rules(cls, rules: Rules, hidden_sizes: list[int], activation: str = "relu", **options: Any) -> ActorCritic:
        """A fresh network for ``rules``: the observation's size, one logit per action of its
        action table, its sides and where the observation's scores lie taken from the rules;
        ``options`` are the constructor's others (``advice``, ``critic_extra``, ``policy_only``, …;
        ``card_features=True`` adds the rules' card-order inputs, :mod:`agents.card_features`)."""
        encoder = ObservationEncoder(rules)
        if options.pop("card_features", None):
            options["card_features"] = rules.to_dict()
        return cls(encoder.size, len(ActionTable(rules)), hidden_sizes, activation, num_sides=rules.num_sides,
                   scores_at=encoder.layout["scores"][0], **options)

    def spec(self) -> dict[str, Any]:
        return dict(self._spec)

    def _features(self, obs: torch.Tensor) -> torch.Tensor:
        x = obs.float() * self.input_scale
        return x if self.card_features is None else torch.cat([x, self.card_features(obs)], -1)

    def masked_logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Actor logits with every illegal action (``mask == 0``) set to :data:`MASK_VALUE`.
        ``obs`` is :func:`policy_input`'s vector (the observation, plus the advice if any)."""
        x = self._features(obs)
        logits = self.actor(x)
        if self.advice != "none":
            logits = logits + self.advice_bonus(x) * x[..., -self.num_actions:]
        return logits.masked_fill(~mask.bool(), MASK_VALUE)

    def advice_bonus(self, x: torch.Tensor) -> torch.Tensor:
        """The advice weight of each row of inputs ``x``: the one weight, or (with ``phase_slice``)
        the weight of the row's phase, shaped to add to the row's logits."""
        if self.phase_slice is None:
            return self.advice_weight
        return (x[..., self.phase_slice] @ self.advice_weight).unsqueeze(-1)

    def residual_logits(self, obs: torch.Tensor) -> torch.Tensor:
        """The actor's own logits, before the advice is added and unmasked (what the expert
        iteration's ``regression`` fit makes estimates of each action's advantage)."""
        return self.actor(self._features(obs))

    def value(self, obs: torch.Tensor, extra: torch.Tensor | None = None) -> torch.Tensor:
        """The critic's value of each row (shape ``(batch,)``)."""
        if self.critic is None:
            raise PolicyOnlyError("this network was loaded from a policy file, which holds the actor only: it has "
                                  "no critic to give values (train from the training checkpoint it was exported from)")
        x = self._features(obs)
        if self.critic_extra:
            if extra is None:
                raise ValueError("this network has a centralised critic: pass the hidden-card features")
            x = torch.cat([x, extra.float()], dim=-1)
        return self.critic(x).squeeze(-1)

    def act(
        self, obs: torch.Tensor, mask: torch.Tensor, extra: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Sample actions (torch's global generator): ``(actions, log-probs, values)``."""
        dist = Categorical(logits=self.masked_logits(obs, mask))
        action = dist.sample()
        return action, dist.log_prob(action), self.value(obs, extra)

    def evaluate_actions(
        self, obs: torch.Tensor, mask: torch.Tensor, actions: torch.Tensor, extra: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Log-probs and entropies of ``actions`` under the *same* mask, and values, for the update."""
        dist = Categorical(logits=self.masked_logits(obs, mask))
        return dist.log_prob(actions), dist.entropy(), self.value(obs, extra)


class HeuristicAdviser:
    """The heuristic agent's choice for an observation, as a one-hot over the action space."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self._batch: Any = None  # the batch heuristic, built on the first call

    def __call__(self, observation: dict[str, Any]) -> np.ndarray:
        return self.batch(observation["observation"][None], observation["action_mask"][None])[0]

    def batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The one-hot advice of every row of a batch (:func:`agents.heuristic.batch_heuristic`:
        the compiled heuristic, one call for the batch, where numba is installed)."""
        if self._batch is None:
            from agents.heuristic import batch_heuristic  # only networks that take advice need it

            self._batch = batch_heuristic(self.rules)
        onehot = np.zeros(masks.shape, dtype=np.int8)
        onehot[np.arange(len(masks)), self._batch.act_batch(obs, masks)] = 1
        return onehot


NEVER = 100.0
"""An advice weight no estimate beats (10,000 points): a kind given it plays the advised action
(the kinds a per-kind fit or an ensemble's threshold leaves out)."""


def set_advice_weights(model: ActorCritic, weights: float | Mapping[str, float]) -> None:
    """Set ``model``'s advice weight: one number for every decision, or (a network with a phase
    slice only) one per decision kind (:data:`~agents.base.DECISION_KINDS`; the kinds not named
    keep theirs), each on the rows of the phases of its kind (:data:`~agents.base.KIND_OF_PHASE`).
    A weight is a number from 0 to :data:`NEVER` (the advised action always)."""
    if model.advice == "none":
        raise ValueError("the network takes no advice (no heuristic input), so it has no advice weight (threshold) "
                         "to set")
    numbers = weights.values() if isinstance(weights, Mapping) else [weights]
    if not all(isinstance(w, int | float) and not isinstance(w, bool) and math.isfinite(w) for w in numbers):
        raise ValueError(f"an advice weight must be a finite number, got {weights!r}")
    if not all(0 <= w <= NEVER for w in numbers):
        raise ValueError(f"an advice weight must be from 0 to {NEVER:g} (the advised action always), got {weights!r}")
    with torch.no_grad():
        if not isinstance(weights, Mapping):
            model.advice_weight.fill_(float(weights))
            return
        if model.phase_slice is None:
            raise ValueError("this network has one advice weight for every decision (no phase slice): give one number")
        unknown = set(weights) - set(DECISION_KINDS)
        if unknown:
            raise ValueError(f"unknown decision kind(s) {sorted(unknown)}: the kinds are {', '.join(DECISION_KINDS)}")
        for phase, kind in KIND_OF_PHASE.items():
            if kind in weights and phase < len(model.advice_weight):
                model.advice_weight[phase] = float(weights[kind])


def advice_weights(model: ActorCritic) -> float | dict[str, float]:
    """``model``'s advice weight: the one number, or one per decision kind (read from its first phase)."""
    weight = model.advice_weight.detach()
    if model.phase_slice is None:
        return float(weight)
    return {kind: float(weight[min(p for p, k in KIND_OF_PHASE.items() if k == kind)]) for kind in DECISION_KINDS}


def make_adviser(advice: str, rules: Rules) -> HeuristicAdviser | None:
    """The adviser a network with this ``advice`` needs (``None`` for ``"none"``)."""
    if advice not in ADVICE_KINDS:
        raise ValueError(f"advice must be one of {ADVICE_KINDS}, got {advice!r}")
    return HeuristicAdviser(rules) if advice == "heuristic" else None


def policy_input(observation: dict[str, Any], adviser: HeuristicAdviser | None) -> np.ndarray:
    """The network's input for one observation dict: the observation vector, followed by the
    adviser's one-hot when the network takes advice."""
    vector = np.asarray(observation["observation"], dtype=np.int8)
    if adviser is None:
        return vector
    return np.concatenate([vector, adviser(observation)])


class NeuralAgent(Agent):
    """A trained policy as an agent: greedy (the most probable legal action) or sampled."""

    name = "neural"

    def __init__(
        self, rules: Rules | str = "australian", seed: int | None = None, *, model: ActorCritic, greedy: bool = True
    ) -> None:
        super().__init__(rules, seed)
        self.model = model.eval()
        self.greedy = greedy
        self.adviser = make_adviser(model.advice, self.rules)

    def act(self, observation: dict[str, Any]) -> int:
        mask = np.asarray(observation["action_mask"])
        if not mask.any():
            raise ValueError("no legal action in the mask: is it this agent's turn?")
        with torch.inference_mode():
            obs = torch.from_numpy(policy_input(observation, self.adviser)).unsqueeze(0)
            logits = self.model.masked_logits(obs, torch.from_numpy(mask).unsqueeze(0))[0]
        if self.greedy:
            return int(torch.argmax(logits))
        probs = torch.softmax(logits.double(), dim=0).numpy()
        probs[mask == 0] = 0.0  # already exactly 0; kept so the agent's own rng can never pick one
        return int(self.rng.choice(len(probs), p=probs / probs.sum()))

    def act_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Every row's action in one forward pass (a batched engine's decisions): greedy, :meth:`act`'s
        choice row by row (up to logits tied to float rounding); sampled, from the agent's generator."""
        logits = self.logits_batch(obs, masks)
        if self.greedy:
            return torch.argmax(logits, dim=1).numpy()
        probs = torch.softmax(logits.double(), dim=1).numpy() * (np.asarray(masks) != 0)
        return np.array([self.rng.choice(len(p), p=p / p.sum()) for p in probs], dtype=np.int64)

    def logits_batch(self, obs: np.ndarray, masks: np.ndarray) -> torch.Tensor:
        """The masked logits of every row of a batch of observations and masks (the advice batched)."""
        obs, masks = np.asarray(obs, dtype=np.int8), np.asarray(masks)
        if obs.ndim != 2 or masks.shape[:1] != obs.shape[:1] or not masks.any(axis=-1).all():
            raise ValueError(f"a batch is [B, obs] observations and [B, actions] masks with a legal action in "
                             f"every row, got {obs.shape} and {masks.shape}")
        x = obs if self.adviser is None else np.concatenate([obs, self.adviser.batch(obs, masks)], axis=1)
        with torch.inference_mode():
            return self.model.masked_logits(torch.from_numpy(x), torch.from_numpy(masks))


# -- checkpoints -------------------------------------------------------------------------------

def read_checkpoint(path: str | Path, rules: Rules | str | None = None) -> dict[str, Any]:
    """Load a checkpoint or a policy file (:func:`agents.policy_files.export_policy`) with ``weights_only=True``
    (tensors and plain data only, never code) and check it: a missing file, a corrupt or foreign
    file, or (when ``rules`` is given) a network trained for another preset is refused with a
    clear error; other rule options of the same preset are played with a warning naming them.

    ``policy_only`` in the result says which it was: a policy file's ``model`` holds the actor's
    weights only, cast back to float32 (its network is rebuilt without a critic). A search
    distillation's ``latest.pt`` (:data:`DISTILL_FORMAT`, a policy network and its optimiser) is
    read as a policy too, so a run's last stage plays and exports before the run ends."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint {path} does not exist")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many types for a damaged file (pickle, zip, EOF, runtime)
        raise CheckpointError(f"{path} is not a readable checkpoint (corrupt, truncated, unsafe or not a torch "
                              f"file): {torch_load_failure(e)}") from None
    found = data.get("format") if isinstance(data, dict) else type(data).__name__
    if found not in (CHECKPOINT_FORMAT, POLICY_FORMAT, DISTILL_FORMAT):
        raise CheckpointError(f"{path} is not a five-hundred training checkpoint or policy file (format {found!r}, "
                              f"expected {CHECKPOINT_FORMAT!r}, {POLICY_FORMAT!r} or {DISTILL_FORMAT!r})")
    check_tensors_digest(data, path)
    policy_only = found in (POLICY_FORMAT, DISTILL_FORMAT)
    for key in ("rules", "model", "model_spec", *(("provenance",) if found == POLICY_FORMAT else ())):
        if key not in data:
            raise CheckpointError(f"{path} is missing {key!r}: not a complete five-hundred "
                                  f"{'policy file' if found == POLICY_FORMAT else 'checkpoint'}")
    try:
        trained = Rules.from_dict(data["rules"])
    except (ValueError, TypeError) as e:
        raise CheckpointError(f"{path} holds unusable rules: {e}") from None
    check_model_spec(data["model_spec"], path)
    pool = data.get("pool", [])
    if not isinstance(pool, list):
        raise CheckpointError(f"{path}: pool must be a list of state dicts, got {type(pool).__name__}")
    for name, state in [("model", data["model"]), *((f"pool[{i}]", state) for i, state in enumerate(pool))]:
        check_weights(state, f"{path}: {name}")
    if policy_only:
        data["model"] = {name: t.float() if t.is_floating_point() else t for name, t in data["model"].items()}
    data["policy_only"] = policy_only
    if rules is not None:
        check_rules(path, trained, make_rules(rules) if isinstance(rules, str) else rules)
    return data


def _whole(value: Any, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def check_model_spec(spec: Any, path: str | Path = "<checkpoint>") -> None:
    """Refuse (:class:`CheckpointError`, one line) a network spec that :class:`ActorCritic`
    cannot build: not its keys, a value of the wrong type, or more than :data:`MAX_PARAMETERS`
    parameters. Nothing is allocated: this runs before the network is built."""
    if not isinstance(spec, dict) or not _SPEC_KEYS <= set(spec) <= {*_SPEC_KEYS, *_SPEC_OPTIONAL}:
        keys = sorted(spec) if isinstance(spec, dict) else type(spec).__name__
        raise CheckpointError(f"{path}: model_spec must have the keys {sorted(_SPEC_KEYS)} (and maybe "
                              f"{sorted(_SPEC_OPTIONAL)}), got {keys}")
    problems = [f"{key} must be a whole number >= {least}" for key, least in _SPEC_MINIMA.items()
                if not _whole(spec[key], least)]
    sizes, weight = spec["hidden_sizes"], spec["advice_weight"]
    if not isinstance(sizes, list) or not sizes or not all(_whole(h, 1) for h in sizes):
        problems.append("hidden_sizes must be a non-empty list of positive whole numbers")
    if spec["activation"] not in ACTIVATIONS:
        problems.append(f"activation must be one of {ACTIVATIONS}")
    if spec["advice"] not in ADVICE_KINDS:
        problems.append(f"advice must be one of {ADVICE_KINDS}")
    if isinstance(weight, bool) or not isinstance(weight, int | float) or not math.isfinite(weight):
        problems.append("advice_weight must be a finite number")
    at = spec["scores_at"]
    if at is not None and not (_whole(at, 0) and _whole(spec["obs_size"], 1) and _whole(spec["num_sides"], 1)
                               and at + spec["num_sides"] <= spec["obs_size"]):
        problems.append("scores_at must be none or the offset of the scores inside the observation")
    phases = spec.get("phase_slice")
    if phases is not None and not (isinstance(phases, list) and len(phases) == 2 and _whole(phases[0], 0)
                                   and _whole(phases[1], phases[0] + 1) and _whole(spec["obs_size"], 1)
                                   and phases[1] <= spec["obs_size"]):
        problems.append("phase_slice must be none or [start, stop] of the phases inside the observation")
    card_rules = spec.get("card_features")
    if card_rules is not None and not (spec["advice"] == "none" and reads_observation_of(card_rules, spec["obs_size"])):
        problems.append("card_features must be none or the rules (Rules.to_dict) whose observation the network "
                        "reads, without advice")
    if problems:
        raise CheckpointError(f"{path}: model_spec is malformed: {'; '.join(problems)}")
    count = parameter_count(spec)
    if count > MAX_PARAMETERS:
        raise CheckpointError(f"{path}: model_spec asks for a network of {count:,} parameters, more than the "
                              f"{MAX_PARAMETERS:,} allowed (hidden_sizes {sizes})")


_SPEC_MINIMA = {"obs_size": 1, "num_actions": 1, "critic_extra": 0, "num_sides": 1}
_SPEC_KEYS = {*_SPEC_MINIMA, "hidden_sizes", "activation", "advice", "advice_weight", "scores_at"}
_SPEC_OPTIONAL = {"phase_slice", "card_features"}


def parameter_count(spec: dict[str, Any]) -> int:
    """The number of parameters of the :class:`ActorCritic` that ``spec`` describes (computed,
    not built)."""
    in_size = spec["obs_size"] + (spec["num_actions"] if spec["advice"] != "none" else 0)
    if spec.get("card_features") is not None:
        in_size += card_feature_count(spec["card_features"])

    def mlp(sizes: list[int], out: int) -> int:
        return sum(a * b + b for a, b in itertools.pairwise([*sizes, out]))

    actor = mlp([in_size, *spec["hidden_sizes"]], spec["num_actions"])
    critic = mlp([in_size + spec["critic_extra"], *spec["hidden_sizes"]], 1)
    phases = spec.get("phase_slice")
    return actor + critic + (spec["advice"] != "none") * (1 if phases is None else phases[1] - phases[0])


def model_from_checkpoint(data: dict[str, Any], path: str | Path = "<checkpoint>") -> ActorCritic:
    """Rebuild the network of a checkpoint read by :func:`read_checkpoint` (its spec checked
    first, so a crafted one never allocates); a policy file's without its critic."""
    check_model_spec(data["model_spec"], path)
    try:
        model = ActorCritic(**data["model_spec"], policy_only=bool(data.get("policy_only")))
        model.load_state_dict(data["model"])
    except (TypeError, RuntimeError, KeyError) as e:
        raise CheckpointError(f"{path}: the network in the checkpoint does not load: {e}") from None
    return model


def load_training_weights(model: ActorCritic, data: dict[str, Any], path: str | Path) -> None:
    """Load a checkpoint read by :func:`read_checkpoint` into a network to train on: actor and
    critic. A policy file is refused (:class:`PolicyOnlyError`): it has no critic to train."""
    if data.get("format") == DISTILL_FORMAT:
        raise PolicyOnlyError(f"{path} is a search distillation's checkpoint (a policy network, no critic): "
                              "training needs the critic too; a distillation run trains on from it with network.init")
    if data.get("policy_only"):
        raise PolicyOnlyError(f"{path} is a policy file (the actor only, for playing): training needs the critic "
                              "too; start from the training checkpoint it was exported from (its provenance names it)")
    model.load_state_dict(data["model"])


def load_agent(path: str | Path, rules: Rules | str | None = None, seed: int | None = None, greedy: bool = True) -> NeuralAgent:
    """A :class:`NeuralAgent` from a training checkpoint (any of ``latest.pt``, ``final.pt`` or a
    periodic one) or a policy file exported from one. ``rules`` defaults to the rules it was
    trained with; a network for another preset is refused."""
    data = read_checkpoint(path, rules)
    model = model_from_checkpoint(data, path)
    if rules is None:
        rules = Rules.from_dict(data["rules"])
    return NeuralAgent(rules, seed, model=model, greedy=greedy)
