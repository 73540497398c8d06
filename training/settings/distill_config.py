"""The settings of a search distillation run (``train.algorithm: distill``, ``training.algorithms.distill``):
the datasets it plays (or finds), the network, the fit and the evaluation that chooses the network;
``rules``, ``logging`` and ``checkpoint`` are the PPO runs' (``training.settings.config``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from agents.base import DECISION_KINDS
from five_hundred_env.rules import Rules
from training.settings.config import CheckpointConfig, LoggingConfig, RulesConfig, Section, outside_system_folders
from training.settings.config_base import MAX_DEALS, MAX_SEED, MAX_STEPS, TorchThreads


class DistillTrainConfig(Section):
    """Names the trainer (the other settings are the sections below)."""

    algorithm: Literal["distill"] = "distill"


class DatasetSource(Section):
    """Deals one agent plays in every seat, written as dataset folders of ``chunk_deals`` deals each
    (``five-hundred dataset``'s records): chunk ``i`` is dealt from seed ``seed + i``, so a stopped
    run plays only the chunks it lacks, and a larger ``deals`` adds chunks to those it has."""

    agent: str = Field(description="the agent spec in every seat (heuristic, pimc, pimc:worlds=8, a policy file…)")
    deals: int = Field(ge=0, le=MAX_DEALS)
    chunk_deals: int = Field(1000, gt=0, le=MAX_DEALS)
    seed: int = Field(0, ge=0, le=MAX_SEED)

    def chunks(self) -> list[tuple[int, int]]:
        """``(seed, deals)`` of every chunk."""
        full, rest = divmod(self.deals, self.chunk_deals)
        return [(self.seed + i, self.chunk_deals) for i in range(full)] + ([(self.seed + full, rest)] if rest else [])


class DistillDataConfig(Section):
    """Where the datasets live and what plays them."""

    dir: str = Field("data", description="the folder of the dataset chunks (shared by runs: a chunk is played once)")
    imitation: DatasetSource = Field(
        default_factory=lambda: DatasetSource(agent="heuristic", deals=200_000, chunk_deals=200_000, seed=7),
        description="a fast agent's deals: the first fit imitates its choices (deals: 0 skips it)")
    search: DatasetSource = Field(
        default_factory=lambda: DatasetSource(agent="pimc", deals=20_000, chunk_deals=1000, seed=1000),
        description="the search's deals, with every candidate's value: the second fit's targets")
    more_search: list[DatasetSource] = Field(default_factory=list, description=(
        "further search datasets fitted together with data.search: a round of search over a distilled network "
        "(pimc:base=NET) adds its deals to those of the rounds before (DAgger's aggregation)"))
    starting_scores: Literal["zero", "uniform"] = Field(
        "uniform", description="the game scores each deal starts from: uniform over the game's range, so that the "
                               "network learns the decisions of every score it meets in a game")
    workers: int = Field(1, gt=0, le=1024, description="processes playing the chunks")

    @property
    def search_sources(self) -> list[DatasetSource]:
        """The search's sources with deals to fit: ``search``, then ``more_search``."""
        return [source for source in (self.search, *self.more_search) if source.deals]

    @field_validator("dir")
    @classmethod
    def _not_a_system_folder(cls, folder: str) -> str:
        return outside_system_folders(folder)


class DistillNetworkConfig(Section):
    """The policy network (:class:`agents.neural.ActorCritic`, no advice input, no critic): an MLP
    from the observation to one logit per action; or (``form: q``) the DMC network of ``init``."""

    form: Literal["policy", "q"] = Field("policy", description=(
        "policy: a policy network fitted to the targets' distribution; q: the DMC network of network.init (its "
        "sizes), its Q-values fitted to the search's values (training.algorithms.distill_q)"))
    hidden_sizes: list[int] = Field(default_factory=lambda: [512, 512], min_length=1, max_length=8)
    activation: Literal["relu", "tanh"] = "relu"
    card_features: bool = Field(False, description=(
        "add the rules' card-order inputs to the observation (agents.card_features: per card held, the "
        "cards still out above it and in its suit, whether it wins the trick now, whether it is a trump)"))
    init: str | None = Field(None, description=(
        "a policy file or checkpoint to start from instead of a fresh network (a round of search over a "
        "distilled network, refitted): a network of these rules with no advice input and these sizes"))

    @model_validator(mode="after")
    def _sizes(self) -> DistillNetworkConfig:
        if not all(0 < s <= 4096 for s in self.hidden_sizes):
            raise ValueError(f"every hidden size must be in 1..4096, got {self.hidden_sizes}")
        return self


class DistillFitConfig(Section):
    """The two fits: imitation of ``data.imitation``'s choices, then the search's targets."""

    batch_size: int = Field(1024, gt=0, le=2**20, description="decisions per Adam step")
    imitation_decisions: int = Field(8_000_000, ge=0, le=MAX_STEPS,
                                     description="decisions of the imitation fit (its dataset replayed as often as needed)")
    imitation_learning_rate: float = Field(1e-3, gt=0, le=1)
    search_epochs: int = Field(6, ge=0, le=1000, description="passes over the search's dataset")
    search_learning_rate: float = Field(2e-4, gt=0, le=1)
    temperature: float = Field(10.0, gt=0, le=1e4, description=(
        "points: where a decision was searched, the soft target is softmax(value / temperature) over its candidates"))
    soft_weight: float = Field(0.5, ge=0, le=1, description="the soft target's share; the rest is on the search's own choice")
    kinds: list[Literal["bid", "discard", "nominate", "play"]] = Field(
        default_factory=lambda: list(DECISION_KINDS), min_length=1,
        description="the decision kinds fitted to the search's targets (the others keep the imitation fit)")
    mix: int = Field(1, ge=0, le=16, description="imitation batches added to each search batch's loss (what the "
                                                  "first fit learned is kept where the search's data is thin)")
    value_scale: float = Field(100.0, gt=0, le=1e4, description=(
        "network.form q: points per unit of the network's Q-values (its DMC run's env.reward_scale)"))


class DistillEvaluationConfig(Section):
    """Duplicate evaluation against ``opponent`` after the imitation fit, every ``interval`` search
    epochs and after the last: the network with the most games won (then points per deal) becomes
    ``final.pt``."""

    opponent: str = "heuristic"
    interval: int = Field(1, gt=0, le=1000, description="search epochs between evaluations (the last is always evaluated)")
    deals: int = Field(2000, ge=0, le=MAX_DEALS, description="duplicate boards per evaluation; 0: the last network is final")
    games: int = Field(200, ge=0, le=MAX_DEALS, description="games to 500 per evaluation (what chooses the network)")
    seed: int = Field(12345, ge=0, le=MAX_SEED)


class DistillConfig(Section):
    """A whole search distillation run (``train.algorithm: distill``)."""

    seed: int = Field(1, ge=0, le=MAX_SEED)
    deterministic: bool = True
    torch_threads: TorchThreads = 1
    rules: RulesConfig = Field(default_factory=RulesConfig)
    train: DistillTrainConfig = Field(default_factory=DistillTrainConfig)
    data: DistillDataConfig = Field(default_factory=DistillDataConfig)
    network: DistillNetworkConfig = Field(default_factory=DistillNetworkConfig)
    fit: DistillFitConfig = Field(default_factory=DistillFitConfig)
    evaluation: DistillEvaluationConfig = Field(default_factory=DistillEvaluationConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)
    checkpoint: CheckpointConfig = Field(default_factory=CheckpointConfig)

    @model_validator(mode="after")
    def _something_to_fit(self) -> DistillConfig:
        imitation = self.data.imitation.deals and self.fit.imitation_decisions
        search = self.data.search_sources and self.fit.search_epochs
        if not (imitation or search):
            raise ValueError("nothing to fit: give data.imitation.deals and fit.imitation_decisions, or "
                             "data.search.deals and fit.search_epochs, above 0")
        if self.fit.mix and search and not self.data.imitation.deals:
            raise ValueError("fit.mix adds imitation batches to the search fit: it needs data.imitation.deals "
                             "above 0 (or fit.mix: 0)")
        if self.network.form == "q" and not (self.network.init and not imitation and not self.fit.mix):
            raise ValueError("network.form q refits a DMC network to the search's values: it needs network.init, "
                             "and no imitation fit (fit.imitation_decisions: 0, fit.mix: 0)")
        return self

    def to_rules(self) -> Rules:
        """The rules of the run (the ``rules`` section as a rules object)."""
        return self.rules.to_rules()

    def to_dict(self) -> dict[str, Any]:
        """Plain data (YAML/JSON-able), as the run folder's config.yaml holds it."""
        return self.model_dump(mode="json")


__all__ = ["MAX_STEPS", "DatasetSource", "DistillConfig"]
