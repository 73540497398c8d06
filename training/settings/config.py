"""Training configs: one YAML file describes a whole run, loaded into a typed, validated model.

A config has these sections (every key has a default, so a file only names what it changes)::

    seed: 1                 # seeds the trainer's generators (python, numpy, torch) and the deals
    device: cpu             # cpu, cuda or cuda:N
    deterministic: true     # deterministic torch kernels: a resumed run equals an uninterrupted one
    torch_threads: 1        # intra-op threads for torch (auto: the cores free to it; 0: every core)
    rules:    {preset: australian, options: {slam_bonus: false}}
    env:      {reward: zero_sum, reward_scale: 100, starting_scores: uniform}
    train:    {algorithm: ppo, total_steps: 2e6, num_envs: 32, num_steps: 128, learning_rate: 3e-4, ...}
    network:  {hidden_sizes: [256, 256], activation: relu, critic: central, advice: none}
    opponents: {self_play: 0.5, snapshot: 0.2, heuristic: 0.15, random: 0.15, snapshot_interval: 1e5, pool_size: 8}
    pretrain: {teacher: heuristic, deals: 0, epochs: 4, rollouts: {deals: 0}}   # optional warm starts
    evaluation: {interval: 2.5e5, deals: 200, final_deals: 1000, seed: 12345, opponents: [random, heuristic]}
    logging:  {dir: runs, run_name: null, csv: true, tensorboard: true, progress: true}
    checkpoint: {interval: 2.5e5, keep: 3}
    distributed: {backend: local, address: null, max_retries: 2}   # or backend: ray (rollouts)

:func:`load_config` reads a file with ``yaml.safe_load`` semantics (plus ``1e6``-style numbers,
which plain YAML 1.1 reads as strings), applies command-line overrides ``key.sub=value`` (the
value parsed as YAML: ``train.total_steps=2e6``, ``network.hidden_sizes=[64,64]``) and validates
everything. Unknown keys, wrong types and impossible values (inf and NaN included) raise
:class:`ConfigError` (a ``ValueError``) whose message names the file, the key and, for an
override, the override (:mod:`training.settings.overrides` reads the overrides and words the
errors). ``docs/configs.md`` lists every key with its default and limits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from five_hundred_env.files import write_atomic
from five_hundred_env.rules import Rules, make_rules
from training.settings.config_base import MAX_DEALS, MAX_SEED, MAX_STEPS, ConfigError, Section, TorchThreads
from training.settings.improvement_config import RolloutsConfig
from training.settings.overrides import parse_override, validation_message, with_overrides
from training.settings.yaml_loader import YamlError, parse_yaml

MAX_CONFIG_BYTES = 1_000_000
"""The largest config file read: real ones are a few kilobytes."""

class RulesConfig(Section):
    """The rules preset and any rule options overridden on it (docs/rules.md §2)."""

    preset: Literal["australian", "italian_3p", "french_46", "two_handed", "five_handed", "six_handed"] = "australian"
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _valid_rules(self) -> RulesConfig:
        self.to_rules()  # make_rules raises a ValueError naming the bad option
        return self

    def to_rules(self) -> Rules:
        """The rules object of this preset with these options."""
        return make_rules(self.preset, **self.options)


class EnvConfig(Section):
    """How the environment rewards a deal (see the module docstring of ``five_hundred_env.env``)."""

    reward: Literal["zero_sum", "score"] = "zero_sum"
    reward_scale: float = Field(100.0, gt=0, le=1e6)
    starting_scores: Literal["zero", "uniform"] = Field(
        "zero", description="the scores each training deal starts from: 'zero', or 'uniform': each side's "
                            "score drawn on a grid of 10 strictly between losing_score and target (§9), so "
                            "that the policy sees the whole range of the game; the reward stays the deal's result")


class TrainConfig(Section):
    """PPO hyper-parameters. Steps count the learner's own decisions (the samples it trains on)."""

    algorithm: Literal["ppo"] = "ppo"
    total_steps: int = Field(1_000_000, ge=0, le=MAX_STEPS, description="PPO learner steps (0: the warm starts alone)")
    num_envs: int = Field(32, gt=0, le=1024, description="games of the batched engine stepped together")
    num_steps: int = Field(128, gt=0, le=4096, description="learner decisions per environment per rollout (whole deals)")
    learning_rate: float = Field(3e-4, gt=0, le=1)
    anneal_lr: bool = True
    gamma: float = Field(1.0, gt=0, le=1)
    gae_lambda: float = Field(0.95, ge=0, le=1)
    clip_coef: float = Field(0.2, gt=0)
    clip_vloss: bool = True
    update_epochs: int = Field(4, gt=0, le=1000)
    num_minibatches: int = Field(4, gt=0)
    norm_adv: bool = True
    ent_coef: float = Field(0.01, ge=0)
    vf_coef: float = Field(0.5, ge=0)
    max_grad_norm: float = Field(0.5, gt=0)
    target_kl: float | None = Field(None, gt=0)
    adam_eps: float = Field(1e-5, gt=0, le=1)

    @model_validator(mode="after")
    def _batch_fits(self) -> TrainConfig:
        if self.num_minibatches > self.num_envs * self.num_steps:
            raise ValueError(f"num_minibatches ({self.num_minibatches}) is larger than a rollout "
                             f"(num_envs × num_steps = {self.num_envs * self.num_steps})")
        return self

    @field_validator("algorithm", mode="before")
    @classmethod
    def _known_algorithm(cls, name: Any) -> Any:
        if name != "ppo":  # "dmc" and "distill" are routed to their own configs (config_algorithm) before this model sees it
            raise ValueError(f"algorithm must be 'ppo' (PPO self-play), 'dmc' (Deep Monte-Carlo) or 'distill' (search "
                             f"distillation), got {name!r}")
        return name


class NetworkConfig(Section):
    """The actor-critic network (see :class:`agents.neural.ActorCritic`)."""

    # At most 8 layers of 4096: the largest network then stays under the checkpoint's bound on
    # parameters (agents.neural.MAX_PARAMETERS), so every network a config builds can be loaded.
    hidden_sizes: list[int] = Field(default_factory=lambda: [256, 256], min_length=1, max_length=8)
    activation: Literal["relu", "tanh"] = "relu"
    critic: Literal["local", "central"] = "central"
    advice: Literal["none", "heuristic"] = Field(
        "none", description="'heuristic': the actor also reads the heuristic agent's choice and starts by "
                            "playing it (residual policy learning; see agents.neural)")
    advice_weight: float = Field(4.0, gt=0, le=100, description="the advised action's starting logit bonus (learnable)")
    advice_per_kind: bool = Field(
        False, description="one advice weight per phase of the deal (read from the observation's phase), so each "
                           "decision kind has its own: expert iteration's regression fit chooses one threshold per kind")

    @model_validator(mode="after")
    def _per_kind_needs_advice(self) -> NetworkConfig:
        if self.advice_per_kind and self.advice == "none":
            raise ValueError("advice_per_kind needs advice: heuristic (it splits the advice weight by decision kind)")
        return self

    @field_validator("hidden_sizes")
    @classmethod
    def _positive(cls, sizes: list[int]) -> list[int]:
        if any(s <= 0 for s in sizes):
            raise ValueError(f"every hidden size must be positive, got {sizes}")
        if any(s > 4096 for s in sizes):
            raise ValueError("every hidden size must be at most 4096")
        return sizes


class OpponentsConfig(Section):
    """Who the learner plays against: each new deal in each game draws one of the kinds
    at these rates (they are normalised). ``self_play``: every seat is the current policy (all
    seats learn); ``snapshot``: the other side is a past copy of the policy from the pool;
    ``heuristic``/``random``: the other side is that baseline agent."""

    self_play: float = Field(0.5, ge=0)
    snapshot: float = Field(0.2, ge=0)
    heuristic: float = Field(0.15, ge=0)
    random: float = Field(0.15, ge=0)
    snapshot_interval: int = Field(100_000, gt=0, le=MAX_STEPS, description="learner steps between snapshots into the pool")
    pool_size: int = Field(8, gt=0, le=1000)

    @model_validator(mode="after")
    def _some_rate(self) -> OpponentsConfig:
        if self.self_play + self.snapshot + self.heuristic + self.random <= 0:
            raise ValueError("at least one of self_play, snapshot, heuristic, random must be positive")
        return self

    def rates(self) -> dict[str, float]:
        total = self.self_play + self.snapshot + self.heuristic + self.random
        return {k: getattr(self, k) / total for k in ("self_play", "snapshot", "heuristic", "random")}


class EvaluationConfig(Section):
    """Duplicate evaluation of the greedy policy (``training.evaluation.evaluate.duplicate_match``)."""

    interval: int = Field(250_000, ge=0, le=MAX_STEPS, description="learner steps between evaluations; 0 = final only")
    deals: int = Field(200, ge=0, le=MAX_DEALS, description="duplicate deals per periodic evaluation")
    final_deals: int = Field(1000, ge=0, le=MAX_DEALS, description="duplicate deals of the final evaluation; 0 = none")
    seed: int = Field(12345, ge=0, le=MAX_SEED)
    opponents: list[Literal["random", "heuristic", "start"]] = Field(
        default_factory=lambda: ["random", "heuristic"],
        description="'start': the network as the run began, before any warm start or training (<run>/start.pt)")


RENAMED_BID_ROLLOUTS = (
    "bid_rollouts is now pretrain.rollouts (every decision kind): deals, workers and chunk_timeout keep their names; "
    "epochs, batch_size, learning_rate, max_grad_norm, held_out and non_candidate_penalty go under rollouts.fit; "
    "play_sample_rate and margin are gone (bids alone: rollouts.sample: {bid: 1, discard: 0, nominate: 0, play: 0})")


class PretrainConfig(Section):
    """Optional warm starts, applied once at the start of a fresh run: the network's weights from
    an earlier checkpoint (``init_from``: same preset and network), then imitation of a teacher
    (``training.algorithms.imitation``) over ``deals`` deals of its play (0: none), then rollout improvement
    over the heuristic (``rollouts``)."""

    init_from: str | None = Field(None, description="a checkpoint whose network weights start this run")
    teacher: Literal["heuristic", "random"] = "heuristic"
    deals: int = Field(0, ge=0, le=MAX_DEALS)
    epochs: int = Field(4, gt=0, le=10_000)
    batch_size: int = Field(512, gt=0, le=2**20)
    learning_rate: float = Field(1e-3, gt=0, le=1)
    value_coef: float = Field(0.5, ge=0)
    max_grad_norm: float = Field(1.0, gt=0)
    rollouts: RolloutsConfig = Field(default_factory=RolloutsConfig)

    @model_validator(mode="before")
    @classmethod
    def _renamed_bid_rollouts(cls, data: Any) -> Any:
        if isinstance(data, dict) and "bid_rollouts" in data:
            raise ValueError(RENAMED_BID_ROLLOUTS)
        return data


SYSTEM_FOLDERS = ("/dev", "/proc", "/sys", "/etc", "/boot", "/bin", "/sbin", "/lib", "/lib64", "/usr", "/var/run", "/run")
"""Folders of the operating system: a run never writes into them (nor below them)."""


def outside_system_folders(folder: str) -> str:
    """``folder`` itself, or ``ValueError`` when it is (or lies inside) a folder of the operating system."""
    resolved = Path(folder).resolve()
    for system in SYSTEM_FOLDERS:
        if resolved == Path(system) or Path(system) in resolved.parents:
            raise ValueError(f"dir {folder!r} is inside the system folder {system}: give a folder of your own (e.g. runs)")
    return folder


class LoggingConfig(Section):
    """Where a run writes: ``<dir>/<run_name>/`` (run_name defaults to the config file's stem)."""

    dir: str = "runs"
    run_name: str | None = None
    csv: bool = True
    tensorboard: bool = True
    progress: bool = True

    @field_validator("dir")
    @classmethod
    def _not_a_system_folder(cls, folder: str) -> str:
        return outside_system_folders(folder)

    @field_validator("run_name")
    @classmethod
    def _plain_name(cls, name: str | None) -> str | None:
        if name is not None and not re.fullmatch(r"[A-Za-z0-9_.\-]+", name):
            raise ValueError(f"run_name must be a plain file name (letters, digits, _ . -), got {name!r}")
        if name is not None and set(name) == {"."}:  # "." and ".." name the logging dir or its parent
            raise ValueError("run_name must name a folder of its own, not '.' or '..'")
        return name


class CheckpointConfig(Section):
    """Checkpoints of the whole training state, written atomically."""

    interval: int = Field(250_000, gt=0, le=MAX_STEPS, description="learner steps between checkpoints")
    dir: str | None = Field(None, description="default: <run dir>/checkpoints")
    keep: int = Field(3, gt=0, le=1000, description="periodic checkpoints kept (latest.pt always)")

    @field_validator("dir")
    @classmethod
    def _own_folder(cls, folder: str | None) -> str | None:
        # A fresh run deletes the *.pt files of its checkpoint folder: never those of / or ~.
        if folder is None:
            return None
        if folder.startswith("~"):
            raise ValueError("'~' is not expanded in dir; write the path out")
        resolved, home = Path(folder).resolve(), Path.home().resolve()
        if resolved == resolved.parent or resolved == home or resolved in home.parents:
            raise ValueError("dir must be a folder of its own, not the filesystem root or the home folder (or above it)")
        return outside_system_folders(folder)


class DistributedConfig(Section):
    """Where the warm start's rollouts and the PPO rollouts run (``training.workers.distributed``): this
    machine (``local``: the warm start's rollouts in ``pretrain.rollouts.workers`` processes, the PPO
    collector in the training process), or Ray tasks on a cluster (the PPO rollouts in shards)."""

    backend: Literal["local", "ray"] = "local"
    address: str | None = Field(None, min_length=1, description="ray: the cluster (host:6379, auto or "
                                                              "ray://host:10001); null: Ray on this machine")
    max_retries: int = Field(2, ge=0, le=100, description="ray: times a job whose worker died is run again")

    @model_validator(mode="after")
    def _address_needs_ray(self) -> DistributedConfig:
        if self.address is not None and self.backend != "ray":
            raise ValueError(f"an address ({self.address!r}) needs backend: ray")
        return self


class Config(Section):
    """A whole training run."""

    seed: int = Field(1, ge=0, le=MAX_SEED)
    device: str = "cpu"
    deterministic: bool = True
    torch_threads: TorchThreads = 1
    rules: RulesConfig = Field(default_factory=RulesConfig)
    env: EnvConfig = Field(default_factory=EnvConfig)
    train: TrainConfig = Field(default_factory=TrainConfig)
    network: NetworkConfig = Field(default_factory=NetworkConfig)
    opponents: OpponentsConfig = Field(default_factory=OpponentsConfig)
    pretrain: PretrainConfig = Field(default_factory=PretrainConfig)
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)
    checkpoint: CheckpointConfig = Field(default_factory=CheckpointConfig)
    distributed: DistributedConfig = Field(default_factory=DistributedConfig)

    @field_validator("device")
    @classmethod
    def _known_device(cls, device: str) -> str:
        if not re.fullmatch(r"cpu|cuda(:\d+)?", device):
            raise ValueError(f"device must be cpu, cuda or cuda:N, got {device!r}")
        return device

    @model_validator(mode="after")
    def _rollouts_need_advice(self) -> Config:
        if self.pretrain.rollouts.deals and self.network.advice != "heuristic":
            raise ValueError("pretrain.rollouts improves on the heuristic: it needs network.advice: heuristic")
        return self

    def to_rules(self) -> Rules:
        """The rules of the run (the ``rules`` section as a rules object)."""
        return self.rules.to_rules()

    def to_dict(self) -> dict[str, Any]:
        """Plain data (YAML/JSON-able) that :func:`config_from_dict` turns back into this config."""
        return self.model_dump(mode="json")


ConfigModel = TypeVar("ConfigModel", bound=BaseModel)


def load_config(path: str | Path, overrides: Iterable[str] = (), model: type[ConfigModel] = Config) -> ConfigModel:
    """Load and validate a YAML config file, then apply ``key.sub=value`` overrides. ``model`` is
    the pydantic model of the run (:class:`Config` for PPO; expert iteration has its own)."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"config file {path} is a folder, not a file (give a YAML file, e.g. configs/quickstart.yaml)")
    if not path.is_file():
        raise FileNotFoundError(f"config file {path} does not exist")
    if path.stat().st_size > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: {path.stat().st_size} bytes is too large for a config "
                          f"(at most {MAX_CONFIG_BYTES})")
    try:
        data = parse_yaml(path.read_text())
    except YamlError as e:
        raise ConfigError(f"{path}: {e}") from None
    overrides = list(overrides)
    if data is None and not overrides:  # only blanks and comments, nothing beside: a mistake, not a wish for a full run
        raise ConfigError(f"{path}: the file is empty; write {{}} in it for every default (a full-length run), "
                          f"or start from configs/quickstart.yaml")
    data = {} if data is None else data
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of sections, got {type(data).__name__}")
    data.setdefault("logging", {})
    if isinstance(data["logging"], dict) and data["logging"].get("run_name") is None:
        # The run is named after its config file unless the file (or an override) names it.
        data["logging"]["run_name"] = path.stem
    return config_from_dict(data, source=str(path), overrides=overrides, model=model)


def config_algorithm(path: str | Path, overrides: Iterable[str] = ()) -> str:
    """The ``train.algorithm`` a config file names (an override's first): which trainer and config
    model take it; ``"ppo"`` when it names none or cannot be read (:func:`load_config` then says why)."""
    for text in reversed(list(overrides)):
        key, value = parse_override(text)
        if key == "train.algorithm":
            return str(value)
    path = Path(path)
    try:
        data = parse_yaml(path.read_text()) if path.is_file() and path.stat().st_size <= MAX_CONFIG_BYTES else None
    except (OSError, UnicodeDecodeError, YamlError):
        return "ppo"
    train = data.get("train") if isinstance(data, dict) else None
    return str(train.get("algorithm", "ppo")) if isinstance(train, dict) else "ppo"


def config_from_dict(data: dict[str, Any], source: str = "<config>", overrides: Iterable[str] = (),
                     model: type[ConfigModel] = Config) -> ConfigModel:
    """Validate plain data as a config (of ``model``); errors name ``source``, the key and, where
    an override caused the error, the override."""
    applied = {}  # dotted key -> (override text, value); a later override of a key wins
    for text in overrides:
        key, value = parse_override(text)
        applied[key] = (text, value)
    try:
        return model.model_validate(with_overrides(data, applied, source))
    except ValidationError as e:
        message = validation_message(e, data, applied, source, model)
    raise ConfigError(message)


def save_config(config: Config | Section, path: str | Path) -> None:
    """Write the resolved config (every key, defaults included) as YAML, whole or not at all."""
    text = yaml.safe_dump(config.to_dict(), sort_keys=False)
    write_atomic(path, lambda f: f.write(text.encode()))
