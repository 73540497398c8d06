"""What every config section shares: the base class, the error, the bounds on sizes and seeds.

Its own module so that the sections defined outside :mod:`training.settings.config`
(:mod:`training.settings.improvement_config`) need not import it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_STEPS = 10**12
"""The largest step count or step interval (about 30 years of training at 1000 steps/s)."""

MAX_DEALS = 10**7
"""The largest number of deals of a warm start or an evaluation."""

MAX_SEED = 2**64 - 1
"""Seeds are non-negative and fit 64 bits (what ``torch.manual_seed`` accepts)."""

TorchThreads = Annotated[int, Field(ge=0, le=1024)] | Literal["auto"]
"""``torch_threads``: intra-op threads of the training process (see :mod:`training.workers.threads`): a
whole number, ``auto`` (the cores free to it when it starts) or 0 (every usable core, as torch would)."""


class ConfigError(ValueError):
    """A config that cannot be used; the message names the file and the key."""


class Section(BaseModel):
    # extra="forbid": a misspelt key is an error, never silently ignored.
    # allow_inf_nan=False: no inf or NaN reaches training, whatever the field's range.
    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)
