"""Improved targets and their fit: the settings shared by expert iteration (``training.algorithms.expert_iteration``)
and the rollout warm start of PPO runs (``pretrain.rollouts``, ``training.algorithms.warmstart``).

Both measure, at sampled decisions, the advantage of every candidate action by playouts
(``training.rollouts.exit_data``) and fit the network to them (``training.algorithms.exit_fit.fit``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from training.settings.config_base import MAX_DEALS, Section


class SampleConfig(Section):
    """The probability that a decision of each kind (with a choice) gets improved targets."""

    bid: float = Field(1.0, ge=0, le=1)
    discard: float = Field(1.0, ge=0, le=1)
    nominate: float = Field(1.0, ge=0, le=1)
    play: float = Field(0.1, ge=0, le=1)

    def rates(self) -> tuple[float, float, float, float]:
        return self.bid, self.discard, self.nominate, self.play


Threshold = Annotated[float, Field(ge=0, le=100)]
"""A regression fit's threshold (×100 points): 0 up to 100, ``agents.neural.NEVER`` (the advice always)."""


class FitConfig(Section):
    """The fit of the actor to improved targets and the critic to results (``training.algorithms.exit_fit.fit``)."""

    objective: Literal["all_action", "cross_entropy", "regression"] = Field(
        "all_action", description="all_action: the all-action policy gradient; cross_entropy: imitate the best "
                                  "candidate; regression: least-squares advantages, followed above a threshold")
    thresholds: list[Threshold] = Field(
        default_factory=lambda: [0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0], min_length=1,
        description="regression: the advice weights (×100 points) the held-out decisions choose among: how much "
                    "an estimated advantage must beat the advised action's to leave it")
    epochs: int = Field(8, gt=0, le=10_000)
    batch_size: int = Field(256, gt=0, le=2**20)
    learning_rate: float = Field(3e-4, gt=0, le=1)
    max_grad_norm: float = Field(0.5, gt=0)
    value_coef: float = Field(0.5, ge=0)
    held_out: float = Field(0.2, gt=0, lt=0.5, description="share of the chunks held out to choose the epoch")
    non_candidate_penalty: float = Field(1.0, ge=0, le=100, description="advantage of bids not rolled out (×100 points)")
    selection_z: float = Field(2.0, ge=0, le=10, description="an epoch is kept by its held-out gain minus this many "
                                                             "standard errors (0: by the gain itself)")
    kinds: list[Literal["bid", "discard", "nominate", "play"]] = Field(
        default_factory=lambda: ["bid", "discard", "nominate", "play"], min_length=1,
        description="the decision kinds whose targets the actor is fitted to (the others are left out; the "
                    "data, and a cache of them, stay the same)")
    anchor_coef: float = Field(1.0, ge=0, le=100, description="weight of the cross-entropy that keeps the decisions of "
                                                              "the kinds not fitted on the starting network's choice")
    base_bonus: dict[Literal["bid", "discard", "nominate", "play"], float] = Field(
        default_factory=dict, description="regression without advice: added (×100 points) to the target of the data's "
                                          "own action at that kind's decisions, so that the network learns the base "
                                          "policy's choice and leaves it only where an estimate beats it by more")

    @model_validator(mode="after")
    def _bonus_values(self) -> FitConfig:
        if any(not 0 <= v <= 100 for v in self.base_bonus.values()):
            raise ValueError(f"base_bonus: every value must be in 0..100 (hundreds of points), got {self.base_bonus}")
        return self


class GameScoresConfig(Section):
    """The game scores the data's deals start from, and what winning the game is worth in their targets."""

    starting_scores: Literal["zero", "uniform"] = Field(
        "zero", description="the side scores each deal starts from: 'zero', or 'uniform': drawn on a grid of 10 "
                            "strictly between the losing score and the target (as PPO's env.starting_scores), shown "
                            "in every observation of the deal and of its playouts")
    win_bonus: float = Field(0.0, ge=0, le=10_000, description="points a result gains when its deal wins the game "
                                                               "for the side (the other sides share the loss, zero-sum); "
                                                               "0: the deal's points only")


class RolloutsConfig(GameScoresConfig):
    """One-step rollout improvement over the heuristic of every sampled decision (``training.rollouts.exit_data``
    with ``base="heuristic"``, ``play_targets="rollout"``), fitted by ``fit`` (0 deals: none)."""

    deals: int = Field(0, ge=0, le=MAX_DEALS)
    workers: int = Field(1, gt=0, le=256, description="processes playing the rollouts (the data do not depend on it)")
    chunk_deals: int = Field(25, gt=0, le=10_000, description="deals per unit of work (one seed each)")
    chunk_timeout: float = Field(600.0, gt=0, le=86_400, description="seconds a chunk may take before the run stops")
    sample: SampleConfig = Field(default_factory=lambda: SampleConfig(play=0.5))
    value_rate: float = Field(0.25, gt=0, le=1, description="share of all decisions kept for the critic")
    fit: FitConfig = Field(default_factory=FitConfig)
