"""The ``"mrc_dual"`` witness of a minimax risk classifier: its primal and its dual point.

Everything is re-derived from the definition of the MRC (Mazuelas, Zanoni & Perez 2020) on
the training data, with the fitted model's own feature map ``psi`` (``phi_``, plus the
intercept column) and label embedding ``B`` (one-hot when None):

* ``Phi(x, y) = B_y (x) psi(x)`` (layout ``k * d + l``); over the samples of positive weight
  ``w``, ``tau`` is the weighted mean of ``Phi(x_i, y_i)`` and ``lambda = s std / sqrt(W)``
  (weighted population std, ``W`` the total weight).
* ``R(mu) = -tau^T mu + lambda^T |mu| + nu(mu)``; for the 0-1 loss ``nu(mu) = max_i max_C
  (sum_{y in C} v_iy - 1) / |C| + 1`` over the nonempty label subsets ``C`` (``v_iy = Phi(x_i,
  y)^T mu``), for the log loss ``max_i LSE(v_i)``. The best ``C`` of each size ``k`` holds the
  ``k`` largest scores, so sorting each sample's scores gives the maximum exactly.
* A row pairs a sample ``i`` with a label distribution ``q`` (0-1: uniform on a subset ``C``,
  value ``1 - 1/|C|``; log: any ``q``, value its entropy), so that ``nu(mu) >= q^T v_i +
  value`` for every ``mu``; a class-average row is the weighted mean of the singleton rows of a
  class (value 0). For weights ``a >= 0`` summing to 1, ``z = sum_r a_r (q_r B) (x) psi_r -
  tau`` and ``D = sum_r a_r value_r``: ``R(mu) >= D + sum_j (z_j mu_j + lambda_j |mu_j|)``, so
  ``R* >= D`` where ``|z| <= lambda``. Mixing in the empirical distribution (``z = 0``, ``D =
  0``) with the smallest weight ``t`` that makes ``(1 - t) |z| <= lambda`` proves ``R* >= (1 -
  t) D``. An excess ``|z_j| - lambda_j`` at rounding level is accepted (a vertex meets
  ``|z_j| <= lambda_j`` up to rounding); with ``lambda_j = 0`` no mixing helps, and a larger
  ``|z_j|`` proves only 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["MRCTerms", "check_mrc_dual", "mrc_terms"]

#: rounding tolerance of the re-evaluated value and bound, relative to the terms summed
_RTOL = 1e-9
#: an excess |z_j| - lambda_j accepted as rounding, relative to the feature's largest |Phi_j|
_ZERO_RTOL = 1e-11


@dataclass
class MRCTerms:
    """The MRC program of a fitted model on its training data, in scaled units: every
    column of ``Psi`` divided by a power of two (exactly) so that its largest entry has
    magnitude in [0.5, 1), and ``mu`` multiplied by the same, which leaves every product
    ``Phi^T mu`` as it is and keeps the squares of features at 1e+-155 and beyond inside
    float64's range."""

    Psi: object  # ndarray or sparse: psi of the samples of positive weight, scaled
    yk: np.ndarray  # their class indices
    wk: np.ndarray  # their weights
    keep: np.ndarray  # which samples have positive weight
    B: np.ndarray  # the label embedding (one-hot when the model has none)
    mu: np.ndarray  # the model's mu_, scaled
    tau: np.ndarray
    lam: np.ndarray
    nu: float  # nu(mu) re-evaluated
    R: float  # R(mu) re-evaluated
    atol: float  # the rounding of R: _RTOL of the terms summed


def _power_of_two_scale(top: np.ndarray) -> np.ndarray:
    """``2**-e`` with ``top = m 2**e``, ``m`` in [0.5, 1) (1 where ``top`` is 0)."""
    _, e = np.frexp(top)
    return np.where(top > 0, np.ldexp(1.0, -e), 1.0)


def mrc_terms(model, X, y, w) -> MRCTerms:
    """Re-derive ``tau``, ``lambda``, ``nu(mu)`` and ``R(mu)`` of ``model`` (an MRCCCG) on
    its training data (see the module docstring); ``ValueError`` when the data's classes
    are not the model's."""
    keep = np.asarray(w) > 0
    Xk = X[keep] if sp.issparse(X) else np.asarray(X, dtype=np.float64)[keep]
    classes, yk = np.unique(np.asarray(y)[keep], return_inverse=True)
    yk = yk.ravel()
    wk = np.asarray(w, dtype=np.float64)[keep]
    if not np.array_equal(classes, model.classes_):
        raise ValueError(f"the data's classes {classes.tolist()} are not the model's "
                         f"{np.asarray(model.classes_).tolist()}")
    K = len(classes)
    Psi = model.phi_.transform(Xk)
    if model.fit_intercept:  # psi(x) = (1, phi(x))
        ones = np.ones((Psi.shape[0], 1))
        Psi = sp.hstack([ones, Psi], format="csr") if sp.issparse(Psi) else np.c_[ones, Psi]
    d = Psi.shape[1]
    top = (np.abs(sp.csr_matrix(Psi)).max(axis=0).toarray().ravel() if sp.issparse(Psi)
           else np.abs(Psi).max(axis=0, initial=0.0))
    scale = _power_of_two_scale(top)
    Psi = sp.csr_matrix(Psi @ sp.diags(scale)) if sp.issparse(Psi) else Psi * scale
    B = np.eye(K) if model.label_embedding_ is None else np.asarray(model.label_embedding_)
    mu = np.asarray(model.mu_, dtype=np.float64)
    if mu.shape != (B.shape[1] * d,):
        raise ValueError(f"mu_ of shape {mu.shape}, not ({B.shape[1] * d},)")
    mu = mu / np.tile(scale, B.shape[1])

    W = wk.sum()
    first_w = np.zeros((len(yk), K))
    first_w[np.arange(len(yk)), yk] = wk
    square = Psi.multiply(Psi) if sp.issparse(Psi) else Psi * Psi
    tau = np.asarray(Psi.T @ (first_w @ B)).T.ravel() / W
    second = np.asarray(square.T @ (first_w @ (B * B))).T.ravel() / W
    lam = model.s * np.sqrt(np.maximum(second - tau * tau, 0.0)) / math.sqrt(W)

    # nu(mu): the most violated label set of every sample
    V = np.asarray(Psi @ np.asarray(mu.reshape(B.shape[1], d)).T @ B.T)
    if model.loss == "log":
        top_v = V.max(axis=1)
        nu = float(np.max(top_v + np.log(np.exp(V - top_v[:, None]).sum(axis=1))))
    else:
        prefix = np.cumsum(-np.sort(-V, axis=1), axis=1)
        nu = float(np.max((prefix - 1.0) / np.arange(1, K + 1) + 1.0))
    R = float(-tau @ mu + lam @ np.abs(mu)) + nu
    atol = _RTOL * float(np.abs(tau) @ np.abs(mu) + lam @ np.abs(mu) + abs(nu))
    return MRCTerms(Psi, yk, wk, keep, B, mu, tau, lam, nu, R, atol)


def check_mrc_dual(model, cert, X, y, w, report, rtol) -> tuple[float, float] | None:
    """Re-derive the dual bound of an MRC certificate and its rounding slack (``rtol``
    unused: the bound is re-derived).

    Examples
    --------
    >>> from exactclf import verify
    >>> from exactclf.mrc import MRCCCG
    >>> X, y = [[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1]
    >>> report = verify(MRCCCG().fit(X, y), X, y)
    >>> report.ok, [c.name for c in report.checks][-2:]
    (True, ['dual point', 'witness proves the bound'])
    """
    data = cert.witness.data
    loss = data.get("loss")
    if not report.add("MRC model", loss in ("0-1", "log") and loss == model.loss,
                      f"witness loss {loss!r}, the model's {model.loss!r}"):
        return None
    t = mrc_terms(model, X, y, w)
    K = t.B.shape[0]
    if not report.add("primal point", np.array_equal(np.asarray(data.get("mu"), dtype=float),
                                                     np.asarray(model.mu_, dtype=float))
                      and data.get("nu") == model.nu_,
                      "the witness' mu and nu are the model's mu_ and nu_"):
        return None
    report.add("nu_ = nu(mu)", abs(model.nu_ - t.nu) <= t.atol,
               f"the max over every sample and label set {t.nu!r}, the model's nu_ "
               f"{model.nu_!r}")

    # the dual point
    sample = np.asarray(data["sample"], dtype=np.int64).ravel()
    alpha = np.asarray(data["alpha"], dtype=np.float64).ravel()
    class_alpha = np.asarray(data["class_alpha"], dtype=np.float64).ravel()
    keep = t.keep
    position = np.full(len(keep), -1)
    position[keep] = np.arange(keep.sum())
    rows_ok = bool(len(sample) == len(alpha) and class_alpha.shape == (K,)
                   and np.all(np.isfinite(alpha)) and np.all(alpha >= 0)
                   and np.all(np.isfinite(class_alpha)) and np.all(class_alpha >= 0)
                   and alpha.sum() + class_alpha.sum() > 0
                   and np.all((sample >= 0) & (sample < len(keep))))
    if rows_ok:
        sample = position[sample]
        rows_ok = bool(np.all(sample >= 0))  # a sample of weight 0 is not in the program
    Q = np.zeros((len(sample), K))
    values = np.zeros(len(sample))
    if rows_ok and loss == "log":  # any distribution: normalized here
        q = np.asarray(data["q"], dtype=np.float64)
        rows_ok = bool(q.shape == Q.shape and np.all(np.isfinite(q)) and np.all(q >= 0)
                       and np.all(q.sum(axis=1) > 0))
        if rows_ok:
            Q = q / q.sum(axis=1, keepdims=True)
        values = -np.sum(np.where(Q > 0, Q * np.log(np.where(Q > 0, Q, 1.0)), 0.0), axis=1)
    elif rows_ok:
        labels = data["labels"]
        rows_ok = isinstance(labels, list) and len(labels) == len(sample)
        for r, C in enumerate(labels if rows_ok else []):
            C = np.asarray(C, dtype=np.int64).ravel()
            rows_ok = rows_ok and 0 < len(C) == len(set(C.tolist())) and bool(
                np.all((C >= 0) & (C < K)))
            if rows_ok:
                Q[r, C] = 1.0 / len(C)
        values = 1.0 - 1.0 / np.maximum(np.count_nonzero(Q, axis=1), 1)
    if not report.add("dual rows", rows_ok,
                      f"{len(sample)} rows (sample, label set) and {K} class-average rows, "
                      "nonnegative weights on samples of positive weight"):
        return None
    total = alpha.sum() + class_alpha.sum()
    alpha, class_alpha = alpha / total, class_alpha / total
    D = float(alpha @ values)
    # sum_r a_r (q_r B) (x) psi_r, each class-average row spread over its samples
    yk, wk = t.yk, t.wk
    P = np.zeros((len(yk), K))
    np.add.at(P, sample, alpha[:, None] * Q)
    class_weight = np.bincount(yk, weights=wk, minlength=K)
    P[np.arange(len(yk)), yk] += class_alpha[yk] * wk / class_weight[yk]
    z = np.asarray(t.Psi.T @ (P @ t.B)).T.ravel() - t.tau
    az, lam = np.abs(z), t.lam
    # the largest |Phi_j(x_i, y)|: the unit of a rounding-level z_j
    top = (np.abs(t.Psi).max(axis=0).toarray().ravel() if sp.issparse(t.Psi)
           else np.abs(t.Psi).max(axis=0, initial=0.0))
    unit = np.kron(np.abs(t.B).max(axis=0), top)
    over = az - lam > _ZERO_RTOL * unit
    stuck = over & (lam == 0)
    scaled = over & (lam > 0)
    mix = float(np.max(1.0 - lam[scaled] / az[scaled])) if scaled.any() else 0.0
    proven = 0.0 if stuck.any() else max((1.0 - mix) * D, 0.0)
    report.add("dual point", True,
               f"D = {D!r}; of its {len(z)} features {int(over.sum())} with |z| > lambda, "
               f"repaired by mixing in a weight {mix:.3g} of the empirical distribution"
               + (f", {int(stuck.sum())} with lambda = 0 and z != 0: bound 0" if stuck.any()
                  else ""))
    # a claim below what the point proves is conservative, not wrong (the estimator prices
    # rounding-level excesses |z_j| - lambda_j more strictly than _ZERO_RTOL, in its own
    # column scaling, and caps the bound at R(mu))
    return proven, _RTOL * abs(D)
