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

import numpy as np
import scipy.sparse as sp

__all__ = ["check_mrc_dual"]

#: rounding tolerance of the re-evaluated value and bound, relative to the terms summed
_RTOL = 1e-9
#: an excess |z_j| - lambda_j accepted as rounding, relative to the feature's largest |Phi_j|
_ZERO_RTOL = 1e-11


def _close(a: float, b: float, scale: float) -> bool:
    return abs(a - b) <= _RTOL * scale


def check_mrc_dual(model, cert, X, y, w, report) -> float | None:
    """Re-derive ``R(mu)`` (the value) and the dual bound of an MRC certificate.

    Examples
    --------
    >>> from exactclf import verify
    >>> from exactclf.mrc import MRCCCG
    >>> X, y = [[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1]
    >>> report = verify(MRCCCG().fit(X, y), X, y)
    >>> report.ok, [c.name for c in report.checks][-2:]
    (True, ['dual bound', 'witness proves the bound'])
    """
    data = cert.witness.data
    loss = data.get("loss")
    keep = np.asarray(w) > 0
    Xk = X[keep] if sp.issparse(X) else np.asarray(X, dtype=np.float64)[keep]
    classes, yk = np.unique(np.asarray(y)[keep], return_inverse=True)
    wk = np.asarray(w, dtype=np.float64)[keep]
    K = len(classes)
    if not report.add("MRC model", loss in ("0-1", "log") and loss == model.loss
                      and np.array_equal(classes, model.classes_),
                      f"loss {loss!r} of {model.loss!r}, classes {classes.tolist()}"):
        return None
    Psi = model.phi_.transform(Xk)
    if model.fit_intercept:  # psi(x) = (1, phi(x))
        ones = np.ones((Psi.shape[0], 1))
        Psi = sp.hstack([ones, Psi], format="csr") if sp.issparse(Psi) else np.c_[ones, Psi]
    d = Psi.shape[1]
    B = np.eye(K) if model.label_embedding_ is None else np.asarray(model.label_embedding_)
    mu = np.asarray(data["mu"], dtype=np.float64)
    if not report.add("primal point", mu.shape == (B.shape[1] * d,)
                      and np.array_equal(mu, model.mu_) and data["nu"] == model.nu_,
                      "the witness' mu and nu are the model's mu_ and nu_"):
        return None

    # tau and lambda of the weighted samples
    W = wk.sum()
    first_w = np.zeros((len(yk), K))
    first_w[np.arange(len(yk)), yk] = wk
    square = Psi.multiply(Psi) if sp.issparse(Psi) else Psi * Psi
    first = np.asarray(Psi.T @ (first_w @ B)).T.ravel() / W
    second = np.asarray(square.T @ (first_w @ (B * B))).T.ravel() / W
    tau = first
    lam = model.s * np.sqrt(np.maximum(second - first * first, 0.0)) / math.sqrt(W)

    # R(mu): the most violated label set of every sample
    V = np.asarray(Psi @ np.asarray(mu.reshape(B.shape[1], d)).T @ B.T)
    if loss == "log":
        top = V.max(axis=1)
        nu = float(np.max(top + np.log(np.exp(V - top[:, None]).sum(axis=1))))
    else:
        prefix = np.cumsum(-np.sort(-V, axis=1), axis=1)
        nu = float(np.max((prefix - 1.0) / np.arange(1, K + 1) + 1.0))
    R = float(-tau @ mu + lam @ np.abs(mu)) + nu
    scale = float(np.abs(tau) @ np.abs(mu) + lam @ np.abs(mu) + abs(nu))
    report.add("nu_ = nu(mu)", _close(model.nu_, nu, scale),
               f"the max over every sample and label set {nu!r}, the model's nu_ "
               f"{model.nu_!r}")
    report.add("value = R(mu)", _close(cert.value, R, scale),
               f"R(mu) re-evaluated: {R!r}; the certificate claims {cert.value!r}")

    # the dual point
    sample = np.asarray(data["sample"], dtype=np.int64)
    alpha = np.asarray(data["alpha"], dtype=np.float64)
    class_alpha = np.asarray(data["class_alpha"], dtype=np.float64)
    position = np.full(len(keep), -1)
    position[keep] = np.arange(keep.sum())
    rows_ok = (len(sample) == len(alpha) and class_alpha.shape == (K,)
               and np.all(np.isfinite(alpha)) and np.all(alpha >= 0)
               and np.all(np.isfinite(class_alpha)) and np.all(class_alpha >= 0)
               and alpha.sum() + class_alpha.sum() > 0
               and np.all((sample >= 0) & (sample < len(keep))))
    if rows_ok:
        sample = position[sample]
        rows_ok = bool(np.all(sample >= 0))  # a sample of weight 0 is not in the program
    Q = np.zeros((len(sample), K))
    if rows_ok and loss == "log":  # any distribution: normalized here
        q = np.asarray(data["q"], dtype=np.float64)
        rows_ok = bool(q.shape == Q.shape and np.all(np.isfinite(q)) and np.all(q >= 0)
                       and np.all(q.sum(axis=1) > 0))
        if rows_ok:
            Q = q / q.sum(axis=1, keepdims=True)
        values = -np.sum(np.where(Q > 0, Q * np.log(np.where(Q > 0, Q, 1.0)), 0.0), axis=1)
    elif rows_ok:
        labels = data["labels"]
        rows_ok = len(labels) == len(sample)
        for r, C in enumerate(labels if rows_ok else []):
            C = np.asarray(C, dtype=np.int64)
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
    P = np.zeros((len(yk), K))
    np.add.at(P, sample, alpha[:, None] * Q)
    class_weight = np.bincount(yk, weights=wk, minlength=K)
    P[np.arange(len(yk)), yk] += class_alpha[yk] * wk / class_weight[yk]
    z = np.asarray(Psi.T @ (P @ B)).T.ravel() - tau
    az = np.abs(z)
    # the largest |Phi_j(x_i, y)|: the unit of a rounding-level z_j
    top = np.abs(sp.csr_matrix(Psi)).max(axis=0).toarray().ravel()
    unit = np.kron(np.abs(B).max(axis=0), top)
    over = az - lam > _ZERO_RTOL * unit
    stuck = over & (lam == 0)
    scaled = over & (lam > 0)
    t = float(np.max(1.0 - lam[scaled] / az[scaled])) if scaled.any() else 0.0
    proven = 0.0 if stuck.any() else max((1.0 - t) * D, 0.0)
    # a claim below what the point proves is conservative, not wrong (the estimator prices
    # rounding-level excesses |z_j| - lambda_j more strictly than _ZERO_RTOL, in its own
    # column scaling, and caps the bound at R(mu))
    report.add("dual bound", cert.bound <= proven + _RTOL * abs(D),
               f"the dual point proves {proven!r} (D = {D!r}; of its {len(z)} features "
               f"{int(over.sum())} with |z| > lambda, repaired by mixing in a weight {t:.3g} "
               "of the empirical distribution"
               + (f", {int(stuck.sum())} with lambda = 0 and z != 0: bound 0" if stuck.any()
                  else "") + f"); the certificate claims {cert.bound!r}")
    return proven
