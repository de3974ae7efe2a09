"""The full 0-1 MRC LP, every row ``(sample, label subset)`` written down and solved in one
go: the reference of tests and benchmarks (memory ``O(n 2^K K d)``), not used by the
estimator."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ._lp import solve_lp
from ._rows import lp_costs, lp_rows

__all__ = ["mrc_full_lp", "FullLPResult"]


@dataclass
class FullLPResult:
    """Optimum of the full MRC LP (all samples, all subsets)."""

    objective: float
    mu: np.ndarray
    status: str
    n_rows: int
    seconds: float


def mrc_full_lp(Psi, y, n_classes, tau, lam, *, lp_solver="highs", tol=1e-7, verbose=0,
                time_limit=None) -> FullLPResult:
    """The full 0-1 MRC LP with every row ``(i, C)``, ``n (2^K - 1)`` in all, solved in one go
    (the reference that :func:`~exactclf.mrc._ccg.mrc_ccg` must match; memory grows as
    ``n 2^K K d``).

    Examples
    --------
    >>> import numpy as np
    >>> from exactclf.mrc import mrc_statistics
    >>> Psi, y = np.ones((4, 1)), np.array([0, 0, 0, 1])
    >>> tau, lam = mrc_statistics(Psi, y, 2, 0.0)
    >>> round(mrc_full_lp(Psi, y, 2, tau, lam).objective, 9)  # the majority rule errs 1/4
    0.25
    """
    t0 = time.perf_counter()
    n, d = Psi.shape
    K = n_classes
    m = K * d
    active = np.arange(m)
    blocks, uppers = [], []
    for mask_int in range(1, 2**K):
        mask = np.array([(mask_int >> k) & 1 for k in range(K)], dtype=bool)
        upper, starts, idx, val = lp_rows(Psi, np.broadcast_to(mask, (n, K)), active, d)
        indptr = np.r_[starts, len(val)]
        blocks.append(sp.csr_matrix((val, idx, indptr), shape=(n, 1 + 2 * m)))
        uppers.append(upper)
    A = sp.vstack(blocks, format="csr")
    c = np.r_[1.0, lp_costs(tau, lam, active)]
    lb = np.r_[-np.inf, np.zeros(2 * m)]
    ub = np.full(1 + 2 * m, np.inf)
    upper = np.concatenate(uppers)
    res = solve_lp(c, lb, ub, A, np.full(len(upper), -np.inf), upper, lp_solver=lp_solver, tol=tol,
                   verbose=verbose, time_limit=time_limit)
    mu = res.x[1::2] - res.x[2::2]
    return FullLPResult(res.objective, mu, res.status, A.shape[0], time.perf_counter() - t0)
