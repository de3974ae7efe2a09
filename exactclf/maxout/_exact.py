"""Exact minimum 0-1 loss of unions of K half-spaces (two-layer maxout networks).

The network predicts the "union" class where ``max_k (w_k . x + b_k) > 0``: the union class
region is a union of K open half-spaces, so the labelings it realizes are exactly the unions
of K realizable subsets (:mod:`exactclf._dichotomies`). For unions, each hyperplane through
D points in general position needs only one dichotomy of its D points (those that want to be
in the union, inside), so the candidate family is about twice the number of hyperplanes; the
search over K-tuples of candidates runs in :mod:`exactclf.maxout._kernels_cpu`.

The kernel is called in pieces of bounded work, so a deadline is checked often and Ctrl-C
never lands inside compiled code: kernel calls run off the main thread, and while a search
runs, SIGINT first tells every worker to stop at its next piece, then raises
``KeyboardInterrupt`` in the main thread (which only waits), where the search driver turns
it into "best so far".
"""

from __future__ import annotations

import itertools
import signal
import threading
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from .._backend import CPU, Backend
from .._base import check_count_weights
from .._certificate import StopReason
from .._combinatorics import n_combinations
from .._dichotomies import dominant_dichotomies
from .._fit_guard import off_main
from .._geometry import affine_frame
from .._search import Candidate, ChunkResult, run_search
from .._separator import UnrealizableLabeling, max_margin_separator
from .._zero_one._min01 import solve_min01
from ._kernels_array import union_search_array
from ._kernels_cpu import drop_subsets, pack_columns, search_index, union_search_steps

__all__ = ["UnionEstimate", "UnionProblem", "UnionResult", "bitset_kernel_args",
           "candidate_family", "estimate_union", "exact_union", "family_bytes",
           "prepare_union", "realize_union", "undominated", "union_errors", "union_on",
           "useful_planes"]

#: bytes per candidate half-space and point of an exact search's family, at the peak of its
#: construction (the boolean matrix, its packed copies while duplicates are removed, the
#: sorted copy and the bitsets): at most 2.9 measured on families of 3-D and 5-D points, with
#: and without dominated rows (benchmarks/results/deepice_vs_baselines.txt). A family that
#: would not fit in memory is not built. The reference backend (NumPy arrays) also holds the
#: kept rows as float64, 8 bytes an entry
BYTES_PER_ENTRY = 4

#: bytes of float64 a family's rows are cast to at a time (:func:`_row_weights`)
_CAST_BYTES = 1 << 24
#: word operations each pass of the dominance checks of a candidate family may spend (under
#: a second on one core): past them the remaining candidates are all kept
_DOMINANCE_WORK = 1 << 30
#: work of one kernel call, in word operations (a few milliseconds): the granularity at which
#: deadlines and interrupts are honoured
_STEP_WORDS = 1 << 22
#: first indices of the first chunk on the GPU, one block each: a GPU holds a few thousand
#: blocks of 32 threads at once (32 per multiprocessor), and the first indices, which hold
#: most of the work, must fill it; later chunks are sized from the measured rate
_GPU_FIRST_CHUNK = 1 << 13
#: the stop event of each search, by token (a number, not ``id(event)``: ids are reused)
_ACTIVE: dict = {}
_TOKENS = itertools.count()
#: the event of a search that has ended: set, so that workers it left running stop (a
#: Ctrl-C returns from the search without waiting for its joblib threads)
_ENDED = threading.Event()
_ENDED.set()
#: ended searches remembered (a worker outlives its search by one bounded kernel call)
_ENDED_KEEP = 256
_ended_tokens: deque = deque()


@dataclass
class UnionResult:
    """``sets[k]`` is the k-th half-space's subset of points; ``value`` the weighted errors
    of their union (as the ``want`` class) against ``want_w`` / ``other_w``."""

    value: float
    sets: np.ndarray
    n_evaluated: int
    complete: bool
    stop_reason: str | None


def union_errors(sets: np.ndarray, want_w: np.ndarray, other_w: np.ndarray) -> float:
    inside = sets.any(axis=0)
    return float(other_w[inside].sum() + want_w[~inside].sum())


def family_bytes(n: int, planes: float) -> float:
    """Bytes of the candidate family of an exact search on ``n`` points whose enumeration
    visits ``planes`` hyperplanes (about two candidate half-spaces each,
    :data:`BYTES_PER_ENTRY` per point).

    Examples
    --------
    >>> family_bytes(10, 45)
    3680.0
    """
    return float(BYTES_PER_ENTRY * (2 * planes + 2) * n)


def union_on(Z: np.ndarray, planes) -> np.ndarray:
    """Points of ``Z`` inside the union of the open half-spaces ``a . z + b > 0``."""
    return np.any([Z @ a + b > 0 for a, b in planes], axis=0)


def realize_union(Z, sets, want_w, other_w):
    """Hard-margin planes for the subsets ``sets`` of ``Z``: ``(planes, value, exact)``.

    ``value`` is the weighted errors of the union the planes realize. A subset whose margin
    float64 cannot resolve (:class:`~exactclf._separator.UnrealizableLabeling`) gets the best
    plane found instead, and ``exact`` is then False: ``value`` may exceed the errors of
    ``sets``, and the caller must not claim that value is the optimum.
    """
    planes, exact = [], True
    for subset in sets:
        try:
            planes.append(max_margin_separator(Z, subset))
        except UnrealizableLabeling as err:
            planes.append(err.plane)
            exact = False
    inside = union_on(Z, planes)
    return planes, float(other_w[inside].sum() + want_w[~inside].sum()), exact


def _row_weights(rows: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``rows @ w`` for boolean ``rows``, cast to float64 a few thousand rows at a time: a
    family cast whole would take 8 bytes a point and candidate, 8 times the family itself.

    Examples
    --------
    >>> _row_weights(np.array([[True, False, True], [False, False, False]]), np.array([1., 2, 3]))
    array([4., 0.])
    """
    chunk = max(1, _CAST_BYTES // (8 * max(1, rows.shape[1])))
    return np.concatenate([rows[r:r + chunk].astype(np.float64) @ w
                           for r in range(0, len(rows), chunk)] or [np.zeros(0)])


def _pack(rows: np.ndarray, n_words: int) -> np.ndarray:
    """Boolean rows (m, n) -> little-endian uint64 bitsets (m, n_words)."""
    padded = np.zeros((rows.shape[0], n_words * 64), dtype=bool)
    padded[:, : rows.shape[1]] = rows
    return np.ascontiguousarray(np.packbits(padded, axis=1, bitorder="little").view("<u8"))


def _bit_slices(weights: np.ndarray, n_words: int) -> np.ndarray:
    """Integer weights as bit-sliced masks of shape (levels, n_words)."""
    w = weights.astype(np.int64)
    levels = max(1, int(w.max()).bit_length())
    return _pack(((w[None, :] >> np.arange(levels)[:, None]) & 1).astype(bool), n_words)


def undominated(family, want_w, other_w, max_work: int = _DOMINANCE_WORK) -> np.ndarray:
    """Mask of the rows of the boolean ``family`` that suffice for unions: a row is dropped
    when another holds every point it holds that is better inside a union (``want_w >
    other_w``) and no point better outside that it lacks; with the same points better
    outside, or the same points better inside (the groups checked by :func:`drop_subsets`
    within ``max_work`` word operations a pass, which keeps the rest). Replacing a dropped
    row by the row that drops it in any union errs no more, so the best union of the rows
    kept is a best union of ``family``.

    Examples
    --------
    Points 0 and 1 are better inside, point 2 outside. ``[1, 0, 1]`` and ``[0, 1, 1]`` are
    dropped for ``[1, 1, 1]`` (the same point better outside, more inside); without it,
    ``[0, 1, 1]`` is dropped for ``[0, 1, 0]`` (the same inside, less outside):

    >>> want, other = np.array([1.0, 1, 0]), np.array([0.0, 0, 1])
    >>> family = np.array([[1, 0, 1], [1, 1, 1], [0, 1, 1], [0, 1, 0]], dtype=bool)
    >>> undominated(family, want, other).tolist()
    [False, True, False, True]
    >>> undominated(family[[0, 2, 3]], want, other).tolist()
    [True, False, True]
    """
    good, bad = want_w > other_w, want_w < other_w
    family = np.ascontiguousarray(family, dtype=bool)
    (G, n_good), (B, n_bad) = (pack_columns(family, np.flatnonzero(good)),
                               pack_columns(family, np.flatnonzero(bad)))
    keep = np.ones(len(family), dtype=bool)
    # first within equal points better outside, keeping the most inside, then within equal
    # points better inside, keeping the fewest outside (the complement of those outside
    # holding the most): a strict superset counts more points, so it comes first
    for key, V, count in ((B, G, -n_good), (G, ~B, n_bad)):
        rows = np.flatnonzero(keep)
        order = rows[np.lexsort((rows, count[rows], *key[rows].T[::-1]))]
        k = key[order]
        starts = np.flatnonzero(np.r_[True, np.any(k[1:] != k[:-1], axis=1), True])
        keep[order] = drop_subsets(starts, V[order], max_work)
    return keep


def candidate_family(U, want_w, other_w, max_planes=None, deadline=None):
    """The dominant realizable subsets of ``U`` (:func:`dominant_dichotomies`), less those
    another one dominates (:func:`undominated`), sorted by the unwanted weight they cover
    (ties in their own order): ``(family, cover)``. ``TimeoutError`` once
    ``time.perf_counter()`` passes ``deadline``."""
    family = dominant_dichotomies(U, want_w > other_w, max_planes=max_planes,
                                  deadline=deadline)
    family = family[undominated(family, want_w, other_w)]
    if deadline is not None and time.perf_counter() >= deadline:
        raise TimeoutError("the candidate family ran past its deadline")
    cover = _row_weights(family, other_w)
    order = np.lexsort((np.arange(len(family)), cover))
    return family[order], np.ascontiguousarray(cover[order])


def point_order(family, want_w, other_w, n_pairs=4096):
    """The points by decreasing power to reject a union early: how often a union of two
    candidates (drawn, with a fixed seed, from the half of the family that covers the
    least unwanted weight, where the search spends its time) errs on each, by weight. The
    kernel's weighted counts stop at the first word that proves a union errs too much;
    these points fill the first words."""
    if len(family) == 0:
        return np.arange(family.shape[1])
    rng = np.random.default_rng(0)
    pairs = rng.integers(0, max(1, len(family) // 2), size=(2, n_pairs))
    inside = family[pairs[0]] | family[pairs[1]]
    errs = (inside * other_w + ~inside * want_w).mean(axis=0)
    return np.argsort(-errs, kind="stable")


def bitset_kernel_args(family, cover, want_w, other_w):
    """The leading arguments of :func:`union_search_cpu` for a sorted family:
    ``(S, cover, gain, want_masks, other_masks)``, the points (bits) in
    :func:`point_order` (the kernel's results are indices of candidates, so the order of
    the points is invisible to its callers)."""
    n_words = (family.shape[1] + 63) // 64
    gain = _row_weights(family, want_w).astype(np.int64)
    cols = point_order(family, want_w, other_w)
    return (_pack(family[:, cols], n_words), cover, gain, _bit_slices(want_w[cols], n_words),
            _bit_slices(other_w[cols], n_words))


def useful_planes(K: int, n_points: int) -> int:
    """Half-spaces a best union of K needs at most: a union of more than ``n_points``
    subsets has one that adds no point, so ``min(K, n_points)`` (at least 1) suffice."""
    return max(1, min(K, n_points))


def _stop_requested(token, deadline):
    """Whether the search ``token`` was interrupted (known only in its own process) or its
    wall-clock ``deadline`` passed."""
    event = _ACTIVE.get(token)
    return ((event is not None and event.is_set())
            or (deadline is not None and time.time() >= deadline))


@contextmanager
def _interruptible():
    """An event set on SIGINT, which is then raised as usual (``KeyboardInterrupt`` in the
    main thread); outside the main thread, or if SIGINT is ignored, an event never set."""
    stop = threading.Event()
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if main else None
    if not callable(previous):
        yield stop
        return

    def handler(signum, frame):
        stop.set()
        previous(signum, frame)

    signal.signal(signal.SIGINT, handler)
    try:
        yield stop
    finally:
        stop.set()
        signal.signal(signal.SIGINT, previous)


@dataclass
class UnionProblem:
    """One polarity's exact search, prepared once: the sorted candidate family and what the
    bitset kernel needs (:func:`bitset_kernel_args`, :func:`search_index`)."""

    K: int
    want_w: np.ndarray
    other_w: np.ndarray
    family: np.ndarray
    cover: np.ndarray
    truncated: bool
    args: tuple
    index: tuple

    @property
    def n_tuples(self) -> int:
        """Non-decreasing K-tuples of candidates: the search space before pruning."""
        return n_combinations(len(self.family) + self.K - 1, self.K)


def prepare_union(U, want_w, other_w, K, max_planes=None, deadline=None) -> UnionProblem:
    """The candidate family of ``U`` (see :func:`exact_union` for the arguments) and the
    kernel's arrays, for :func:`estimate_union` and :func:`exact_union` to share;
    ``TimeoutError`` once ``time.perf_counter()`` passes ``deadline``."""
    check_count_weights(np.r_[want_w, other_w], "the exact maxout search")
    K = useful_planes(K, len(U))
    family, cover = candidate_family(U, want_w, other_w, max_planes, deadline)
    truncated = (max_planes is not None
                 and max_planes < n_combinations(len(U), affine_frame(U).dim))
    args = bitset_kernel_args(family, cover, want_w, other_w)
    return UnionProblem(K, want_w, other_w, family, cover, truncated, args,
                        search_index(*args[:3]))


def _kernel_steps(args) -> int:
    """Steps of one call of the bitset kernel on its arguments ``args``
    (:func:`bitset_kernel_args`): about :data:`_STEP_WORDS` word operations, so that each
    call is short enough for deadlines and interrupts to be honoured between calls."""
    S, _, _, want_masks, other_masks = args
    return max(64, _STEP_WORDS // (S.shape[1] * (len(want_masks) + len(other_masks))))


@dataclass
class UnionEstimate:
    """The kernel timed on a sample of first indices: ``seconds`` (serial) to settle every
    first index below ``upper_bound`` (inf when the sample ran out of time), ``work(r)`` the
    estimated fraction of that work below rank ``r``, and ``found``, a tuple of candidate
    indices that beat ``upper_bound`` (None if none did)."""

    seconds: float
    work: object
    found: np.ndarray | None
    value: float


def estimate_union(problem: UnionProblem, upper_bound: float, *, n_samples: int = 48,
                   time_limit: float = 5.0) -> UnionEstimate:
    """Time the kernel on ``n_samples`` first indices spread evenly over those a union
    below ``upper_bound`` can start with (candidates sorted by cover: a prefix of them).

    The work per first index is far from equal (low-cover candidates combine with many
    others), so the sample covers the whole range and the cumulative ``work`` follows it.
    """
    S, cov, gain, want_masks, other_masks = problem.args
    K = problem.K
    n_live = int(np.searchsorted(problem.cover, upper_bound, side="left"))
    if n_live == 0:
        return UnionEstimate(0.0, lambda r: 1.0, None, upper_bound)
    n_samples = min(n_samples, n_live)
    edges = np.linspace(0, n_live, n_samples + 1)
    ranks = ((edges[:-1] + edges[1:]) / 2).astype(np.int64)
    steps = _kernel_steps(problem.args)
    deadline = time.perf_counter() + time_limit
    times, best, found = [], upper_bound, None
    for r in ranks:
        t = time.perf_counter()
        state = np.zeros(K + 1, dtype=np.int64)
        state[1] = r
        while state[0] >= 0 and time.perf_counter() < deadline:
            # off the main thread, which only waits: Ctrl-C never lands in a kernel
            val, idx, _ = off_main(union_search_steps, S, cov, gain, *problem.index,
                                   want_masks, other_masks, K, r + 1, best, np.inf, state,
                                   steps)
            if idx[0] >= 0:
                best, found = val, idx.copy()
        if state[0] >= 0:  # out of sampling time: too slow to tell
            return UnionEstimate(np.inf, None, found, float(best))
        times.append(time.perf_counter() - t)
    per = np.asarray(times)
    cum = np.r_[0.0, np.cumsum(per)]
    total = cum[-1]

    def work(r):
        return float(np.interp(r, edges, cum / total)) if total > 0 else min(r / n_live, 1.0)

    return UnionEstimate(float(per.mean() * n_live), work, found, float(best))


def _better_constant(want_w, other_w, K) -> tuple[float, np.ndarray]:
    """The errors and ``(K, n)`` sets of the better of the empty and the full union (ties:
    the empty one)."""
    value, inside = min((float(want_w.sum()), False), (float(other_w.sum()), True))
    return value, np.full((K, len(want_w)), inside)


def _one_half_space(U, want_w, other_w, *, backend, upper_bound, time_limit, n_jobs,
                    verbose) -> UnionResult:
    """:func:`exact_union` for K = 1 by the linear enumeration, with its contract: a subset
    erring less than ``upper_bound``, or the better constant (then ``complete`` proves that
    none errs less)."""
    res = solve_min01(U, want_w, other_w, backend=backend, time_limit=time_limit,
                      n_jobs=n_jobs, verbose=verbose)
    if res.value >= upper_bound:
        value, sets = _better_constant(want_w, other_w, 1)
    else:
        value, sets = res.value, res.positive[None, :]
    return UnionResult(value, sets, res.n_candidates, res.complete, res.stop_reason)


def _register_search(stop: threading.Event) -> int:
    """A new token for a search whose stop event is ``stop``: the search's closures may be
    shipped to other processes (joblib's Dask backend), so they reach the event through
    the token (:func:`_stop_requested`), not by reference."""
    token = next(_TOKENS)
    _ACTIVE[token] = stop
    return token


def _end_search(token: int) -> None:
    """Mark the search ``token`` ended: its token then maps to the set :data:`_ENDED`, so
    that workers it left running stop at their next piece; only the last
    :data:`_ENDED_KEEP` ended searches are remembered, so the registry stays small."""
    _ACTIVE[token] = _ENDED
    _ended_tokens.append(token)
    while len(_ended_tokens) > _ENDED_KEEP:
        _ACTIVE.pop(_ended_tokens.popleft(), None)


def _gpu_search(backend: Backend, problem: UnionProblem):
    """The CUDA search of ``problem`` when ``backend`` runs on the GPU and the problem fits
    the CUDA kernel, else None (the search then runs on the array or CPU kernel)."""
    if not backend.cuda:
        return None
    # imported here: numba.cuda is loaded only by searches that run on the GPU
    from ._kernels_cuda import UnionSearchCuda
    if UnionSearchCuda.fits(problem.K, problem.args[0].shape[1]):
        return UnionSearchCuda(problem.args, problem.index, problem.K)
    return None


def _cpu_kernel(problem: UnionProblem, should_stop, interrupted: list):
    """The bitset kernel as :func:`_chunk_kernel` calls it, in calls of bounded work off
    the main thread, so that ``should_stop`` is checked often and Ctrl-C never lands in
    compiled code; a Ctrl-C appends the chunk's best union so far to ``interrupted``
    before it propagates, so that the search keeps it."""
    K, index = problem.K, problem.index
    S, cov, gain, want_masks, other_masks = problem.args
    steps = _kernel_steps(problem.args)

    def kernel(r0, r1, ub_lt, ub_le):
        state = np.zeros(K + 1, dtype=np.int64)
        state[1] = r0
        best_val, best_idx, n_total = ub_lt, np.full(K, -1, dtype=np.int64), 0
        try:
            while state[0] >= 0:
                val, idx, n_eval = off_main(union_search_steps, S, cov, gain, *index,
                                            want_masks, other_masks, K, r1, best_val,
                                            ub_le, state, steps)
                n_total += n_eval
                if idx[0] >= 0:
                    best_val, best_idx = val, idx
                if state[0] >= 0 and should_stop():
                    return best_val, best_idx, n_total, int(state[1])
        except KeyboardInterrupt:  # keep this chunk's best so far, then stop
            if best_idx[0] >= 0:
                interrupted.append(Candidate(float(best_val), int(best_idx[0]),
                                             best_idx.copy()))
            raise
        return best_val, best_idx, n_total, r1

    return kernel


def _chunk_kernel(problem: UnionProblem, want_w, other_w, backend: Backend, gpu,
                  should_stop, interrupted: list):
    """``kernel(r0, r1, ub_lt, ub_le) -> (value, indices, n_evaluated, r_stop)``: the
    search of the K-tuples of ``problem`` whose first index is in ``[r0, r1)``, on ``gpu``
    (:func:`_gpu_search`), else on ``backend``'s arrays if it is array-generic, else on the
    CPU bitset kernel (:func:`_cpu_kernel`); each stops early once ``should_stop()``."""
    if gpu is not None:
        def kernel(r0, r1, ub_lt, ub_le):
            return off_main(gpu.search, r0, r1, ub_lt, ub_le, should_stop)
        return kernel
    if backend.array_generic:
        # cast on the device: the host holds the family as booleans only
        F = backend.xp.asarray(problem.family).astype(np.float64)
        K, cover = problem.K, problem.cover

        def kernel(r0, r1, ub_lt, ub_le):
            return union_search_array(backend.xp, F, cover, want_w, other_w, K, r0, r1,
                                      ub_lt, ub_le, should_stop)
        return kernel
    return _cpu_kernel(problem, should_stop, interrupted)


def _best_union(best: Candidate | None, family, want_w, other_w, K) -> tuple[float, np.ndarray]:
    """The errors and sets of the search's ``best`` candidate (checked against the value
    the kernel reported), or of the better constant when there is none (nothing below the
    upper bound, or no chunk ran)."""
    if best is None:
        return _better_constant(want_w, other_w, K)
    sets = family[best.payload]
    value = union_errors(sets, want_w, other_w)
    assert value == best.value, (value, best.value)
    return value, sets


def exact_union(
    U: np.ndarray,
    want_w: np.ndarray,
    other_w: np.ndarray,
    K: int,
    *,
    max_planes: int | None = None,
    backend: Backend = CPU,
    upper_bound: float = np.inf,
    time_limit: float | None = None,
    n_jobs: int | None = None,
    verbose: int = 0,
    problem: UnionProblem | None = None,
    work=None,
    lower_bound: float | None = None,
) -> UnionResult:
    """Best union of K realizable subsets of the distinct points ``U``.

    ``want_w[i]`` / ``other_w[i]``: integer weight of the samples at point ``i`` of the union
    class / of the other class. ``max_planes`` keeps only the hyperplanes through the first
    ``max_planes`` D-subsets (lexicographic order): the result is then the best union of
    that family only (``complete=False``). ``backend``: ``CPU`` (the Numba bitset kernel) or
    an array-generic backend (the reference on NumPy, the GPU path on CuPy); all return the
    same subsets. ``upper_bound``: only unions with fewer errors are searched for; when there
    is none (or the time limit strikes first), the better of the empty and the full set is
    returned, and ``complete`` then proves that no union errs less than ``upper_bound``.
    ``K`` above :func:`useful_planes` is searched as that many (the result is the same, and
    ``sets`` has that many rows). ``time_limit`` is checked between bounded pieces of work;
    Ctrl-C returns the best union so far (``stop_reason="interrupted"``). ``problem``: the
    same arguments already prepared by :func:`prepare_union`; ``work`` and
    ``lower_bound``: the progress line's ETA and gap (see :func:`run_search`).

    For K = 1 (and no ``max_planes``) a union is one realizable subset: the linear
    enumeration (:func:`~exactclf._zero_one._min01.solve_min01`) solves it without the
    candidate family, whose recursion over the planes through more than D points costs
    seconds per 20 points of discrete features.
    """
    t0 = time.perf_counter()
    if problem is None and K == 1 and max_planes is None:
        check_count_weights(np.r_[want_w, other_w], "the exact maxout search")
        return _one_half_space(U, want_w, other_w, backend=backend, upper_bound=upper_bound,
                               time_limit=time_limit, n_jobs=n_jobs, verbose=verbose)
    if problem is None:
        try:
            problem = prepare_union(U, want_w, other_w, K, max_planes,
                                    None if time_limit is None else t0 + time_limit)
        except TimeoutError:
            # the candidates alone outlast the budget (degenerate points): the better
            # constant, unproven
            value, sets = _better_constant(want_w, other_w, useful_planes(K, len(U)))
            return UnionResult(value, sets, 0, False, StopReason.TIME_LIMIT)
    K, family, truncated = problem.K, problem.family, problem.truncated
    evaluated, interrupted = [], []
    with _interruptible() as stop:
        if time_limit is not None:
            time_limit = max(time_limit - (time.perf_counter() - t0), 0.0)
        token = _register_search(stop)
        deadline = None if time_limit is None else time.time() + time_limit

        def should_stop():
            return _stop_requested(token, deadline)

        gpu = _gpu_search(backend, problem)
        kernel = _chunk_kernel(problem, want_w, other_w, backend, gpu, should_stop,
                               interrupted)

        def scan(r0, r1, ub_lt, ub_le):
            val, idx, n_eval, r_stop = kernel(r0, r1, ub_lt, ub_le)
            evaluated.append(n_eval)
            best = Candidate(float(val), int(idx[0]), idx.copy()) if idx[0] >= 0 else None
            return ChunkResult(best, [], r_stop)

        try:
            # the GPU runs one chunk at a time: more workers would only queue for it, and
            # shrink the chunks that the rate measured per worker sizes
            out = run_search(len(family), scan, lambda pending, bound: [],
                             upper_bound=upper_bound, time_limit=time_limit,
                             n_jobs=1 if gpu is not None else n_jobs, verbose=verbose,
                             desc="Deep-ICE",
                             chunk_size=64 if gpu is None else _GPU_FIRST_CHUNK,
                             lower_bound=lower_bound, work=work)
        finally:
            _end_search(token)
    out.best = min([c for c in [out.best] if c is not None] + interrupted, default=None)
    value, sets = _best_union(out.best, family, want_w, other_w, K)
    return UnionResult(value, sets, int(sum(evaluated)), out.complete and not truncated,
                       out.stop_reason or (StopReason.MAX_CANDIDATES if truncated else None))
