"""NGD's minibatches on a device: gathered there, and on CuPy replayed as CUDA graphs.

A batch step on a GPU is some hundreds of small kernels (the Newton phase's products, its
conjugate-gradient iterations and line search, the Adam step), each too short to hide the
host's cost of launching it. Written so that it reads nothing back to the host and updates
its state in place (:func:`exactclf.ngd._mlp.newton_output_layer` with ``on_device=True``,
:func:`exactclf.ngd._mlp.adam_update`), one capture of the step per batch shape, as a CUDA
graph, replays all of its kernels with one launch.

CuPy refuses to capture cuBLAS calls (its ``cublas.setStream`` raises NotImplementedError
while the stream captures, CuPy 14), and the step's products and inner products are cuBLAS
calls. :class:`GraphSafe` is CuPy with ``matmul`` and ``vdot`` replaced by kernels of its
own, for the captured steps; a step run eagerly (the fallback) uses cuBLAS.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from .._warnings import warn

__all__ = ["DeviceBatches", "GraphSafe", "device_stream"]


def device_stream(xp):
    """The stream to train on: a new CuPy stream (graphs are captured on a stream of their
    own, and everything they read is made on it); no stream for other array namespaces."""
    cuda = getattr(xp, "cuda", None)
    if cuda is None or not hasattr(cuda, "Stream"):
        return contextlib.nullcontext()
    return cuda.Stream(non_blocking=True)


class DeviceBatches:
    """The batches of one fit on a device, and the steps run on them.

    Each batch is gathered (rows of ``X``, ``Y``, ``sw`` in the epoch's order, which is sent
    to the device once per epoch) into buffers kept per batch size, which the step reads;
    ``step(Xb, Yb, swb, S, newton, rest, xp, on_device)`` returns the batch's loss, added to
    :attr:`loss` times the batch's size. On CuPy the first run of a step on a batch shape
    (size, Newton phase or not) runs eagerly in the form a graph can capture, the second is
    captured as a CUDA graph and launched, and later runs launch it. Without CuPy, or once
    a capture failed, steps run eagerly in their host form (which may read back).
    """

    def __init__(self, xp, X, Y, sw, step: Callable):
        self.xp, self.X, self.Y, self.sw, self.step = xp, X, Y, sw, step
        self.loss = xp.zeros(1, dtype=float)  # float64, as the host's sum
        self.order = None
        self._buffers: dict = {}
        cuda = getattr(xp, "cuda", None)
        self._graphs = (_Graphs(xp, X.dtype) if cuda is not None and hasattr(cuda, "Stream")
                        else None)

    def start_epoch(self, order) -> None:
        """``order``: the sample indices of the epoch (a NumPy array)."""
        self.order = self.xp.asarray(order)
        self.loss *= 0.0

    def epoch_loss(self) -> float:
        """The sum over the epoch's batches of size times loss (one read-back)."""
        return float(self.loss[0])

    def __call__(self, batch: slice, newton: bool, rest: float) -> None:
        xp = self.xp
        rows = batch.stop - batch.start
        buffers = self._buffers.get(rows)
        if buffers is None:
            buffers = self._buffers[rows] = tuple(
                None if A is None else xp.empty((rows, *A.shape[1:]), dtype=A.dtype)
                for A in (self.X, self.Y, self.sw))
        idx = self.order[batch]
        for A, out in zip((self.X, self.Y, self.sw), buffers, strict=True):
            if A is not None:
                xp.take(A, idx, axis=0, out=out)

        def run(step_xp, on_device: bool) -> None:
            Xb, Yb, swb = buffers
            S = float(rows) if swb is None else swb.sum()
            self.loss += self.step(Xb, Yb, swb, S, newton, rest, step_xp, on_device) * rows

        if self._graphs is None or self._graphs.failed is not None:
            run(xp, False)
        else:
            self._graphs((rows, newton), run)


class _Graphs:
    """CUDA graphs of a step, by key: the first run is eager (it compiles the kernels and
    fills the graphs' memory pool), the second is captured and launched, later ones launch
    the graph. Should the product kernels not compile or a capture fail, :attr:`failed` says
    why (with a warning); neither has changed the step's state."""

    def __init__(self, xp, dtype):
        self.cuda, self.dtype, self.eager_xp = xp.cuda, dtype, xp
        self.xp = GraphSafe(xp)
        self.pool = self.cuda.MemoryPool()  # the graphs' temporaries: lent to no other array
        self.graphs: dict = {}
        self.failed: str | None = None
        self._seen: set = set()

    def __call__(self, key, run: Callable) -> None:
        graph = self.graphs.get(key)
        stream = self.cuda.get_current_stream()
        if graph is not None:
            graph.launch(stream)
            return
        with self.cuda.using_allocator(self.pool.malloc):
            if key not in self._seen:
                try:
                    self.xp.prepare(self.dtype)
                except Exception as exc:  # no kernels: no graphs (the step has not run)
                    self._fail(exc)
                    run(self.eager_xp, False)
                    return
                self._seen.add(key)
                run(self.xp, True)
                return
            try:
                mode = getattr(self.cuda.runtime, "streamCaptureModeRelaxed", None)
                stream.begin_capture(mode) if mode is not None else stream.begin_capture()
                try:
                    run(self.xp, True)
                finally:
                    graph = stream.end_capture()
            except Exception as exc:  # an operation CUDA or CuPy cannot capture
                self._fail(exc)
                run(self.xp, True)  # nothing of the capture ran: this batch's step, eagerly
                return
        self.graphs[key] = graph
        graph.launch(stream)

    def _fail(self, exc: Exception) -> None:
        self.failed = f"{type(exc).__name__}: {exc}"
        warn(f"NGDClassifier: the batch step could not be captured as a CUDA graph "
             f"({self.failed}); it runs without graphs (slower).", RuntimeWarning)


# Products by kernels of ours: C[i, j] = sum_k A[i, k] B[k, j] for operands of any strides
# (in elements), C contiguous. Large outputs take 64 x 64 tiles (16 x 16 threads, 4 x 4
# outputs each, shared-memory panels of 16 along k, loaded along the operand's unit
# stride), long sums of few outputs a warp per output (lanes along k, a shuffle reduction),
# the rest a thread per output.
_SOURCE = r"""
extern "C" __global__ void mm_tiled_TYPE(const TYPE* A, const TYPE* B, TYPE* C,
        const int M, const int N, const int K, const long long sa0, const long long sa1,
        const long long sb0, const long long sb1) {
    __shared__ TYPE As[16][65];
    __shared__ TYPE Bs[16][65];
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
    const int i0 = blockIdx.y * 64, j0 = blockIdx.x * 64;
    TYPE acc[4][4];
    for (int p = 0; p < 4; ++p) for (int q = 0; q < 4; ++q) acc[p][q] = 0;
    for (int k0 = 0; k0 < K; k0 += 16) {
        for (int e = tid; e < 1024; e += 256) {
            int kk = sa1 == 1 ? e % 16 : e / 64, ii = sa1 == 1 ? e / 16 : e % 64;
            int i = i0 + ii, k = k0 + kk;
            As[kk][ii] = (i < M && k < K) ? A[i * sa0 + k * sa1] : (TYPE)0;
            kk = sb1 == 1 ? e / 64 : e % 16;
            int jj = sb1 == 1 ? e % 64 : e / 16, j = j0 + jj;
            k = k0 + kk;
            Bs[kk][jj] = (k < K && j < N) ? B[k * sb0 + j * sb1] : (TYPE)0;
        }
        __syncthreads();
        for (int kk = 0; kk < 16; ++kk) {
            TYPE a[4], b[4];
            for (int q = 0; q < 4; ++q) { a[q] = As[kk][ty + 16 * q]; b[q] = Bs[kk][tx + 16 * q]; }
            for (int p = 0; p < 4; ++p) for (int q = 0; q < 4; ++q) acc[p][q] += a[p] * b[q];
        }
        __syncthreads();
    }
    for (int p = 0; p < 4; ++p) for (int q = 0; q < 4; ++q) {
        int i = i0 + ty + 16 * p, j = j0 + tx + 16 * q;
        if (i < M && j < N) C[(long long)i * N + j] = acc[p][q];
    }
}

extern "C" __global__ void mm_warp_TYPE(const TYPE* A, const TYPE* B, TYPE* C,
        const int M, const int N, const int K, const long long sa0, const long long sa1,
        const long long sb0, const long long sb1) {
    const long long w = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (w >= (long long)M * N) return;  /* w is the same on a warp's lanes */
    const int i = w / N, j = w % N;
    TYPE acc = 0;
    for (int k = lane; k < K; k += 32) acc += A[i * sa0 + k * sa1] * B[k * sb0 + j * sb1];
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
    if (lane == 0) C[w] = acc;
}

extern "C" __global__ void mm_each_TYPE(const TYPE* A, const TYPE* B, TYPE* C,
        const int M, const int N, const int K, const long long sa0, const long long sa1,
        const long long sb0, const long long sb1) {
    const long long o = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (o >= (long long)M * N) return;
    const int i = o / N, j = o % N;
    TYPE acc = 0;
    for (int k = 0; k < K; ++k) acc += A[i * sa0 + k * sa1] * B[k * sb0 + j * sb1];
    C[o] = acc;
}
"""
#: outputs from which the tiled kernel runs; sums from which a warp computes each output
_TILED_OUTPUTS = 4096
_WARP_SUM = 64


class GraphSafe:
    """CuPy with the products that a CUDA graph can capture: ``matmul`` and ``vdot`` by
    kernels of its own (CuPy's are cuBLAS calls, which it refuses to capture), every other
    function CuPy's. Operands of float32 or float64, of the same type."""

    def __init__(self, cupy):
        self._cupy = cupy
        self._kernels: dict = {}

    def __getattr__(self, name):
        return getattr(self._cupy, name)

    def prepare(self, dtype) -> None:
        """Compile the product kernels of ``dtype`` (before a step that a graph captures)."""
        self._kernel("each", dtype)

    def _kernel(self, kind: str, dtype):
        name = {"float64": "double", "float32": "float"}.get(str(dtype))
        if name is None:
            raise TypeError(f"GraphSafe.matmul takes float32 or float64, not {dtype}")
        if name not in self._kernels:
            module = self._cupy.RawModule(code=_SOURCE.replace("TYPE", name))
            self._kernels[name] = {k: module.get_function(f"mm_{k}_{name}")
                                   for k in ("tiled", "warp", "each")}
        return self._kernels[name][kind]

    def matmul(self, A, B):
        cp = self._cupy
        if A.dtype != B.dtype:
            raise TypeError(f"GraphSafe.matmul of {A.dtype} and {B.dtype}")
        a2, b2 = (A[None, :] if A.ndim == 1 else A), (B[:, None] if B.ndim == 1 else B)
        (M, K), N = a2.shape, b2.shape[1]
        if b2.shape[0] != K:
            raise ValueError(f"matmul: shapes {A.shape} and {B.shape} do not align")
        C = cp.empty((M, N), dtype=A.dtype)
        if M and N:
            size = A.dtype.itemsize
            sa0, sa1 = (s // size for s in a2.strides)
            sb0, sb1 = (s // size for s in b2.strides)
            args = (a2, b2, C, cp.int32(M), cp.int32(N), cp.int32(K), cp.int64(sa0),
                    cp.int64(sa1), cp.int64(sb0), cp.int64(sb1))
            if M * N >= _TILED_OUTPUTS:
                self._kernel("tiled", A.dtype)(((N + 63) // 64, (M + 63) // 64), (16, 16), args)
            elif K >= _WARP_SUM:
                self._kernel("warp", A.dtype)(((M * N * 32 + 255) // 256,), (256,), args)
            else:
                self._kernel("each", A.dtype)(((M * N + 255) // 256,), (256,), args)
        if A.ndim == 1 and B.ndim == 1:
            return C.reshape(())
        if A.ndim == 1:
            return C.reshape(N)
        if B.ndim == 1:
            return C.reshape(M)
        return C

    def vdot(self, a, b):
        """``sum(a * b)`` over all entries of two arrays of the same shape (real)."""
        if a.shape != b.shape:
            raise ValueError(f"vdot of shapes {a.shape} and {b.shape}")
        return (a * b).sum()
