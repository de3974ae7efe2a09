"""The training data as the MRC generations (:mod:`._ccg`, :mod:`._log`) use it."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._bounds import forbidden_labels

__all__ = ["TrainingSet"]


class TrainingSet:
    """The training data as both generations (0-1 and log loss) use it: ``Psi`` (CSR when
    sparse), ``y``, ``K`` (``n_classes``), ``tau``, ``lam``, the weights ``w`` (all 1 for None), the
    embedding ``B`` (``np.eye(K)`` for None), ``d``, ``m``, the weighted class means of
    ``psi`` (``centroids``: the rows that start every restricted program), ``col_top``, the
    largest ``|psi_j|`` of every column, ``zero_tol``, and ``forbidden``, the (sample, label)
    pairs that a dual point's rows leave out (:func:`~._bounds.forbidden_labels`; None: none).

    Examples
    --------
    >>> import numpy as np
    >>> data = TrainingSet(np.c_[np.ones(3), [0.0, 1.0, 4.0]], np.array([0, 1, 1]), 2,
    ...                    np.zeros(4), np.zeros(4))
    >>> data.m, data.centroids.tolist(), data.col_top.tolist()
    (4, [[1.0, 0.0], [1.0, 2.5]], [1.0, 4.0])
    """

    def __init__(self, Psi, y, n_classes: int, tau, lam, sample_weight=None, embedding=None):
        n, self.d = Psi.shape
        self.K = n_classes
        self.B = np.eye(self.K) if embedding is None else np.asarray(embedding, dtype=np.float64)
        self.m = self.B.shape[1] * self.d
        self.sparse = sp.issparse(Psi)
        self.Psi = sp.csr_matrix(Psi) if self.sparse else Psi
        self.y, self.tau, self.lam = y, tau, lam
        self.w = (np.ones(n) if sample_weight is None
                  else np.asarray(sample_weight, dtype=np.float64))
        self.class_weight = np.bincount(y, weights=self.w, minlength=self.K)
        onehot = np.zeros((n, self.K))
        onehot[np.arange(n), y] = self.w
        self.centroids = np.asarray(self.Psi.T @ onehot).T / self.class_weight[:, None]
        self.col_top = (np.asarray(abs(self.Psi).max(axis=0).todense()).ravel() if self.sparse
                        else np.abs(Psi).max(axis=0))
        # z of a coordinate with lambda = 0 is a weighted mean of psi values: in exact
        # arithmetic 0 at a dual optimum, in floating point a rounding error far below this
        self.zero_tol = 1e-12 * max(float(self.col_top.max()), 1e-300)
        self.forbidden = forbidden_labels(self.Psi, y, self.K, tau, embedding, self.zero_tol)
