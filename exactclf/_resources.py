"""What the machine can give a fit: usable cores, free memory, and refusals that say so.

Exact searches estimate their cost before they start. The estimate must use the cores the
process may actually run on (a container or ``taskset`` may allow fewer than ``os.cpu_count()``)
and must not believe ``n_jobs=100`` on two cores: extra threads share the same cores.
"""

from __future__ import annotations

import os

from joblib import effective_n_jobs
from joblib.parallel import get_active_backend

__all__ = ["usable_cores", "effective_workers", "available_memory", "check_memory"]

#: joblib backends whose workers run on this machine (their speed is bounded by its cores)
_LOCAL_BACKENDS = {"ThreadingBackend", "LokyBackend", "MultiprocessingBackend",
                   "SequentialBackend"}


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity where the platform tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - platforms without affinity
        return max(1, os.cpu_count() or 1)


def effective_workers(n_jobs: int | None) -> int:
    """Workers that really run in parallel for ``n_jobs`` under the active joblib backend.

    On a local backend the count is capped by :func:`usable_cores`; on a cluster backend
    (Dask) joblib's own count is used.

    Examples
    --------
    >>> effective_workers(1)
    1
    >>> effective_workers(10**12) <= usable_cores()
    True
    """
    backend, _ = get_active_backend()
    n = max(1, effective_n_jobs(n_jobs))
    if type(backend).__name__ in _LOCAL_BACKENDS:
        n = min(n, usable_cores())
    return n


def available_memory() -> int | None:
    """Bytes of memory available to new allocations (``MemAvailable``), None if unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:  # pragma: no cover - not Linux
        pass
    try:  # pragma: no cover - not Linux
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # pragma: no cover
        return None


def fits_memory(nbytes: float, fraction: float = 0.5) -> bool:
    """Whether work estimated to need ``nbytes`` takes at most ``fraction`` of the
    available memory (True where that is unknown).

    Examples
    --------
    >>> fits_memory(1e3), fits_memory(1e30)
    (True, False)
    """
    avail = available_memory()
    return avail is None or nbytes <= fraction * avail


def check_memory(nbytes: float, what: str, instead: str, fraction: float = 0.5) -> None:
    """Refuse (``MemoryError``) to start work that does not :func:`fits_memory`; the
    message gives both figures and ``instead``.

    Examples
    --------
    >>> check_memory(1e3, "a tiny search", "nothing")
    >>> check_memory(1e30, "a huge search", "use a budget")
    Traceback (most recent call last):
    ...
    MemoryError: a huge search needs about 1e+21 GB of memory; ...
    """
    if fits_memory(nbytes, fraction):
        return
    avail = available_memory()
    raise MemoryError(
        f"{what} needs about {nbytes / 1e9:.3g} GB of memory; this machine has "
        f"{avail / 1e9:.3g} GB available. {instead}"
    )
