"""Incumbents for the exact search: realizable labelings from fast surrogate classifiers.

Any affine classifier's predictions are a realizable labeling, and its weighted errors an
upper bound on the optimum. The tighter the bound, the earlier the exact search prunes.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from .._resources import effective_workers
from ._milp import bigm_milp
from ._min01 import labeling_errors, majority_labeling

__all__ = ["best_incumbent", "best_offset", "one_unit_networks"]


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
    path depends on the coordinates: on skin segmentation the standardized features reach
    6916 errors where the whitened ``Z`` reaches 7912 (LinearSVC: 10478).
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


def _surrogates(Z, wpos, wneg):
    """Predictions (positive side) of LinearSVC and LogisticRegression on weighted points,
    each with its own threshold and with the best one (:func:`best_offset`)."""
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


def best_incumbent(
    Z: np.ndarray,
    wpos: np.ndarray,
    wneg: np.ndarray,
    *,
    surrogate: bool = True,
    milp_time_limit: float | None = None,
    networks: bool = False,
    original: np.ndarray | None = None,
    n_jobs: int | None = None,
) -> tuple[np.ndarray, float, str, bool]:
    """The best of: the majority class, LinearSVC, LogisticRegression, (when
    ``milp_time_limit`` is given) the big-M MILP stopped after that many seconds and (when
    ``networks``) the networks of :func:`one_unit_networks` (on ``Z`` and the points'
    ``original`` features). Ties go to the first of them.

    Points of dimension 0 (``Z`` without columns: all points coincide) get the majority class.
    Ctrl-C stops at once with the best incumbent so far.

    Returns ``(positive, errors, source, interrupted)``.
    """
    cands = [("majority class", majority_labeling(wpos, wneg))]
    interrupted = False
    two_classes = Z.shape[1] > 0 and np.any(wpos > 0) and np.any(wneg > 0)
    try:
        if surrogate and two_classes:
            cands.extend(_surrogates(Z, wpos, wneg))
        if milp_time_limit is not None and Z.shape[1] > 0:
            res = bigm_milp(Z, wpos, wneg, time_limit=milp_time_limit,
                            threads=None if n_jobs is None else effective_workers(n_jobs))
            cands.append(("big-M MILP", Z @ res.coef + res.intercept > 0))
            interrupted = res.interrupted
        if networks and two_classes and not interrupted:
            cands.extend(one_unit_networks(Z, wpos, wneg, original=original))
    except KeyboardInterrupt:
        interrupted = True
    errors = [labeling_errors(pos, wpos, wneg) for _, pos in cands]
    best = int(np.argmin(errors))
    return cands[best][1], errors[best], cands[best][0], interrupted
