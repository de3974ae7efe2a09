"""Big-M mixed-integer program for the 0-1 loss of an affine classifier (HiGHS).

One binary ``t_i`` per unique point says whether it is predicted positive:

    min  sum_i wneg_i t_i + wpos_i (1 - t_i)
    s.t. a . z_i + b >=  margin - M_i (1 - t_i)
         a . z_i + b <= -margin + M_i t_i
         |a_j| <= weight_bound,  |b| <= weight_bound * max_i |z_i|_1 + margin

with ``M_i`` the smallest constant that makes the constraints vacuous. Every feasible point
classifies each point with margin, so the realized errors equal the objective. It is *not*
an exact method: bounding the weights with a fixed margin excludes thin cells, so on real
data its optimum can err more than the 0-1 optimum, whatever ``weight_bound``. It serves as a
fast incumbent for the exact search and as the baseline a user would otherwise pick.

Ctrl-C stops HiGHS and returns its best solution so far (``interrupted=True``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["MILPResult", "bigm_milp"]


@dataclass
class MILPResult:
    coef: np.ndarray
    intercept: float
    objective: float
    dual_bound: float
    status: str
    optimal: bool
    interrupted: bool = False


def _run_interruptibly(h) -> bool:
    """Run HiGHS in its solver thread while this thread waits in short slices, so that Ctrl-C
    reaches Python at once; on Ctrl-C ask HiGHS to stop (it keeps its best solution).

    Returns whether the solve was interrupted.
    """
    h.HandleUserInterrupt = True
    thread = h.startSolve()
    interrupted = False
    while True:
        try:
            if h.wait(0.05)[0]:
                break
        except KeyboardInterrupt:
            interrupted = True
            h.cancelSolve()
    thread.join()
    return interrupted


def bigm_milp(
    Z: np.ndarray,
    wpos: np.ndarray,
    wneg: np.ndarray,
    *,
    weight_bound: float = 1e3,
    margin: float = 1.0,
    time_limit: float | None = None,
    mip_rel_gap: float = 0.0,
    threads: int | None = None,
    fixed: np.ndarray | None = None,
) -> MILPResult:
    """Solve the big-M MILP on weighted unique points ``Z`` (see the module docstring);
    ``fixed``: rows ``c`` (one column per feature of ``Z``) with ``c . a >= 0`` asked of the
    coefficients (sign constraints, :mod:`exactclf._zero_one._signs`).

    Examples
    --------
    >>> Z = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> res = bigm_milp(Z, np.array([0, 0, 1, 1.0]), np.array([1, 1, 0, 0.0]))
    >>> res.objective, bool(res.coef[0] > 0)
    (0.0, True)
    """
    import highspy

    from .._highs import new_highs

    Z = np.asarray(Z, dtype=np.float64)
    n, d = Z.shape
    inf = highspy.kHighsInf
    l1 = np.abs(Z).sum(axis=1)
    b_bound = weight_bound * l1.max() + margin
    big_m = 2 * margin + weight_bound * l1 + b_bound
    h = new_highs()
    h.setOptionValue("mip_rel_gap", mip_rel_gap)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(max(time_limit, 0.01)))
    if threads is not None:
        h.setOptionValue("threads", int(threads))
    # columns: a (d), b, t (n)
    lower = np.r_[np.full(d, -weight_bound), -b_bound, np.zeros(n)]
    upper = np.r_[np.full(d, weight_bound), b_bound, np.ones(n)]
    # HiGHS's gaps and tolerances on the objective are absolute: in the unit of the largest
    # cost, the same search runs whatever the units of the weights (a power of two: integer
    # costs keep an exact objective)
    unit = 2.0 ** math.frexp(float(np.abs(wneg - wpos).max(initial=0.0)))[1]
    cost = np.r_[np.zeros(d + 1), (wneg - wpos) / unit]
    h.addVars(d + 1 + n, lower, upper)
    h.changeColsCost(d + 1 + n, np.arange(d + 1 + n, dtype=np.int32), cost)
    h.changeColsIntegrality(
        n, np.arange(d + 1, d + 1 + n, dtype=np.int32),
        np.full(n, highspy.HighsVarType.kInteger),
    )
    # a.z_i + b - M_i t_i >= margin - M_i   and   a.z_i + b - M_i t_i <= -margin
    width = d + 2
    idx = np.empty((n, width), dtype=np.int32)
    idx[:, : d + 1] = np.arange(d + 1)
    idx[:, d + 1] = d + 1 + np.arange(n)
    val = np.hstack([Z, np.ones((n, 1)), -big_m[:, None]])
    starts = np.arange(n, dtype=np.int32) * width
    h.addRows(n, margin - big_m, np.full(n, inf), val.size, starts, idx.ravel(), val.ravel())
    h.addRows(n, np.full(n, -inf), np.full(n, -margin), val.size, starts, idx.ravel(),
              val.ravel())
    if fixed is not None and len(fixed):
        k = len(fixed)
        h.addRows(k, np.zeros(k), np.full(k, inf), k * d, np.arange(k, dtype=np.int32) * d,
                  np.tile(np.arange(d, dtype=np.int32), k), np.ascontiguousarray(fixed).ravel())
    interrupted = _run_interruptibly(h)
    status = h.getModelStatus()
    info = h.getInfo()
    x = np.asarray(h.getSolution().col_value)
    if x.size != d + 1 + n or info.primal_solution_status == 0:
        # no feasible point found in time: the best constant classifier
        return MILPResult(np.zeros(d), 1.0 if wpos.sum() >= wneg.sum() else -1.0,
                          float(min(wpos.sum(), wneg.sum())), 0.0,
                          h.modelStatusToString(status), False, interrupted)
    offset = float(wpos.sum())
    return MILPResult(
        coef=x[:d].copy(),
        intercept=float(x[d]),
        objective=float(info.objective_function_value * unit + offset),
        dual_bound=float(info.mip_dual_bound * unit + offset),
        status=h.modelStatusToString(status),
        optimal=status == highspy.HighsModelStatus.kOptimal,
        interrupted=interrupted,
    )
