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
from sklearn.svm import LinearSVC

from .._resources import effective_workers
from ._milp import bigm_milp
from ._min01 import labeling_errors, majority_labeling

__all__ = ["best_incumbent", "one_unit_networks"]


def _samples(Z, wpos, wneg):
    """The weighted points as samples ``(X, y, w)`` (a point with both weights twice), with
    weights of mean 1."""
    has_pos, has_neg = wpos > 0, wneg > 0
    Zs = np.vstack([Z[has_pos], Z[has_neg]])
    ys = np.r_[np.ones(has_pos.sum()), np.zeros(has_neg.sum())]
    ws = np.r_[wpos[has_pos], wneg[has_neg]]
    return Zs, ys, ws / ws.mean()


def one_unit_networks(Z, wpos, wneg, seeds=(0, 1)):
    """Predictions (positive side) of MLPClassifier with one ReLU unit, one per seed.

    Such a network predicts by thresholding ``relu(w . z + b)``: a half-space (or a
    constant), so its predictions are a labeling an affine classifier realizes. Its loss
    ignores the points on the flat side of the unit, which fits the 0-1 loss better than
    LinearSVC or LogisticRegression on some data (skin segmentation: 7208 errors against
    10478).
    """
    Zs, ys, ws = _samples(Z, wpos, wneg)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for seed in seeds:
            model = MLPClassifier(hidden_layer_sizes=(1,), random_state=seed)
            yield f"MLPClassifier(1), seed {seed}", model.fit(Zs, ys, sample_weight=ws).predict(
                Z) > 0.5


def _surrogates(Z, wpos, wneg):
    """Predictions (positive side) of LinearSVC and LogisticRegression on weighted points."""
    Zs, ys, ws = _samples(Z, wpos, wneg)
    models = {
        "LinearSVC": LinearSVC(C=10.0, max_iter=20000),
        "LogisticRegression": LogisticRegression(C=10.0, max_iter=2000),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for name, model in models.items():
            model.fit(Zs, ys, sample_weight=ws)
            yield name, model.decision_function(Z) > 0


def best_incumbent(
    Z: np.ndarray,
    wpos: np.ndarray,
    wneg: np.ndarray,
    *,
    surrogate: bool = True,
    milp_time_limit: float | None = None,
    networks: bool = False,
    n_jobs: int | None = None,
) -> tuple[np.ndarray, float, str, bool]:
    """The best of: the majority class, LinearSVC, LogisticRegression, (when
    ``milp_time_limit`` is given) the big-M MILP stopped after that many seconds and (when
    ``networks``) the networks of :func:`one_unit_networks`. Ties go to the first of them.

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
            cands.extend(one_unit_networks(Z, wpos, wneg))
    except KeyboardInterrupt:
        interrupted = True
    errors = [labeling_errors(pos, wpos, wneg) for _, pos in cands]
    best = int(np.argmin(errors))
    return cands[best][1], errors[best], cands[best][0], interrupted
