"""Keeps numba's on-disk cache of the kernels in step with their sources.

numba checks only the source file of each cached function, not the kernels it calls from
other files: after an edit of ``_kernels.py`` the cached ``_step`` entry points would still run
the old rules. So the cached kernels of this package are dropped whenever any kernel source (or
numba itself) changes, recognised by a hash stored beside them.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Sequence
from pathlib import Path

import numba

KERNEL_SOURCES = ("_layout.py", "_bits.py", "_score.py", "_legal.py", "_kernels.py", "_encode.py", "_step.py")
STAMP_NAME = "five_hundred_kernels.sha256"
COMPILING_MESSAGE = "five_hundred_env: compiling the batched engine, once per install, about a minute"


def kernel_hash(extra_sources: Sequence[Path] = ()) -> str:
    """A hash of every kernel source (and of ``extra_sources``) and the numba version."""
    digest = hashlib.sha256(numba.__version__.encode())
    here = Path(__file__).parent
    for path in [here / name for name in KERNEL_SOURCES] + list(extra_sources):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def drop_stale_kernels(cache_dir: str | Path, extra_sources: Sequence[Path] = (), entry: str = "_step") -> bool:
    """Delete the cached kernels in ``cache_dir`` unless they were compiled from these sources;
    ``True`` when the entry points (the functions of module ``entry``) must be compiled (none of them is cached).

    Kernels of another package that call these ones (a compiled policy) pass their own source
    files as ``extra_sources``: their cache is then dropped when either side changes."""
    cache = Path(cache_dir)
    _drop_unless_current(cache, extra_sources)
    return not any(cache.glob(f"{entry}.*.nbi"))


def announce_compile(cache_dir: str | Path, message: str = COMPILING_MESSAGE, extra_sources: Sequence[Path] = (),
                     entry: str = "_step") -> None:
    """Say on standard error, before the first kernel is loaded, that a minute of compiling is
    coming, when it is (a cold cache: a new install or changed kernels): otherwise the first
    use of the batched engine (or of kernels built on it, with their ``message``, ``extra_sources``
    and ``entry`` module) looks like a hang."""
    if drop_stale_kernels(cache_dir, extra_sources, entry):
        print(message, file=sys.stderr, flush=True)


def _drop_unless_current(cache: Path, extra_sources: Sequence[Path]) -> None:
    """Delete the cached kernels in ``cache`` unless the stamp beside them says these sources made them."""
    stamp = cache / STAMP_NAME
    current = kernel_hash(extra_sources)
    try:
        if stamp.exists() and stamp.read_text() == current:
            return
        modules = tuple(Path(name).name.removesuffix(".py") + "." for name in (*KERNEL_SOURCES, *extra_sources))
        for path in cache.glob("*.nb[ic]"):
            if path.name.startswith(modules):
                path.unlink()
        cache.mkdir(parents=True, exist_ok=True)
        stamp.write_text(current)
    except OSError:  # a read-only installation: numba then falls back to compiling in memory
        pass
