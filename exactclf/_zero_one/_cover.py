"""The IIS cover's master: a persistent set-cover model ``min c.x, sum_{i in T} x_i >= 1``
over infeasible subsystems ``T`` (and, where a subset's least cost is known, bounds
``sum_{i in S} c_i x_i >= v`` on subsets ``S``), on HiGHS or (``solver="gurobi"``, the
optional extra) on Gurobi; ``solver="auto"`` takes Gurobi where it is installed and
licensed, HiGHS otherwise.

Both solvers hold the same rows in the same order (the cover rows, plus at most one floor and
one ceiling row on the cost) and answer the same three questions: the MIP's dual bound, the
LP relaxation's dual point, and a cover if one was found. :class:`CoverModel` turns those
answers into proven bounds the same way for both, so the choice of solver changes the time a
proof takes, not what it proves; :func:`exactclf.verify` re-derives every cover bound with its
own solver anyway. Gurobi solves the cover MIPs of the IIS cover 2-10x faster than HiGHS
(``benchmarks/results/ice_vs_baselines.txt``). When its licence refuses the model (the free
pip licence takes at most 2000 rows), the model moves to HiGHS and the fit goes on, with a
:class:`~exactclf._gurobi.SolverFallbackWarning` where Gurobi was asked for by name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._gurobi import (
    GurobiLicenceError,
    SolverFallbackWarning,
    import_gurobipy,
    optimize,
    quiet_env,
)
from .._verification._tolerances import COVER_RTOL
from .._warnings import warn

__all__ = ["BOUND_RTOL", "CoverModel"]

#: relative slack taken off every bound read from the MIP solver (its tolerances); with
#: integer costs the bound is then rounded up. Optimality is claimed when the best value is
#: within twice this of the bound (COVER_RTOL, the tolerance verify holds a cover's claim
#: to). Relative to the bound itself, never to 1: weights may have any units.
BOUND_RTOL = COVER_RTOL / 2
#: the solvers' objective tolerances are absolute (a node within the integrality / primal
#: feasibility tolerance, 1e-6, of the incumbent is pruned; reduced costs are dual feasible
#: within 1e-7: HiGHS's defaults, set on Gurobi too), so the master sees non-integer costs in
#: a unit (a power of two) that makes the smallest one about ``_COST_UNIT``: those tolerances
#: are then about 1e-9 of any non-empty cover's cost, whatever the weights' units. Integer
#: costs stay as they are: their bound is rounded up, which absorbs errors below 1 (and
#: HiGHS's search is slower on integer costs in thousands).
_COST_UNIT = 1e3
#: costs below this fraction of the largest are unit-scaled as if they were that large: they
#: are rounding noise in the cover's cost, and their unit would push the largest costs out of
#: the range where the solver's sums are accurate to its tolerances
_COST_RANGE = 1e-6
#: the solver's absolute error on a bound, in its unit: its pruning tolerance and the dual
#: feasibility tolerance of each column (an LP bound's error), to which the rounding of the
#: cost sums is added. The unit makes it negligible against ``BOUND_RTOL`` unless the bound
#: rests on costs below ``_COST_RANGE`` of the largest; there the bound pays for it (and
#: optimality may not be proven).
_SOLVER_ATOL, _SOLVER_ATOL_PER_COLUMN = 1e-6, 1e-7
#: the largest integer cost (in the unit of their greatest common divisor) given to the
#: solvers as it is: on integer costs many orders of magnitude above their tolerances a MIP
#: solver's "optimal" status and dual bound are not reliable (the case that
#: ``tests/test_iis.py::test_large_integer_weights_give_no_false_bound`` pins); larger
#: integer costs are scaled by a power of two like other costs, with their relative slack
_MAX_INTEGER_COST = 2.0**20
#: HiGHS's ``mip_max_improving_sols`` when the MIP is solved to optimality (its default)
_ALL_SOLUTIONS = 2**31 - 1
#: HiGHS options of the master: its sub-MIP heuristics (RENS, RINS) off. On these small
#: set-cover MIPs they seldom find what the LP rounding does not, and each sub-MIP fixes
#: columns that make HiGHS restart its root (``benchmarks/results/ice_vs_baselines.txt``)
_HIGHS_OPTIONS = {"mip_heuristic_run_rens": False, "mip_heuristic_run_rins": False}


@dataclass
class _Answer:
    """What one solver run says, in the solver's unit: ``infeasible`` (no point meets the
    rows and the objective bound), a feasible ``x`` or None, the MIP's ``mip_bound`` (None:
    none), and the LP's ``row_dual`` (None: none)."""

    infeasible: bool
    x: np.ndarray | None
    mip_bound: float | None
    row_dual: np.ndarray | None


class _HighsCover:
    """The model on a persistent ``highspy.Highs``."""

    name = "highs"

    def __init__(self, cost: np.ndarray, threads: int | None, abs_gap: float):
        import highspy

        from .._highs import new_highs

        self._hs = highspy
        self.n = len(cost)
        h = new_highs()
        h.setOptionValue("mip_rel_gap", 0.0)
        if threads is not None:
            h.setOptionValue("threads", int(threads))
        h.setOptionValue("mip_abs_gap", abs_gap)
        for option, value in _HIGHS_OPTIONS.items():
            h.setOptionValue(option, value)
        h.addVars(self.n, np.zeros(self.n), np.ones(self.n))
        h.changeColsCost(self.n, np.arange(self.n, dtype=np.int32), cost)
        self._h = h

    def add_rows(self, lower, upper, starts, idx, values) -> int:
        first = self._h.getNumRow()
        self._h.addRows(len(lower), np.asarray(lower, dtype=np.float64),
                        np.asarray(upper, dtype=np.float64), len(idx),
                        np.asarray(starts, dtype=np.int32), np.asarray(idx, dtype=np.int32),
                        np.asarray(values, dtype=np.float64))
        return first

    def change_row_bounds(self, row: int, lower: float, upper: float) -> None:
        self._h.changeRowBounds(row, lower, upper)

    def set_integer(self, integer: bool) -> None:
        hs = self._hs
        kind = hs.HighsVarType.kInteger if integer else hs.HighsVarType.kContinuous
        self._h.changeColsIntegrality(self.n, np.arange(self.n, dtype=np.int32),
                                      np.full(self.n, kind))

    def run(self, integer: bool, time_limit: float | None, objective_bound: float,
            first: bool) -> _Answer:
        hs, h = self._hs, self._h
        h.setOptionValue("mip_max_improving_sols", 1 if first else _ALL_SOLUTIONS)
        h.setOptionValue("time_limit", float(max(time_limit, 1e-3)) if time_limit else np.inf)
        h.setOptionValue("objective_bound", objective_bound)
        h.run()
        status = h.getModelStatus()
        info = h.getInfo()
        infeasible = status == hs.HighsModelStatus.kInfeasible
        x = None
        if info.primal_solution_status == 2 and not infeasible:  # a (new) feasible point
            x = np.asarray(h.getSolution().col_value, dtype=np.float64)
        mip_bound = row_dual = None
        if integer:
            mip_bound = info.mip_dual_bound
        elif status == hs.HighsModelStatus.kOptimal or info.dual_solution_status:
            # any dual point bounds the relaxation (see CoverModel._dual_bound): one stopped
            # by the time limit too
            row_dual = np.asarray(h.getSolution().row_dual)
        return _Answer(infeasible, x, mip_bound, row_dual)


class _GurobiCover:
    """The model on a persistent ``gurobipy.Model`` with HiGHS's tolerances; raises
    :class:`~exactclf._gurobi.GurobiLicenceError` when the licence refuses it."""

    name = "gurobi"

    def __init__(self, cost: np.ndarray, threads: int | None, abs_gap: float):
        gp = import_gurobipy("mip_solver='gurobi'")
        self._gp = gp
        self.n = len(cost)
        self._env = quiet_env(gp)
        m = gp.Model(env=self._env)
        m.Params.MIPGap = 0.0
        m.Params.MIPGapAbs = abs_gap
        m.Params.FeasibilityTol = 1e-6
        m.Params.IntFeasTol = 1e-6
        m.Params.OptimalityTol = 1e-7
        if threads is not None:
            m.Params.Threads = int(threads)
        self._x = m.addMVar(self.n, lb=0.0, ub=1.0, obj=cost)
        self._m = m

    def _inf(self, v):
        """``v`` with infinities as Gurobi's (a float, or an array for an array)."""
        return np.clip(v, -self._gp.GRB.INFINITY, self._gp.GRB.INFINITY)

    def add_rows(self, lower, upper, starts, idx, values) -> int:
        import scipy.sparse as sp

        lower, upper = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
        if np.any(np.isfinite(lower) & np.isfinite(upper)):
            raise ValueError("a cover model's rows have one finite side")
        first = self._m.NumConstrs
        A = sp.csr_matrix((np.asarray(values, dtype=np.float64), np.asarray(idx),
                           np.r_[np.asarray(starts), len(idx)]), shape=(len(lower), self.n))
        at_least = np.isfinite(lower)
        sense = np.where(at_least, ">", "<")
        self._m.addMConstr(A, self._x, sense, self._inf(np.where(at_least, lower, upper)))
        self._m.update()
        return first

    def change_row_bounds(self, row: int, lower: float, upper: float) -> None:
        con = self._m.getConstrs()[row]
        con.RHS = float(self._inf(lower if con.Sense == ">" else upper))

    def set_integer(self, integer: bool) -> None:
        GRB = self._gp.GRB
        self._x.VType = GRB.BINARY if integer else GRB.CONTINUOUS

    def run(self, integer: bool, time_limit: float | None, objective_bound: float,
            first: bool) -> _Answer:
        gp, m = self._gp, self._m
        GRB = gp.GRB
        m.Params.TimeLimit = float(max(time_limit, 1e-3)) if time_limit else GRB.INFINITY
        m.Params.Cutoff = float(self._inf(objective_bound))
        m.Params.SolutionLimit = 1 if first else GRB.MAXINT
        optimize(gp, m)
        status = m.Status
        # CUTOFF: no point costs at most the objective bound
        infeasible = status in (GRB.INFEASIBLE, GRB.INF_OR_UNBD, GRB.CUTOFF)
        x = (np.asarray(self._x.X, dtype=np.float64) if m.SolCount > 0 and not infeasible
             else None)
        mip_bound = row_dual = None
        if integer:
            # no bound yet reads as -GRB.INFINITY
            mip_bound = (float(m.ObjBound) if not infeasible and m.ObjBound > -GRB.INFINITY
                         else None)
        elif status == GRB.OPTIMAL:
            row_dual = np.asarray(m.getAttr("Pi", m.getConstrs()), dtype=np.float64)
        return _Answer(infeasible, x, mip_bound, row_dual)


_ENGINES = {"highs": _HighsCover, "gurobi": _GurobiCover}


class CoverModel:
    """Persistent set-cover model ``min c.x, sum_{i in T} x_i >= 1`` over IISs ``T``.

    ``solve(integer=True)`` is the Benders master (a MIP), ``solve(integer=False)`` its LP
    relaxation; both return ``(x, bound, optimal)`` where ``bound`` is a proven lower bound
    on the cover's optimum (the LP's is re-evaluated from its dual point, so it holds
    whatever the solver's tolerances). Costs, bounds and cutoffs are in the caller's units;
    the solver works in the unit ``scale`` (see :data:`_COST_UNIT`). ``solver``: ``"highs"``,
    ``"gurobi"`` or ``"auto"`` (see the module docstring).

    Examples
    --------
    >>> cm = CoverModel(np.array([1.0, 2.0, 3.0]))
    >>> cm.add_cuts([np.array([0, 1]), np.array([1, 2])])
    2
    >>> x, bound, optimal = cm.solve()
    >>> (x > 0.5).tolist(), bound, optimal
    ([False, True, False], 2.0, True)
    """

    def __init__(self, cost: np.ndarray, threads: int | None = None, solver: str = "highs"):
        self.cost = np.asarray(cost, dtype=np.float64)
        self.n = len(self.cost)
        # integer costs (below 2**53, where they and their quotients are exact): the optimum
        # is a multiple of their greatest common divisor, so a gap below it proves it;
        # otherwise the search goes on until the solver's own (unit-scaled) tolerance
        self.integral = bool(np.all(self.cost == np.round(self.cost))) and (
            float(self.cost.max(initial=0.0)) < 2.0**53)
        # the solver's unit: for integer costs that divisor (1 when there are none, or all
        # are 0), so that weights in any units give it the same small integers; otherwise
        # a power of two, so that the costs and bounds convert exactly
        if self.integral:
            self.scale = float(np.gcd.reduce(self.cost.astype(np.int64))) or 1.0
            # integers too large for the solvers to hold exactly are costs like any other
            self.integral = float(self.cost.max(initial=0.0)) / self.scale <= _MAX_INTEGER_COST
        if not self.integral:
            self.scale = 2.0 ** math.frexp(max(float(self.cost.min()), _COST_RANGE * float(
                self.cost.max())) / _COST_UNIT)[1]
        self._cost = self.cost / self.scale
        self.atol = (_SOLVER_ATOL + _SOLVER_ATOL_PER_COLUMN * self.n
                     + np.finfo(np.float64).eps * float(self._cost.sum())) * self.scale
        self._threads = threads
        # "auto" did not ask for Gurobi by name: its fallbacks to HiGHS are silent
        self._asked = solver
        self._engine = self._new_engine(solver)
        self._seen: set[tuple[int, ...]] = set()
        self.cuts: list[np.ndarray] = []
        # the subset bounds: their points, coefficients and value (solver's unit)
        self.subset_bounds: list[tuple[np.ndarray, np.ndarray, float]] = []
        # every row but the floor and ceiling of the cost, in the order added: a cover row
        # (an index into ``cuts``) or a subset bound (``~`` an index into ``subset_bounds``)
        self._rows: list[int] = []
        self._integer = False
        self._floor_row: int | None = None
        self._floor = 0.0  # in the solver's unit
        self._ceiling_row: int | None = None
        self._ceiling = np.inf  # in the solver's unit

    @property
    def rtol(self) -> float:
        """The relative gap within which a cover meets a bound: 0 for integer costs (their
        bounds are exact), else the solver's slack on both."""
        return 0.0 if self.integral else COVER_RTOL

    @property
    def solver(self) -> str:
        """The solver that holds the model now (``"highs"`` after a fallback)."""
        return self._engine.name

    def _new_engine(self, solver: str):
        abs_gap = 0.5 if self.integral else 0.0  # in the solver's unit
        if solver == "auto":
            try:
                return _GurobiCover(self._cost, self._threads, abs_gap)
            except (ImportError, GurobiLicenceError):
                solver = "highs"
        return _ENGINES[solver](self._cost, self._threads, abs_gap)

    def _add_cost_row(self, lower: float, upper: float) -> int:
        return self._engine.add_rows([lower], [upper], [0], np.arange(self.n), self._cost)

    def set_floor(self, value: float) -> None:
        """Add (or raise) the row ``c.x >= value``, ``value`` a proven lower bound on the
        cover's optimum over *all* IISs: it removes no optimal cover, and it lets the MIP
        stop as soon as it finds a cover of that cost instead of proving the bound again
        at every Benders round."""
        self._floor = value / self.scale
        if self._floor_row is None:
            self._floor_row = self._add_cost_row(self._floor, np.inf)
        else:
            self._engine.change_row_bounds(self._floor_row, self._floor, np.inf)

    def _row(self, row: int) -> tuple[np.ndarray, np.ndarray, float]:
        """A row's points, coefficients and right-hand side (solver's unit)."""
        if row >= 0:
            t = self.cuts[row]
            return t, np.ones(len(t)), 1.0
        return self.subset_bounds[~row]

    def _add_rows(self, rows: list[int]) -> None:
        parts = [self._row(r) for r in rows]
        lens = np.array([len(t) for t, _, _ in parts])
        starts = np.r_[0, np.cumsum(lens)[:-1]]
        self._engine.add_rows([v for _, _, v in parts], np.full(len(parts), np.inf), starts,
                              np.concatenate([t for t, _, _ in parts]),
                              np.concatenate([a for _, a, _ in parts]))
        self._rows.extend(rows)

    def add_cuts(self, cuts) -> int:
        """Add the cover rows of new IISs (duplicates are skipped); returns how many."""
        new = []
        for t in cuts:
            key = tuple(sorted(int(i) for i in t))
            if key not in self._seen:
                self._seen.add(key)
                new.append(np.array(key, dtype=np.int32))
        if new:
            self.cuts.extend(new)
            self._add_rows(list(range(len(self.cuts) - len(new), len(self.cuts))))
        return len(new)

    def add_subset_bounds(self, subsets, values) -> int:
        """Add the rows ``sum_{i in S} c_i x_i >= v`` for each subset ``S`` (indices) and
        ``v`` (caller's units) a proven lower bound on the cost of any cover restricted to
        ``S``; subsets whose bound is not positive are skipped. Returns how many rows were
        added.

        Each coefficient is ``min(c_i, v)``: with ``x`` binary a point at least as costly
        as the bound meets it alone, so the row allows the same covers and its LP
        relaxation is tighter.
        """
        first = len(self.subset_bounds)
        for t, v in zip(subsets, values, strict=True):
            t = np.asarray(t, dtype=np.int32)
            v = float(v) / self.scale
            if v > 0 and len(t):
                self.subset_bounds.append((t, np.minimum(self._cost[t], v), v))
        if len(self.subset_bounds) > first:
            self._add_rows([~k for k in range(first, len(self.subset_bounds))])
        return len(self.subset_bounds) - first

    def round_bound(self, bound: float) -> float:
        """A solver's bound (caller's units) made safe (tolerance) and tight (integer
        costs)."""
        if self.integral:  # the solver's tolerances alone: a bound below a unit is exact
            slack = self.atol
            return float(math.ceil((bound - slack) / self.scale) * self.scale)
        return float(bound - max(BOUND_RTOL * abs(bound), self.atol))

    def solve(self, integer: bool = True, time_limit: float | None = None,
              cutoff: float | None = None, first: bool = False,
              ) -> tuple[np.ndarray | None, float, bool]:
        """Solve the MIP (or its LP relaxation). With ``cutoff``, only covers of cost at most
        ``cutoff`` are sought: when there is none, ``x`` is None and the bound is ``cutoff``
        (the optimum exceeds it). ``first`` (MIP with a ``cutoff`` only): stop at the first
        cover of cost at most ``cutoff`` found, with the bound proven by then."""
        first = first and integer and cutoff is not None
        self._set_ceiling(cutoff if first else None)
        if integer != self._integer:
            self._engine.set_integer(integer)
            self._integer = integer
        objective_bound = np.inf if cutoff is None else float(cutoff) / self.scale
        try:
            ans = self._engine.run(integer, time_limit, objective_bound, first)
        except GurobiLicenceError as exc:
            self._fall_back(exc)
            ans = self._engine.run(integer, time_limit, objective_bound, first)
        x = ans.x
        if ans.infeasible:
            # with a cutoff: no cover costs at most the cutoff; without: no cover at all
            raw = np.inf if cutoff is None else cutoff
        elif integer:
            raw = (ans.mip_bound * self.scale
                   if ans.mip_bound is not None and np.isfinite(ans.mip_bound) else 0.0)
        elif ans.row_dual is not None and len(ans.row_dual) == self._n_rows():
            raw = self._dual_bound(ans.row_dual) * self.scale
        else:
            raw = 0.0
        if cutoff is not None:
            # pruning by the cutoff may push a solver's bound past the optimum
            raw = min(raw, cutoff)
        bound = max(self.round_bound(raw), 0.0)
        # optimal: the returned point's own cost meets the proven bound
        optimal = bool(x is not None
                       and self.cost @ x <= bound + self.rtol * abs(bound))
        return x, bound, optimal

    def _n_rows(self) -> int:
        return (len(self._rows) + (self._floor_row is not None)
                + (self._ceiling_row is not None))

    def _fall_back(self, exc: GurobiLicenceError) -> None:
        """Move the model to HiGHS: the cover and subset rows, then the floor and ceiling
        rows."""
        if self._asked == "gurobi":
            warn(f"Gurobi refused the IIS cover's master ({exc}); this is what its free "
                 f"size-limited licence does past 2000 rows. Going on with HiGHS; pass "
                 f"mip_solver='auto' or 'highs' to avoid this warning, or install a full "
                 f"Gurobi licence.", SolverFallbackWarning)
        self._engine = self._new_engine("highs")
        rows, self._rows = self._rows, []
        if rows:
            self._add_rows(rows)
        if self._floor_row is not None:
            self._floor_row = self._add_cost_row(self._floor, np.inf)
        if self._ceiling_row is not None:
            self._ceiling_row = self._add_cost_row(-np.inf, self._ceiling)
        self._engine.set_integer(self._integer)

    def _set_ceiling(self, cutoff: float | None) -> None:
        """The row ``c.x <= cutoff`` (None: no ceiling): a solver's first solution may cost
        more than its objective bound, never more than a row allows."""
        self._ceiling = np.inf if cutoff is None else float(cutoff) / self.scale
        if self._ceiling_row is None:
            if cutoff is None:
                return
            self._ceiling_row = self._add_cost_row(-np.inf, self._ceiling)
        else:
            self._engine.change_row_bounds(self._ceiling_row, -np.inf, self._ceiling)

    def _dual_bound(self, row_dual: np.ndarray) -> float:
        """The LP relaxation's bound at the dual point ``y = max(row_dual, 0)``, from its
        definition: ``sum_r y_r rhs_r + sum_i min(0, c_i - (A^T y)_i)`` (``0 <= x <= 1``)
        is at most the LP's optimum for any ``y >= 0``, however far the solver's reduced
        costs are from dual feasible."""
        y = np.maximum(row_dual, 0.0)
        value, lhs = 0.0, np.zeros(self.n)
        if self._floor_row is not None:
            value += y[self._floor_row] * self._floor
            lhs += y[self._floor_row] * self._cost
        # the ceiling's multiplier is taken as 0: the bound of the relaxation without it,
        # valid with it
        cut_rows = np.delete(np.arange(len(y)), [r for r in (self._floor_row, self._ceiling_row)
                                                 if r is not None])
        y_rows = y[cut_rows]  # the other rows, in the order of self._rows
        kind = np.asarray(self._rows, dtype=np.int64)
        if len(self.cuts):
            y_cut = np.zeros(len(self.cuts))
            y_cut[kind[kind >= 0]] = y_rows[kind >= 0]
            value += y_cut.sum()
            np.add.at(lhs, np.concatenate(self.cuts),
                      np.repeat(y_cut, [len(t) for t in self.cuts]))
        for yr, r in zip(y_rows[kind < 0], kind[kind < 0], strict=True):
            t, a, rhs = self._row(int(r))
            value += yr * rhs
            lhs[t] += yr * a
        return float(value + np.minimum(self._cost - lhs, 0.0).sum())
