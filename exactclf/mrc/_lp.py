"""Persistent LP adapters for constraint and column generation.

One LP object lives for a whole fit: columns and rows are *added* to it and it is re-solved
from the previous basis (warm start), never rebuilt. The problem is always

    min c^T x   s.t.   l <= A x <= u,   lb <= x <= ub,

with rows and columns given as CSR / CSC triplets ``(starts, indices, values)``. Row duals
follow the usual sign convention of a minimization: a row at its upper bound has a dual
``<= 0``, at its lower bound ``>= 0``. Rows whose slack is basic (``LPResult.row_basic``) can
be deleted without losing the basis of the others.

``HighsLP`` uses highspy's ``Highs`` object (``addCols`` / ``addRows`` / ``deleteRows`` /
``changeColsBounds`` keep the basis valid, so ``run`` continues from it). ``GurobiLP`` does
the same with gurobipy (the optional extra ``exactclf[gurobi]``). ``make_lp("gurobi")`` wraps
it so that, when Gurobi's size-limited licence refuses the model, the fit warns and continues
on HiGHS with the same rows, columns and bounds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._gurobi import (
    GurobiLicenceError,
    SolverFallbackWarning,
    import_gurobipy,
    optimize,
    quiet_env,
)
from .._warnings import warn

__all__ = [
    "LPResult",
    "HighsLP",
    "GurobiLP",
    "GurobiFallbackLP",
    "GurobiLicenceError",
    "SolverFallbackWarning",
    "make_lp",
    "solve_lp",
]

INF = np.inf


@dataclass
class LPResult:
    """Solution of one LP solve."""

    status: str
    optimal: bool
    x: np.ndarray
    row_dual: np.ndarray
    objective: float
    iterations: int
    row_basic: np.ndarray
    time_limit_reached: bool = False
    #: reduced costs of the columns (< 0 at an upper bound: raising it would lower the value)
    col_dual: np.ndarray | None = None


def _clip_tol(tol: float, lo: float) -> float:
    return float(min(max(tol, lo), 1e-2))


class HighsLP:
    """Persistent HiGHS LP (``highspy.Highs``): add columns / rows, re-solve warm.

    Parameters
    ----------
    tol : float
        Primal and dual feasibility tolerance (clipped to HiGHS' range).
    verbose : int
        ``>= 2`` shows the HiGHS log.
    time_limit : float or None
        Seconds per solve.

    Examples
    --------
    >>> import numpy as np
    >>> lp = HighsLP(tol=1e-9)
    >>> lp.add_cols(np.array([-1.0, -1.0]), np.zeros(2), np.full(2, np.inf))
    >>> lp.add_rows(np.full(2, -np.inf), np.array([4.0, 6.0]), np.array([0, 2]),
    ...             np.array([0, 1, 0, 1]), np.array([1.0, 2.0, 3.0, 1.0]))
    >>> res = lp.solve()
    >>> res.status, round(res.objective, 6), np.round(res.x, 6).tolist()
    ('Optimal', -2.8, [1.6, 1.2])
    >>> lp.add_rows(np.array([-np.inf]), np.array([1.5]), np.array([0]), np.array([0]),
    ...             np.array([1.0]))
    >>> round(lp.solve().objective, 6)  # warm re-solve from the previous basis
    -2.75
    """

    name = "highs"

    def __init__(self, tol: float = 1e-7, verbose: int = 0, time_limit: float | None = None):
        import highspy

        from .._highs import new_highs

        self._highspy = highspy
        h = new_highs(verbose >= 2)
        t = _clip_tol(tol, 1e-10)
        h.setOptionValue("primal_feasibility_tolerance", t)
        h.setOptionValue("dual_feasibility_tolerance", t)
        self._time_limit = time_limit
        self._h = h
        self.n_rows = 0
        self.n_cols = 0

    @staticmethod
    def _inf(a):
        return np.where(np.isinf(a), np.sign(a) * 1e30, a).astype(np.float64)

    def add_cols(self, cost, lb, ub, starts=None, indices=None, values=None) -> None:
        """Add columns (``starts/indices/values``: CSC entries in the existing rows)."""
        k = len(cost)
        if k == 0:
            return
        if starts is None:
            starts = np.zeros(k, dtype=np.int32)
            indices = np.empty(0, dtype=np.int32)
            values = np.empty(0, dtype=np.float64)
        self._h.addCols(
            k, np.asarray(cost, np.float64), self._inf(np.asarray(lb, np.float64)),
            self._inf(np.asarray(ub, np.float64)), len(values),
            np.asarray(starts, np.int32), np.asarray(indices, np.int32),
            np.asarray(values, np.float64),
        )
        self.n_cols += k

    def add_rows(self, lower, upper, starts, indices, values) -> None:
        """Add rows ``lower_r <= a_r^T x <= upper_r`` (``starts/indices/values``: CSR)."""
        k = len(upper)
        if k == 0:
            return
        self._h.addRows(
            k, self._inf(np.asarray(lower, np.float64)), self._inf(np.asarray(upper, np.float64)),
            len(values),
            np.asarray(starts, np.int32), np.asarray(indices, np.int32),
            np.asarray(values, np.float64),
        )
        self.n_rows += k

    def delete_rows(self, rows) -> None:
        """Delete the rows ``rows`` (indices); the others keep their order. Deleting rows whose
        slack is basic leaves a valid basis of the rest."""
        rows = np.asarray(rows, np.int32)
        if len(rows) == 0:
            return
        self._h.deleteRows(len(rows), rows)
        self.n_rows -= len(rows)

    def set_col_bounds(self, cols, lb, ub) -> None:
        """New bounds ``lb <= x_j <= ub`` of the columns ``cols`` (the basis is kept)."""
        cols = np.asarray(cols, np.int32)
        if len(cols) == 0:
            return
        self._h.changeColsBounds(len(cols), cols, self._inf(np.asarray(lb, np.float64)),
                                 self._inf(np.asarray(ub, np.float64)))

    def solve(self, method: str | None = None, time_limit: float | None = None) -> LPResult:
        """Re-solve from the current basis; ``method`` ``"primal"`` / ``"dual"`` picks the
        simplex variant (``None``: HiGHS' choice), ``"ipm"`` the interior point method with
        crossover to a basis (which ignores the current one); ``time_limit`` (seconds) bounds
        this solve (None: the limit given at construction)."""
        h = self._h
        h.setOptionValue("solver", {None: "choose", "ipm": "ipm"}.get(method, "simplex"))
        if method == "ipm":  # the basis tells which rows are inactive (and warm-starts later)
            h.setOptionValue("run_crossover", "on")
        if method in ("primal", "dual"):
            h.setOptionValue("simplex_strategy", 4 if method == "primal" else 1)
        limit = self._time_limit if time_limit is None else max(float(time_limit), 1e-3)
        # HiGHS compares its limit with the run time accumulated over every run of the object
        h.setOptionValue("time_limit", np.inf if limit is None else h.getRunTime() + limit)
        h.run()
        status = h.getModelStatus()
        text = h.modelStatusToString(status)
        optimal = status == self._highspy.HighsModelStatus.kOptimal
        sol = h.getSolution()
        info = h.getInfo()
        basic = self._highspy.HighsBasisStatus.kBasic
        row_basic = np.array([s == basic for s in h.getBasis().row_status], dtype=bool)
        return LPResult(
            text, bool(optimal), np.array(sol.col_value, dtype=np.float64),
            np.array(sol.row_dual, dtype=np.float64), float(info.objective_function_value),
            int(info.simplex_iteration_count), row_basic,
            status == self._highspy.HighsModelStatus.kTimeLimit,
            np.array(sol.col_dual, dtype=np.float64),
        )


def _import_gurobipy():
    return import_gurobipy("lp_solver='gurobi'")


class GurobiLP:
    """Persistent Gurobi LP with the interface of :class:`HighsLP`.

    A ranged row ``l < a^T x < u`` is held as two Gurobi constraints (its dual is the sum of
    theirs). Raises :class:`GurobiLicenceError` from ``solve`` when the licence refuses the
    model.
    """

    name = "gurobi"

    def __init__(self, tol: float = 1e-7, verbose: int = 0, time_limit: float | None = None):
        gp = _import_gurobipy()
        self._gp = gp
        env = quiet_env(gp, verbose >= 2)
        self._env = env
        m = gp.Model(env=env)
        t = _clip_tol(tol, 1e-9)
        m.Params.FeasibilityTol = t
        m.Params.OptimalityTol = t
        self._time_limit = time_limit
        self._m = m
        self._vars: list = []
        self._cons: list = []  # Gurobi constraints
        self._row_cons: list = []  # logical row -> indices into _cons
        self.n_rows = 0
        self.n_cols = 0

    def add_cols(self, cost, lb, ub, starts=None, indices=None, values=None) -> None:
        gp = self._gp
        k = len(cost)
        for j in range(k):
            col = None
            if starts is not None and len(values):
                a = int(starts[j])
                b = int(starts[j + 1]) if j + 1 < k else len(values)
                coeffs, cons = [], []
                for i, v in zip(indices[a:b], values[a:b], strict=True):
                    for c in self._row_cons[int(i)]:
                        coeffs.append(float(v))
                        cons.append(self._cons[c])
                col = gp.Column(coeffs, cons) if cons else None
            lo = -gp.GRB.INFINITY if np.isinf(lb[j]) else float(lb[j])
            hi = gp.GRB.INFINITY if np.isinf(ub[j]) else float(ub[j])
            self._vars.append(self._m.addVar(lb=lo, ub=hi, obj=float(cost[j]), column=col))
        self.n_cols += k

    def add_rows(self, lower, upper, starts, indices, values) -> None:
        import scipy.sparse as sp

        k = len(upper)
        if k == 0:
            return
        lower = np.asarray(lower, np.float64)
        upper = np.asarray(upper, np.float64)
        indptr = np.r_[np.asarray(starts, np.int64), len(values)]
        A = sp.csr_matrix((values, indices, indptr), shape=(k, self.n_cols))
        x = self._gp.MVar.fromlist(self._vars)
        eq = lower == upper
        ge = ~eq & np.isfinite(lower)
        le = ~eq & np.isfinite(upper)
        new = [[] for _ in range(k)]
        for sel, sense, rhs in ((eq, "=", upper), (ge, ">", lower), (le, "<", upper)):
            rows = np.flatnonzero(sel)
            if len(rows) == 0:
                continue
            cons = self._m.addMConstr(A[rows], x, sense, rhs[rows]).tolist()
            for r, c in zip(rows, cons, strict=True):
                new[r].append(len(self._cons))
                self._cons.append(c)
        self._row_cons.extend(new)
        self.n_rows += k

    def delete_rows(self, rows) -> None:
        rows = set(int(r) for r in rows)
        if not rows:
            return
        drop = [c for r in sorted(rows) for c in self._row_cons[r]]
        self._m.remove([self._cons[c] for c in drop])
        dropped = set(drop)
        renumber = np.cumsum([c not in dropped for c in range(len(self._cons))]) - 1
        self._cons = [c for i, c in enumerate(self._cons) if i not in dropped]
        self._row_cons = [[int(renumber[c]) for c in cons]
                          for r, cons in enumerate(self._row_cons) if r not in rows]
        self.n_rows -= len(rows)

    def set_col_bounds(self, cols, lb, ub) -> None:
        inf = self._gp.GRB.INFINITY
        chosen = [self._vars[int(j)] for j in cols]
        self._m.setAttr("LB", chosen, np.clip(np.asarray(lb, np.float64), -inf, inf).tolist())
        self._m.setAttr("UB", chosen, np.clip(np.asarray(ub, np.float64), -inf, inf).tolist())

    def solve(self, method: str | None = None, time_limit: float | None = None) -> LPResult:
        gp = self._gp
        m = self._m
        if method is not None:
            m.Params.Method = {"primal": 0, "dual": 1, "ipm": 2}[method]
        limit = self._time_limit if time_limit is None else max(float(time_limit), 1e-3)
        m.Params.TimeLimit = gp.GRB.INFINITY if limit is None else float(limit)
        optimize(gp, m)
        status = m.Status
        names = {gp.GRB.OPTIMAL: "Optimal", gp.GRB.INFEASIBLE: "Infeasible",
                 gp.GRB.UNBOUNDED: "Unbounded", gp.GRB.INF_OR_UNBD: "Infeasible or unbounded",
                 gp.GRB.TIME_LIMIT: "Time limit reached"}
        optimal = status == gp.GRB.OPTIMAL
        if optimal:
            x = np.array(m.getAttr("X", self._vars), dtype=np.float64)
            pi = np.array(m.getAttr("Pi", self._cons), dtype=np.float64)
            dual = np.array([pi[c].sum() for c in self._row_cons], dtype=np.float64)
            cbasis = np.array(m.getAttr("CBasis", self._cons)) if self._cons else np.zeros(0)
            row_basic = np.array([bool(np.all(cbasis[c] == 0)) for c in self._row_cons],
                                 dtype=bool)
            obj = float(m.ObjVal)
            rc = np.array(m.getAttr("RC", self._vars), dtype=np.float64)
        else:
            x = np.zeros(self.n_cols)
            dual = np.zeros(self.n_rows)
            row_basic = np.zeros(self.n_rows, dtype=bool)
            obj = float("nan")
            rc = np.zeros(self.n_cols)
        return LPResult(names.get(status, f"Gurobi status {status}"), bool(optimal), x, dual,
                        obj, int(m.IterCount), row_basic, status == gp.GRB.TIME_LIMIT, rc)


class GurobiFallbackLP:
    """Gurobi, falling back to HiGHS (with a :class:`SolverFallbackWarning`) when the Gurobi
    licence refuses the model. Every added row and column is remembered so that the HiGHS
    model is the same LP; from then on the fit continues on HiGHS.
    """

    def __init__(self, tol: float = 1e-7, verbose: int = 0, time_limit: float | None = None):
        self._args = (tol, verbose, time_limit)
        self._log: list = []
        try:
            self._lp = GurobiLP(tol, verbose, time_limit)
        except GurobiLicenceError as exc:
            self._fall_back(exc)

    @property
    def name(self) -> str:
        return self._lp.name

    @property
    def n_rows(self) -> int:
        return self._lp.n_rows

    @property
    def n_cols(self) -> int:
        return self._lp.n_cols

    def _fall_back(self, exc) -> None:
        warn(
            f"Gurobi refused the LP ({exc}); this is what its free size-limited licence does "
            "beyond 2000 variables or constraints. Continuing with HiGHS on the same LP. Use "
            "lp_solver='highs' to avoid this warning, or install a full Gurobi licence.",
            SolverFallbackWarning,
        )
        lp = HighsLP(*self._args)
        for kind, args in self._log:
            getattr(lp, kind)(*args)
        self._lp = lp
        self._log = []

    def add_cols(self, cost, lb, ub, starts=None, indices=None, values=None) -> None:
        if self._lp.name == "gurobi":
            self._log.append(("add_cols", (cost, lb, ub, starts, indices, values)))
        self._lp.add_cols(cost, lb, ub, starts, indices, values)

    def add_rows(self, lower, upper, starts, indices, values) -> None:
        if self._lp.name == "gurobi":
            self._log.append(("add_rows", (lower, upper, starts, indices, values)))
        self._lp.add_rows(lower, upper, starts, indices, values)

    def delete_rows(self, rows) -> None:
        if self._lp.name == "gurobi":
            self._log.append(("delete_rows", (rows,)))
        self._lp.delete_rows(rows)

    def set_col_bounds(self, cols, lb, ub) -> None:
        if self._lp.name == "gurobi":
            self._log.append(("set_col_bounds", (cols, lb, ub)))
        self._lp.set_col_bounds(cols, lb, ub)

    def solve(self, method: str | None = None, time_limit: float | None = None) -> LPResult:
        if self._lp.name == "gurobi":
            try:
                return self._lp.solve(method, time_limit)
            except GurobiLicenceError as exc:
                self._fall_back(exc)
        return self._lp.solve(method, time_limit)


def make_lp(lp_solver: str, tol: float = 1e-7, verbose: int = 0, time_limit=None):
    """A persistent LP of the requested solver (``"highs"`` or ``"gurobi"``).

    ``"gurobi"`` raises ImportError naming ``pip install exactclf[gurobi]`` when gurobipy is
    missing, and falls back to HiGHS with a warning when its licence refuses the model.

    Examples
    --------
    >>> make_lp("highs").name
    'highs'
    """
    if lp_solver == "highs":
        return HighsLP(tol, verbose, time_limit)
    if lp_solver == "gurobi":
        _import_gurobipy()
        return GurobiFallbackLP(tol, verbose, time_limit)
    raise ValueError(f"lp_solver must be 'highs' or 'gurobi', got {lp_solver!r}")


def solve_lp(c, lb, ub, A, lower, upper, lp_solver: str = "highs", tol: float = 1e-7,
             verbose: int = 0, time_limit=None) -> LPResult:
    """Solve ``min c^T x s.t. lower <= A x <= upper, lb <= x <= ub`` in one go (``A`` a SciPy
    sparse matrix); used for the full (non-generated) LP of tests and benchmarks."""
    import scipy.sparse as sp

    lp = make_lp(lp_solver, tol, verbose, time_limit)
    lp.add_cols(c, lb, ub)
    A = sp.csr_matrix(A)
    lp.add_rows(lower, upper, A.indptr[:-1], A.indices, A.data)
    return lp.solve()
