"""The Numba CUDA kernels against the CPU kernels, on the same inputs: identical results.

They run on a GPU where Numba sees one, and otherwise under Numba's CUDA simulator, which
must be switched on before Numba is imported: ``test_backend.py`` runs this file in a
subprocess with ``NUMBA_ENABLE_CUDASIM=1``, so the default test run covers it. The simulator
runs every thread in Python: the instances are tiny.
"""

import itertools

import numpy as np
import pytest
from _helpers import random_instance
from numba import config, cuda

from exactclf._backend import CPU, Backend
from exactclf._base import merge_duplicates
from exactclf._combinatorics import n_combinations, unrank_combination
from exactclf._geometry import COPLANAR_RTOL, affine_frame, homogeneous, leaf_sides
from exactclf._zero_one import _kernels_cuda
from exactclf._zero_one._kernels_cpu import ice_scan_cpu
from exactclf._zero_one._min01 import _Problem, solve_min01
from exactclf.maxout import _exact
from exactclf.maxout import _kernels_cuda as _union_cuda
from exactclf.maxout._kernels_cpu import union_search_cpu

pytestmark = pytest.mark.skipif(
    not (config.ENABLE_CUDASIM or cuda.is_available()),
    reason="no CUDA device; tests/test_backend.py runs these under NUMBA_ENABLE_CUDASIM=1",
)

#: the GPU backend as the algorithms see it, its array-generic parts on NumPy
CUDA = Backend("gpu", np, cuda=True)


def _instance(seed, D, n=13, weights="counts", flip=False):
    """Points on a small integer grid (duplicates, collinear and coplanar points, ties),
    merged, in the frame of a search: ``(prob, (U, wpos, wneg))``."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(n, D)).astype(float)
    y = rng.integers(0, 2, n) == 1
    w = np.ones(n) if weights == "counts" else rng.uniform(0.1, 3.0, n)
    U, wpos, wneg, _ = merge_duplicates(X, ~y if flip else y, w)
    return _Problem(homogeneous(affine_frame(U).transform(U)), wpos, wneg, CPU), (U, wpos, wneg)


def _cpu_scan(prob, r0, r1, ub_lt, ub_le, capacity=4096):
    buf = np.empty((capacity, 4))
    val, rank, orient, npend, r_stop = ice_scan_cpu(
        prob.Xh, prob.nrm, prob.wpos, prob.wneg, r0, r1, ub_lt, ub_le, COPLANAR_RTOL, buf)
    return val, rank, orient, {int(p[0]): tuple(p[1:]) for p in buf[:npend]}, r_stop


def _gpu_scanner(prob, capacity=4096):
    return _kernels_cuda.IceScanCuda(prob.Xh, prob.nrm, prob.wpos, prob.wneg, COPLANAR_RTOL,
                                     pending_capacity=capacity)


def _assert_defers_what_can_win(cpu_pending, gpu_pending, best):
    """The GPU defers, with the same numbers, every plane that the CPU kernel defers and
    that can still win (errors off the plane plus the least cost on it at most ``best``);
    the others may be pruned by a candidate that another thread found first."""
    gpu = {p[0]: tuple(p[1:]) for p in gpu_pending}
    can_win = {r: p for r, p in cpu_pending.items() if min(p[0], p[1]) + p[2] <= best}
    assert {r: gpu.get(r) for r in can_win} == can_win


def _check_pending(prob, pending):
    """Each pending plane is degenerate and reported with the errors of its two
    orientations off the plane and the least cost on it (integer weights: exact sums)."""
    for rank, ep, em, lb in pending:
        combo = unrank_combination(rank, prob.n, prob.dim)
        codes, ok = leaf_sides(prob.Xh, prob.nrm, combo, COPLANAR_RTOL)
        on, up, down = codes == 0, codes > 0, codes < 0
        assert ok and on.sum() > prob.dim
        assert ep == prob.wneg[up].sum() + prob.wpos[down].sum()
        assert em == prob.wpos[up].sum() + prob.wneg[down].sum()
        assert lb == np.minimum(prob.wpos, prob.wneg)[on].sum()


@pytest.mark.parametrize("D", [1, 2, 3, 4])
@pytest.mark.parametrize("weights", ["counts", "real"])
@pytest.mark.parametrize("flip", [False, True])
def test_scan_is_the_cpu_kernel(D, weights, flip):
    """Whole rank space, no incumbent: the same best candidate (value, lowest rank,
    orientation) and the same deferred degenerate planes among those that can win."""
    for seed in range(2 if D < 4 else 1):
        prob, _ = _instance(10 * D + seed, D, n=13 if D < 4 else 11, weights=weights, flip=flip)
        total = n_combinations(prob.n, prob.dim)
        cpu = _cpu_scan(prob, 0, total, np.inf, np.inf)
        val, rank, orient, pending, r_stop = _gpu_scanner(prob).scan(0, total, np.inf, np.inf)
        assert (val, rank, orient, r_stop) == cpu[:3] + (cpu[4],)
        _assert_defers_what_can_win(cpu[3], pending, val)
        if weights == "counts":
            _check_pending(prob, pending)


@pytest.mark.parametrize("name", ["voicepath", "haberman", "caesarian"])
def test_scan_on_bundled_data(name):
    """A chunk of the searches on the papers' data (integer features, D = 5 for caesarian:
    many degenerate planes): the CPU kernel's result and deferred planes that can win."""
    from exactclf.datasets import load_dataset

    X, y = load_dataset(name, return_X_y=True)
    U, wpos, wneg, _ = merge_duplicates(X, y == 1, np.ones(len(y)))
    prob = _Problem(homogeneous(affine_frame(U).transform(U)), wpos, wneg, CPU)
    cpu = _cpu_scan(prob, 1000, 1100, np.inf, np.inf)
    val, rank, orient, pending, r_stop = _gpu_scanner(prob).scan(1000, 1100, np.inf, np.inf)
    assert (val, rank, orient, r_stop) == cpu[:3] + (cpu[4],)
    _assert_defers_what_can_win(cpu[3], pending, val)


@pytest.mark.parametrize("D", [2, 3])
def test_incumbents_and_ties(D):
    """The incumbent semantics of the CPU kernel on a sub-range: ``ub_lt`` beats ties,
    ``ub_le`` loses them, and a run of several ranks per thread changes nothing."""
    prob, _ = _instance(7 + D, D, n=11)
    total = n_combinations(prob.n, prob.dim)
    r0, r1 = total // 5, total - 3
    best = _cpu_scan(prob, r0, r1, np.inf, np.inf)[0]
    gpu = _gpu_scanner(prob)
    for ub_lt, ub_le in [(best, np.inf), (best + 1, best), (np.inf, best), (best + 1, best - 1),
                         (best + 0.5, np.inf)]:
        cpu = _cpu_scan(prob, r0, r1, ub_lt, ub_le)
        for target_threads in (1 << 18, 3):
            _kernels_cuda._TARGET_THREADS, saved = target_threads, _kernels_cuda._TARGET_THREADS
            try:
                val, rank, orient, _, r_stop = gpu.scan(r0, r1, ub_lt, ub_le)
            finally:
                _kernels_cuda._TARGET_THREADS = saved
            assert (val, rank, orient, r_stop) == cpu[:3] + (cpu[4],), (ub_lt, ub_le)


def test_pending_overflow_resumes():
    """A full pending buffer stops the chunk at ``r_stop``; resuming from there, as the
    search driver does, finds the same best and defers every plane that can win."""
    prob, _ = _instance(38, 3, n=12)
    total = n_combinations(prob.n, prob.dim)
    cpu = _cpu_scan(prob, 0, total, np.inf, np.inf)
    assert len(cpu[3]) > 2
    gpu = _gpu_scanner(prob, capacity=2)
    r0, found, pending, stops = 0, [], [], 0
    while r0 < total:
        val, rank, _, chunk_pending, r_stop = gpu.scan(r0, total, np.inf, np.inf)
        assert r0 < r_stop and all(p[0] < r_stop for p in chunk_pending)
        if rank >= 0:
            found.append((val, rank))
        pending.extend(chunk_pending)
        stops += r_stop < total
        r0 = r_stop
    assert stops > 0 and min(found) == cpu[:2]
    _assert_defers_what_can_win(cpu[3], pending, cpu[0])


@pytest.mark.parametrize("D", [2, 3])
@pytest.mark.parametrize("weights", ["counts", "real"])
def test_solve_min01_returns_the_cpu_model(D, weights):
    """The whole search (chunks, incumbents, degenerate planes resolved on the host) on the
    CUDA backend: the CPU's optimum and labeling."""
    _, (U, wpos, wneg) = _instance(3 + D, D, n=14, weights=weights)
    cpu = solve_min01(U, wpos, wneg, backend=CPU)
    gpu = solve_min01(U, wpos, wneg, backend=CUDA)
    assert cpu.complete and gpu.complete and cpu.value == gpu.value
    np.testing.assert_array_equal(cpu.positive, gpu.positive)


def test_ice_classifier_on_the_cuda_backend(monkeypatch):
    """``ICEClassifier`` through the CUDA kernel: the CPU's model, duplicates and weights
    included."""
    from exactclf import ICEClassifier
    from exactclf.linear import _ice

    rng = np.random.default_rng(0)
    X = rng.integers(0, 5, size=(24, 2)).astype(float)
    y = (X[:, 0] + rng.normal(0, 1.5, 24) > 2).astype(int)
    w = rng.integers(1, 4, 24).astype(float)
    cpu = ICEClassifier(method="exact", device="cpu").fit(X, y, sample_weight=w)
    monkeypatch.setattr(_ice, "resolve_device", lambda *args, **kwargs: CUDA)
    gpu = ICEClassifier(method="exact", device="gpu").fit(X, y, sample_weight=w)
    assert gpu.is_optimal_ and gpu.training_errors_ == cpu.training_errors_
    np.testing.assert_array_equal(gpu.coef_, cpu.coef_)
    np.testing.assert_array_equal(gpu.predict(X), cpu.predict(X))


@pytest.fixture
def lanes(monkeypatch):
    """Blocks of 3 threads under the simulator, where each thread is a Python thread (a GPU
    runs 32): a bucket of the last level then takes several rounds of its block."""
    if config.ENABLE_CUDASIM:
        monkeypatch.setattr(_union_cuda, "_LANES", 3)


def _union_problem(seed, kind, K, flip):
    rng = np.random.default_rng(seed)
    Z, wpos, wneg = random_instance(rng, kind, int(rng.integers(8, 16)), int(rng.integers(1, 4)))
    want, other = (wneg, wpos) if flip else (wpos, wneg)
    return Z, want, other, _exact.prepare_union(Z, want, other, K)


@pytest.mark.parametrize("kind", ["gaussian", "grid", "collinear", "flat"])
@pytest.mark.parametrize("K", [1, 2, 3])
@pytest.mark.usefixtures("lanes")
def test_union_search_is_the_cpu_kernel(kind, K):
    """Whole and partial ranges of first indices, incumbents that tie or beat the best, both
    polarities, threads resumed over several launches: the CPU kernel's K-tuple."""
    for flip in (False, True):
        # the first seed whose family has four rows, so that every range below is a real one
        problem = next(p for seed in itertools.count(K)
                       if len((p := _union_problem(seed, kind, K, flip)[3]).family) >= 4)
        M = len(problem.family)
        gpu = _union_cuda.UnionSearchCuda(problem.args, problem.index, problem.K)
        best = union_search_cpu(*problem.args, problem.K, 0, M, np.inf, np.inf)[0]
        for a, b, ub_lt, ub_le in [(0, M, np.inf, np.inf), (M // 3, M, best + 1, best),
                                   (0, M // 2, best, np.inf), (1, M - 1, np.inf, best - 1)]:
            cpu = union_search_cpu(*problem.args, problem.K, a, b, ub_lt, ub_le)
            for steps in (1 << 14, 3) if a == 0 else (1 << 14,):
                _union_cuda._STEPS, saved = steps, _union_cuda._STEPS
                try:
                    val, idx, _, r_stop = gpu.search(a, b, ub_lt, ub_le)
                finally:
                    _union_cuda._STEPS = saved
                assert (val, r_stop) == (cpu[0], b), (a, b, ub_lt, ub_le)
                np.testing.assert_array_equal(idx, cpu[1])


@pytest.mark.usefixtures("lanes")
def test_union_search_stops_between_launches():
    """``should_stop`` ends a search between launches: the tuple returned is a real one,
    and resuming from ``r_stop`` (the first index not settled) finds the CPU kernel's."""
    # few points: under the simulator a launch of 250 blocks (13 points) takes minutes
    Z, want, other = random_instance(np.random.default_rng(4), "gaussian", 7, 2)
    problem = _exact.prepare_union(Z, want, other, 2)
    M = len(problem.family)
    cpu = union_search_cpu(*problem.args, 2, 0, M, np.inf, np.inf)
    gpu = _union_cuda.UnionSearchCuda(problem.args, problem.index, 2)
    _union_cuda._STEPS, saved = 1, _union_cuda._STEPS
    try:
        val, idx, _, r_stop = gpu.search(0, M, np.inf, np.inf, lambda: True)
    finally:
        _union_cuda._STEPS = saved
    assert r_stop < M
    if idx[0] >= 0:
        assert val == _exact.union_errors(problem.family[idx], want, other)
    rest = gpu.search(r_stop, M, np.inf, np.inf)
    assert rest[3] == M
    best = min((val, tuple(idx)), (rest[0], tuple(rest[1])))
    assert best == (cpu[0], tuple(cpu[1]))


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.usefixtures("lanes")
def test_exact_union_returns_the_cpu_network(K):
    """The whole exact search on the CUDA backend, chunks and workers included."""
    Z, want, other, _ = _union_problem(30 + K, "grid", K, False)
    cpu = _exact.exact_union(Z, want, other, K)
    gpu = _exact.exact_union(Z, want, other, K, backend=CUDA, n_jobs=2)
    assert cpu.complete and gpu.complete and cpu.value == gpu.value
    np.testing.assert_array_equal(cpu.sets, gpu.sets)
