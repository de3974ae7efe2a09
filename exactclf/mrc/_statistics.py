"""Feature statistics of the minimax risk classifier: the mean ``tau`` of ``Phi(x_i, y_i)``
over the training samples and the uncertainty width ``lambda``."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["mrc_statistics"]


def mrc_statistics(Psi, y: np.ndarray, n_classes: int, s: float,
                   sample_weight: np.ndarray | None = None, embedding: np.ndarray | None = None):
    """``tau`` (mean of ``Phi(x_i, y_i)``) and ``lambda`` (``s`` times its population std over
    ``sqrt(n)``), both flat of length ``q * d`` in the layout ``k * d + l``, for the features
    ``Phi(x, y) = B_y (x) psi(x)`` (``B = embedding``, one-hot by default: ``q = K``).

    With ``sample_weight`` the mean and the standard deviation are weighted and ``n`` is the
    total weight: weights count samples, so integer weights give the statistics of the data
    with each row repeated that many times.

    Parameters
    ----------
    Psi : ndarray or scipy.sparse matrix of shape (n_samples, d)
        ``psi(x_i)``.
    y : ndarray of shape (n_samples,)
        Class indices in ``range(n_classes)``.
    n_classes : int
    s : float
    sample_weight : ndarray of shape (n_samples,) or None
        Nonnegative weights, not all zero; None: all 1.
    embedding : ndarray of shape (n_classes, q) or None
        ``B``; None: the identity (one-hot features).

    Returns
    -------
    tau, lam : ndarray of shape (q * d,)

    Examples
    --------
    >>> import numpy as np
    >>> tau, lam = mrc_statistics(np.ones((4, 1)), np.array([0, 0, 0, 1]), 2, 1.0)
    >>> tau.tolist(), np.round(lam, 4).tolist()
    ([0.75, 0.25], [0.2165, 0.2165])
    """
    n = Psi.shape[0]
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    total = float(w.sum())
    onehot = np.zeros((n, n_classes))
    onehot[np.arange(n), y] = w
    first_label = onehot if embedding is None else onehot @ embedding
    second_label = onehot if embedding is None else onehot @ (embedding * embedding)
    square = Psi.multiply(Psi) if sp.issparse(Psi) else Psi * Psi
    # Phi(x_i, y_i) = B_{y_i} (x) psi_i: mean and second moment without forming n x m arrays
    # (Psi^T onehot)^T, not onehot^T Psi: OpenBLAS is very slow on short-wide x tall products
    first = np.asarray(Psi.T @ first_label).T / total
    second = np.asarray(square.T @ second_label).T / total
    var = np.maximum(second - first * first, 0.0)
    tau = first.ravel()
    lam = s * np.sqrt(var).ravel() / np.sqrt(total)
    return tau, lam
