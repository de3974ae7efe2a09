"""Bounds on the expected loss of a fixed classification rule over the uncertainty set.

For a rule with loss ``l[i, y]`` at the training input ``x_i`` and label ``y`` (for the MRC's
randomized rule ``1 - h(y | x_i)``, for its deterministic rule ``[y != argmax]``), the
distributions ``p`` of the uncertainty set supported on the training inputs give the LPs

    min_p / max_p  sum_{i, y} p_{iy} l[i, y]
    s.t.  |sum_{i, y} p_{iy} Phi(x_i, y) - tau| <= lambda,  sum p = 1,  p >= 0.

Their LP duals are, with ``G_a(mu) = -tau^T mu + lambda^T |mu| + max_{i, y} (Phi(x_i, y)^T mu
+ a[i, y])``,

    min_p E_p l = -min_mu G_{-l}(mu),        max_p E_p l = min_mu G_{+l}(mu),

and weak duality makes *every* ``mu`` a certificate: ``-G_{-l}(mu)`` is a lower bound on the
smallest expected loss and ``G_{+l}(mu)`` an upper bound on the largest. ``G_a`` has the form
of the MRC's ``R(mu)`` with one row per (sample, label) and right-hand side ``-a[i, y]``, so it
is minimized by constraint generation on the persistent LP of :mod:`._lp`; each iterate is
evaluated exactly over all samples and labels and the best one is returned.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._bounds import class_scores_matrix
from ._lp import make_lp
from ._rows import lp_costs, lp_rows

__all__ = ["rule_loss_bound"]


def rule_loss_bound(Psi, y, loss, tau, lam, n_classes: int, *, sense: str,
                    sample_weight=None, embedding=None, eps: float = 1e-6,
                    n_max: int = 400, max_iter: int = 500, lp_solver: str = "highs",
                    tol: float = 1e-7) -> float:
    """A certified bound on the expected loss ``loss`` of a rule over the uncertainty set.

    Parameters
    ----------
    Psi : ndarray or scipy.sparse matrix of shape (n_samples, d)
        ``psi(x_i)`` of the training samples (the support of the distributions).
    y : ndarray of shape (n_samples,)
        Class indices (for the class-average rows that start the LP).
    loss : ndarray of shape (n_samples, n_classes)
        The rule's loss at every training input and label.
    tau, lam : ndarray of shape (q * d,)
        The uncertainty set (:func:`~exactclf.mrc._statistics.mrc_statistics`).
    n_classes : int
    sense : {"lower", "upper"}
        ``"lower"``: a lower bound on ``min_p E_p loss``; ``"upper"``: an upper bound on
        ``max_p E_p loss``.
    sample_weight, embedding
        As for :func:`~exactclf.mrc._ccg.mrc_ccg`.
    eps, n_max, max_iter, lp_solver, tol
        Rows violated by more than ``eps`` are added, at most ``n_max`` per LP solve and at
        most ``max_iter`` solves; the bound is valid however the generation stops.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from exactclf.mrc import mrc_statistics
    >>> Psi, y = np.ones((4, 1)), np.array([0, 0, 0, 1])
    >>> tau, lam = mrc_statistics(Psi, y, 2, 0.0)
    >>> loss = np.array([[0.0, 1.0]] * 4)  # always predict class 0
    >>> round(rule_loss_bound(Psi, y, loss, tau, lam, 2, sense="lower"), 9)  # lambda = 0
    0.25
    """
    if sense not in ("lower", "upper"):
        raise ValueError(f"sense must be 'lower' or 'upper', got {sense!r}")
    a = -loss if sense == "lower" else loss
    n, d = Psi.shape
    K = n_classes
    B = np.eye(K) if embedding is None else embedding
    m = B.shape[1] * d
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    sparse = sp.issparse(Psi)
    cols = np.arange(m)

    lp = make_lp(lp_solver, tol=tol)
    lp.add_cols(np.r_[1.0, lp_costs(tau, lam, cols)], np.r_[-np.inf, np.zeros(2 * m)],
                np.full(1 + 2 * m, np.inf))

    def add_rows(U, masks, rhs):
        _, starts, idx, val = lp_rows(U, masks, cols, d, B)
        lp.add_rows(np.full(len(rhs), -np.inf), rhs, starts, idx, val)

    # per class, the weighted average of its rows (i, y_i): implied, and the class
    # proportions as a dual point keep every restricted LP bounded
    onehot = np.zeros((n, K))
    onehot[np.arange(n), y] = w
    class_weight = onehot.sum(axis=0)
    centroids = np.asarray(Psi.T @ onehot).T / class_weight[:, None]
    a_true = a[np.arange(n), y]
    add_rows(centroids, np.eye(K, dtype=bool), -(onehot.T @ a_true) / class_weight)

    best = np.inf
    seen = np.zeros((n, K), dtype=bool)
    for _ in range(max_iter):
        res = lp.solve("dual")
        if not res.optimal:
            raise RuntimeError(
                f"the LP of the rule's loss bound was not solved to optimality by {lp.name} "
                f"(status: {res.status})"
            )
        mu = res.x[1::2] - res.x[2::2]
        S = np.asarray(Psi @ class_scores_matrix(mu, K, d, embedding).T) + a
        best = min(best, float(-tau @ mu + lam @ np.abs(mu) + S.max()))
        label = np.argmax(np.where(seen, -np.inf, S), axis=1)
        viol = S[np.arange(n), label] - res.x[0]
        cand = np.flatnonzero((viol > eps) & ~seen[np.arange(n), label])
        if len(cand) == 0:
            break
        cand = cand[np.argsort(-viol[cand], kind="stable")][:n_max]
        seen[cand, label[cand]] = True
        masks = np.zeros((len(cand), K), dtype=bool)
        masks[np.arange(len(cand)), label[cand]] = True
        U = Psi[cand]
        add_rows(sp.csr_matrix(U) if sparse else U, masks, -a[cand, label[cand]])
    return -best if sense == "lower" else best
