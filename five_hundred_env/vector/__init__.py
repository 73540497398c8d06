"""Thousands of Five Hundred games stepped at once, for learners (see ``docs/vector.md``).

:class:`BatchEngine` holds ``B`` games as arrays and steps one decision per game; its
observations and masks are the AEC environment's, byte for byte. :class:`SingleAgentVectorEnv`
is a Gymnasium vector environment of a learner's seats against given opponents.

This sub-package needs numba (the optional ``vector`` extra); the rest of the package does not.
"""

try:
    import numba  # noqa: F401
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError(
        "five_hundred_env.vector needs numba: install it with `pip install five-hundred-env[vector]` "
        "(or `pip install numba`)"
    ) from error

from five_hundred_env.vector.batch import BatchEngine, VectorStep
from five_hundred_env.vector.gym_env import SingleAgentVectorEnv

__all__ = ["BatchEngine", "SingleAgentVectorEnv", "VectorStep"]
