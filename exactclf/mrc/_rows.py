"""Rows and columns of the 0-1 MRC LP, as compressed triplets for the persistent LP of
:mod:`._lp`.

The LP's columns are ``nu`` (index 0) and, for the ``p``-th active feature, ``mu1`` and
``mu2`` (indices ``1 + 2p`` and ``2 + 2p``). A row is a sample's (or an average of samples')
``psi``-vector ``u`` and a label subset ``C``: ``F (mu1 - mu2) - nu <= 1/|C| - 1`` with
``F = sum_{y in C} B_y (x) u / |C|`` for the features ``Phi(x, y) = B_y (x) psi(x)`` (``B``
the label embedding, one-hot by default: then ``F_j = [k_j in C] u_{l_j} / |C|`` for the
feature ``j = k_j d + l_j``). ``u`` may be a row of a
SciPy sparse matrix: the coefficients stay sparse.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["row_coefficients", "lp_rows", "lp_columns", "lp_costs", "stack_rows"]


def row_coefficients(U, masks, feats, d, embedding=None) -> sp.csr_matrix:
    """``F`` of the rows with psi-vectors ``U`` (r x d, dense or sparse) and subset masks
    ``masks`` (r x K, bool) at the features ``feats`` (indices ``k * d + l``), as CSR;
    ``embedding`` (K x q) is ``B`` (None: one-hot).

    Examples
    --------
    >>> import numpy as np
    >>> F = row_coefficients(np.array([[1.0, 2.0]]), np.array([[True, True]]),
    ...                      np.array([0, 1, 3]), 2)
    >>> F.toarray().tolist()
    [[0.5, 1.0, 1.0]]
    """
    sizes = masks.sum(axis=1)
    E = masks if embedding is None else masks @ embedding
    weight = (E / sizes[:, None])[:, feats // d]
    if sp.issparse(U):
        coef = sp.csr_matrix(sp.csr_matrix(U)[:, feats % d].multiply(weight))
        coef.eliminate_zeros()
        coef.sort_indices()
        return coef
    return sp.csr_matrix(weight * U[:, feats % d])


def lp_rows(U, masks, active, d, embedding=None):
    """CSR triplets of the LP rows ``F_r (mu1 - mu2) - nu <= b_r`` over the columns ``nu,
    (mu1, mu2) of active[0], (mu1, mu2) of active[1], ...``; returns ``(upper, starts,
    indices, values)``."""
    coef = row_coefficients(U, masks, active, d, embedding)
    r = coef.shape[0]
    counts = np.diff(coef.indptr)
    row_len = 1 + 2 * counts
    starts = np.zeros(r, dtype=np.int64)
    starts[1:] = np.cumsum(row_len)[:-1]
    idx = np.empty(int(row_len.sum()), dtype=np.int32)
    val = np.empty(len(idx))
    idx[starts] = 0
    val[starts] = -1.0
    offset_in_row = np.arange(coef.nnz) - np.repeat(coef.indptr[:-1], counts)
    pos = np.repeat(starts, counts) + 1 + 2 * offset_in_row
    idx[pos] = 1 + 2 * coef.indices
    val[pos] = coef.data
    idx[pos + 1] = 2 + 2 * coef.indices
    val[pos + 1] = -coef.data
    return 1.0 / masks.sum(axis=1) - 1.0, starts, idx, val


def lp_columns(U, masks, feats, d, embedding=None):
    """CSC triplets of the columns ``mu1, mu2`` of each feature of ``feats``, in that order,
    in the rows ``(U, masks)``; returns ``(starts, indices, values)``."""
    coef = row_coefficients(U, masks, feats, d, embedding).tocsc()
    coef.sort_indices()
    p = len(feats)
    ptr = coef.indptr[:-1].astype(np.int64)
    counts = np.diff(coef.indptr)
    starts = np.empty(2 * p, dtype=np.int64)
    starts[0::2] = 2 * ptr
    starts[1::2] = 2 * ptr + counts
    col_of = np.repeat(np.arange(p), counts)
    first = ptr[col_of] + np.arange(coef.nnz)
    idx = np.empty(2 * coef.nnz, dtype=np.int32)
    val = np.empty(2 * coef.nnz)
    idx[first] = coef.indices
    val[first] = coef.data
    idx[first + counts[col_of]] = coef.indices
    val[first + counts[col_of]] = -coef.data
    return starts, idx, val


def lp_costs(tau, lam, feats):
    """Costs of the columns ``mu1, mu2`` of each feature of ``feats``: ``-(tau - lambda)``
    and ``tau + lambda``."""
    cost = np.empty(2 * len(feats))
    cost[0::2] = -(tau[feats] - lam[feats])
    cost[1::2] = tau[feats] + lam[feats]
    return cost


def stack_rows(a, b):
    """Rows of ``a`` then of ``b`` (both dense, or ``b`` sparse: a CSR result)."""
    if sp.issparse(a) or sp.issparse(b):
        return sp.vstack([sp.csr_matrix(a), sp.csr_matrix(b)], format="csr")
    return np.vstack([a, b])
