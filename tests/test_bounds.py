"""Lower bounds on the minimum weighted 0-1 loss: never above the optimum."""

import numpy as np
import pytest
from _helpers import brute_force_min01, ctrl_c_after_first, random_instance

from exactclf._partition import error_blocks
from exactclf._zero_one import _bounds
from exactclf._zero_one._bounds import (
    conflict_bound,
    cover_bound,
    lower_bound,
    partition_bound,
)
from exactclf._zero_one._iis import IISOracle
from exactclf._zero_one._min01 import solve_min01

KINDS = ["gaussian", "grid", "collinear", "flat"]


def _instance(kind, seed, n_lo=15, n_hi=40):
    rng = np.random.default_rng(seed)
    d = 1 + seed % 5
    Z, wpos, wneg = random_instance(rng, kind, int(rng.integers(n_lo, n_hi)), d)
    if seed % 3 == 0:
        wneg = wneg * rng.uniform(0.3, 2.0, len(wneg))
    return Z, wpos, wneg


def _assert_valid(bound, wpos, wneg, opt):
    base = conflict_bound(wpos, wneg).value
    assert base - 1e-12 <= bound.value <= opt + 1e-9 * max(1.0, opt)
    assert isinstance(bound.method, str) and bound.method


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(6))
def test_bounds_never_exceed_the_optimum(kind, seed):
    Z, wpos, wneg = _instance(kind, seed)
    opt = solve_min01(Z, wpos, wneg).value
    for size in (4, 9):
        _assert_valid(partition_bound(Z, wpos, wneg, block_size=size, random_state=seed),
                      wpos, wneg, opt)
        _assert_valid(partition_bound(Z, wpos, wneg, block_size=size, blocks="random",
                                      random_state=seed), wpos, wneg, opt)
    incumbent = solve_min01(Z, wpos, wneg, time_limit=0.01).positive
    _assert_valid(partition_bound(Z, wpos, wneg, blocks="random", incumbent=incumbent,
                                  time_limit=0.3, random_state=seed), wpos, wneg, opt)
    _assert_valid(partition_bound(Z, wpos, wneg, block_size=9, solver="iis"), wpos, wneg, opt)
    _assert_valid(cover_bound(Z, wpos, wneg, random_state=seed), wpos, wneg, opt)
    _assert_valid(cover_bound(Z, wpos, wneg, mip=False), wpos, wneg, opt)
    _assert_valid(lower_bound(Z, wpos, wneg, time_limit=0.5), wpos, wneg, opt)


@pytest.mark.parametrize("seed", range(8))
def test_bounds_against_brute_force(seed):
    rng = np.random.default_rng(50 + seed)
    Z, wpos, wneg = random_instance(rng, KINDS[seed % 4], int(rng.integers(4, 10)),
                                    1 + seed % 3)
    opt = brute_force_min01(Z, wpos, wneg)
    _assert_valid(partition_bound(Z, wpos, wneg, block_size=3), wpos, wneg, opt)
    _assert_valid(partition_bound(Z, wpos, wneg, blocks="random", time_limit=1.0,
                                  random_state=seed), wpos, wneg, opt)
    _assert_valid(cover_bound(Z, wpos, wneg), wpos, wneg, opt)


@pytest.mark.parametrize("limit", [1e-4, 1e-2])
def test_tiny_budgets_stay_valid(limit):
    rng = np.random.default_rng(4)
    Z = rng.normal(size=(60, 3))
    y = Z[:, 0] + rng.normal(size=60) > 0
    wpos, wneg = y * 1.0, ~y * 1.0
    opt = solve_min01(Z, wpos, wneg).value
    for f in (partition_bound, cover_bound, lower_bound):
        _assert_valid(f(Z, wpos, wneg, time_limit=limit), wpos, wneg, opt)


def test_one_block_partition_is_the_optimum():
    rng = np.random.default_rng(2)
    Z, wpos, wneg = random_instance(rng, "grid", 30, 2)
    opt = solve_min01(Z, wpos, wneg).value
    for solver in ("ice", "iis"):
        res = partition_bound(Z, wpos, wneg, block_size=len(Z), solver=solver)
        assert res.value == opt
        assert res.method == f"partition (1/1 blocks of ~{len(Z)} points solved)"


def test_bounds_are_informative_on_a_noisy_halfspace():
    """Beyond the conflicting duplicates (0 here), each method proves a positive bound."""
    rng = np.random.default_rng(9)
    Z = rng.normal(size=(80, 2))
    y = Z[:, 0] + 0.6 * rng.normal(size=80) > 0
    wpos, wneg = y * 1.0, ~y * 1.0
    opt = solve_min01(Z, wpos, wneg).value
    assert conflict_bound(wpos, wneg).value == 0
    part = partition_bound(Z, wpos, wneg, block_size=20)
    cover = cover_bound(Z, wpos, wneg)
    assert 0 < part.value <= opt
    assert 0 < cover.value <= opt
    assert cover.method.startswith("IIS")


def test_conflict_bound_counts_minority_weights():
    res = conflict_bound(np.array([3.0, 0.0, 1.5]), np.array([1.0, 2.0, 2.5]))
    assert res.value == 2.5 and res.method == "conflicting duplicates"


def _noisy(seed, n=60, d=3):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, d))
    y = Z[:, 0] + rng.normal(size=n) > 0
    return Z, y * 1.0, ~y * 1.0


def test_partition_stops_on_interrupt_with_a_valid_bound(monkeypatch):
    Z, wpos, wneg = _noisy(6)
    opt = solve_min01(Z, wpos, wneg).value
    calls = []
    real = _bounds._block_bound

    def block(*args):
        value, complete, _ = real(*args)
        calls.append(1)
        return value, complete, len(calls) == 2  # Ctrl-C inside the second block

    monkeypatch.setattr(_bounds, "_block_bound", block)
    res = partition_bound(Z, wpos, wneg, block_size=10)
    assert len(calls) == 2 and res.interrupted
    _assert_valid(res, wpos, wneg, opt)


def test_cover_bound_interrupt_warns_and_keeps_proven_bound(monkeypatch):
    Z, wpos, wneg = _noisy(7)
    opt = solve_min01(Z, wpos, wneg).value
    calls = {"n": 0}
    real = IISOracle.find_iis

    def find(self, keep, objective):
        calls["n"] += 1
        if calls["n"] > 8:
            raise KeyboardInterrupt
        return real(self, keep, objective)

    monkeypatch.setattr(IISOracle, "find_iis", find)
    with pytest.warns(UserWarning, match="interrupted"):
        res = lower_bound(Z, wpos, wneg, time_limit=5.0)
    assert res.interrupted and not res.method.startswith("partition")  # not started
    _assert_valid(res, wpos, wneg, opt)


def _plane_labeling(rng, Z):
    """A realizable labeling: the positive side of a random hyperplane."""
    return Z @ rng.normal(size=Z.shape[1]) + rng.normal() > 0


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("seed", range(8))
def test_partition_around_errors_against_brute_force(seed, n_jobs):
    """Partitions grown around a labeling's errors, searched on one or two workers: never
    above the brute-force optimum, with conflicting duplicates and real weights, and the
    same blocks (so the same bound, every block being solved) whatever ``n_jobs``."""
    rng = np.random.default_rng(80 + seed)
    Z, wpos, wneg = random_instance(rng, KINDS[seed % 4], int(rng.integers(5, 11)),
                                    1 + seed % 3)
    wneg = wneg * rng.uniform(0.5, 2.0, len(wneg))
    opt = brute_force_min01(Z, wpos, wneg)
    incumbent = _plane_labeling(rng, Z)
    for size in (2, 3, 5):
        for r in range(3):  # error-grown and spatial partitions
            kw = dict(block_size=size, incumbent=incumbent, random_state=r, time_limit=30)
            lb = partition_bound(Z, wpos, wneg, n_jobs=n_jobs, **kw)
            _assert_valid(lb, wpos, wneg, opt)
            serial = partition_bound(Z, wpos, wneg, n_jobs=1, **kw)
            assert (lb.value, lb.method) == (serial.value, serial.method)
    _assert_valid(lower_bound(Z, wpos, wneg, time_limit=1.0, incumbent=incumbent,
                              n_jobs=n_jobs), wpos, wneg, opt)


@pytest.mark.parametrize("blocks", ["local", "random"])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_partition_interrupted_between_blocks_keeps_what_is_proven(monkeypatch, n_jobs,
                                                                    blocks):
    """Ctrl-C while the blocks are searched (on the workers or here): the blocks not back
    count with their conflicting duplicates, the bound stays valid and says so."""
    Z, wpos, wneg = _noisy(8)
    opt = solve_min01(Z, wpos, wneg).value
    monkeypatch.setattr(_bounds, "solve_blocks", ctrl_c_after_first(_bounds.solve_blocks))
    with pytest.warns(UserWarning, match="interrupted"):
        res = partition_bound(Z, wpos, wneg, block_size=10, n_jobs=n_jobs, blocks=blocks,
                              incumbent=Z[:, 0] > 0)
    assert res.interrupted
    _assert_valid(res, wpos, wneg, opt)


def test_error_blocks_partition_the_points():
    """Every point in exactly one block; the blocks grown around errors hold at most
    ``size`` points, the nearest to their first error."""
    rng = np.random.default_rng(1)
    for d in (1, 2, 3):
        Z = rng.normal(size=(97, d))
        errors = rng.random(97) < 0.2
        for size in (1, 5, 30, 200):
            blocks = error_blocks(Z, errors, size, rng)
            together = np.sort(np.concatenate(blocks))
            np.testing.assert_array_equal(together, np.arange(97))
            grown = [b for b in blocks if errors[b[0]]]
            assert errors[np.concatenate(grown)].sum() == errors.sum()
            for b in grown:
                assert len(b) <= size
                dist = ((Z[b] - Z[b[0]]) ** 2).sum(axis=1)
                assert np.all(np.diff(dist) >= 0)


@pytest.mark.parametrize("seed", range(4))
def test_random_partitions_merge_up_to_the_optimum(seed):
    """Given time, the random blocks are merged in pairs until one block holds every point:
    its bound is the optimum, and no partition on the way proved more."""
    Z, wpos, wneg = _instance(KINDS[seed], seed, 20, 30)
    opt = solve_min01(Z, wpos, wneg).value
    res = partition_bound(Z, wpos, wneg, blocks="random", block_size=None, time_limit=60,
                          random_state=seed)
    assert res.value == opt
    assert res.method == f"partition (1/1 random blocks of ~{len(Z)} points solved)"


def test_unsolved_blocks_count_with_their_floors():
    """A block the budget leaves unsolved counts with its floor (the sum of its parts'
    bounds from the partition before), or its conflicting duplicates when larger; a block
    on which the incumbent errs no more than its floor is its optimum, not searched."""
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(24, 2))
    wpos = (Z[:, 0] + rng.normal(size=24) > 0) * 1.0
    wneg = 1.0 - wpos
    wpos[0] = wneg[0] = 2.0  # conflicting duplicates at point 0
    blocks = [np.arange(12), np.arange(12, 24)]
    values, solved, interrupted = _bounds._partition_sum(
        Z, wpos, wneg, blocks, None, deadline=0.0, solver="auto", n_jobs=1,
        floors=[1.0, 3.0])
    assert values == [2.0, 3.0] and solved == 0 and not interrupted
    opt = solve_min01(Z[blocks[1]], wpos[blocks[1]], wneg[blocks[1]])
    incumbent = np.zeros(24, dtype=bool)
    incumbent[blocks[1]] = opt.positive
    values, solved, _ = _bounds._partition_sum(
        Z, wpos, wneg, blocks, incumbent, deadline=0.0, solver="auto", n_jobs=1,
        floors=[0.0, opt.value])
    assert values[1] == opt.value and solved == 1
