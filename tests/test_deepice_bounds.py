"""Deep-ICE proven lower bounds (partition, coreset pass sums), the portfolio of
method="auto", the sampled cost estimate and the progress line, against brute force."""

import dataclasses
import os
import re
import signal
import time
import warnings

import numpy as np
import pytest
from _helpers import brute_force_network, brute_force_union, ctrl_c_after_first, random_instance
from sklearn.exceptions import ConvergenceWarning
from test_deepice import _counting_kernel, _errors

from exactclf import DeepICEMaxoutClassifier, _resources
from exactclf._base import merge_duplicates
from exactclf._partition import error_blocks, level_blocks
from exactclf._search import ChunkResult, run_search
from exactclf._zero_one._bounds import LowerBound
from exactclf._zero_one._local_cover import LocalCoverBound, local_cover_bound
from exactclf.maxout import _bounds, _coreset, _deepice, _exact, _portfolio
from exactclf.maxout._bounds import level_rows, partition_bound, spatial_blocks
from exactclf.maxout._cliques import clique_cover_bound
from exactclf.maxout._coreset import CoresetResult, coreset_union
from exactclf.maxout._exact import (
    estimate_union,
    exact_union,
    prepare_union,
    union_errors,
    union_on,
)
from exactclf.maxout._joint import joint_cover_bound

KINDS = ["gaussian", "grid", "collinear", "flat"]


def _instance(seed, n_max=7):
    rng = np.random.default_rng(seed)
    kind = KINDS[seed % 4]
    Z, wpos, wneg = random_instance(rng, kind, int(rng.integers(3, n_max + 1)),
                                    int(rng.integers(1, 4)))
    if seed % 3 == 0:  # conflicting duplicates and heavier points
        wpos = wpos + rng.integers(0, 2, len(Z))
    return rng, Z, wpos, wneg


def _noisy_disk(seed, n, noise):
    """Points in 2-D labelled by a disk whose radius is blurred by ``noise``."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = ((X**2).sum(axis=1) + noise * rng.normal(size=n) > 1.2).astype(int)
    return X, y


def _no_pair_cover(monkeypatch):
    """The portfolio without its pair obstruction cover (which proves the noisy disks
    optimal): a bound that stalls."""
    monkeypatch.setattr(_portfolio, "clique_cover_bound", lambda Z, want_w, other_w, K, **kw:
                        LocalCoverBound(float(np.minimum(want_w, other_w).sum()),
                                        "conflicting duplicates"))


def test_spatial_blocks_partition_the_points():
    rng = np.random.default_rng(0)
    for d in (1, 2, 3):
        Z = rng.normal(size=(101, d))
        for size in (1, 7, 30, 200):
            for blocks in (spatial_blocks(Z, size, rng),
                           error_blocks(Z, rng.random(101) < 0.3, size, rng)):
                together = np.sort(np.concatenate(blocks))
                np.testing.assert_array_equal(together, np.arange(101))
                assert max(len(b) for b in blocks) <= max(size, 1) + 2


@pytest.mark.parametrize("seed", range(16))
def test_partition_bound_never_exceeds_the_optimum(seed):
    """Any partition (blocks of 2 or 3 points, nearby or not), with or without a
    heuristic's cap, both polarities, K = 1..3: the bound is at most the brute-force
    optimum; with one block of all points it is the optimum."""
    rng, Z, wpos, wneg = _instance(seed)
    for K in (1, 2, 3):
        for want_w, other_w in ((wpos, wneg), (wneg, wpos)):
            best = brute_force_union(Z, want_w, other_w, K)
            planes = [(rng.normal(size=Z.shape[1]), rng.normal())] * K
            for size in (2, 3):
                for cap in (None, planes):
                    lb = partition_bound(Z, want_w, other_w, K, time_limit=30, planes=cap,
                                         block_size=size, random_state=seed,
                                         max_partitions=4)
                    assert float(np.minimum(want_w, other_w).sum()) <= lb.value <= best
            whole = partition_bound(Z, want_w, other_w, K, time_limit=30,
                                    block_size=len(Z))
            assert whole.value == best and whole.method in ("exact", "conflicting duplicates")
            assert isinstance(whole, LowerBound)  # the bound type of the linear problem too


@pytest.mark.parametrize("seed", range(8))
def test_coreset_pass_sums_are_lower_bounds(seed):
    rng, Z, wpos, wneg = _instance(seed, n_max=7)
    for K in (1, 2):
        for want_w, other_w in ((wpos, wneg), (wneg, wpos)):
            best = brute_force_union(Z, want_w, other_w, K)
            res = coreset_union(Z, want_w, other_w, K, block_size=2, stop_size=2,
                                rng=np.random.default_rng(seed))
            assert res.lower_bound <= best <= res.value
            inside = union_on(Z, res.planes)
            assert res.value == float(other_w[inside].sum() + want_w[~inside].sum())


@pytest.mark.parametrize("seed", range(24))
def test_pair_obstruction_cover_never_exceeds_the_optimum(seed):
    """The cover of obstructions of K + 1 pairwise blocked points, K = 1..3, both
    polarities, random and degenerate instances with conflicts: at most the brute-force
    optimum of networks of K half-spaces, at least the conflicts."""
    rng, Z, wpos, wneg = _instance(seed, n_max=8)
    for K in (1, 2, 3):
        for want_w, other_w in ((wpos, wneg), (wneg, wpos)):
            best = brute_force_union(Z, want_w, other_w, K)
            lb = clique_cover_bound(Z, want_w, other_w, K, time_limit=20, random_state=seed)
            assert float(np.minimum(want_w, other_w).sum()) <= lb.value <= best
            assert not lb.interrupted


@pytest.mark.parametrize("seed", range(24))
def test_joint_cover_never_exceeds_the_optimum(seed):
    """One cover of the obstructions and of the blocks of several partitions (blocks of 2
    to 4 points, grids and blocks grown around a network's errors), K = 1..3, both
    polarities, with conflicts and heavier points: at most the brute-force optimum, and
    at least the obstruction cover's bound and every partition's sum (its rows include
    theirs)."""
    rng, Z, wpos, wneg = _instance(300 + seed, n_max=8)
    for K in (1, 2, 3):
        for want_w, other_w in ((wpos, wneg), (wneg, wpos)):
            best = brute_force_union(Z, want_w, other_w, K)
            local = local_cover_bound(Z, want_w, other_w, hull_only=True, time_limit=10,
                                      random_state=seed)
            pairs = clique_cover_bound(Z, want_w, other_w, K, time_limit=10, cuts=local.cuts,
                                       random_state=seed)
            planes = [(rng.normal(size=Z.shape[1]), rng.normal()) for _ in range(K)]
            sums, blocks = [], []
            for r, size in enumerate((2, 3, 4)):
                lb = partition_bound(Z, want_w, other_w, K, time_limit=30, planes=planes,
                                     block_size=size, random_state=r, max_partitions=1)
                sums.append(lb.value)
                blocks += lb.blocks
                assert all(v <= brute_force_union(Z, want_w, other_w, K, rows=b)
                           for b, v in lb.blocks)
            joint = joint_cover_bound(want_w, other_w, pairs.cuts, blocks, time_limit=10)
            assert max(pairs.value, *sums) <= joint.value <= best
            assert not joint.interrupted


def test_joint_cover_ignores_obstructions_met_at_a_tie():
    """A point with equal weights in both classes costs the same on either side: an
    obstruction holding it is met there for free and adds nothing; without it, it adds."""
    want, other = np.array([1.0, 1.0, 0.5]), np.array([0.0, 0.0, 0.5])
    blocks = [(np.array([1]), 0.0)]
    assert joint_cover_bound(want, other, [np.array([0, 2])], blocks, time_limit=5).value == 0.5
    assert joint_cover_bound(want, other, [np.array([0, 1])], blocks, time_limit=5).value == 1.5


def _is_level_window(U, block):
    """Whether ``block`` is the rows whose value of some feature lies between its least and
    largest value in the block, among all rows or among those at one value of another
    feature that the whole block shares."""
    for g in range(U.shape[1]):
        lo, hi = U[block, g].min(), U[block, g].max()
        window = (U[:, g] >= lo) & (U[:, g] <= hi)
        shared = [f for f in range(U.shape[1])
                  if f != g and np.all(U[block, f] == U[block[0], f])]
        groups = [np.ones(len(U), dtype=bool)] + [U[:, f] == U[block[0], f] for f in shared]
        if any(np.array_equal(np.flatnonzero(window & at), np.sort(block)) for at in groups):
            return True
    return False


def test_level_blocks_are_windows_whatever_the_units_and_the_row_order():
    """Every block is a window of consecutive levels of a feature with few values (within
    one level of another), of 3 to max_size rows, each once; an affine change of units
    (reversing a feature's order too) gives the same blocks, permuted rows the permuted
    blocks, and a feature with more than ``max_levels`` values cuts none; ``max_rows``
    keeps the smallest blocks."""
    rng = np.random.default_rng(0)
    U = np.unique(np.c_[rng.integers(0, 2, 80), rng.integers(0, 5, 80),
                        rng.normal(size=80)], axis=0)
    blocks = level_blocks(U, max_size=30)
    keys = {tuple(sorted(b)) for b in blocks}
    assert len(keys) == len(blocks) > 10
    assert [len(b) for b in blocks] == sorted(len(b) for b in blocks)
    for b in blocks:
        assert 3 <= len(b) <= 30 and _is_level_window(U, b)
        assert len(np.unique(U[b, 2])) == len(b)  # the continuous feature cuts nothing
    moved = U * np.array([-3.0, 2.5, 1e-3]) + np.array([7.0, -1e6, 5.0])
    assert {tuple(sorted(b)) for b in level_blocks(moved, max_size=30)} == keys
    perm = rng.permutation(len(U))
    assert ({tuple(sorted(perm[b])) for b in level_blocks(U[perm], max_size=30)} == keys)
    assert level_blocks(U[:, 2:], max_size=30) == []
    few = level_blocks(U, max_size=30, max_rows=100)  # the smallest blocks, within 100 rows
    assert 0 < sum(map(len, few)) <= 100
    assert [b.tolist() for b in few] == [b.tolist() for b in blocks[:len(few)]]


def test_level_rows_never_exceed_their_blocks_optimum():
    """Level blocks of integer-grid points (8 instances, K = 1..3, both polarities, with and
    without a network's cap, conflicts and heavier points): each block proven is above its
    conflicting duplicates and at most its brute-force optimum, and some are proven."""
    proven = 0
    for seed in range(8):
        rng = np.random.default_rng(400 + seed)
        Z, wpos, wneg = random_instance(rng, "grid", int(rng.integers(6, 12)), 2 + seed % 2)
        if seed % 2:
            wpos = wpos + rng.integers(0, 2, len(Z))
        blocks = level_blocks(Z, max_size=len(Z))
        assert blocks
        for K in (1, 2, 3):
            for want_w, other_w in ((wpos, wneg), (wneg, wpos)):
                planes = [(rng.normal(size=Z.shape[1]), rng.normal()) for _ in range(K)]
                for cap in (None, planes):
                    rows, interrupted = level_rows(Z, want_w, other_w, K, blocks,
                                                   planes=cap, time_limit=30)
                    assert not interrupted
                    for b, v in rows:
                        assert np.minimum(want_w[b], other_w[b]).sum() < v
                        assert v <= brute_force_union(Z, want_w, other_w, K, rows=b)
                    proven += len(rows)
    assert proven


def test_portfolio_bounds_blocks_at_few_levels(monkeypatch):
    """The portfolio (K = 2) on points with a feature of 4 levels: its level blocks are searched,
    each proven one is at most its block's optimum, and the fit's bound is at most the
    brute-force optimum."""
    monkeypatch.setattr(_deepice, "_MAX_EXACT_PLANES", 0)
    calls = []

    def spy(Z, want_w, other_w, K, blocks, **kw):
        rows, interrupted = level_rows(Z, want_w, other_w, K, blocks, **kw)
        calls.append((Z, want_w, other_w, K, rows))
        return rows, interrupted

    monkeypatch.setattr(_portfolio, "level_rows", spy)
    monkeypatch.setattr(_deepice, "_MAX_EXACT_LINEAR", 0)
    monkeypatch.setattr(_portfolio, "PLANE_RATE", 1e-9)  # and no exact search of networks
    # without the obstruction covers and the heuristic's pass sums, which prove such small
    # sets at once
    _no_pair_cover(monkeypatch)
    monkeypatch.setattr(_portfolio, "coreset_union", lambda *a, **k: dataclasses.replace(
        coreset_union(*a, **k), lower_bound=0.0))
    monkeypatch.setattr(_portfolio, "local_cover_bound", lambda Z, want_w, other_w, **kw:
                        LocalCoverBound(float(np.minimum(want_w, other_w).sum()),
                                        "conflicting duplicates"))
    rng = np.random.default_rng(6)
    X = np.c_[rng.integers(0, 4, 14), rng.normal(size=14)]
    y = (np.abs(X[:, 1] - 0.3 * X[:, 0]) + rng.normal(size=14) > 0.6).astype(int)
    clf = DeepICEMaxoutClassifier(n_hyperplanes=2, time_limit=5, random_state=0,
                                  device="cpu").fit(X, y)
    assert clf.method_ == "portfolio" and calls and any(rows for *_, rows in calls)
    Z, wpos, wneg = merge_duplicates(X, y == 1, np.ones(14))[:3]
    best = brute_force_network(Z, wpos, wneg, 2)
    assert clf.lower_bound_ <= best <= clf.training_errors_ == _errors(clf, X, y)
    for Zf, want_w, other_w, K, rows in calls:
        for b, v in rows:
            assert v <= brute_force_union(Zf, want_w, other_w, K, rows=b)


def test_ctrl_c_in_the_level_blocks_keeps_what_is_proven(monkeypatch):
    """Ctrl-C in the second level block's search: a warning, at most the first block's row
    kept (as the uninterrupted run proves it), the rest dropped; and a portfolio whose
    level phase is interrupted returns its network, realized, marked interrupted and not
    optimal."""
    rng = np.random.default_rng(6)
    Z = np.c_[rng.integers(0, 4, 14), rng.normal(size=14)]
    y = np.abs(Z[:, 1] - 0.3 * Z[:, 0]) + rng.normal(size=14) > 0.6
    want_w, other_w = y.astype(float), (~y).astype(float)
    blocks = level_blocks(Z)
    full, _ = level_rows(Z, want_w, other_w, 2, blocks, time_limit=30, n_jobs=1)
    calls = []

    def second_interrupts(*args):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return _bounds._block_optimum(*args)

    monkeypatch.setattr(_bounds, "_block_optimum", second_interrupts)
    with pytest.warns(RuntimeWarning, match="level bound interrupted"):
        rows, interrupted = level_rows(Z, want_w, other_w, 2, blocks, time_limit=30,
                                       n_jobs=1)
    assert interrupted and len(calls) == 2
    # what the first search proved, if anything, and nothing else
    proven = [(b.tolist(), v) for b, v in full]
    assert len(rows) <= 1 and all((b.tolist(), v) in proven for b, v in rows)
    monkeypatch.undo()

    monkeypatch.setattr(_deepice, "_MAX_EXACT_PLANES", 0)
    monkeypatch.setattr(_portfolio, "PLANE_RATE", 1e-9)
    _no_pair_cover(monkeypatch)
    monkeypatch.setattr(_portfolio, "local_cover_bound", lambda Z, want_w, other_w, **kw:
                        LocalCoverBound(float(np.minimum(want_w, other_w).sum()),
                                        "conflicting duplicates"))
    monkeypatch.setattr(_portfolio, "coreset_union", lambda *a, **k: dataclasses.replace(
        coreset_union(*a, **k), lower_bound=0.0))
    monkeypatch.setattr(_portfolio, "level_rows", lambda *a, **k: ([], True))
    clf = DeepICEMaxoutClassifier(n_hyperplanes=2, time_limit=5, random_state=0,
                                  device="cpu")
    with pytest.warns(ConvergenceWarning, match="interrupted"):
        clf.fit(Z, y.astype(int))
    assert clf.stop_reason_ == "interrupted" and not clf.is_optimal_
    assert clf.training_errors_ == _errors(clf, Z, y.astype(int)) >= clf.lower_bound_


@pytest.mark.parametrize("seed", range(6))
def test_pair_obstructions_of_blocked_triangles(seed):
    """Triangles of the union's class whose sides are blocked by points of the other class
    (their midpoints): no point lies in the hull of the others, so the K-free cover proves
    nothing, but networks of K = 2 half-spaces err on each triangle, and the pair cover
    proves it; K = 3 fits one triangle. Every obstruction kept is one (brute force)."""
    rng = np.random.default_rng(seed)
    tris = []
    for k in range(1 + seed % 2):
        r, phi = 1 + rng.random(), rng.random()
        angles = phi + 2 * np.pi * np.arange(3) / 3
        tris.append(10.0 * k + r * np.c_[np.cos(angles), np.sin(angles)])
    P = np.vstack(tris)
    M = np.vstack([(t + np.roll(t, 1, axis=0)) / 2 for t in tris])
    Z = np.vstack([P, M])
    want = np.r_[np.ones(len(P)), np.zeros(len(M))]
    if len(tris) == 1:  # (a vertex may lie in the hull of midpoints of both triangles)
        assert local_cover_bound(Z, want, 1 - want, hull_only=True, time_limit=10).value == 0
    for K in (2, 3):
        lb = clique_cover_bound(Z, want, 1 - want, K, time_limit=20, random_state=seed)
        best = brute_force_union(Z, want, 1 - want, K)
        assert lb.value <= best
        if K == 2:
            assert lb.value == len(tris)
        elif len(tris) == 1:
            assert lb.value == best == 0
        for cut in lb.cuts:  # each obstruction: no network of K half-spaces fits it
            assert brute_force_union(Z, want, 1 - want, K, rows=cut) >= 1


@pytest.mark.parametrize("seed", range(8))
def test_portfolio_never_worse_than_the_best_plane(monkeypatch, seed):
    """One half-space is a network too: whatever the heuristic returns (here: the empty
    network), the portfolio returns no more errors than the exact linear optimum."""
    monkeypatch.setattr(_deepice, "_MAX_EXACT_PLANES", 0)

    def no_heuristic(Z, want_w, other_w, K, **kwargs):
        empty = (np.zeros(Z.shape[1]), -1.0)
        return CoresetResult(float(want_w.sum()), [empty] * K, 0.0, 0, 0, None)

    monkeypatch.setattr(_portfolio, "coreset_union", no_heuristic)
    monkeypatch.setattr(_portfolio, "PLANE_RATE", 1e-9)  # and no exact search of networks
    rng = np.random.default_rng(300 + seed)
    n = 40
    X = rng.normal(size=(n, 2))
    y = ((X[:, 0] > 0) ^ (X[:, 1] > 0.3) ^ (rng.random(n) < 0.15)).astype(int)
    if seed % 2:
        y = 1 - y
    linear = DeepICEMaxoutClassifier(n_hyperplanes=1, method="exact").fit(X, y)
    assert linear.is_optimal_
    for K in (2, 3):
        clf = DeepICEMaxoutClassifier(n_hyperplanes=K, time_limit=20, coreset_size=3,
                                      coreset_stop=2, n_shuffles=1, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X, y)
        assert clf.method_ == "portfolio"
        assert clf.training_errors_ == _errors(clf, X, y) <= linear.training_errors_


@pytest.mark.parametrize("seed", range(12))
def test_portfolio_against_brute_force(monkeypatch, seed):
    """method="auto" forced onto the portfolio (heuristic, partition bounds, sampled exact
    search): the errors are those of predict, the bound holds for both polarities, and an
    optimal claim is the brute-force optimum."""
    monkeypatch.setattr(_deepice, "_MAX_EXACT_PLANES", 0)
    monkeypatch.setattr(_deepice, "_MAX_EXACT_LINEAR", 0)
    rng, Z, wpos, wneg = _instance(100 + seed)
    X = np.repeat(Z, (wpos + wneg).astype(int), axis=0)
    y = np.concatenate([np.r_[np.ones(int(p)), np.zeros(int(q))]
                        for p, q in zip(wpos, wneg, strict=True)]).astype(int)
    if len(set(y)) < 2:
        return
    for K in (1, 2, 3):
        best = brute_force_network(Z, wpos, wneg, K)
        clf = DeepICEMaxoutClassifier(n_hyperplanes=K, time_limit=20, coreset_size=3,
                                      coreset_stop=2, random_state=seed, device="cpu")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X, y)
        assert clf.method_ == "portfolio"
        assert clf.training_errors_ == _errors(clf, X, y) >= best >= clf.lower_bound_
        assert clf.is_optimal_ == (clf.training_errors_ == clf.lower_bound_)
        assert 0 <= clf.gap_ <= 1
        assert clf.lower_bound_method_ in ("exact", "partition", "conflicting duplicates",
                                          "linear")


def test_portfolio_proves_a_planted_optimum(monkeypatch):
    """A noisy slab of 60 points (K = 2) through the portfolio: proven, and equal to the
    exact search's optimum."""
    monkeypatch.setattr(_deepice, "_MAX_EXACT_PLANES", 0)
    rng = np.random.default_rng(7)
    X = rng.normal(size=(60, 2))
    y = (np.abs(X[:, 0]) + 0.3 * rng.normal(size=60) > 0.7).astype(int)
    exact = DeepICEMaxoutClassifier(method="exact", device="cpu").fit(X, y)
    clf = DeepICEMaxoutClassifier(time_limit=60, random_state=0, device="cpu").fit(X, y)
    assert clf.method_ == "portfolio" and clf.is_optimal_ and clf.gap_ == 0
    assert clf.training_errors_ == exact.training_errors_ == _errors(clf, X, y)


def test_portfolio_proves_by_its_exact_search(monkeypatch):
    """Partition bounds that never improve: the proof must come from the exact search
    below the heuristic's network (sampled, then run), and it must be the optimum."""
    monkeypatch.setattr(_deepice, "_MAX_EXACT_PLANES", 0)
    monkeypatch.setattr(_portfolio, "partition_bound", lambda *a, start, **k: start)
    monkeypatch.setattr(_portfolio, "coreset_union", lambda *a, **k: dataclasses.replace(
        coreset_union(*a, **k), lower_bound=0.0))
    X, y = _noisy_disk(8, 40, 0.3)
    exact = DeepICEMaxoutClassifier(method="exact", device="cpu").fit(X, y)
    clf = DeepICEMaxoutClassifier(time_limit=60, random_state=0, device="cpu").fit(X, y)
    assert clf.is_optimal_ and clf.lower_bound_method_ == "exact"
    assert clf.training_errors_ == exact.training_errors_ == _errors(clf, X, y)
    assert 0 < clf.n_candidates_ < clf.n_tuples_


def test_estimate_finds_a_network_and_weighs_the_ranks():
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(30, 2))
    want = (np.abs(Z[:, 0]) > 0.5).astype(float)
    problem = prepare_union(Z, want, 1 - want, 2)
    opt = exact_union(Z, want, 1 - want, 2, problem=problem)
    est = estimate_union(problem, opt.value + 1, n_samples=len(problem.family))
    assert est.found is not None and est.value == opt.value
    assert union_errors(problem.family[est.found], want, 1 - want) == opt.value
    ranks = np.linspace(0, len(problem.family), 20)
    w = [est.work(r) for r in ranks]
    assert w[0] == 0 and abs(w[-1] - 1) < 1e-12 and np.all(np.diff(w) >= 0)
    assert 0 < est.seconds < np.inf
    nothing = estimate_union(problem, opt.value)  # nothing below the optimum
    assert nothing.found is None and nothing.value == opt.value


def test_progress_shows_bound_gap_and_weighted_eta(capsys):
    def scan(r0, r1, ub_lt, ub_le):
        return ChunkResult(None, [], r1)

    run_search(1000, scan, lambda p, b: [], upper_bound=20.0, chunk_size=100, verbose=1,
               lower_bound=15.0, work=lambda r: (r / 1000) ** 2)
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "bound=15" in line and "gap=25.0%" in line and "100.0%" in line
    assert re.search(r"ETA \d+s", line)


@pytest.mark.parametrize("at", [3, 60])
def test_ctrl_c_during_the_portfolio(monkeypatch, at):
    """SIGINT in the heuristic (early) or in the partition bounds (later): the fit stops,
    warns, and returns a network that realizes its errors above a valid bound."""
    monkeypatch.setattr(_deepice, "_MAX_EXACT_PLANES", 0)
    calls = _counting_kernel(monkeypatch, lambda: os.kill(os.getpid(), signal.SIGINT), at=at)
    X, y = _noisy_disk(0, 200, 0.5)
    clf = DeepICEMaxoutClassifier(time_limit=600, random_state=0, device="cpu")
    with pytest.warns(RuntimeWarning, match="interrupted"), \
            pytest.warns(ConvergenceWarning, match="interrupted"):
        clf.fit(X, y)
    assert clf.stop_reason_ == "interrupted" and len(calls) < at + 20
    assert clf.training_errors_ == _errors(clf, X, y) >= clf.lower_bound_


def test_ctrl_c_during_the_linear_seed(monkeypatch):
    """Ctrl-C while the portfolio solves the linear problem: the fit returns that search's
    best plane as the network, with its realized errors and no optimality claim."""
    monkeypatch.setattr(_deepice, "_MAX_EXACT_PLANES", 0)
    real = _portfolio.solve_portfolio

    def interrupted(*args, **kwargs):
        return dataclasses.replace(real(*args, **kwargs), stop_reason="interrupted")

    monkeypatch.setattr(_portfolio, "solve_portfolio", interrupted)
    X, y = _noisy_disk(2, 120, 0.5)
    clf = DeepICEMaxoutClassifier(n_hyperplanes=2, time_limit=60, random_state=0)
    with pytest.warns(ConvergenceWarning, match="interrupted"):
        clf.fit(X, y)
    linear = DeepICEMaxoutClassifier(n_hyperplanes=1, method="exact").fit(X, y)
    assert clf.stop_reason_ == "interrupted" and not clf.is_optimal_
    assert clf.training_errors_ == _errors(clf, X, y) == linear.training_errors_
    assert clf.lower_bound_ <= clf.training_errors_


@pytest.mark.parametrize("where", ["grow", "coreset"])
def test_ctrl_c_in_a_local_search_ends_the_fit(monkeypatch, where):
    """The local search swallows Ctrl-C inside its exact solves and says so: the fit stops
    there with its best network, not the budget later."""
    monkeypatch.setattr(_deepice, "_MAX_EXACT_PLANES", 0)
    real = _coreset.refine

    def interrupted(*args, **kwargs):
        planes, value, _ = real(*args, **kwargs)
        return planes, value, True

    monkeypatch.setattr(_portfolio if where == "grow" else _coreset, "refine", interrupted)
    X, y = _noisy_disk(3, 150, 0.5)
    clf = DeepICEMaxoutClassifier(n_hyperplanes=2, time_limit=20, random_state=0)
    with pytest.warns(ConvergenceWarning, match="interrupted"):
        clf.fit(X, y)
    assert clf.stop_reason_ == "interrupted"
    assert clf.training_errors_ == _errors(clf, X, y) >= clf.lower_bound_


@pytest.mark.slow  # (15-20 s of stalling bounds; CI runs the slow tests)
def test_stalled_bounds_end_the_fit_and_say_so(monkeypatch):
    """When no partition bound can rise any more (here: none is tried) and the exact search
    does not fit, the portfolio returns before its budget, saying why."""
    _no_pair_cover(monkeypatch)
    monkeypatch.setattr(_deepice, "_MAX_EXACT_PLANES", 0)
    monkeypatch.setattr(_portfolio, "_STALLED_PARTITIONS", 0)
    monkeypatch.setattr(_portfolio, "PLANE_RATE", 1e-9)
    X, y = _noisy_disk(4, 150, 0.8)
    clf = DeepICEMaxoutClassifier(n_hyperplanes=2, time_limit=3600, random_state=0)
    with pytest.warns(ConvergenceWarning, match="bounds stalled"):
        clf.fit(X, y)
    assert clf.stop_reason_ == "bounds stalled" and not clf.is_optimal_
    assert clf.training_errors_ == _errors(clf, X, y) >= clf.lower_bound_


@pytest.mark.slow  # (20-40 s of stalled bounds and reruns; CI runs the slow tests)
def test_stalled_bounds_hand_their_time_to_more_heuristic_runs(monkeypatch):
    """With the bounds stalled and time left, the coreset heuristic runs again with other
    blocks (``run`` >= 1) until _STALLED_RUNS runs find no better network: the network
    returned is never worse than the one before those runs, and the certificate holds."""
    _no_pair_cover(monkeypatch)
    monkeypatch.setattr(_deepice, "_MAX_EXACT_PLANES", 0)
    monkeypatch.setattr(_portfolio, "_STALLED_PARTITIONS", 0)
    monkeypatch.setattr(_portfolio, "PLANE_RATE", 1e-9)
    X, y = _noisy_disk(4, 150, 0.8)
    fit = DeepICEMaxoutClassifier(n_hyperplanes=2, time_limit=3600, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        min_seconds = _portfolio._MIN_SEARCH_SECONDS
        monkeypatch.setattr(_portfolio, "_MIN_SEARCH_SECONDS", np.inf)  # no more runs
        before = fit.fit(X, y).training_errors_
        monkeypatch.setattr(_portfolio, "_MIN_SEARCH_SECONDS", min_seconds)
        real, runs = _portfolio.SearchSettings.coreset, []

        def counted(self, *args, run=0, **kwargs):
            runs.append(run)
            return real(self, *args, run=run, **kwargs)

        monkeypatch.setattr(_portfolio.SearchSettings, "coreset", counted)
        clf = fit.fit(X, y)
    assert max(runs) >= _portfolio._STALLED_RUNS  # at least the runs that found nothing
    assert clf.training_errors_ == _errors(clf, X, y) <= before
    assert clf.lower_bound_ <= clf.training_errors_


def test_blocks_growing_back_are_no_progress(monkeypatch):
    """Partition bounds that never rise, whose blocks shrink (a block search ran out of
    time) and grow back to a size already tried, stall after _STALLED_PARTITIONS
    partitions: their time goes elsewhere instead of to the same partitions until the
    deadline."""
    _no_pair_cover(monkeypatch)
    monkeypatch.setattr(_deepice, "_MAX_EXACT_PLANES", 0)
    monkeypatch.setattr(_portfolio, "PLANE_RATE", 1e-9)
    monkeypatch.setattr(_portfolio, "_STALLED_RUNS", 0)  # no more heuristic runs
    calls = []

    def seesaw(Z, want_w, other_w, K, *, start, **kwargs):
        calls.append(start.size)
        size = 30 if start.size == 40 else 40
        return _bounds.PartitionBound(start.value, start.method, size=size,
                                      block_seconds=1.0)

    monkeypatch.setattr(_portfolio, "partition_bound", seesaw)
    X, y = _noisy_disk(4, 150, 0.8)
    clf = DeepICEMaxoutClassifier(n_hyperplanes=2, time_limit=3600, random_state=0)
    with pytest.warns(ConvergenceWarning, match="bounds stalled"):
        clf.fit(X, y)
    assert clf.stop_reason_ == "bounds stalled"
    # each polarity: the first growth to 40, then at most _STALLED_PARTITIONS more, in
    # each of the two rounds of bounds
    assert len(calls) <= 2 * 2 * (_portfolio._STALLED_PARTITIONS + 1)
    assert clf.training_errors_ == _errors(clf, X, y) >= clf.lower_bound_


@pytest.mark.parametrize("interrupt", [False, True])
def test_an_unproven_linear_seed_is_solved_again(monkeypatch, interrupt):
    """The linear seed stopped early with a poor plane (here: the empty half-space), the
    heuristics and the local search find nothing better and the bounds stall: the linear
    problem is solved again with the time left, and the fit returns no more errors than the
    exact linear optimum (a network of K half-spaces may use one plane); Ctrl-C there ends
    the fit with a realized network above a valid bound."""
    monkeypatch.setattr(_deepice, "_MAX_EXACT_PLANES", 0)
    monkeypatch.setattr(_deepice, "_MAX_EXACT_LINEAR", 0)
    monkeypatch.setattr(_portfolio, "PLANE_RATE", 1e-9)  # no exact search of networks
    monkeypatch.setattr(_portfolio, "_STALLED_PARTITIONS", 0)

    def no_heuristic(Z, want_w, other_w, K, **kwargs):
        empty = (np.zeros(Z.shape[1]), -1.0)
        return CoresetResult(float(want_w.sum()), [empty] * K, 0.0, 0, 0, None)

    monkeypatch.setattr(_portfolio, "coreset_union", no_heuristic)
    monkeypatch.setattr(_portfolio, "refine", lambda Z, planes, want_w, other_w, **kw: (
        planes, float(other_w[union_on(Z, planes)].sum()
                      + want_w[~union_on(Z, planes)].sum()), False))
    real, calls = _portfolio.solve_portfolio, []

    def poor_first(Z, Zf, want_w, other_w, **kwargs):
        res = real(Z, Zf, want_w, other_w, **kwargs)
        calls.append(kwargs["time_limit"])
        if len(calls) == 1:  # the seed: nothing found, nothing proven
            return dataclasses.replace(res, positive=np.zeros(len(Z), dtype=bool),
                                       value=float(want_w.sum()), lower_bound=0.0,
                                       complete=False, stop_reason="time_limit")
        return dataclasses.replace(res, stop_reason="interrupted") if interrupt else res

    monkeypatch.setattr(_portfolio, "solve_portfolio", poor_first)
    rng = np.random.default_rng(7)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] + 0.8 * rng.normal(size=60) > 0.3).astype(int)
    clf = DeepICEMaxoutClassifier(n_hyperplanes=2, time_limit=60, random_state=0)
    with pytest.warns(ConvergenceWarning):
        clf.fit(X, y)
    assert len(calls) == 2
    linear = DeepICEMaxoutClassifier(n_hyperplanes=1, method="exact").fit(X, y)
    assert clf.training_errors_ == _errors(clf, X, y) <= linear.training_errors_
    assert clf.lower_bound_ <= clf.training_errors_
    assert (clf.stop_reason_ == "interrupted") == interrupt


def test_portfolio_time_limit_keeps_valid_certificates(monkeypatch):
    monkeypatch.setattr(_deepice, "_MAX_EXACT_PLANES", 0)
    X, y = _noisy_disk(1, 300, 0.8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = DeepICEMaxoutClassifier(n_hyperplanes=3, time_limit=2, random_state=0,
                                      device="cpu").fit(X, y)
    assert clf.training_errors_ == _errors(clf, X, y) >= clf.lower_bound_ >= 0
    assert clf.is_optimal_ or clf.stop_reason_ in ("time_limit", "bounds stalled")
    assert clf.gap_ == (clf.training_errors_ - clf.lower_bound_) / clf.training_errors_


def test_exact_searches_the_better_polarity_first(monkeypatch):
    """Labels whose union side is class 0 (polarity -1): method="exact" seeds both
    polarities with the heuristic and searches -1 first (its union weights are class 0's);
    the optimum is that of the unseeded search (blocks larger than the data: polarity +1
    first, no heuristic)."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(70, 2))
    y = (np.abs(X[:, 0]) + 0.3 * rng.normal(size=70) <= 0.7).astype(int)
    n0 = int((y == 0).sum())
    assert n0 != len(y) - n0
    searched = []
    search = _portfolio.MaxoutSearch._search

    def spy(self, want_w, *args, **kwargs):
        searched.append(-1 if want_w.sum() == n0 else 1)
        return search(self, want_w, *args, **kwargs)

    monkeypatch.setattr(_portfolio.MaxoutSearch, "_search", spy)
    seeded = DeepICEMaxoutClassifier(n_hyperplanes=2, method="exact", random_state=0,
                                     device="cpu").fit(X, y)
    assert searched == [-1, 1]
    searched.clear()
    plain = DeepICEMaxoutClassifier(n_hyperplanes=2, method="exact", coreset_size=70,
                                    device="cpu").fit(X, y)
    assert searched == [1, -1]
    for clf in (seeded, plain):
        assert clf.is_optimal_ and clf.training_errors_ == _errors(clf, X, y)
    assert seeded.polarity_ == plain.polarity_ == -1
    assert seeded.training_errors_ == plain.training_errors_


def test_one_hyperplane_reports_the_linear_bounds():
    """K = 1 is the linear problem: a budget stop reports ICEClassifier's proven bounds (IIS
    cover, partitions), not only conflicting duplicates, and never above the optimum. (An
    instance whose 3-candidate budget leaves the best plane unfound: where the surrogates'
    best threshold finds it, the linear bound proves it and nothing warns.)"""
    rng = np.random.default_rng(14)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] + 0.8 * rng.normal(size=60) > 0).astype(int)
    optimum = DeepICEMaxoutClassifier(n_hyperplanes=1).fit(X, y)
    assert optimum.is_optimal_ and optimum.lower_bound_method_ == "exact"
    with pytest.warns(ConvergenceWarning):
        clf = DeepICEMaxoutClassifier(n_hyperplanes=1, max_candidates=3).fit(X, y)
    assert clf.lower_bound_method_ == "linear"
    assert 0 < clf.lower_bound_ <= optimum.training_errors_ <= clf.training_errors_
    assert clf.training_errors_ == (clf.predict(X) != y).sum()


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("seed", range(8))
def test_parallel_partition_bound_never_exceeds_the_optimum(seed, n_jobs):
    """Partitions (grids and blocks grown around a network's errors) searched on one or
    two workers, with conflicting duplicates and heavier points: never above the
    brute-force optimum, and the same blocks, so the same bound (every block solved),
    whatever ``n_jobs``."""
    rng, Z, wpos, wneg = _instance(200 + seed)
    for K in (1, 2):
        for want_w, other_w in ((wpos, wneg), (wneg, wpos)):
            best = brute_force_union(Z, want_w, other_w, K)
            planes = [(rng.normal(size=Z.shape[1]), rng.normal()) for _ in range(K)]
            for size in (2, 3):
                for r in range(3):
                    kw = dict(time_limit=30, planes=planes, block_size=size, random_state=r,
                              max_partitions=1)
                    lb = partition_bound(Z, want_w, other_w, K, n_jobs=n_jobs, **kw)
                    assert float(np.minimum(want_w, other_w).sum()) <= lb.value <= best
                    serial = partition_bound(Z, want_w, other_w, K, n_jobs=1, **kw)
                    assert (lb.value, lb.method) == (serial.value, serial.method)


def test_blocks_grow_while_their_families_fit_in_memory(monkeypatch):
    """Partition blocks grow from one partition to the next while the larger blocks'
    candidate families fit in memory, and stop growing where they would not (whatever the
    number of K-tuples), keeping a valid bound and the timings they measured."""
    X, y = _noisy_disk(0, 60, 0.8)
    want_w, other_w = (y == 1).astype(float), (y == 0).astype(float)
    kw = dict(time_limit=60, block_size=10, random_state=0, max_partitions=3, n_jobs=1)
    grown = partition_bound(X, want_w, other_w, 2, **kw)
    assert grown.size > 15 and 10 in grown.timings
    fits = 2 * _exact.family_bytes(14, 14 * 13 // 2)  # blocks of 14 points fit, 15 do not
    monkeypatch.setattr(_resources, "available_memory", lambda: fits)
    held = partition_bound(X, want_w, other_w, 2, **kw)
    assert held.size == 10 and set(held.timings) == {10}
    assert held.value <= exact_union(X, want_w, other_w, 2).value


def test_a_block_predicted_past_the_time_left_is_not_started(monkeypatch):
    """A block is started only when its predicted time (from the blocks measured) fits the
    time left; before any block is timed, its family's size at ``PLANE_RATE`` decides."""
    X, y = _noisy_disk(0, 40, 0.8)
    want_w, other_w = (y == 1).astype(float), (y == 0).astype(float)
    blocks = spatial_blocks(X, 20, np.random.default_rng(0))
    kw = dict(beat=-np.inf, target=np.inf, deadline=time.perf_counter() + 30, dim=2,
              n_jobs=1)
    args = (X, want_w, other_w, 2, blocks, None)
    assert _bounds._partition_sum(*args, block_seconds=0.1, **kw).searched == len(blocks)
    assert _bounds._partition_sum(*args, block_seconds=1e3, **kw).searched == 0
    monkeypatch.setattr(_bounds, "PLANE_RATE", 1e-3)  # planes of 20 points: 190, 1.9e5 s
    assert _bounds._partition_sum(*args, block_seconds=np.inf, **kw).searched == 0
    monkeypatch.setattr(_bounds, "PLANE_RATE", 1e9)
    sums = _bounds._partition_sum(*args, block_seconds=np.inf, **kw)
    assert sums.searched == sums.solved == len(blocks)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_partition_interrupted_between_blocks_keeps_what_is_proven(monkeypatch, n_jobs):
    """Ctrl-C while a partition's blocks are searched: the blocks not back count with
    their conflicting duplicates, and the bound stays valid and says so."""
    X, y = _noisy_disk(5, 60, 0.5)
    Z, want = X, (y == 1).astype(float)
    best = exact_union(Z, want, 1 - want, 2).value
    monkeypatch.setattr(_bounds, "solve_blocks", ctrl_c_after_first(_bounds.solve_blocks))
    with pytest.warns(RuntimeWarning, match="interrupted"):
        lb = partition_bound(Z, want, 1 - want, 2, time_limit=30, block_size=8,
                             n_jobs=n_jobs)
    assert lb.interrupted and 0 <= lb.value <= best


@pytest.mark.parametrize("seed", range(3))
def test_refine_beyond_the_enumeration_places_a_half_space_by_local_search(seed):
    """With a deadline, a half-space whose points are beyond ``max_candidates`` is placed
    by the linear problem's incumbents and local search (once a capped enumeration that saw
    only the first points' planes). A union of two half-spaces, seeded with one of them and
    an empty one: the empty one is placed on the points the seed leaves out, the errors fall
    from the second half-space's points to a few, and the value returned is what the planes
    make on all points."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(400, 3))
    want = (Z[:, 0] > 0.5) | (Z[:, 1] > 0.5)
    want_w, other_w = want * 1.0, (~want) * 1.0
    empty, seed_plane = (np.zeros(3), -1.0), (np.array([1.0, 0.0, 0.0]), -0.5)
    start = float(want_w[~union_on(Z, [seed_plane])].sum())
    planes, value, interrupted = _coreset.refine(
        Z, [empty, seed_plane], want_w, other_w, max_candidates=1000,
        deadline=time.perf_counter() + 5.0)
    inside = union_on(Z, planes)
    assert not interrupted and len(planes) == 2
    assert value == float(other_w[inside].sum() + want_w[~inside].sum())
    assert start >= 50 and value <= 3
    # without a deadline the capped enumeration stays (it cannot place the plane here)
    _, capped, _ = _coreset.refine(Z, [empty, seed_plane], want_w, other_w,
                                   max_candidates=1000)
    assert capped > value


def test_bounds_that_raise_nothing_hand_the_time_to_the_networks(monkeypatch, capsys):
    """When the obstruction covers and the first partition bounds leave every polarity's
    bound where the heuristics left it (as in 19 dimensions, where blocks small enough to
    solve are separable), the portfolio does not run them again to the deadline: the time
    left goes to the networks (large-neighbourhood moves and the coreset heuristic)."""
    monkeypatch.setattr(_deepice, "_MAX_EXACT_PLANES", 0)
    monkeypatch.setattr(_portfolio, "PLANE_RATE", 1e-9)  # no exact search
    monkeypatch.setattr(_portfolio.MaxoutSearch, "_obstructions", lambda self, *a, **k: False)
    calls = []

    def no_bound(self, order, until, seed):
        calls.append(until)
        return False

    monkeypatch.setattr(_portfolio.MaxoutSearch, "_bounds", no_bound)
    X, y = _noisy_disk(5, 150, 0.8)
    clf = DeepICEMaxoutClassifier(n_hyperplanes=2, time_limit=6, random_state=0, verbose=1)
    clf.fit(X, y)
    err = capsys.readouterr().err
    assert "bounds raised nothing: the time left goes to the networks" in err
    assert len(calls) == 1  # the first bound phase only, not the one to the deadline
    assert clf.training_errors_ == _errors(clf, X, y) >= clf.lower_bound_


def test_a_polarity_its_cover_rules_out_gets_no_networks(monkeypatch, capsys):
    """Points of one class in a strip between two bands of the other: the bands are a union
    of two half-spaces around a strip, but a union of half-spaces holding the strip leaves
    the bands' convex hull, which covers the strip, on the other side. Once the first
    polarity has a network, the second polarity's obstruction cover proves it cannot beat
    that network, and its heuristics are not run; the fit's certificate holds either way."""
    monkeypatch.setattr(_deepice, "_MAX_EXACT_PLANES", 0)
    monkeypatch.setattr(_portfolio, "PLANE_RATE", 1e-9)  # no exact search of networks
    rng = np.random.default_rng(7)
    strip = np.column_stack([rng.uniform(-1, 1, 40), rng.uniform(-5, 5, 40)])
    bands = np.column_stack([rng.choice([-1, 1], 40) * rng.uniform(2, 4, 40),
                             rng.uniform(-5, 5, 40)])
    X = np.vstack([strip, bands])
    y = np.repeat([1, 0], 40)
    y[[0, 41]] = y[[41, 0]]  # one error each way for the good polarity
    ruled_out = []
    for labels in (y, 1 - y):
        clf = DeepICEMaxoutClassifier(n_hyperplanes=2, time_limit=10, random_state=0,
                                      verbose=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X, labels)
        ruled_out.append("rules it out" in capsys.readouterr().err)
        assert clf.method_ == "portfolio"
        assert clf.training_errors_ == _errors(clf, X, labels) >= clf.lower_bound_
        assert clf.training_errors_ <= 2
    assert any(ruled_out)
