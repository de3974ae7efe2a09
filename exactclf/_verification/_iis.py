"""The IIS cover bound: infeasible subsystems, each certified by exact Farkas multipliers,
and the minimum weight of errors that meets all of them.

The witness (``Witness.data["iis"]``) lists irreducible infeasible subsystems (IISs), each
as members ``[row, side, u]``: the training sample ``X[row]`` wanting the label ``side``
(+1 for ``classes_[1]``, -1 for ``classes_[0]``) and a non-negative integer ``u``. By Gordan's
alternative, no affine classifier ``sign(w.x + b)`` gives every member its label when

    sum_j u_j side_j (x_j, 1) == 0,   u >= 0,   u != 0

(multiply ``side_j (w.x_j + b) > 0`` by ``u_j`` and add: ``0 > 0``). A model with sign
constraints (``monotonic_cst``) may have members ``[-1 - j, s, v]`` too, the constraint
``s * w_j >= 0`` (``s`` the sign the model asks), adding ``v * s * (e_j, 0)`` to the sum: no
classifier satisfying the constraints gives every sample member its label (Motzkin's
alternative; at least one sample member must have ``u > 0``). This is checked in exact
rational arithmetic on the float64 samples. Any classifier thus errs on a member of every
IIS. Errors on the samples at a point ``x`` cost the lighter label's weight whatever the
classifier does (the conflicting duplicates, summed in ``base``), and the difference of the
two labels' weights more when the heavier one is given up: so a member costs
``max(0, w(x, side) - w(x, -side))`` (``w(x, s)``: the weight of the samples equal to ``x``
with label ``s``, ``-0.0`` and ``0.0`` alike), and

    errors >= base + min { cost of a set of members that meets every IIS },

a set-cover ILP, solved here by :func:`scipy.optimize.milp` (HiGHS behind scipy's
interface), as the question whether the minimum reaches the certificate's bound: covers
below the bound are sought (among the members that cost less than the bound: a dearer one is
in no such cover), and there are none when it holds. Bounds and targets are read with a
slack for HiGHS's absolute tolerances (in a unit of the costs that makes the smallest about
1e3, or for integer costs their greatest common divisor) and half the optimality tolerance
of the model's class (``_tolerances.COVER_RTOL``, 0 for integer weights); with integer
costs they are then rounded up.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from ._conflicts import conflict_sum
from ._signs import monotone_signs

__all__ = ["Samples", "check_iis_cover", "cover_minimum"]

#: seconds the cover ILP may take; past them its dual bound, still proven, is used
_TIME_LIMIT = 120.0
#: HiGHS's absolute error on a MIP bound: its feasibility tolerance, and the dual
#: feasibility tolerance of each column (the error of an LP bound)
_ATOL, _ATOL_PER_COLUMN = 1e-6, 1e-7
#: the smallest cost, in the unit HiGHS sees non-integer costs in (a power of two below it),
#: and the range of costs below which a cost is scaled as if it were that fraction of the
#: largest (smaller ones are rounding noise in the cover's cost)
_COST_UNIT_BITS, _COST_RANGE = 10, 1e-6


def cover_minimum(sets: list[list[int]], cost: np.ndarray, rtol: float = 0.0,
                  target: float | None = None,
                  blocks: list[tuple[list[int], float]] = ()) -> tuple[float, str]:
    """A proven lower bound on ``min c.x`` over ``x in {0, 1}^n`` with ``sum_{i in T} x_i >= 1``
    for every set ``T`` of ``sets`` (and ``sum_{i in B} c_i x_i >= v`` for every ``(B, v)`` of
    ``blocks``), and what HiGHS reported.

    ``cost`` must be positive. HiGHS's bounds are read with a slack for its tolerances and
    ``rtol / 2`` of themselves (then rounded up when the costs are integers). With a
    ``target``, the question is only whether the minimum reaches it (less that slack): the
    covers that cost less are sought, and when there is none the bound is the target; a
    much easier problem than the minimum when the target is right.

    Examples
    --------
    >>> cover_minimum([[0, 1], [1, 2], [2]], np.array([1.0, 2.0, 3.0]))[0]
    4.0
    >>> bound, status = cover_minimum([[0, 1], [1, 2]], np.array([0.25, 0.5, 0.75]))
    >>> bound <= 0.5 < bound + 1e-9  # the minimum, less HiGHS's tolerance
    True
    >>> cover_minimum([[0, 1], [1, 2], [2]], np.array([1.0, 2.0, 3.0]), target=4.0)[0]
    4.0
    >>> cover_minimum([[0, 1], [1, 2], [2]], np.array([1.0, 2.0, 3.0]), target=5.0)[0]
    4.0
    >>> cover_minimum([[0, 1], [2]], np.array([1e-8, 3e-8, 1e8]), target=1.0)[0]
    1.0
    """
    if not sets and not blocks:
        return 0.0, "no sets"
    if target is not None:
        reduced = _below(sets, cost, target, blocks)
        if isinstance(reduced, str):
            return max(float(target), 0.0), reduced
        sets, cost, blocks = reduced
        if not len(cost):  # x = 0 meets every set and block that is left
            return 0.0, "a cover of no member costs less than the target"
    n = len(cost)
    # integers below 2**53 are exact, and so are their quotients by a common divisor
    integral = bool(np.all(cost == np.round(cost))) and float(cost.max()) < 2.0**53
    # integers in the unit of their greatest common divisor, so that weights in large units
    # give HiGHS the same small integers as in small ones; other costs in a power of two, so
    # that the scaled costs are exact
    unit = float(np.gcd.reduce(cost.astype(np.int64))) if integral else 2.0 ** (math.frexp(
        max(float(cost.min()), _COST_RANGE * float(cost.max())))[1] - 1 - _COST_UNIT_BITS)
    c = cost / unit
    atol = _ATOL + _ATOL_PER_COLUMN * n + np.finfo(np.float64).eps * float(c.sum())

    def safe(v: float) -> float:
        return v - max(0.5 * rtol * abs(v), atol)

    constraints = []
    if sets:
        rows = np.repeat(np.arange(len(sets)), [len(t) for t in sets])
        A = sp.csr_matrix((np.ones(len(rows)), (rows, np.concatenate(sets))),
                          shape=(len(sets), n))
        A.data[:] = 1.0  # a member listed twice in a set is one variable
        constraints.append(LinearConstraint(A, 1, np.inf))
    if blocks:  # in the unit of the costs, and weakened by the same slack
        members = [np.unique(np.asarray(b, dtype=np.int64)) for b, _ in blocks]
        rows = np.repeat(np.arange(len(blocks)), [len(b) for b in members])
        cols = np.concatenate(members)
        B = sp.csr_matrix((c[cols], (rows, cols)), shape=(len(blocks), n))
        constraints.append(LinearConstraint(
            B, np.array([v for _, v in blocks]) / unit - atol, np.inf))
    low = np.inf
    if target is not None:  # only the covers below the target, made safe, matter
        low = safe(target / unit)
        constraints.append(LinearConstraint(c[None, :], -np.inf, low))
    res = milp(c, integrality=np.ones(n), bounds=Bounds(0, 1), constraints=constraints,
               options={"mip_rel_gap": 0.0, "time_limit": _TIME_LIMIT})
    if res.status == 2 and target is not None:  # every cover costs more than `low`
        bound = math.floor(low) + 1 if integral else low
        return max(float(bound), 0.0) * unit, "no cover costs less than the target"
    dual = getattr(res, "mip_dual_bound", None)
    if dual is None or not np.isfinite(dual):
        dual = res.fun if res.status == 0 else 0.0
    # a cover costs at least the dual bound of those below `low`, or `low`
    bound = min(safe(dual), low)
    bound = math.ceil(bound) if integral else bound
    return max(float(bound), 0.0) * unit, f"HiGHS: {res.message}"


def _below(sets, cost, target, blocks):
    """The cover problem restricted to the members that cost at most ``target`` (a dearer
    one is in no cover below it), or why no cover costs less than ``target``.

    The restriction is exact, and it puts the costs HiGHS sees in the unit of the target:
    with costs from 1e-8 to 1e8, the tolerances of the whole problem would be those of the
    dearest members, a thousand times the cover's cost that is in question.
    """
    cheap = cost <= target
    if cheap.all():
        return sets, cost, blocks
    index = np.cumsum(cheap) - 1
    sets = [[int(index[i]) for i in t if cheap[i]] for t in sets]
    if any(not t for t in sets):
        return "a set whose every member costs more than the target"
    blocks = [([int(index[i]) for i in b if cheap[i]], v) for b, v in blocks]
    blocks = [(b, v) for b, v in blocks if v > 0]
    if any(not b for b, _ in blocks):
        return "a block whose members that cost less than the target cannot meet it"
    return sets, cost[cheap], blocks


class Samples:
    """The training samples as the witness checks read them: the distinct point of each
    sample, the weight of each label at each point, and exact rows of the samples named."""

    def __init__(self, X, positive: np.ndarray, w: np.ndarray,
                 signs: np.ndarray | None = None):
        self.X0 = np.asarray(X, dtype=np.float64) + 0.0  # -0.0 and 0.0 are one value
        self.positive = positive
        # the model's sign constraints (monotonic_cst): members ``[-1 - j, s, v]``
        self.signs = signs
        self.n = len(self.X0)
        _, point = np.unique(self.X0, axis=0, return_inverse=True)
        self.point = point.ravel()
        self.weight = np.zeros((self.point.max() + 1, 2))  # columns: negative, positive
        np.add.at(self.weight, (self.point, positive.astype(int)), w)
        self.base = conflict_sum(self.X0, positive, w)
        self._rows: dict[int, list[Fraction]] = {}

    def relation(self, members) -> list[tuple[int, int]] | str:
        """The members ``(point, side)`` with a positive multiplier of an exactly certified
        IIS ``members`` (``[row, side, u]`` each, see the module docstring), or why it is
        not one."""
        if not isinstance(members, list) or not members:
            return "not a non-empty list of members"
        total = None
        for m in members:
            if not (isinstance(m, list) and len(m) == 3
                    and all(isinstance(v, int) and not isinstance(v, bool) for v in m)):
                return f"member {m!r} is not [row, side, multiplier] in integers"
            row, side, u = m
            if u < 0:
                return f"multiplier {u} of member {row} is negative"
            term = self._term(row, side, u)
            if isinstance(term, str):
                return term
            total = term if total is None else [a + b for a, b in zip(total, term,
                                                                      strict=True)]
        if all(m[2] == 0 for m in members if m[0] >= 0):
            return "all multipliers of samples are 0"
        if any(v != 0 for v in total):
            return "sum of u * side * (x, 1) is not exactly 0"
        return [(int(self.point[row]), side) for row, side, u in members if u and row >= 0]

    def _term(self, row: int, side: int, u: int) -> list | str:
        """``u * side * (x, 1)`` of the sample ``row``, or of a sign constraint
        ``u * side * (e_j, 0)`` for ``row = -1 - j`` (``side`` the sign the model asks of
        ``coef[j]``); or why the member is not one."""
        if row < 0:
            j = -1 - row
            d = self.X0.shape[1]
            if self.signs is None or j >= d or side not in (1, -1) or self.signs[j] != side:
                return (f"member {row} names the constraint {side} * coef[{j}] >= 0, which "
                        "the model's monotonic_cst does not ask")
            return [u * side if t == j else 0 for t in range(d)] + [0]
        if row >= self.n:
            return f"row {row} is not a sample (there are {self.n})"
        if side not in (1, -1) or (side == 1) != self.positive[row]:
            return f"sample {row} has not the label of side {side}"
        x = self._rows.setdefault(row, [Fraction(v) for v in self.X0[row].tolist()])
        return [u * side * v for v in x] + [u * side]

    def cost(self, p: int, side: int) -> float:
        """What an error on the member ``(p, side)`` costs beyond the conflicting duplicates:
        the weight of its label at its point beyond the other label's."""
        return max(0.0, float(self.weight[p, int(side == 1)] - self.weight[p, int(side != 1)]))

    def cover(self, sets, claim: float, rtol: float, blocks=()) -> tuple[float, str, int]:
        """A proven lower bound on the weight of errors (beyond the conflicting duplicates)
        of any model that errs on a member of every set of ``sets`` (lists of members
        ``(point, side)``) and, on the points of each block ``(points, v)`` of ``blocks``, at
        least ``v`` beyond their conflicting duplicates; asked whether it reaches ``claim``.
        Also what HiGHS said and how many sets cost."""
        # a set with a member that costs nothing is met for free: no constraint; a block's
        # points count with the side of their heavier label (the lighter costs nothing)
        heavy = {int(p): 1 if self.weight[p, 1] > self.weight[p, 0] else -1
                 for b, _ in blocks for p in b}
        keys = sorted({key for t in sets for key in t} | set(heavy.items()))
        var = {key: i for i, key in enumerate(k for k in keys if self.cost(*k) > 0)}
        rows = [[var[key] for key in t] for t in sets if all(key in var for key in t)]
        rows_b = [([var[(int(p), heavy[int(p)])] for p in b if (int(p), heavy[int(p)]) in var],
                   v) for b, v in blocks]
        c = np.array([self.cost(*key) for key in var])
        if claim <= 0 or not var:
            return 0.0, "nothing to prove", len(rows)
        bound, status = cover_minimum(rows, c, rtol, target=claim, blocks=rows_b)
        return bound, status, len(rows)


def check_iis_cover(model, cert, X, y, w, report, rtol, signs=None
                    ) -> tuple[float, float] | None:
    """Check every IIS of the witness exactly, and re-derive the cover bound (see the module
    docstring) with its own ILP, asked whether it reaches the certificate's bound within
    the relative ``rtol``; returns that bound, plus the conflicting duplicates, and the
    slack ``rtol`` of it. ``signs``: the sign constraints of the columns of ``X`` (default:
    the model's ``monotonic_cst``; a subset of the features passes its own)."""
    t0 = time.perf_counter()
    iis = cert.witness.data.get("iis")
    if not isinstance(iis, list):
        report.add("IIS cover witness", False, "no list of IISs in the witness data")
        return None
    if signs is None:
        signs = monotone_signs(model)
    samples = Samples(X, np.asarray(y).ravel() == model.classes_[1], w, signs)
    valid, errors = [], []
    for k, members in enumerate(iis):
        got = samples.relation(members)
        if isinstance(got, str):
            errors.append(f"IIS {k}: {got}")
        else:
            valid.append(got)
    report.add("IISs certified by exact Farkas multipliers", not errors,
               f"{len(valid)} of {len(iis)}" + (f"; {errors[0]}" if errors else ""))
    cover, status, n_sets = samples.cover(valid, cert.bound - samples.base, rtol)
    report.add("IIS cover bound re-derived", True,
               f"{samples.base!r} (conflicting duplicates) + {cover!r} (a lower bound on the "
               f"least weight of errors meeting all {n_sets} IISs that cost: {status}) in "
               f"{time.perf_counter() - t0:.2f} s")
    proven = samples.base + cover
    return proven, rtol * abs(proven)
