"""Which config model a training config is read with: ``train.algorithm`` names it (``ppo``, the
default, :class:`~training.settings.config.Config`; ``dmc``, :class:`~training.settings.dmc_config.DmcConfig`;
``distill``, :class:`~training.settings.distill_config.DistillConfig`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from training.settings.config import Config, config_algorithm, load_config
from training.settings.distill_config import DistillConfig
from training.settings.dmc_config import DmcConfig

CONFIG_MODELS: dict[str, type[Config] | type[DmcConfig] | type[DistillConfig]] = {
    "ppo": Config, "dmc": DmcConfig, "distill": DistillConfig}


def load_training_config(path: str | Path, overrides: Iterable[str] = ()) -> Config | DmcConfig | DistillConfig:
    """The config at ``path`` with ``overrides``, read with the model its ``train.algorithm`` names
    (an unknown name is the PPO model's error, which lists the algorithms)."""
    overrides = list(overrides)
    model = CONFIG_MODELS.get(config_algorithm(path, overrides), Config)
    return load_config(path, overrides, model=model)


__all__ = ["CONFIG_MODELS", "load_training_config"]
