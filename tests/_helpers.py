"""Independent oracles for the exact searches (no code shared with exactclf's search)."""

from __future__ import annotations

import itertools
import json

import numpy as np
from scipy.optimize import linprog

from exactclf._certificate import Certificate
from exactclf._verification import verify


def strictly_separable(Z: np.ndarray, positive: np.ndarray) -> bool:
    """Is there (a, b) with a.z + b >= 1 on positives and <= -1 on negatives? (LP)"""
    n, d = Z.shape
    s = np.where(positive, 1.0, -1.0)
    A = -np.hstack([Z * s[:, None], s[:, None]])
    res = linprog(np.zeros(d + 1), A_ub=A, b_ub=-np.ones(n), bounds=[(None, None)] * (d + 1),
                  method="highs")
    return res.status == 0


_SEPARABLE: dict = {}  # separable_subsets' results, by point set


def separable_subsets(Z: np.ndarray) -> np.ndarray:
    """Every subset of the rows of ``Z`` that an LP proves strictly separable from the rest,
    as an (m, n) bool array. Built a point at a time: a plane that separates a subset of
    all the points separates its restriction to the first ones too, so only extensions of
    subsets already separable are put to the LP (about n^(d+1) LPs, not 2^n)."""
    Z = np.asarray(Z, dtype=np.float64)
    key = (Z.shape, Z.tobytes())
    if key not in _SEPARABLE:
        family = np.zeros((1, 0), dtype=bool)
        for m in range(len(Z)):
            grown = [np.r_[f, b] for f in family for b in (False, True)]
            family = np.array([g for g in grown if strictly_separable(Z[: m + 1], g)],
                              dtype=bool).reshape(-1, m + 1)
        _SEPARABLE[key] = family
    return _SEPARABLE[key]


def brute_force_union(Z: np.ndarray, want_w: np.ndarray, other_w: np.ndarray, K: int,
                      rows: np.ndarray | None = None) -> float:
    """Minimum weighted errors of a union of K strictly separable subsets (the points a
    maxout network of K half-spaces calls the wanted class), over all such unions; of the
    points ``rows`` of ``Z`` alone when given (weights indexed like ``Z``), whose separable
    subsets are the restrictions of those of all of ``Z``."""
    family = separable_subsets(Z)
    if rows is not None:
        rows = np.asarray(rows)
        family = np.unique(family[:, rows], axis=0)
        want_w, other_w = np.asarray(want_w)[rows], np.asarray(other_w)[rows]
    return best_union(family, want_w, other_w, K)


def best_union(family: np.ndarray, want_w: np.ndarray, other_w: np.ndarray, K: int) -> float:
    """Minimum weighted errors of a union of K rows of the boolean ``family``, over all."""
    inside = family
    for _ in range(K - 1):
        inside = np.unique((inside[:, None] | family[None]).reshape(-1, family.shape[1]),
                           axis=0)
    return float(np.min(inside @ np.asarray(other_w, dtype=np.float64)
                        + ~inside @ np.asarray(want_w, dtype=np.float64)))


def brute_force_network(Z: np.ndarray, wpos: np.ndarray, wneg: np.ndarray, K: int) -> float:
    """Minimum weighted errors of a maxout network of K half-spaces of either polarity (the
    union of half-spaces calling either class): :func:`brute_force_union` both ways."""
    return min(brute_force_union(Z, wpos, wneg, K), brute_force_union(Z, wneg, wpos, K))


def brute_force_min01(Z: np.ndarray, wpos: np.ndarray, wneg: np.ndarray) -> float:
    """Minimum weighted 0-1 loss over all 2^n labelings that an LP proves separable."""
    n = len(Z)
    best = np.inf
    costs = []
    for bits in itertools.product([False, True], repeat=n):
        pos = np.array(bits)
        costs.append((float(wneg[pos].sum() + wpos[~pos].sum()), pos))
    costs.sort(key=lambda t: t[0])
    for cost, pos in costs:  # cheapest first: the first separable one is optimal
        if cost >= best:
            break
        if strictly_separable(Z, pos):
            best = cost
    return best


def random_instance(rng: np.random.Generator, kind: str, n: int, d: int):
    """Unique points with per-label weights, of a given kind of (non-)general position."""
    if kind == "gaussian":
        Z = rng.normal(size=(n, d))
    elif kind == "grid":  # integer grid: many coplanar points
        Z = rng.integers(0, 3, size=(n, d)).astype(float)
    elif kind == "collinear":  # all points on a line (affine dimension 1)
        t = rng.integers(-3, 4, size=(n, 1)).astype(float)
        # direction and offset on a 2**-20 grid: the float64 points are then exactly on a
        # line (a real direction rounds them off it, and no certificate may ignore that)
        grid = 2.0**20
        Z = t * np.round(rng.normal(size=(1, d)) * grid) / grid + np.round(
            rng.normal(size=(1, d)) * grid) / grid
    elif kind == "flat":  # points on a 2-plane inside d dimensions, on a grid
        B = rng.integers(-2, 3, size=(2, d)).astype(float)
        Z = rng.integers(-2, 3, size=(n, 2)).astype(float) @ B
    else:
        raise ValueError(kind)
    Z = np.unique(Z, axis=0)
    m = len(Z)
    wpos = rng.integers(0, 3, m).astype(float)
    wneg = rng.integers(0, 3, m).astype(float)
    wpos[(wpos + wneg) == 0] = 1.0
    return Z, wpos, wneg


def integer_collinear(rng, n, d):
    """Points on a line with an integer direction through an integer point: exactly
    collinear, and still so after an offset or a power-of-two scale (the float64 images of
    integers are exact), unlike a line with a real direction, which an offset rounds off."""
    t = rng.integers(-4, 5, size=(n, 1))
    direction = rng.integers(1, 4, size=(1, d)) * rng.choice([-1, 1], size=(1, d))
    X = (t @ direction + rng.integers(-5, 6, size=(1, d))).astype(float)
    return X, (t[:, 0] % 3 == 0).astype(int)


def weighted_samples(Z, wpos, wneg):
    """Samples of unique points with per-label weights: a point with both weights is a
    pair of conflicting duplicates."""
    pos, neg = wpos > 0, wneg > 0
    X = np.vstack([Z[pos], Z[neg]])
    y = np.r_[np.ones(pos.sum(), int), np.zeros(neg.sum(), int)]
    return X, y, np.r_[wpos[pos], wneg[neg]]


def assert_verifies(model, X, y, w=None):
    """The model's certificate verifies, and so does its JSON read back (equal to it);
    returns the report."""
    cert = model.certificate_
    report = verify(model, X, y, w)
    assert report.ok, str(report)
    d = json.loads(cert.to_json())
    assert Certificate.from_dict(d) == cert
    assert verify(model, X, y, w, certificate=d).ok
    return report


def ctrl_c_after_first(solve_blocks):
    """``exactclf._partition.solve_blocks`` with Ctrl-C (``KeyboardInterrupt``) right after
    its first result: a partition bound interrupted while its blocks are searched."""

    def interrupted(jobs, n_jobs=None):
        for got in solve_blocks(jobs, n_jobs):
            yield got
            raise KeyboardInterrupt

    return interrupted


def hide_module(monkeypatch, module: str) -> None:
    """Make ``import module`` fail for the rest of the test, as it does where an optional
    dependency is not installed."""
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == module:
            raise ImportError(f"No module named {module!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)


def pair_cover_fit():
    """A Deep-ICE fit (K = 2, the coreset heuristic) on a shifted integer grid with the
    pair obstruction covers of each polarity, computed as a fit's searches compute them:
    ``(clf, X, y, data, results, singles)``, ``results`` the polarity results holding the
    covers' bounds and rows (for :func:`exactclf.maxout._witness.cover_witness`), ``singles``
    each polarity's single-IIS cover bound."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from exactclf import DeepICEMaxoutClassifier
    from exactclf._base import validate_binary
    from exactclf._zero_one._local_cover import local_cover_bound
    from exactclf.maxout._cliques import clique_cover_bound
    from exactclf.maxout._portfolio import CoverProof, PolarityResult

    rng = np.random.default_rng(5)
    X = rng.integers(0, 12, size=(70, 2)).astype(float) * 0.25 + 100.0
    y = ((X[:, 0] - 101.5) + 0.75 * rng.normal(size=70) > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = DeepICEMaxoutClassifier(n_hyperplanes=2, device="cpu", method="coreset",
                                      random_state=0).fit(X, y)
    data = validate_binary(DeepICEMaxoutClassifier(), X, y, None)
    results, singles = {}, {}
    for polarity, want, other in ((1, data.wpos, data.wneg), (-1, data.wneg, data.wpos)):
        single = local_cover_bound(data.Z, want, other, hull_only=True, time_limit=30)
        pairs = clique_cover_bound(data.Z, want, other, 2, time_limit=30, cuts=single.cuts)
        res = PolarityResult(0.0, [], pairs.value, 0, None, "pair obstruction cover")
        res.rows.add(cuts=pairs.cuts, relations=pairs.relations)
        res.proof = CoverProof(pairs.value, "pair obstruction cover", list(pairs.cuts))
        results[polarity], singles[polarity] = res, single.value
    return clf, X, y, data, results, singles
