"""Feature maps psi(x) of the minimax risk classifiers: the MRC feature vector is
``Phi(x, y) = e_y (x) psi(x)`` (one-hot over the classes, Kronecker product).

Every map is fitted once on the training inputs and then applied to any input:

``linear``
    ``psi(x) = x``.
``fourier``
    Random Fourier features ``cos(w_j^T x + b_j)``, ``w_j ~ N(0, 2 gamma I)``, ``b_j ~ U[0, 2 pi)``:
    the inner product of two feature vectors approximates (up to a constant factor) the
    Gaussian kernel ``exp(-gamma ||x - x'||^2)``.
``relu``
    Random ReLU features ``max(0, w_j^T (x - x_{r_j}))`` with ``w_j ~ N(0, 2 gamma I)`` and
    ``x_{r_j}`` a training input drawn at random, so that every kink crosses the data.
``threshold``
    Decision-stump indicators ``1[x_l > t]`` with thresholds ``t`` at the midpoints between
    consecutive distinct values of feature ``l`` where the labels change (at most
    ``n_components // n_features`` per feature, spread evenly over the candidates).
any scikit-learn transformer
    A clone of it is fitted on ``(X, y)``; ``psi(x)`` is its ``transform``.

``gamma="scale"`` is ``1 / (n_features * X.var())`` and ``gamma="auto"`` is ``1 / n_features``, as
for scikit-learn's RBF kernels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils import check_random_state

__all__ = ["FeatureMap", "fit_feature_map", "resolve_gamma", "PHI_NAMES"]

#: the feature maps known by name
PHI_NAMES = ("linear", "fourier", "relu", "threshold")


@dataclass
class FeatureMap:
    """A fitted feature map: ``transform(X)`` returns ``psi(X)`` of shape (n, n_features_out).

    ``kind`` is one of :data:`PHI_NAMES` or ``"transformer"``; ``params`` holds the fitted
    parameters (random directions, offsets, thresholds, or the fitted transformer).
    """

    kind: str
    n_features_out: int
    params: dict = field(default_factory=dict)

    def transform(self, X):
        """Evaluate the map on ``X`` (float64: C-contiguous, or CSR where ``X`` is a SciPy
        sparse matrix and the map is ``linear``, or a transformer returns sparse output)."""
        X = _as_float(X)
        p = self.params
        if self.kind == "linear":
            out = X
        elif self.kind == "fourier":
            out = np.cos(X @ p["W"] + p["b"])
        elif self.kind == "relu":
            out = np.maximum(X @ p["W"] + p["b"], 0.0)
        elif self.kind == "threshold":
            cols = X[:, p["feature"]]
            cols = cols.toarray() if sp.issparse(cols) else cols
            out = (cols > p["threshold"]).astype(np.float64)
        else:
            out = p["transformer"].transform(X)
            out = _as_float(out) if sp.issparse(out) else np.asarray(out, dtype=np.float64)
            if out.ndim != 2 or out.shape[0] != X.shape[0]:
                raise ValueError(
                    f"the transformer passed as phi returned an array of shape {out.shape} for "
                    f"{X.shape[0]} samples; it must return one row of features per sample."
                )
            values = out.data if sp.issparse(out) else out
            if not np.all(np.isfinite(values)):
                raise ValueError("the transformer passed as phi returned NaN or infinite values.")
        if sp.issparse(out):
            return out
        return np.ascontiguousarray(out, dtype=np.float64)


def _as_float(X):
    """``X`` as float64: a CSR matrix when sparse, else an ndarray."""
    if sp.issparse(X):
        return sp.csr_matrix(X, dtype=np.float64)
    return np.asarray(X, dtype=np.float64)


def resolve_gamma(gamma, X: np.ndarray) -> float:
    """Scale of the random features: ``"scale"``, ``"auto"`` or a positive float.

    Examples
    --------
    >>> import numpy as np
    >>> resolve_gamma("auto", np.zeros((3, 4)))
    0.25
    >>> resolve_gamma("scale", np.array([[0.0], [2.0]]))
    1.0
    """
    if isinstance(gamma, Real) and not isinstance(gamma, bool):
        return float(gamma)
    d = X.shape[1]
    if gamma == "auto":
        return 1.0 / d
    if sp.issparse(X):
        mean = X.sum() / (X.shape[0] * d)
        var = max(float(X.multiply(X).sum() / (X.shape[0] * d) - mean * mean), 0.0)
    else:
        var = float(X.var())
    return 1.0 / (d * var) if var > 0 else 1.0


def _label_change_thresholds(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Midpoints between consecutive distinct values of ``x`` at which the labels change
    (the label sets of the two values differ, or one of them holds several labels)."""
    values, inverse = np.unique(x, return_inverse=True)
    if len(values) < 2:
        return np.empty(0)
    first = np.full(len(values), -1, dtype=np.int64)
    mixed = np.zeros(len(values), dtype=bool)
    order = np.argsort(inverse, kind="stable")
    inv_sorted, y_sorted = inverse[order], y[order]
    starts = np.flatnonzero(np.r_[True, inv_sorted[1:] != inv_sorted[:-1]])
    first[inv_sorted[starts]] = y_sorted[starts]
    lo = np.minimum.reduceat(y_sorted, starts)
    hi = np.maximum.reduceat(y_sorted, starts)
    mixed[inv_sorted[starts]] = lo != hi
    change = (first[1:] != first[:-1]) | mixed[1:] | mixed[:-1]
    return ((values[1:] + values[:-1]) / 2.0)[change]


def fit_feature_map(
    phi,
    X: np.ndarray,
    y: np.ndarray,
    *,
    n_components: int,
    gamma,
    random_state=None,
) -> FeatureMap:
    """Fit the feature map ``phi`` on training inputs ``X`` (labels ``y`` as class indices).

    Parameters
    ----------
    phi : {"linear", "fourier", "relu", "threshold"} or transformer
        The map (see the module documentation).
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Integer class indices (used by ``"threshold"`` and passed to a transformer's ``fit``).
    n_components : int
        Number of random features (``"fourier"``, ``"relu"``) or the maximum total number of
        thresholds (``"threshold"``).
    gamma : {"scale", "auto"} or float
        Scale of the random directions.
    random_state : int, RandomState instance or None

    Returns
    -------
    FeatureMap

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> fmap = fit_feature_map("threshold", X, np.array([0, 0, 1, 1]), n_components=10,
    ...                        gamma="scale")
    >>> fmap.transform(X).ravel().tolist()
    [0.0, 0.0, 1.0, 1.0]
    >>> fit_feature_map("fourier", X, None, n_components=5, gamma=1.0,
    ...                 random_state=0).transform(X).shape
    (4, 5)
    """
    X = _as_float(X)
    n, d = X.shape
    if not isinstance(phi, str):
        transformer = clone(phi).fit(X, y)
        fmap = FeatureMap("transformer", 0, {"transformer": transformer})
        fmap.n_features_out = fmap.transform(X[:1]).shape[1]
        return fmap
    if phi == "linear":
        return FeatureMap("linear", d)
    if phi == "threshold":
        per_feature = max(1, n_components // max(d, 1))
        feats, thresholds = [], []
        yy = np.zeros(n, dtype=np.int64) if y is None else np.asarray(y)
        for col in range(d):
            column = X[:, [col]].toarray().ravel() if sp.issparse(X) else X[:, col]
            t = _label_change_thresholds(column, yy)
            if len(t) > per_feature:
                t = t[np.unique(np.linspace(0, len(t) - 1, per_feature).round().astype(int))]
            feats.append(np.full(len(t), col))
            thresholds.append(t)
        feature = np.concatenate(feats).astype(np.intp) if feats else np.empty(0, np.intp)
        threshold = np.concatenate(thresholds) if thresholds else np.empty(0)
        return FeatureMap(
            "threshold", len(threshold), {"feature": feature, "threshold": threshold}
        )
    rng = check_random_state(random_state)
    g = resolve_gamma(gamma, X)
    W = rng.normal(scale=np.sqrt(2.0 * g), size=(d, n_components))
    if phi == "fourier":
        b = rng.uniform(0.0, 2.0 * np.pi, size=n_components)
        return FeatureMap("fourier", n_components, {"W": W, "b": b, "gamma": g})
    if phi == "relu":
        anchors = rng.randint(0, n, size=n_components)
        if sp.issparse(X):
            b = -np.asarray(X[anchors].multiply(W.T).sum(axis=1)).ravel()
        else:
            b = -np.einsum("ij,ji->i", X[anchors], W)
        return FeatureMap("relu", n_components, {"W": W, "b": b, "gamma": g})
    raise ValueError(f"phi must be one of {PHI_NAMES} or a transformer, got {phi!r}")
