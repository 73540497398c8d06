"""Training configs: one YAML file describes a whole run, loaded into a typed, validated model.

A config has these sections (every key has a default, so a file only names what it changes)::

    seed: 1                 # seeds the trainer's generators (python, numpy, torch) and the deals
    device: cpu             # cpu, cuda or cuda:N
    deterministic: true     # deterministic torch kernels: a resumed run equals an uninterrupted one
    torch_threads: 1        # intra-op threads for torch (0: torch's default)
    rules:    {preset: australian, options: {slam_bonus: false}}
    env:      {reward: zero_sum, reward_scale: 100}
    train:    {algorithm: ppo, total_steps: 2e6, num_envs: 32, num_steps: 128, learning_rate: 3e-4, ...}
    network:  {hidden_sizes: [256, 256], activation: relu, critic: central, advice: none}
    opponents: {self_play: 0.5, snapshot: 0.2, heuristic: 0.15, random: 0.15, snapshot_interval: 1e5, pool_size: 8}
    pretrain: {teacher: heuristic, deals: 0, epochs: 4, bid_rollouts: {deals: 0}}   # optional warm starts
    evaluation: {interval: 2.5e5, deals: 200, final_deals: 1000, seed: 12345, opponents: [random, heuristic]}
    logging:  {dir: runs, run_name: null, csv: true, tensorboard: true, progress: true}
    checkpoint: {interval: 2.5e5, keep: 3}

:func:`load_config` reads a file with ``yaml.safe_load`` semantics (plus ``1e6``-style numbers,
which plain YAML 1.1 reads as strings), applies command-line overrides ``key.sub=value`` (the
value parsed as YAML: ``train.total_steps=2e6``, ``network.hidden_sizes=[64,64]``) and validates
everything. Unknown keys, wrong types and impossible values raise :class:`ConfigError` (a
``ValueError``) whose message names the file, the key and, for an override, the override.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from five_hundred_env.rules import Rules, make_rules


class ConfigError(ValueError):
    """A config that cannot be used; the message names the file and the key."""


class _Section(BaseModel):
    # extra="forbid": a misspelt key is an error, never silently ignored.
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class RulesConfig(_Section):
    """The rules preset and any rule options overridden on it (RULES.md §2)."""

    preset: Literal["australian", "italian_3p", "french_46"] = "australian"
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _valid_rules(self) -> RulesConfig:
        self.to_rules()  # make_rules raises a ValueError naming the bad option
        return self

    def to_rules(self) -> Rules:
        return make_rules(self.preset, **self.options)


class EnvConfig(_Section):
    """How the environment rewards a deal (see the module docstring of ``five_hundred_env.env``)."""

    reward: Literal["zero_sum", "score"] = "zero_sum"
    reward_scale: float = Field(100.0, gt=0)


class TrainConfig(_Section):
    """PPO hyper-parameters. Steps count the learner's own decisions (the samples it trains on)."""

    algorithm: Literal["ppo"] = "ppo"
    total_steps: int = Field(1_000_000, ge=0, description="PPO learner steps (0: the warm starts alone)")
    num_envs: int = Field(32, gt=0, description="environments stepped together")
    num_steps: int = Field(128, gt=0, description="learner decisions per environment per rollout (whole deals)")
    learning_rate: float = Field(3e-4, gt=0)
    anneal_lr: bool = True
    gamma: float = Field(1.0, gt=0, le=1)
    gae_lambda: float = Field(0.95, ge=0, le=1)
    clip_coef: float = Field(0.2, gt=0)
    clip_vloss: bool = True
    update_epochs: int = Field(4, gt=0)
    num_minibatches: int = Field(4, gt=0)
    norm_adv: bool = True
    ent_coef: float = Field(0.01, ge=0)
    vf_coef: float = Field(0.5, ge=0)
    max_grad_norm: float = Field(0.5, gt=0)
    target_kl: float | None = Field(None, gt=0)
    adam_eps: float = Field(1e-5, gt=0)

    @model_validator(mode="after")
    def _batch_fits(self) -> TrainConfig:
        if self.num_minibatches > self.num_envs * self.num_steps:
            raise ValueError(f"num_minibatches ({self.num_minibatches}) is larger than a rollout "
                             f"(num_envs × num_steps = {self.num_envs * self.num_steps})")
        return self


class NetworkConfig(_Section):
    """The actor-critic network (see :class:`agents.neural.ActorCritic`)."""

    hidden_sizes: list[int] = Field(default_factory=lambda: [256, 256], min_length=1)
    activation: Literal["relu", "tanh"] = "relu"
    critic: Literal["local", "central"] = "central"
    advice: Literal["none", "heuristic"] = Field(
        "none", description="'heuristic': the actor also reads the heuristic agent's choice and starts by "
                            "playing it (residual policy learning; see agents.neural)")
    advice_weight: float = Field(4.0, gt=0, description="the advised action's starting logit bonus (learnable)")

    @field_validator("hidden_sizes")
    @classmethod
    def _positive(cls, sizes: list[int]) -> list[int]:
        if any(s <= 0 for s in sizes):
            raise ValueError(f"every hidden size must be positive, got {sizes}")
        return sizes


class OpponentsConfig(_Section):
    """Who the learner plays against: each new deal in each environment draws one of the kinds
    at these rates (they are normalised). ``self_play``: every seat is the current policy (all
    seats learn); ``snapshot``: the other side is a past copy of the policy from the pool;
    ``heuristic``/``random``: the other side is that baseline agent."""

    self_play: float = Field(0.5, ge=0)
    snapshot: float = Field(0.2, ge=0)
    heuristic: float = Field(0.15, ge=0)
    random: float = Field(0.15, ge=0)
    snapshot_interval: int = Field(100_000, gt=0, description="learner steps between snapshots into the pool")
    pool_size: int = Field(8, gt=0)

    @model_validator(mode="after")
    def _some_rate(self) -> OpponentsConfig:
        if self.self_play + self.snapshot + self.heuristic + self.random <= 0:
            raise ValueError("at least one of self_play, snapshot, heuristic, random must be positive")
        return self

    def rates(self) -> dict[str, float]:
        total = self.self_play + self.snapshot + self.heuristic + self.random
        return {k: getattr(self, k) / total for k in ("self_play", "snapshot", "heuristic", "random")}


class EvaluationConfig(_Section):
    """Duplicate evaluation of the greedy policy (``training.evaluate.duplicate_match``)."""

    interval: int = Field(250_000, ge=0, description="learner steps between evaluations; 0 = final only")
    deals: int = Field(200, ge=0, description="duplicate deals per periodic evaluation")
    final_deals: int = Field(1000, ge=0, description="duplicate deals of the final evaluation; 0 = none")
    seed: int = 12345
    opponents: list[Literal["random", "heuristic"]] = Field(default_factory=lambda: ["random", "heuristic"])


class BidRolloutConfig(_Section):
    """Rollout policy improvement of the auction (``training.bid_rollouts``): on ``deals`` deals
    played by the heuristic, every candidate bid of every bidding decision is played out by the
    heuristic, and the network learns the bids that beat the heuristic's (0 deals: none)."""

    deals: int = Field(0, ge=0)
    workers: int = Field(1, gt=0, description="processes playing the rollouts (the data do not depend on it)")
    epochs: int = Field(10, gt=0)
    batch_size: int = Field(512, gt=0)
    learning_rate: float = Field(3e-4, gt=0)
    max_grad_norm: float = Field(0.5, gt=0)
    held_out: float = Field(0.1, gt=0, lt=0.5, description="share of the deals held out to pick the best epoch")
    non_candidate_penalty: float = Field(1.0, ge=0, description="advantage given to bids not rolled out (×100 points)")
    play_sample_rate: float = Field(0.15, gt=0, le=1, description="share of the other decisions kept on the heuristic's move")
    margin: float | None = Field(None, gt=0, description="after the fit, the advised action's logit bonus is at least this")


class PretrainConfig(_Section):
    """Optional warm starts, applied once at the start of a fresh run: the network's weights from
    an earlier checkpoint (``init_from``: same preset and network), then imitation of a teacher
    (``training.imitation``) over ``deals`` deals of its play (0: none), then rollout improvement
    of the bidding (``bid_rollouts``)."""

    init_from: str | None = Field(None, description="a checkpoint whose network weights start this run")
    teacher: Literal["heuristic", "random"] = "heuristic"
    deals: int = Field(0, ge=0)
    epochs: int = Field(4, gt=0)
    batch_size: int = Field(512, gt=0)
    learning_rate: float = Field(1e-3, gt=0)
    value_coef: float = Field(0.5, ge=0)
    max_grad_norm: float = Field(1.0, gt=0)
    bid_rollouts: BidRolloutConfig = Field(default_factory=BidRolloutConfig)


class LoggingConfig(_Section):
    """Where a run writes: ``<dir>/<run_name>/`` (run_name defaults to the config file's stem)."""

    dir: str = "runs"
    run_name: str | None = None
    csv: bool = True
    tensorboard: bool = True
    progress: bool = True

    @field_validator("run_name")
    @classmethod
    def _plain_name(cls, name: str | None) -> str | None:
        if name is not None and not re.fullmatch(r"[A-Za-z0-9_.\-]+", name):
            raise ValueError(f"run_name must be a plain file name (letters, digits, _ . -), got {name!r}")
        return name


class CheckpointConfig(_Section):
    """Checkpoints of the whole training state, written atomically."""

    interval: int = Field(250_000, gt=0, description="learner steps between checkpoints")
    dir: str | None = Field(None, description="default: <run dir>/checkpoints")
    keep: int = Field(3, gt=0, description="periodic checkpoints kept (latest.pt always)")


class Config(_Section):
    """A whole training run."""

    seed: int = 1
    device: str = "cpu"
    deterministic: bool = True
    torch_threads: int = Field(1, ge=0)
    rules: RulesConfig = Field(default_factory=RulesConfig)
    env: EnvConfig = Field(default_factory=EnvConfig)
    train: TrainConfig = Field(default_factory=TrainConfig)
    network: NetworkConfig = Field(default_factory=NetworkConfig)
    opponents: OpponentsConfig = Field(default_factory=OpponentsConfig)
    pretrain: PretrainConfig = Field(default_factory=PretrainConfig)
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)
    checkpoint: CheckpointConfig = Field(default_factory=CheckpointConfig)

    @field_validator("device")
    @classmethod
    def _known_device(cls, device: str) -> str:
        if not re.fullmatch(r"cpu|cuda(:\d+)?", device):
            raise ValueError(f"device must be cpu, cuda or cuda:N, got {device!r}")
        return device

    @model_validator(mode="after")
    def _rollouts_need_advice(self) -> Config:
        if self.pretrain.bid_rollouts.deals and self.network.advice != "heuristic":
            raise ValueError("pretrain.bid_rollouts improves on the heuristic: it needs network.advice: heuristic")
        return self

    def to_rules(self) -> Rules:
        return self.rules.to_rules()

    def to_dict(self) -> dict[str, Any]:
        """Plain data (YAML/JSON-able) that :func:`config_from_dict` turns back into this config."""
        return self.model_dump(mode="json")


# -- YAML ----------------------------------------------------------------------------------------

class _Loader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that also reads ``1e6`` / ``3e-4`` as floats (YAML 1.1 wants ``1.0e6``)."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
                    |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
                    |\.[0-9_]+(?:[eE][-+][0-9]+)?
                    |[-+]?\.(?:inf|Inf|INF)
                    |\.(?:nan|NaN|NAN))$""", re.X),
    list("-+0123456789."),
)


def parse_yaml(text: str) -> Any:
    """Parse YAML safely (no arbitrary objects), reading ``1e6`` as a number."""
    return yaml.load(text, Loader=_Loader)  # _Loader is a SafeLoader subclass: still safe


def load_config(path: str | Path, overrides: Iterable[str] = ()) -> Config:
    """Load and validate a YAML config file, then apply ``key.sub=value`` overrides."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise FileNotFoundError(f"config file {path} does not exist") from None
    try:
        data = parse_yaml(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML: {e}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of sections, got {type(data).__name__}")
    data.setdefault("logging", {})
    if isinstance(data["logging"], dict) and data["logging"].get("run_name") is None:
        # The run is named after its config file unless the file (or an override) names it.
        data["logging"]["run_name"] = path.stem
    return config_from_dict(data, source=str(path), overrides=overrides)


def config_from_dict(data: dict[str, Any], source: str = "<config>", overrides: Iterable[str] = ()) -> Config:
    """Validate plain data as a config; errors name ``source`` and the key."""
    data = _deep_copy(data)
    applied: dict[str, str] = {}
    for text in overrides:
        key, value = parse_override(text)
        _set_dotted(data, key, value, source, text)
        applied[key] = text
    try:
        return Config.model_validate(data)
    except ValidationError as e:
        raise ConfigError(_format_errors(e, source, applied)) from None


def parse_override(text: str) -> tuple[str, Any]:
    """``"train.total_steps=2e6"`` → ``("train.total_steps", 2000000.0)``; the value is YAML."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", key):
        raise ConfigError(f"override {text!r}: expected key.sub=value (for example train.total_steps=2e6)")
    try:
        return key, parse_yaml(value) if value.strip() else None
    except yaml.YAMLError as e:
        raise ConfigError(f"override {text!r}: the value is not valid YAML: {e}") from None


def save_config(config: Config, path: str | Path) -> None:
    """Write the resolved config (every key, defaults included) as YAML."""
    Path(path).write_text(yaml.safe_dump(config.to_dict(), sort_keys=False))


def _deep_copy(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _deep_copy(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_deep_copy(v) for v in data]
    return data


def _set_dotted(data: dict[str, Any], key: str, value: Any, source: str, text: str) -> None:
    node = data
    parts = key.split(".")
    for i, part in enumerate(parts[:-1]):
        child = node.setdefault(part, {})
        if child is None:
            child = node[part] = {}
        if not isinstance(child, dict):
            where = ".".join(parts[: i + 1])
            raise ConfigError(f"{source}: override {text!r}: {where} is a value, not a section")
        node = child
    node[parts[-1]] = value


def _format_errors(error: ValidationError, source: str, applied: dict[str, str]) -> str:
    lines = []
    for err in error.errors():
        key = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
            parent = ".".join(str(p) for p in err["loc"][:-1])
            known = _known_keys(parent)
            if known:
                msg += f" (known keys{' of ' + parent if parent else ''}: {', '.join(known)})"
        elif "input" in err and err["type"] not in ("missing",) and not isinstance(err["input"], dict):
            msg += f" (got {err['input']!r})"
        via = next((t for k, t in applied.items() if key == k or key.startswith(k + ".") or k.startswith(key + ".")), None)
        lines.append(f"{source}: {key}: {msg}" + (f" [from the override {via!r}]" if via else ""))
    return "invalid config\n  " + "\n  ".join(lines) if len(lines) > 1 else lines[0]


def _known_keys(dotted: str) -> list[str]:
    model: type[BaseModel] = Config
    for part in dotted.split(".") if dotted else []:
        field = model.model_fields.get(part)
        ann = field.annotation if field else None
        if not (isinstance(ann, type) and issubclass(ann, BaseModel)):
            return []
        model = ann
    return list(model.model_fields)
