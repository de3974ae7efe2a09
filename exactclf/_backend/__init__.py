"""Device dispatch: ``device="auto" | "cpu" | "gpu"`` -> :class:`Backend`.

The CPU backend runs Numba kernels on NumPy arrays. The GPU backend runs array-generic code
on CuPy arrays (optional extra ``exactclf[gpu]``); the same array-generic code run with NumPy
is the plain reference implementation, which is how the GPU code path is exercised without a
GPU. Estimators only call :func:`resolve_device`; kernels never see estimators.

This package holds the dispatch only. The kernels live beside the algorithm they serve
(``linear/_kernels_cpu.py`` and ``linear/_kernels_array.py``, ``maxout/_kernels_cpu.py`` and
``maxout/_kernels_array.py``, ``mrc/_kernels.py``), and the algorithm module picks one from the
:class:`Backend` it is given (``backend.array_generic`` / ``backend.name``, and ``backend.xp``
for the array module), so nothing here imports an algorithm package.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType

import numpy as np

__all__ = ["Backend", "resolve_device", "gpu_available", "REFERENCE"]


@dataclass(frozen=True)
class Backend:
    """Where a computation runs.

    ``name`` is ``"cpu"`` (Numba kernels), ``"gpu"`` (array-generic code on CuPy) or
    ``"reference"`` (the same array-generic code on NumPy).
    """

    name: str
    xp: ModuleType

    @property
    def array_generic(self) -> bool:
        return self.name != "cpu"

    def asnumpy(self, a) -> np.ndarray:
        return a.get() if hasattr(a, "get") else np.asarray(a)


CPU = Backend("cpu", np)
REFERENCE = Backend("reference", np)


@lru_cache(maxsize=1)
def _cupy_or_reason() -> tuple[ModuleType | None, str]:
    try:
        import cupy
    except ImportError as exc:  # pragma: no cover - depends on the machine
        return None, f"CuPy is not installed ({exc})"
    try:  # pragma: no cover - needs a GPU
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None, "CuPy found no CUDA device"
        (cupy.arange(4) * 2).sum().item()
    except Exception as exc:  # pragma: no cover - needs a GPU
        return None, f"CuPy cannot use a CUDA device ({type(exc).__name__}: {exc})"
    return cupy, ""  # pragma: no cover - needs a GPU


def gpu_available() -> bool:
    """True when CuPy is installed and can allocate on a CUDA device."""
    return _cupy_or_reason()[0] is not None


def resolve_device(device: str) -> Backend:
    """Map the ``device`` parameter of an estimator to a :class:`Backend`.

    Parameters
    ----------
    device : {"auto", "cpu", "gpu"}
        ``"auto"`` picks the GPU only when CuPy and a CUDA device are really usable.

    Examples
    --------
    >>> resolve_device("cpu").name
    'cpu'
    """
    if device == "cpu":
        return CPU
    if device not in ("auto", "gpu"):
        raise ValueError(f"device must be 'auto', 'cpu' or 'gpu', got {device!r}")
    cupy, reason = _cupy_or_reason()
    if cupy is not None:  # pragma: no cover - needs a GPU
        return Backend("gpu", cupy)
    if device == "auto":
        return CPU
    raise RuntimeError(
        f"device='gpu' was requested but {reason}. Install the GPU extra with "
        "`pip install exactclf[gpu]` (CuPy for CUDA 12) on a machine with an NVIDIA GPU, "
        "or use device='cpu'."
    )
