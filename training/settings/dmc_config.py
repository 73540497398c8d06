"""The settings of a Deep Monte-Carlo run (``train.algorithm: dmc``, ``training.algorithms.dmc``):
its environment, training, curriculum, network and evaluation sections; ``rules``, ``logging``
and ``checkpoint`` are the PPO runs' (``training.settings.config``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from five_hundred_env.rules import Rules
from training.settings.config import CheckpointConfig, LoggingConfig, RulesConfig, Section
from training.settings.config_base import MAX_DEALS, MAX_SEED, MAX_STEPS, TorchThreads


def linear_fade(step: int, steps: int) -> float:
    """``max(0, 1 − step / steps)``: a share that falls from 1 to 0 over ``steps`` learner steps (0 when ``steps`` is 0)."""
    return max(0.0, 1.0 - step / steps) if steps else 0.0


class DmcEnvConfig(Section):
    """What a decision's return counts (``BatchEngine``'s ``episode``, ``reward``, ``reward_scale``, ``win_shaping``)."""

    episode: Literal["deal", "game"] = "deal"
    reward: Literal["zero_sum", "score", "win"] = "zero_sum"
    reward_scale: float = Field(100.0, gt=0, le=1e6)
    win_shaping: float = Field(0.0, ge=0, le=100, description="reward: win only: each deal also gives this × its zero-sum reward")
    starting_scores: Literal["zero", "uniform"] = Field(
        "zero", description="with episode: deal, the scores each deal starts from: 'zero', or 'uniform' over the "
                            "game's range (as PPO's env.starting_scores), so that the network sees every score it may "
                            "meet in a game; the reward stays the deal's result")

    @model_validator(mode="after")
    def _win_needs_games(self) -> DmcEnvConfig:
        if self.reward == "win" and self.episode != "game":
            raise ValueError("reward: win needs episode: game (a deal has no winner)")
        if self.win_shaping and self.reward != "win":
            raise ValueError("win_shaping shapes reward: win; it must be 0 with other rewards")
        if self.starting_scores == "uniform" and self.episode != "deal":
            raise ValueError("starting_scores: uniform draws each deal's scores; a game keeps its own (episode: deal only)")
        return self


class DmcTrainConfig(Section):
    """DMC's hyper-parameters. Learner steps count the decisions trained on."""

    algorithm: Literal["dmc"] = "dmc"
    total_steps: int = Field(1_000_000, ge=0, le=MAX_STEPS, description="learner steps (decisions trained on)")
    num_envs: int = Field(64, gt=0, le=4096, description="games of the batched engine stepped together")
    batch_size: int = Field(4096, gt=0, le=2**22, description="finished decisions per update")
    minibatch_size: int = Field(512, gt=0, le=2**20)
    learning_rate: float = Field(1e-3, gt=0, le=1)
    adam_eps: float = Field(1e-5, gt=0, le=1)
    max_grad_norm: float = Field(40.0, gt=0)
    epsilon_start: float = Field(0.2, ge=0, le=1, description="exploration rate at the start")
    epsilon_end: float = Field(0.01, ge=0, le=1, description="exploration rate after epsilon_decay_steps")
    epsilon_decay_steps: int = Field(500_000, ge=1, le=MAX_STEPS)


class DmcCurriculumConfig(Section):
    """Training-only changes for the first learner steps (the evaluations always play the real rules)."""

    last_bidder_bids_steps: int = Field(0, ge=0, le=MAX_STEPS, description=(
        "the last seat that may bid when everyone else passed before any bid may not pass (no deal is thrown "
        "in, so every deal is played out and its card play learned): in every deal at first, in a share of "
        "the deals falling linearly to none over this many learner steps"))
    trick_reward: float = Field(0.0, ge=0, le=10, description=(
        "each trick won also rewards the card plays of the winner's side by this (reward units) and costs the "
        "others' as much in all (in a misère, with the signs swapped), falling linearly to 0 over trick_reward_steps"))
    trick_reward_steps: int = Field(0, ge=0, le=MAX_STEPS)

    def last_bidder_bids(self, step: int) -> float:
        """The share of deals dealt at ``step`` in which the last bidder must bid."""
        return linear_fade(step, self.last_bidder_bids_steps)

    def trick_reward_at(self, step: int) -> float:
        """The reward of a trick at ``step``."""
        return self.trick_reward * linear_fade(step, self.trick_reward_steps)


class DmcNetworkConfig(Section):
    """The Q-network (:class:`agents.dmc.QNetwork`): an MLP over the observation and the action's one-hot."""

    hidden_sizes: list[int] = Field(default_factory=lambda: [256, 256], min_length=1, max_length=8)
    activation: Literal["relu", "tanh"] = "relu"
    actions: Literal["input", "output"] = Field(
        "input", description="the action as an input beside the observation (DouZero's network: a pass per legal "
                             "action) or one output per action id (DQN's: one pass per decision)")
    baseline: Literal["none", "central"] = Field(
        "none", description="central: a value network over the global state (every hand: training only) fitted to "
                            "the returns, whose value of each decision's state is taken from its return before the "
                            "Q-network is fitted to it (less noise, the same best action)")
    oracle_steps: int = Field(0, ge=0, le=MAX_STEPS, description=(
        "oracle guiding (Suphx): the Q-network's first layer also reads the hidden cards (every hand, the kitty), "
        "each entry kept with a probability falling linearly from 1 to 0 over this many learner steps, in play and "
        "in the fit; training only: the network plays from its observation alone (0: off)"))
    init: str | None = Field(None, description=(
        "a DMC policy file or checkpoint to start from instead of a fresh network (the shipped scratch network "
        "trained on): its Q-network must have these rules, sizes, activation and action shape; a checkpoint's "
        "baseline network is taken too where network.baseline is central"))

    @model_validator(mode="after")
    def _sizes(self) -> DmcNetworkConfig:
        if not all(0 < s <= 4096 for s in self.hidden_sizes):
            raise ValueError(f"every hidden size must be in 1..4096, got {self.hidden_sizes}")
        return self


class DmcEvaluationConfig(Section):
    """Duplicate evaluation of the greedy network (``training.evaluation.evaluate.duplicate_match``)."""

    interval: int = Field(250_000, ge=0, le=MAX_STEPS, description="learner steps between evaluations; 0 = final only")
    deals: int = Field(200, ge=0, le=MAX_DEALS, description="duplicate deals per periodic evaluation")
    final_deals: int = Field(1000, ge=0, le=MAX_DEALS, description="duplicate deals of the final evaluation; 0 = none")
    seed: int = Field(12345, ge=0, le=MAX_SEED)
    opponents: list[Literal["random", "heuristic", "start"]] = Field(
        default_factory=lambda: ["random", "heuristic"],
        description="agent specs, or start: the run's own network as it began (start.pt), whose final match "
                    "gives the run's last line, what it learned")


class DmcConfig(Section):
    """A whole DMC run (``train.algorithm: dmc``); ``logging`` and ``checkpoint`` are the PPO runs'."""

    seed: int = Field(1, ge=0, le=MAX_SEED)
    deterministic: bool = True
    torch_threads: TorchThreads = 1
    rules: RulesConfig = Field(default_factory=RulesConfig)
    env: DmcEnvConfig = Field(default_factory=DmcEnvConfig)
    train: DmcTrainConfig = Field(default_factory=DmcTrainConfig)
    curriculum: DmcCurriculumConfig = Field(default_factory=DmcCurriculumConfig)
    network: DmcNetworkConfig = Field(default_factory=DmcNetworkConfig)
    evaluation: DmcEvaluationConfig = Field(default_factory=DmcEvaluationConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)
    checkpoint: CheckpointConfig = Field(default_factory=CheckpointConfig)

    @model_validator(mode="after")
    def _games_end(self) -> DmcConfig:
        # The batched engine does not truncate games: greedy play that never bids would never end one.
        if self.env.episode == "game" and min(self.train.epsilon_start, self.train.epsilon_end) <= 0:
            raise ValueError("env.episode: game needs train.epsilon_start and epsilon_end above 0 (a game only ends "
                             "once contracts are played, and greedy self-play may never bid)")
        return self

    def to_rules(self) -> Rules:
        """The rules of the run (the ``rules`` section as a rules object)."""
        return self.rules.to_rules()

    def to_dict(self) -> dict[str, Any]:
        """Plain data (YAML/JSON-able), as the run folder's config.yaml holds it."""
        return self.model_dump(mode="json")
