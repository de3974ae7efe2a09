"""Rows and columns of the 0-1 MRC LP, as compressed triplets for the persistent LP of
:mod:`._lp`.

The LP's columns are ``nu`` (index 0) and, for the ``p``-th active feature, ``mu1`` and
``mu2`` (indices ``1 + 2p`` and ``2 + 2p``). A row is a sample's (or an average of samples')
``psi``-vector ``u`` and a label subset ``C``: ``F (mu1 - mu2) - nu <= 1/|C| - 1`` with
``F = sum_{y in C} B_y (x) u / |C|`` for the features ``Phi(x, y) = B_y (x) psi(x)`` (``B``
the label embedding, one-hot by default: then ``F_j = [k_j in C] u_{l_j} / |C|`` for the
feature ``j = k_j d + l_j``). ``u`` may be a row of a
SciPy sparse matrix: the coefficients stay sparse. :class:`RowPool` keeps the rows of the
persistent LP.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["Aging", "row_coefficients", "row_upper", "lp_rows", "lp_columns", "lp_costs",
           "stack_rows", "RowPool"]


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


def row_upper(masks) -> np.ndarray:
    """The right-hand sides ``b_r = 1/|C_r| - 1`` of the rows with subset masks ``masks``."""
    return 1.0 / masks.sum(axis=1) - 1.0


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
    return row_upper(masks), starts, idx, val


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



#: a row whose slack has been basic in this many consecutive solves is deleted
_DROP_AFTER = 3


class Aging:
    """How many consecutive solves each entry of a restricted LP (a row, or a whole sample's
    rows: :mod:`._samples`) has stayed inactive, and which to delete: those inactive for
    ``_DROP_AFTER`` solves, but only once the LP value has risen since the previous deletion
    (so no cycling)."""

    def __init__(self):
        self.age = np.zeros(0, dtype=np.int64)
        self.level = -np.inf

    def grow(self, n: int) -> None:
        """``n`` new entries, active."""
        self.age = np.r_[self.age, np.zeros(n, dtype=np.int64)]

    def step(self, inactive: np.ndarray, may_drop: bool, objective: float) -> np.ndarray:
        """Age the entries by a solve of value ``objective`` (``inactive``: their mask);
        the mask of those to delete (none unless ``may_drop``)."""
        self.age = np.where(inactive, self.age + 1, 0)
        if not may_drop or objective <= self.level + 1e-12 * max(1.0, abs(objective)):
            return np.zeros(len(self.age), dtype=bool)
        return self.age >= _DROP_AFTER

    def deleted(self, drop: np.ndarray, objective: float) -> None:
        """The entries ``drop`` (a mask) were deleted after the solve of value
        ``objective``."""
        self.age = self.age[~drop]
        self.level = objective


class RowPool:
    """The rows of the persistent 0-1 MRC LP ``lp`` (columns as in :func:`lp_rows`): per row
    its ``psi``-vector (``U``), subset mask (``M``), key ``(sample, mask bytes)`` and age
    (``aging``: :class:`Aging`, inactive meaning a basic slack).

    It starts with the class rows ``classes`` (row ``c``: the subset ``{c}``), which are never
    deleted. Rows whose slack has stayed basic for ``_DROP_AFTER`` solves are deleted (the
    current solution stays optimal, so the LP value does not drop), but only after the LP value
    has risen since the previous deletion (so no cycling), and may be generated again later.

    Examples
    --------
    >>> import numpy as np
    >>> from exactclf.mrc._lp import make_lp
    >>> lp = make_lp("highs")
    >>> lp.add_cols(np.ones(3), np.r_[-np.inf, 0.0, 0.0], np.full(3, np.inf))
    >>> pool = RowPool(lp, np.ones((2, 1)), np.array([0]), np.eye(2), sparse=False)
    >>> idx, masks, keys = pool.new_rows(np.array([4, 4]), lambda block: np.ones((2, 2), bool), 5)
    >>> [int(i) for i in idx], lp.n_rows  # sample 4's subset once; the two class rows
    ([4], 2)
    """

    def __init__(self, lp, classes, active, embedding, sparse: bool):
        self.lp = lp
        self.embedding = embedding
        K, self.d = classes.shape
        self.U = sp.csr_matrix((0, self.d)) if sparse else np.zeros((0, self.d))
        self.M = np.zeros((0, K), dtype=bool)
        self.keys: list = []
        self.aging = Aging()
        self.seen: set = set()  # keys of the rows in the LP
        self.add(classes, np.eye(K, dtype=bool), [None] * K, active)

    def add(self, U, masks, keys, active) -> None:
        """Add the rows ``(U, masks)`` with their ``keys`` over the ``active`` features."""
        upper, starts, idx, val = lp_rows(U, masks, active, self.d, self.embedding)
        self.lp.add_rows(np.full(U.shape[0], -np.inf), upper, starts, idx, val)
        self.U = stack_rows(self.U, U)
        self.M = np.vstack([self.M, masks])
        self.keys.extend(keys)
        self.aging.grow(U.shape[0])

    def dual_rows(self, alpha):
        """The rows weighted by ``alpha`` (one weight per row, clipped at 0 and normalized):
        ``(sample, Q, values, weight, class_weight)``, the sample rows' samples, label
        distributions (uniform on the subset), values ``1 - 1/|C|`` and weights, and the class
        rows' weights."""
        alpha = np.maximum(alpha, 0.0)
        alpha = alpha / max(alpha.sum(), np.finfo(float).tiny)  # the LP's sum is 1 to rounding
        K = self.M.shape[1]
        chosen = K + np.flatnonzero(alpha[K:] > 0.0)
        sizes = self.M[chosen].sum(axis=1)
        sample = np.array([self.keys[r][0] for r in chosen], dtype=np.int64)
        return (sample, self.M[chosen] / sizes[:, None], 1.0 - 1.0 / sizes, alpha[chosen],
                alpha[:K])

    def new_rows(self, samples, subsets, n_max: int):
        """The first ``n_max`` rows (sample of ``samples``, its subset) not in the LP; returns
        their samples, masks and keys, which count as in the LP from now on. ``subsets(block)``
        gives the masks of a block of ``n_max`` samples (most of them are usually new)."""
        idx, masks, keys = [], [], []
        for start in range(0, len(samples), n_max):
            block = samples[start:start + n_max]
            for i, mask in zip(block, subsets(block), strict=True):
                key = (int(i), mask.tobytes())
                if key in self.seen:
                    continue
                self.seen.add(key)
                idx.append(i)
                masks.append(mask)
                keys.append(key)
                if len(idx) == n_max:
                    return idx, masks, keys
        return idx, masks, keys

    def age_and_drop(self, res, may_drop: bool) -> int:
        """Age the rows by the solve ``res``; when ``may_drop`` and the LP value rose since
        the last deletion, delete the rows that have stayed inactive. Returns how many."""
        mask = self.aging.step(res.row_basic, may_drop, res.objective)
        mask[:self.M.shape[1]] = False  # never the class rows
        drop = np.flatnonzero(mask)
        if len(drop) == 0:
            return 0
        self.lp.delete_rows(drop)
        for j in drop:
            self.seen.discard(self.keys[j])
        self.keys = [k for k, dropped in zip(self.keys, mask, strict=True) if not dropped]
        self.U, self.M = self.U[~mask], self.M[~mask]
        self.aging.deleted(mask, res.objective)
        return len(drop)
