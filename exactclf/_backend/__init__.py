"""Device dispatch: ``device="auto" | "cpu" | "gpu"`` -> :class:`Backend`.

The CPU backend runs Numba kernels on NumPy arrays. The GPU backend runs Numba CUDA kernels
where an algorithm has one (``backend.cuda``; they run under Numba's CUDA simulator,
``NUMBA_ENABLE_CUDASIM=1``, without a GPU) and array-generic code on CuPy arrays elsewhere
(optional extra ``exactclf[gpu]``); the same array-generic code run with NumPy is the plain
reference implementation. Estimators only call :func:`resolve_device`; kernels never see
estimators.

Placement: ``device="auto"`` runs on the GPU only where the work is large enough for the GPU
to beat the same machine's CPU (:func:`gpu_pays`): a GPU search pays a kernel compilation
(cached on disk after the first run), a transfer and a launch, which small searches never
earn back.

This package holds the dispatch only. The kernels live beside the algorithm they serve
(``_zero_one/_kernels_cpu.py`` and ``_zero_one/_kernels_array.py``, ``maxout/_kernels_cpu.py`` and
``maxout/_kernels_array.py``, ``mrc/_kernels.py``), and the algorithm module picks one from the
:class:`Backend` it is given (``backend.array_generic`` / ``backend.name``, and ``backend.xp``
for the array module), so nothing here imports an algorithm package.
"""

from __future__ import annotations

import math
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType

import numpy as np

__all__ = ["Backend", "GPU_BREAK_EVEN", "REFERENCE", "gpu_available", "gpu_pays",
           "quiet_launches", "resolve_device"]

#: The work (in each estimator's unit below) from which ``device="auto"`` picks the GPU:
#: the smallest measured work on which the GPU won, so that ``auto`` keeps every measured
#: instance where it ran faster (``benchmarks/gpu_vs_cpu.py``; figures in
#: ``benchmarks/results/gpu_vs_cpu.txt``, a GPU against the same machine's cores,
#: ``n_jobs=-1``). Re-measure when a kernel changes.
#:
#: * ``"ice"``: candidate planes times unique points, ``C(n, D) * n``: below it the kernel's
#:   transfer and launch outweigh the search. Measured with the Numba CUDA kernel: where
#:   Numba cannot compile kernels, ``auto`` keeps the CPU.
#: * ``"mrc"``: samples times features times classes. Never: the linear programs, which run
#:   on the CPU, dominate a fit, so moving the scores to the GPU does not pay its transfers.
#: * ``"ngd"``: weights times batch size, the work of one batch's products: small batches
#:   cannot fill the GPU and pay a launch per step; large ones win.
#:
#: Deep-ICE stays on the CPU under ``auto``: its GPU kernel prunes as the CPU kernel does but
#: has not beaten a many-core CPU on a measured search.
GPU_BREAK_EVEN = {
    "ice": 1.7e8,
    "mrc": math.inf,
    "ngd": 8e7,
}

#: the kinds that have no Numba CUDA kernel (their GPU code is CuPy's alone); the others'
#: break-evens were measured with their kernel
_ARRAY_KINDS = frozenset({"mrc", "ngd"})


@dataclass(frozen=True)
class Backend:
    """Where a computation runs.

    ``name`` is ``"cpu"`` (Numba kernels), ``"gpu"`` (CuPy arrays) or ``"reference"``
    (array-generic code on NumPy). ``cuda``: the algorithms that have a Numba CUDA kernel
    run it (on the GPU, or under Numba's CUDA simulator), the others their array-generic
    code on ``xp``.
    """

    name: str
    xp: ModuleType
    cuda: bool = False

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


@lru_cache(maxsize=1)
def _numba_cuda() -> bool:  # pragma: no cover - needs a GPU
    """Whether Numba can compile and launch CUDA kernels here (numba-cuda, or Numba's own
    CUDA target, which warns that it is deprecated in favour of numba-cuda).

    A device can be present while compilation fails: numba-cuda 0.30 cannot compile any
    kernel under NumPy 2.5 (it registers an overload of ``np.row_stack``, which NumPy 2.5
    removed). A tiny kernel is compiled and run once to tell; where it fails, the GPU runs
    the CuPy code, with a warning that says why and what to change.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from numba import cuda
            if not cuda.is_available():
                return False

            @cuda.jit
            def probe(out):
                out[0] = 1.0

            out = cuda.to_device(np.zeros(1))
            with quiet_launches():
                probe[1, 1](out)
            if out.copy_to_host()[0] != 1.0:
                raise RuntimeError("a probe kernel ran but wrote nothing")
        return True
    except Exception as exc:
        warnings.warn(
            f"Numba cannot run CUDA kernels here ({type(exc).__name__}: {exc}), so the GPU "
            "runs exactclf's slower CuPy code and device='auto' keeps ICE on the CPU. "
            "numba-cuda 0.30 does not support NumPy 2.5: install NumPy < 2.5, or a "
            f"numba-cuda that supports NumPy {np.__version__}.",
            RuntimeWarning, stacklevel=2)
        return False


@contextmanager
def quiet_launches():
    """Silence Numba's warning that a CUDA grid is too small to fill the GPU: a search's
    chunks start small (and its last one may be), by design of the search driver."""
    with warnings.catch_warnings():
        # by message: numba-cuda and Numba's own CUDA target raise different classes
        warnings.filterwarnings("ignore", message=".*under-utilization")
        yield


def gpu_available() -> bool:
    """True when CuPy is installed and can allocate on a CUDA device."""
    return _cupy_or_reason()[0] is not None


def gpu_pays(kind: str, work: float) -> bool:
    """Whether ``work`` is large enough for the GPU to beat the CPU (see
    :data:`GPU_BREAK_EVEN` for the units of each ``kind``).

    Examples
    --------
    A 300-point search in two dimensions stays on the CPU; a 283-point one in three goes to
    the GPU:

    >>> gpu_pays("ice", 300 * 299 / 2 * 300), gpu_pays("ice", 283 * 282 * 281 / 6 * 283)
    (False, True)
    """
    try:
        return work >= GPU_BREAK_EVEN[kind]
    except KeyError:
        raise ValueError(f"kind must be one of {sorted(GPU_BREAK_EVEN)}, got {kind!r}") from None


def resolve_device(device: str, kind: str | None = None, work: float | None = None) -> Backend:
    """Map the ``device`` parameter of an estimator to a :class:`Backend`.

    Parameters
    ----------
    device : {"auto", "cpu", "gpu"}
        ``"auto"`` picks the GPU only when CuPy and a CUDA device are really usable and
        :func:`gpu_pays` says that the work wins there; without ``kind`` and ``work`` it
        cannot tell, and stays on the CPU.
    kind : {"ice", "mrc", "ngd"}, optional
        The estimator, for :func:`gpu_pays`.
    work : float, optional
        The estimated work, in the unit of ``kind`` (see :data:`GPU_BREAK_EVEN`).

    Examples
    --------
    >>> resolve_device("cpu").name
    'cpu'
    >>> resolve_device("auto", "ice", 1e5).name   # a small search: never the GPU
    'cpu'
    """
    if device == "cpu":
        return CPU
    if device not in ("auto", "gpu"):
        raise ValueError(f"device must be 'auto', 'cpu' or 'gpu', got {device!r}")
    if device == "auto" and (kind is None or work is None or not gpu_pays(kind, work)):
        return CPU
    cupy, reason = _cupy_or_reason()
    if cupy is not None:
        # no probe (and no warning about one) where there is no kernel to run
        kernels = kind not in _ARRAY_KINDS and _numba_cuda()
        if device == "auto" and kind not in _ARRAY_KINDS and not kernels:
            return CPU  # the break-even was measured with the kernel, not the CuPy code
        return Backend("gpu", cupy, cuda=kernels)
    if device == "auto":
        return CPU
    raise RuntimeError(
        f"device='gpu' was requested but {reason}. Install the GPU extra with "
        "`pip install exactclf[gpu]` (CuPy for CUDA 12) on a machine with an NVIDIA GPU, "
        "or use device='cpu'."
    )
