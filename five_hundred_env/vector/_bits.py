"""Bit and random-number helpers of the kernels: population count, splitmix64 streams per game."""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import intrinsic


# -- random numbers: splitmix64, one stream per game and purpose -----------------------------------
@njit(cache=True)
def next_random(st: np.ndarray, b: int, field: int, bound: int) -> int:
    """A uniform integer in ``[0, bound)`` from the splitmix64 stream kept in ``st[b, field]``."""
    x = np.uint64(st[b, field]) + np.uint64(0x9E3779B97F4A7C15)
    st[b, field] = np.int64(x)
    z = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.int64(((z >> np.uint64(32)) * np.uint64(bound)) >> np.uint64(32))  # multiply-shift: no division


@intrinsic
def _ctpop(typingctx, x):  # type: ignore[no-untyped-def]
    """LLVM's population count (one instruction where the CPU has it)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.ctpop(args[0])

    return x(x), codegen


@njit(cache=True)
def popcount(x: int) -> int:
    """The number of set bits of a card mask or legal word."""
    return _ctpop(x)


