"""Incumbents for the exact search: realizable labelings from fast surrogate classifiers.

Any affine classifier's predictions are a realizable labeling, and its weighted errors an
upper bound on the optimum. The tighter the bound, the earlier the exact search prunes.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from .._resources import effective_workers
from ._milp import bigm_milp
from ._min01 import labeling_errors, majority_labeling

__all__ = ["annealed_sigmoid", "best_incumbent", "best_offset", "incumbent_candidates",
           "one_unit_networks", "stop_at"]

#: the annealed sigmoid loss's first temperature, as a share of the spread (standard
#: deviation) of its start's scores, the factor between stages and the number of stages:
#: a first temperature near the spread makes the loss almost linear in the scores, and its
#: minimum on the sphere of normals can be far worse than the start (on large data even the
#: majority class); hence a first temperature well below the spread
_SIGMOID_FIRST_T = 0.1
_SIGMOID_COOLING = 0.5
_SIGMOID_STAGES = 10
#: L-BFGS iterations per stage
_SIGMOID_MAX_ITER = 200


def stop_at(deadline: float | None):
    """A callback that ends a SciPy minimization once :func:`time.perf_counter` passes
    ``deadline`` (None: never)."""
    def callback(intermediate_result):
        if deadline is not None and time.perf_counter() >= deadline:
            raise StopIteration
    return callback


def _samples(Z, wpos, wneg):
    """The weighted points as samples ``(X, y, w)`` (a point with both weights twice), with
    weights of mean 1."""
    has_pos, has_neg = wpos > 0, wneg > 0
    Zs = np.vstack([Z[has_pos], Z[has_neg]])
    ys = np.r_[np.ones(has_pos.sum()), np.zeros(has_neg.sum())]
    ws = np.r_[wpos[has_pos], wneg[has_neg]]
    return Zs, ys, ws / ws.mean()


def one_unit_networks(Z, wpos, wneg, seeds=(0,), original=None):
    """Predictions (positive side) of MLPClassifier with one ReLU unit, one per seed and
    coordinate system: ``Z`` and, when given, the points' ``original`` features
    standardized (the MLPClassifier a user fits).

    Such a network predicts by thresholding ``relu(w . z + b)``: a half-space (or a
    constant), so its predictions are a labeling an affine classifier realizes in any affine
    coordinates of the points. Its loss ignores the points on the flat side of the unit,
    which fits the 0-1 loss better than LinearSVC or LogisticRegression on some data. Adam's
    path depends on the coordinates, so the two systems can reach quite different labelings:
    both are returned.
    """
    views = [("", Z)]
    if original is not None:
        with np.errstate(all="ignore"):
            scaled = StandardScaler().fit_transform(original)
        # standardized values lie within sqrt(n) of 0; beyond, a variance overflowed
        # (features near float64's limits) and the frame alone is used
        if np.all(np.abs(scaled) <= np.sqrt(len(scaled)) + 1):
            views.append((", standardized features", scaled))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for view, coords in views:
            Xs, ys, ws = _samples(coords, wpos, wneg)
            for seed in seeds:
                model = MLPClassifier(hidden_layer_sizes=(1,), random_state=seed)
                yield f"MLPClassifier(1){view}, seed {seed}", model.fit(
                    Xs, ys, sample_weight=ws).predict(coords) > 0.5


def best_offset(d: np.ndarray, wpos: np.ndarray, wneg: np.ndarray) -> np.ndarray:
    """The labeling ``d > t`` with the fewest weighted errors over every threshold ``t``
    (the positive side). A cut falls between two distinct values of ``d`` (or outside them
    all), so an affine ``d`` realizes the labeling with that threshold.

    A surrogate's own threshold fits its loss, not the errors: on an unbalanced instance (the
    points a network's other half-spaces leave out) it often puts every point on one side.

    Examples
    --------
    >>> d = np.array([0.0, 1.0, 2.0, 3.0])
    >>> best_offset(d, np.array([0, 0, 1, 1.0]), np.array([1, 1, 0, 0.0]))
    array([False, False,  True,  True])
    """
    order = np.argsort(d, kind="stable")
    ds = d[order]
    # errors of the cut after the first i points (i = 0..n): positives below, negatives above
    below_pos = np.r_[0.0, np.cumsum(wpos[order])]
    above_neg = wneg.sum() - np.r_[0.0, np.cumsum(wneg[order])]
    errors = below_pos + above_neg
    cuts = np.flatnonzero(np.r_[True, ds[1:] != ds[:-1], True])  # never inside a tie
    i = cuts[np.argmin(errors[cuts])]
    positive = np.zeros(len(d), dtype=bool)
    positive[order[i:]] = True
    return positive


def annealed_sigmoid(Z, wpos, wneg, coef, intercept, deadline: float | None = None,
                     ) -> np.ndarray:
    """The positive side of the best plane met while minimizing the annealed sigmoid loss
    from the plane ``(coef, intercept)``, each stage's plane taken with its best threshold
    (:func:`best_offset`; the start's included).

    The loss ``sum_i w_i sigmoid(-s_i (a . z_i + b) / (|a| T))`` (``s_i = +-1`` the side
    point ``i`` belongs on) counts a point far on its wrong side as one error, as the 0-1
    loss does, where the hinge and logistic losses let it pull the plane; it tends to the
    weighted 0-1 loss as ``T`` falls to 0, and the normalization by ``|a|`` keeps the
    temperature meaningful. Each stage runs L-BFGS from the last plane at half the last
    temperature; none starts after ``deadline`` (a :func:`time.perf_counter` value), and
    one that runs past it stops there. It is not convex: the result depends on the start
    (a surrogate's plane). On large data sets it lowers a surrogate's errors substantially
    in a fraction of a second, a far better incumbent for the exact search than the
    surrogate's own plane (see ``benchmarks/results/table2_linear.txt``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(300, 2))
    >>> pos = Z[:, 0] > 0
    >>> Z[:20] += [-40.0, 0.0]  # far outliers on the wrong side: they drag a hinge's plane
    >>> wpos, wneg = pos.astype(float), (~pos).astype(float)
    >>> start = best_offset(Z @ [1.0, 1.0], wpos, wneg)  # the start, best threshold
    >>> side = annealed_sigmoid(Z, wpos, wneg, np.array([1.0, 1.0]), 0.0)
    >>> int((start != pos).sum()), int((side != pos).sum()) <= 10
    (74, True)
    """
    Zs, ys, ws = _samples(Z, wpos, wneg)
    sign = 2.0 * ys - 1.0
    A = np.c_[Zs, np.ones(len(Zs))]
    theta = np.r_[coef, intercept] / (np.linalg.norm(coef) or 1.0)

    def best_side(theta):
        side = best_offset(Z @ theta[:-1], wpos, wneg)
        return side, labeling_errors(side, wpos, wneg)

    best, best_errors = best_side(theta)
    spread = float(np.std(A @ theta))
    if not np.isfinite(spread) or spread == 0.0:
        return best
    T = _SIGMOID_FIRST_T * spread

    def loss(theta):
        norm = np.linalg.norm(theta[:-1]) or 1.0
        m = A @ theta / norm
        p = expit(-sign * m / T)
        # d loss / d m, then through m = A theta / |a|
        g_m = -ws * sign * p * (1.0 - p) / T
        g = A.T @ g_m / norm
        g[:-1] -= (g_m @ m) / norm * theta[:-1] / norm
        return float(ws @ p), g

    for _ in range(_SIGMOID_STAGES):
        if deadline is not None and time.perf_counter() >= deadline:
            break
        with np.errstate(over="ignore", under="ignore"):
            theta = minimize(loss, theta, jac=True, method="L-BFGS-B",
                             callback=stop_at(deadline),
                             options={"maxiter": _SIGMOID_MAX_ITER}).x
        norm = np.linalg.norm(theta[:-1])
        if not np.isfinite(norm) or norm == 0.0:
            break
        theta = theta / norm
        side, errors = best_side(theta)
        if errors < best_errors:
            best, best_errors = side, errors
        T *= _SIGMOID_COOLING
    return best


def _surrogates(Z, wpos, wneg, anneal: bool, deadline: float | None):
    """Predictions (positive side) of LinearSVC and LogisticRegression on weighted points,
    each with its own threshold, with the best one (:func:`best_offset`) and, with
    ``anneal``, after the annealed sigmoid loss from its plane (:func:`annealed_sigmoid`,
    until ``deadline``)."""
    Zs, ys, ws = _samples(Z, wpos, wneg)
    models = {
        "LinearSVC": LinearSVC(C=10.0, max_iter=20000),
        "LogisticRegression": LogisticRegression(C=10.0, max_iter=2000),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for name, model in models.items():
            model.fit(Zs, ys, sample_weight=ws)
            d = model.decision_function(Z)
            yield name, d > 0
            yield f"{name}, best threshold", best_offset(d, wpos, wneg)
            if anneal:
                yield f"annealed sigmoid loss from {name}", annealed_sigmoid(
                    Z, wpos, wneg, model.coef_.ravel(), float(model.intercept_[0]),
                    deadline)


def incumbent_candidates(
    Z: np.ndarray,
    wpos: np.ndarray,
    wneg: np.ndarray,
    *,
    surrogate: bool = True,
    milp_time_limit: float | None = None,
    networks: bool = False,
    anneal: bool = True,
    anneal_seconds: float | None = None,
    original: np.ndarray | None = None,
    n_jobs: int | None = None,
) -> tuple[list[tuple[str, np.ndarray, float]], bool]:
    """The incumbents of :func:`best_incumbent`, each as ``(source, positive, errors)``,
    fewest errors first (a stable sort: ties in the order :func:`best_incumbent` tries them),
    labelings that an earlier one repeats left out; and whether Ctrl-C stopped them. The
    local search goes on from several of them (:func:`~exactclf._zero_one._local_search.
    improve_from_starts`): the best start is not always in the best basin.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(200, 2))
    >>> pos = Z[:, 0] + 0.5 * rng.normal(size=200) > 0
    >>> cands, _ = incumbent_candidates(Z, pos * 1.0, ~pos * 1.0)
    >>> [e for _, _, e in cands] == sorted(e for _, _, e in cands)
    True
    >>> cands[-1][0]  # 100 errors, more than every surrogate's
    'majority class'
    """
    cands = [("majority class", majority_labeling(wpos, wneg))]
    interrupted = False
    two_classes = Z.shape[1] > 0 and np.any(wpos > 0) and np.any(wneg > 0)
    try:
        if surrogate and two_classes:
            deadline = None if anneal_seconds is None else time.perf_counter() + anneal_seconds
            cands.extend(_surrogates(Z, wpos, wneg, anneal, deadline))
        if milp_time_limit is not None and Z.shape[1] > 0:
            res = bigm_milp(Z, wpos, wneg, time_limit=milp_time_limit,
                            threads=None if n_jobs is None else effective_workers(n_jobs))
            cands.append(("big-M MILP", Z @ res.coef + res.intercept > 0))
            interrupted = res.interrupted
        if networks and two_classes and not interrupted:
            cands.extend(one_unit_networks(Z, wpos, wneg, original=original))
    except KeyboardInterrupt:
        interrupted = True
    distinct = []
    for source, pos in cands:
        if not any(np.array_equal(pos, other) for _, other, _ in distinct):
            distinct.append((source, pos, labeling_errors(pos, wpos, wneg)))
    distinct.sort(key=lambda cand: cand[2])
    return distinct, interrupted


def best_incumbent(
    Z: np.ndarray,
    wpos: np.ndarray,
    wneg: np.ndarray,
    **kwargs,
) -> tuple[np.ndarray, float, str, bool]:
    """The best of: the majority class, LinearSVC, LogisticRegression, (when
    ``milp_time_limit`` is given) the big-M MILP stopped after that many seconds and (when
    ``networks``) the networks of :func:`one_unit_networks` (on ``Z`` and the points'
    ``original`` features); with ``anneal``, the surrogates' planes also after the annealed
    sigmoid loss (:func:`annealed_sigmoid`, both within ``anneal_seconds`` of the start, None:
    no limit; it doubles the fit of a 40-point instance, whose exact search needs no better
    start). Ties go to the first of them. The keywords are :func:`incumbent_candidates`'.

    Points of dimension 0 (``Z`` without columns: all points coincide) get the majority class.
    Ctrl-C stops at once with the best incumbent so far.

    Returns ``(positive, errors, source, interrupted)``.
    """
    cands, interrupted = incumbent_candidates(Z, wpos, wneg, **kwargs)
    source, positive, errors = cands[0]
    return positive, errors, source, interrupted
