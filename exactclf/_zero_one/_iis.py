"""Exact minimization of the weighted 0-1 loss as a minimum-weight cover of infeasible
subsystems (MinIISC), solved by Benders decomposition: HiGHS LPs test the subsets, and the
set-cover master (:class:`~exactclf._zero_one._cover.CoverModel`) is a MIP on HiGHS or Gurobi.

Same problem and interface as :func:`exactclf._zero_one._min01.solve_min01`: unique points
``z_i`` with weights ``wpos_i`` / ``wneg_i``. Every point has a preferred label (the heavier
one); classifying it the other way costs ``c_i = |wpos_i - wneg_i|`` more than the constant
``base = sum_i min(wpos_i, wneg_i)``. Points with ``c_i = 0`` cost ``min`` on either side
(a strict separator can always be moved off them), so they take no part in the search.

Why the cover is exact: a set ``S`` of points with labels ``s_i = +-1`` is strictly
separable iff the LP ``s_i (a . z_i + b) >= 1, i in S`` is feasible (scale any strict
separator). By Gordan's alternative it is infeasible iff the polytope

    P(S) = {u >= 0 on S :  sum_i u_i s_i (z_i, 1) = 0,  sum_i u_i = 1}

is non-empty. At a vertex of ``P(S)`` the columns ``(s_i (z_i, 1), 1)`` of its support are
linearly independent, so the support has at most ``D + 2`` points and no proper subset of it
is infeasible: an irreducible infeasible subsystem (IIS). Every classifier gives up (errs on)
at least one point of every IIS, and a set whose complement meets every IIS is separable.
Hence

    OPT = base + min { sum_i c_i x_i :  sum_{i in T} x_i >= 1 for every IIS T,  x in {0, 1}^n }.

Benders: the master is that set-cover MIP over the IISs found so far (a relaxation: its
optimum is a proven lower bound at every round); the points it keeps are tested by the LP
``P``. When they are separable the master's solution is optimal; otherwise IISs of the kept
set become new cover rows ("peeling": find an IIS, give up its cheapest point, repeat until
the rest is separable, which also yields an incumbent).

Every IIS is verified before it becomes a row (floating point only *proposes* it): in exact
rational arithmetic on the points' coordinates in their affine frame (centered, scaled, on
their affine hull: the enumeration's coordinates), else exactly on the caller's coordinates
(rounding in the frame can break an exact degeneracy of, e.g., integer data), else, for a
degenerate IIS only, within the coplanarity tolerance that the enumeration uses
(:func:`near_gordan_support`). The master's bound is read with a relative slack of
``BOUND_RTOL``. Incumbents are realized labelings (a separator's predictions), so the
reported value is always achieved.

The IISs a bound rests on are its witness (:func:`iis_witness`): each re-certified by exact
integer Farkas multipliers in the samples' own coordinates, for :func:`exactclf.verify`.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._certificate import StopReason
from .._geometry import COPLANAR_RTOL, affine_frame
from .._separator import max_margin_separator, separate_rows
from .._warnings import warn
from ._cover import BOUND_RTOL, CoverModel
from ._min01 import labeling_errors, majority_labeling

__all__ = [
    "Fixed", "IISCoverResult", "IISCoverSolver", "IISOracle", "IISProblem",
    "cuts_cover_bound",
    "exact_gordan_support", "farkas_multipliers", "first_rows", "iis_witness",
    "near_gordan_support", "peel", "realize", "solve_iis_cover",
]

#: what the final LP relaxation leaves of a run's reserve goes to the integer master when
#: it is at least this many seconds
_MIN_MASTER_SECONDS = 0.2
#: LP solves of one subset (the caller's objective, then perturbed ones) before its
#: separability is called undecidable: another cost often decides an LP that HiGHS left
#: "Unknown", or reaches a vertex whose certificate passes the exact check (measured in
#: benchmarks/results/table2_linear.txt)
_OBJECTIVE_TRIES = 4


@dataclass(frozen=True)
class Fixed:
    """Rows every classifier must keep on its positive side, in every subsystem: the sign
    constraints of :mod:`exactclf._zero_one._signs`, as points at infinity ``(c, 0)``.
    ``rows`` are in the coordinates of the points' rows ``(z, 1)``, ``samples`` the
    constraints in the samples' own coordinates (``(s_j e_j, 0)``, exact), ``features`` the
    constrained feature of each; where ``rows`` combine several of them (the frame drops
    directions that the constraints reach), ``sources`` say which. With them an IIS is a
    set of points that no classifier satisfying the constraints separates: its Farkas
    certificate carries multipliers ``v >= 0`` on the fixed rows too (Motzkin's
    alternative), and no cover may drop a fixed row."""

    rows: np.ndarray
    samples: np.ndarray
    features: np.ndarray
    #: the rows of ``samples`` (constraints) that each of ``rows`` combines
    sources: tuple = ()

    def originals(self, fix: np.ndarray) -> np.ndarray:
        """The constraints (rows of ``samples``) that the rows ``fix`` combine."""
        if not self.sources:
            return np.asarray(fix)
        return np.unique(np.concatenate([self.sources[j] for j in fix] + [np.zeros(0, int)]
                                        )).astype(int)


@dataclass
class IISCoverResult:
    """Outcome of :func:`solve_iis_cover`.

    ``positive[i]`` says whether point ``i`` is on the positive side of a strict affine
    classifier; ``value`` is the weight of its errors; ``lower_bound`` is a proven lower
    bound on the optimum; ``complete`` is True when ``value`` is proven optimal (exactly for
    integer costs, within ``2 * BOUND_RTOL`` of ``lower_bound``, relative, otherwise: see
    :attr:`CoverModel.rtol`).
    ``stop_reason`` says why an incomplete solve stopped: ``"time_limit"``, ``"interrupted"``
    (Ctrl-C), ``"numerical"`` (floating point cannot decide a subset's separability) or
    ``"master failed"``.
    """

    value: float
    positive: np.ndarray
    lower_bound: float
    complete: bool
    stop_reason: str | None
    n_rounds: int
    n_cuts: int
    elapsed: float


# -- exact verification ------------------------------------------------------------------
def _integer_rows(M: np.ndarray) -> list[list[int]]:
    """Each row of a float matrix scaled by a power of two to integers (exactly)."""
    out = []
    for row in M:
        ratios = [float(v).as_integer_ratio() for v in row]
        den = max(d for _, d in ratios)
        out.append([p * (den // d) for p, d in ratios])
    return out


def _exact_null_vector(G: np.ndarray) -> list[int] | None:
    """The combination ``v`` with ``sum_t v_t g_t = 0`` of the rows ``g_t`` of ``G`` (k x m
    floats), exactly, when such combinations form a one-dimensional space (None otherwise);
    coprime integers. Fraction-free elimination on the floats' exact rational values (each
    row of ``G.T`` scaled to integers by a power of two, which keeps its null space), then a
    check of the result against the original rows: the claim rests on it."""
    k = G.shape[0]
    orig = _integer_rows(np.asarray(G, dtype=np.float64).T)  # m x k, columns = rows of G
    A = [row[:] for row in orig]
    m = len(A)
    pivots: list[int] = []
    r, prev = 0, 1
    for c in range(k):
        p = next((i for i in range(r, m) if A[i][c] != 0), None)
        if p is None:
            continue
        A[r], A[p] = A[p], A[r]
        for i in range(r + 1, m):
            for j in range(c + 1, k):
                A[i][j] = (A[r][c] * A[i][j] - A[i][c] * A[r][j]) // prev
            A[i][c] = 0
        prev = A[r][c]
        pivots.append(c)
        r += 1
        if r == m:
            break
    free = [c for c in range(k) if c not in pivots]
    if len(free) != 1:
        return None
    # back substitution in integers: before each division the whole vector is multiplied
    # by what makes it exact (Python integers: no rounding, no Fraction objects)
    v = [0] * k
    v[free[0]] = 1
    for row in range(len(pivots) - 1, -1, -1):
        c = pivots[row]
        acc = sum(A[row][j] * v[j] for j in range(c + 1, k))
        piv = A[row][c]
        g = math.gcd(acc, piv)
        scale = piv // g
        if scale != 1:
            v = [x * scale for x in v]
        v[c] = -(acc // g)
    g = math.gcd(*v)
    v = [x // g for x in v]
    if any(sum(a * x for a, x in zip(row, v, strict=True)) != 0 for row in orig):
        return None
    return v


def exact_gordan_support(G: np.ndarray) -> np.ndarray | None:
    """Exact test that the rows ``g_t`` of ``G`` (k x m floats) admit ``u >= 0``, ``u != 0``
    with ``sum_t u_t g_t = 0`` and a one-dimensional space of such combinations.

    Returns the support of ``u`` (indices into the rows), or None when the rows do not
    certify infeasibility exactly (no such ``u``, or a null space of dimension > 1).
    Arithmetic is on the exact rational values of the floats (fraction-free elimination).

    Examples
    --------
    >>> G = np.array([[0.0, 1.0], [-1.0, -1.0], [2.0, 1.0]])  # +, -, + at 0, 1, 2
    >>> exact_gordan_support(G).tolist()
    [0, 1, 2]
    >>> exact_gordan_support(G[[0, 2, 1]] * [[1], [1], [-1]]) is None  # +, +, - : separable
    True
    """
    u = farkas_multipliers(G)
    return None if u is None else np.flatnonzero(u).astype(np.intp)


def farkas_multipliers(G: np.ndarray) -> list[int] | None:
    """The exact Farkas certificate of the rows ``g_t`` of ``G`` (k x m floats): coprime
    non-negative integers ``u_t``, not all 0, with ``sum_t u_t g_t = 0`` exactly in rational
    arithmetic on the floats; None when the combinations of the rows that vanish are not a
    one-dimensional space spanned by a vector of one sign.

    Examples
    --------
    >>> G = np.array([[0.0, 1.0], [-1.0, -1.0], [2.0, 1.0]])  # 0 +, 1 -, 2 +: infeasible
    >>> farkas_multipliers(G)
    [1, 2, 1]
    >>> farkas_multipliers(G * [[1], [1], [-1]]) is None  # +, -, - : separable
    True
    """
    v = _exact_null_vector(G)
    if v is None or len({(x > 0) - (x < 0) for x in v} - {0}) != 1:
        return None
    return [abs(x) for x in v]


def first_rows(X: np.ndarray, labels: np.ndarray | None = None) -> dict:
    """The first row of ``X`` that holds each distinct point, keyed by the point's float64
    bytes (-0.0 and 0.0 are one point), or by the bytes and the row's label when ``labels``
    are given: how a witness names a point by a row of the samples.

    Examples
    --------
    >>> X = np.array([[1.0], [-0.0], [0.0], [1.0]])
    >>> first_rows(X)[np.float64(0.0).tobytes()], first_rows(X, [0, 0, 0, 1])[
    ...     np.float64(1.0).tobytes(), 1]
    (1, 3)
    """
    X0 = np.asarray(X, dtype=np.float64) + 0.0
    keys = ([r.tobytes() for r in X0] if labels is None
            else [(r.tobytes(), bool(b)) for r, b in zip(X0, labels, strict=True)])
    first: dict = {}
    for r, key in enumerate(keys):
        first.setdefault(key, r)
    return first


def iis_witness(X: np.ndarray, positive: np.ndarray, points: np.ndarray, sign: np.ndarray,
                cuts, known: dict | None = None, known_fixed: dict | None = None,
                ) -> tuple[list[list[list[int]]], list[int]]:
    """The IISs ``cuts`` as an independent check reads them: on the samples, with exact
    Farkas multipliers in the samples' own coordinates.

    Parameters
    ----------
    X : (n_samples, d) array
        The samples (float64), of which ``points`` are the distinct rows.
    positive : (n_samples,) bool array
        Which samples are labeled positive.
    points : (n, d) array
        Distinct rows of ``X``.
    sign : (n,) array of +-1
        The label each point has in the IISs (+1: positive).
    cuts : iterable of int arrays
        The IISs, as indices into ``points``.
    known : dict, optional
        Multipliers already found exactly on ``points`` (:meth:`IISCoverSolver.farkas`): a
        list of positive integers per IIS (the tuple of its indices), used as they are.
    known_fixed : dict, optional
        Their sign constraints' multipliers (:meth:`IISCoverSolver.farkas_fixed`): the
        member ``[-1 - j, s, v]`` adds ``v * s * (e_j, 0)``, the constraint
        ``s * coef[j] >= 0``; an IIS with such members holds only for the classifiers that
        satisfy those constraints. Without them, an IIS is not looked for on the samples
        (it may need constraints).

    Returns
    -------
    iis : list
        One list per IIS of its members ``[row, side, u]``: ``row`` the first sample with
        the member's point and label, ``side`` the label (+1 / -1), ``u`` a non-negative
        integer multiplier with ``sum u * side * (X[row], 1) == 0`` exactly (members with
        ``u = 0`` are left out: the rest is infeasible alone).
    left_out : list of int
        The positions in ``cuts`` of the IISs without such multipliers in the samples'
        coordinates (they were proven in the affine frame of the points, where rounding can
        create or break a degeneracy), left out of ``iis``.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [0.0]])
    >>> positive = np.array([True, False, True, True])
    >>> iis_witness(X, positive, X[:3], np.array([1, -1, 1]), [np.array([0, 1, 2])])
    ([[[0, 1, 1], [1, -1, 2], [2, 1, 1]]], [])
    """
    first = first_rows(X, positive)
    P0 = np.asarray(points, dtype=np.float64) + 0.0
    out, left_out = [], []
    for k, t in enumerate(cuts):
        t = np.asarray(t)
        key = tuple(t.tolist())
        u = None if known is None else known.get(key)
        if u is None and known_fixed is None:
            G = np.hstack([P0[t], np.ones((len(t), 1))]) * np.asarray(
                sign, dtype=np.float64)[t, None]
            u = farkas_multipliers(G)
        if u is None:
            left_out.append(k)
            continue
        out.append([[first[P0[i].tobytes(), bool(sign[i] > 0)], int(sign[i]), ui]
                    for i, ui in zip(t.tolist(), u, strict=True) if ui]
                   + [[-1 - j, s, v] for j, s, v in (known_fixed or {}).get(key, [])])
    return out, left_out


def near_gordan_support(G: np.ndarray) -> np.ndarray | None:
    """Tolerance test for a degenerate IIS (fewer than ``m + 1`` rows of ``G``, k x m): the
    unit-normalized rows have a one-dimensional near-null combination (singular value at most
    :data:`~exactclf._geometry.COPLANAR_RTOL`, the tolerance of the enumeration's coplanarity
    decisions) with coefficients of one sign, all clearly non-zero. Returns ``arange(k)`` or
    None.

    Examples
    --------
    >>> P = np.array([[0.1, 0.7], [0.2, 0.5], [0.3, 0.3]])  # collinear up to rounding
    >>> G = np.hstack([P, np.ones((3, 1))]) * np.array([[1.0], [-1.0], [1.0]])
    >>> exact_gordan_support(G) is None, near_gordan_support(G).tolist()
    (True, [0, 1, 2])
    """
    k = G.shape[0]
    if k > G.shape[1] or k < 2:
        return None
    Gn = G / np.linalg.norm(G, axis=1, keepdims=True)
    U, sv, _ = np.linalg.svd(Gn)
    if sv[k - 1] > COPLANAR_RTOL or (k > 1 and sv[k - 2] <= 1e3 * COPLANAR_RTOL):
        return None
    u = U[:, k - 1] * np.sign(U[np.argmax(np.abs(U[:, k - 1])), k - 1])
    if u.min() <= 1e-6 * u.max():
        return None
    return np.arange(k)


# -- the LP oracle: IISs and separators of subsets ----------------------------------------
class IISOracle:
    """Finds verified IISs of subsets of labeled points (the Gordan polytope ``P(S)`` on a
    persistent HiGHS LP: a subset is selected by column bounds, so each test re-solves warm).

    Parameters
    ----------
    Zf : (n, r) array
        The points, in well-conditioned coordinates (an affine frame of their hull: the
        library's convention for degenerate positions). IISs are verified exactly on them.
    sign : (n,) array of +-1
        The label each point must get.
    Z : (n, d) array, optional
        The same points in the caller's coordinates: a support that is not exactly infeasible
        in the frame (rounding broke an exact degeneracy, e.g. of integer data) is tried
        exactly on them, then within the coplanarity tolerance (:func:`near_gordan_support`).
    samples : (n, p) array, optional
        The same points in the samples' own coordinates, tried exactly first: the Farkas
        multipliers found there are kept (``farkas``, by the IIS's indices), and are the
        certificate's witness as they are (:func:`iis_witness` need not find them again).

    Examples
    --------
    >>> Z = np.array([[0.0], [1.0], [2.0]])
    >>> oracle = IISOracle(Z, np.array([1.0, -1.0, 1.0]))
    >>> oracle.find_iis(np.ones(3, bool), np.ones(3)).tolist()
    [0, 1, 2]
    >>> oracle.find_iis(np.array([True, True, False]), np.ones(3)) is None
    True
    """

    def __init__(self, Zf: np.ndarray, sign: np.ndarray, Z: np.ndarray | None = None,
                 samples: np.ndarray | None = None, fixed: Fixed | None = None):
        import highspy

        from .._highs import new_highs

        self._highspy = highspy
        self.Zf = np.asarray(Zf, dtype=np.float64)
        self.sign = np.asarray(sign, dtype=np.float64)
        n, r = self.Zf.shape
        self.n = n
        Gf = np.hstack([self.Zf, np.ones((n, 1))]) * self.sign[:, None]
        self._G = Gf
        self._Gx = None if Z is None else np.hstack([Z, np.ones((n, 1))]) * self.sign[:, None]
        self._Gs = None if samples is None else np.hstack(
            [np.asarray(samples, dtype=np.float64) + 0.0, np.ones((n, 1))]) * self.sign[:, None]
        self.fixed = fixed
        self.farkas: dict[tuple[int, ...], list[int]] = {}
        #: the fixed rows' multipliers of the IISs in ``farkas``: ``(feature, sign, v)``
        self.farkas_fixed: dict[tuple[int, ...], list[tuple[int, int, int]]] = {}
        h = new_highs()
        h.setOptionValue("solver", "simplex")
        h.setOptionValue("presolve", "off")
        inf = highspy.kHighsInf
        k = 0 if fixed is None else len(fixed.rows)
        h.addVars(n + k, np.zeros(n + k), np.full(n + k, inf))
        # rows: sum_i u_i g_i + sum_j v_j c_j = 0 (r + 1 rows), sum_i u_i = 1
        A = np.vstack([Gf.T, np.ones(n)])
        if k:
            A = np.hstack([A, np.vstack([fixed.rows.T, np.zeros(k)])])
        m = r + 2
        rhs = np.r_[np.zeros(r + 1), 1.0]
        idx = np.tile(np.arange(n + k, dtype=np.int32), m)
        starts = np.arange(m, dtype=np.int32) * (n + k)
        h.addRows(m, rhs, rhs, A.size, starts, idx, A.ravel())
        self._h = h
        self._ub = np.full(n, inf)
        self._all = np.arange(n, dtype=np.int32)

    def on_samples(self, t: np.ndarray) -> bool:
        """Whether the IIS ``t`` (indices, sorted) found elsewhere has exact Farkas
        multipliers in the samples' coordinates (True without ``samples``); they are kept in
        ``farkas`` when every member needs one."""
        key = tuple(t.tolist())
        if self._Gs is None or key in self.farkas:
            return True
        u = farkas_multipliers(self._Gs[t])
        if u is not None and all(u):
            self.farkas[key] = list(u)
        return u is not None

    def _select(self, keep: np.ndarray) -> None:
        ub = np.where(keep, self._highspy.kHighsInf, 0.0)
        changed = np.flatnonzero(ub != self._ub).astype(np.int32)
        if len(changed):
            self._h.changeColsBounds(len(changed), changed, np.zeros(len(changed)),
                                     ub[changed])
            self._ub = ub

    def find_iis(self, keep: np.ndarray, objective: np.ndarray) -> np.ndarray | None:
        """An exactly verified IIS among the points ``keep`` (a vertex of ``P(keep)``
        minimizing ``objective``), or None when the LP finds ``keep`` separable.

        When the LP is left undecided or proposes a certificate that fails the exact check,
        the objective is perturbed (each cost scaled by a factor in [0.5, 1.5], zeros stay
        zero) and the LP solved again, :data:`_OBJECTIVE_TRIES` times in all; then
        ``FloatingPointError`` is raised (the points are too close to a degenerate position
        for floating point).
        """
        objective = np.asarray(objective, dtype=np.float64)
        rng = np.random.default_rng(0)  # the same retries on every run
        for _ in range(_OBJECTIVE_TRIES - 1):
            try:
                return self._find_once(keep, objective)
            except FloatingPointError:
                objective = objective * rng.uniform(0.5, 1.5, len(objective))
        return self._find_once(keep, objective)

    def _find_once(self, keep: np.ndarray, objective: np.ndarray) -> np.ndarray | None:
        """One LP solve of :meth:`find_iis`, with ``objective`` as given."""
        h = self._h
        self._select(keep)
        h.changeColsCost(self.n, self._all, objective)
        h.run()
        status = h.getModelStatus()
        decided = (self._highspy.HighsModelStatus.kInfeasible,
                   self._highspy.HighsModelStatus.kOptimal)
        if status not in decided:
            # a warm start can leave HiGHS undecided ("Unknown") on a decidable LP, which a
            # cold start settles
            h.clearSolver()
            h.run()
            status = h.getModelStatus()
        if status == self._highspy.HighsModelStatus.kInfeasible:
            return None
        if status != self._highspy.HighsModelStatus.kOptimal:
            raise FloatingPointError(f"Gordan LP: {h.modelStatusToString(status)}")
        sol = np.asarray(h.getSolution().col_value)
        u, v = sol[:self.n], sol[self.n:]
        support = np.flatnonzero((u > 1e-12) & keep)
        clear = np.flatnonzero((u > 1e-9 * u.max()) & keep)
        # the fixed rows the certificate uses (all of them, when the LP's are not enough)
        tries = [np.arange(len(v))] if not len(v) else [
            np.flatnonzero(v > 1e-12 * max(1.0, u.max())), np.arange(len(v))]
        # basic solutions can carry tiny spurious entries: the clear ones are tried too
        for cand in (support, clear) if len(clear) < len(support) else (support,):
            for fix in tries:
                iis = self._certified(cand, fix)
                if iis is not None:
                    return iis
            if self.fixed is None:
                sub = near_gordan_support(self._G[cand])
                if sub is not None:
                    return cand[sub]
        raise FloatingPointError("Gordan LP certificate failed the exact check")

    def _certified(self, cand: np.ndarray, fix: np.ndarray) -> np.ndarray | None:
        """The IIS among the points ``cand`` (with the fixed rows ``fix``) that exact
        multipliers certify: on the samples (their multipliers are the witness's), in the
        frame, in the caller's coordinates; None if none does."""
        fixed = self.fixed
        orig = None if fixed is None else fixed.originals(fix)
        for G, C in ((self._Gs, None if fixed is None else fixed.samples[orig]),
                     (self._G, None if fixed is None else fixed.rows[fix]), (self._Gx, None)):
            if G is None or (fixed is not None and C is None):
                continue
            rows = G[cand] if C is None else np.vstack([G[cand], C])
            u = farkas_multipliers(rows)
            if u is None or not any(u[:len(cand)]):
                continue
            iis = cand[np.flatnonzero(u[:len(cand)])]
            if G is self._Gs:
                key = tuple(iis.tolist())
                self.farkas[key] = [x for x in u[:len(cand)] if x]
                if fixed is not None:
                    self.farkas_fixed[key] = [
                        (int(fixed.features[j]), int(fixed.samples[j, fixed.features[j]]),
                         int(x)) for j, x in zip(orig, u[len(cand):], strict=True) if x]
            return iis
        return None


def realize(Zf: np.ndarray, keep: np.ndarray, positive_pref: np.ndarray,
            fixed: Fixed | None = None) -> np.ndarray | None:
    """A labeling of all points realized by a strict affine classifier that labels the points
    ``keep`` as ``positive_pref`` says (and keeps the ``fixed`` rows positive), or None when
    floating point cannot separate them.

    The classifier is the max-margin separator of the kept points (margin >= 1), shifted
    within (-1/2, 1/2) to stay as far as possible from every other point (the fixed rows,
    at infinity, do not move).
    """
    if fixed is None:
        if not np.any(keep):
            return np.zeros(len(Zf), dtype=bool)
        try:
            a, b = max_margin_separator(Zf[keep], positive_pref[keep])
        except RuntimeError:
            return None
    else:
        G = np.vstack([np.hstack([Zf[keep], np.ones((int(keep.sum()), 1))])
                       * np.where(positive_pref[keep], 1.0, -1.0)[:, None], fixed.rows])
        x, separates = separate_rows(G)
        if not separates:
            return None
        a, b = x[:-1], float(x[-1])
    score = Zf @ a + b
    cuts = np.sort(np.r_[-0.5, 0.5, -score[np.abs(score) < 0.5]])
    gaps = np.diff(cuts)
    i = int(np.argmax(gaps))
    if gaps[i] <= 0:
        return None
    delta = 0.5 * (cuts[i] + cuts[i + 1])
    positive = score + delta > 0
    if not np.array_equal(positive[keep], positive_pref[keep]):
        return None
    return positive


def cuts_cover_bound(cuts, wpos: np.ndarray, wneg: np.ndarray, time_limit: float = 5.0) -> float:
    """A proven lower bound on the weighted errors of every affine classifier from the IISs
    ``cuts`` alone (arrays of point indices, each point labeled by its heavier weight): the
    conflicting duplicates plus the larger of the cover's LP relaxation bound and its MIP's
    dual bound, the MIP stopped when ``time_limit`` seconds (the LP's included) are spent.

    Examples
    --------
    >>> wpos, wneg = np.array([1.0, 0, 1, 0]), np.array([0.0, 1, 0, 1])
    >>> cuts_cover_bound([np.array([0, 1, 2]), np.array([1, 2, 3])], wpos, wneg)
    1.0
    """
    diff = np.asarray(wpos, dtype=np.float64) - np.asarray(wneg, dtype=np.float64)
    base = float(np.minimum(wpos, wneg).sum())
    active = np.flatnonzero(diff != 0)
    position = np.full(len(diff), -1)
    position[active] = np.arange(len(active))
    master = CoverModel(np.abs(diff[active]))
    master.add_cuts([position[t] for t in cuts])
    if not master.cuts:
        return base
    t0 = time.perf_counter()
    relaxed = master.solve(integer=False)[1]
    left = time_limit - (time.perf_counter() - t0)
    if left <= 0.0:  # a fit at its time_limit keeps the LP's bound
        return base + relaxed
    return base + max(relaxed, master.solve(integer=True, time_limit=left)[1])


# -- the solver ---------------------------------------------------------------------------
class IISProblem:
    """A weighted instance as the IIS methods see it: the active points (those with a
    preferred label, ``c_i > 0``), the constant ``base``, the frame and the LP oracle."""

    def __init__(self, Z, wpos, wneg, samples=None, fixed: Fixed | None = None):
        self.Z = Z
        self.wpos, self.wneg = wpos, wneg
        self.base = float(np.minimum(wpos, wneg).sum())
        diff = wpos - wneg
        self.active = np.flatnonzero(diff != 0)
        self.cost = np.abs(diff[self.active])
        self.pref_all = wpos > wneg
        self.fixed = fixed
        if fixed is None:
            frame = affine_frame(Z)
            self.Zf = frame.transform(Z) if frame.dim else np.zeros((len(Z), 0))
        else:  # the points are given in the frame of the fixed rows
            self.Zf = Z
        sign = np.where(self.pref_all[self.active], 1.0, -1.0)
        self.oracle = IISOracle(self.Zf[self.active], sign,
                                Z[self.active] if fixed is None else None,
                                None if samples is None else samples[self.active], fixed)

    def labeling(self, keep: np.ndarray) -> np.ndarray | None:
        """Realized labeling of all points keeping the active points ``keep``."""
        keep_all = np.zeros(len(self.Z), dtype=bool)
        keep_all[self.active[keep]] = True
        return realize(self.Zf, keep_all, self.pref_all, self.fixed)

    def given_up(self, positive: np.ndarray) -> np.ndarray:
        return positive[self.active] != self.pref_all[self.active]


def peel(oracle: IISOracle, keep: np.ndarray, cost: np.ndarray, rng: np.random.Generator,
         deadline: float = math.inf, disjoint: bool = False):
    """Find IISs among ``keep``, giving up the cheapest point of each (``disjoint``: all of
    its points, so that the IISs found are disjoint), until the rest is separable.

    Returns ``(cuts, kept)``; ``kept`` is None when the deadline stopped it first. A
    ``FloatingPointError`` of the oracle carries the IISs verified before it as ``cuts``.
    """
    keep = keep.copy()
    cuts = []
    while True:
        if time.perf_counter() > deadline:
            return cuts, None
        try:
            t = oracle.find_iis(keep, rng.uniform(0.5, 1.5, len(keep)))
        except FloatingPointError as exc:
            exc.cuts = cuts
            raise
        if t is None:
            return cuts, keep
        cuts.append(t)
        if disjoint:
            keep[t] = False
        else:
            cheapest = t[cost[t] == cost[t].min()]
            keep[rng.choice(cheapest)] = False


class IISCoverSolver:
    """The Benders loop of :func:`solve_iis_cover` as a resumable solver: :meth:`run` may be
    called again after a time-limited call and goes on from the cuts, incumbent and bound it
    had (the portfolio of :mod:`._portfolio` interleaves it with the enumeration).

    Parameters are those of :func:`solve_iis_cover`, less ``time_limit``, plus ``samples``:
    the points in the samples' own coordinates (see :class:`IISOracle`), whose exact
    multipliers :meth:`farkas` returns, and ``mip_solver``: the master's solver
    (:class:`~exactclf._zero_one._cover.CoverModel`).

    Examples
    --------
    >>> Z = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> solver = IISCoverSolver(Z, np.array([0, 1, 0, 1.0]), np.array([1, 0, 1, 0.0]))
    >>> res = solver.run(time_limit=10.0)
    >>> res.value, res.lower_bound, res.complete
    (1.0, 1.0, True)
    """

    def __init__(self, Z, wpos, wneg, *, incumbent=None, random_state=0, n_peels=8,
                 round_peels=8, threads=None, samples=None, mip_solver="highs", verbose=0,
                 fixed: Fixed | None = None):
        self.wpos = np.asarray(wpos, dtype=np.float64)
        self.wneg = np.asarray(wneg, dtype=np.float64)
        self.prob = IISProblem(np.asarray(Z, dtype=np.float64), self.wpos, self.wneg,
                               samples=samples, fixed=fixed)
        self.rng = np.random.default_rng(random_state)
        self.n_peels, self.round_peels, self.verbose = n_peels, round_peels, verbose
        self.best_pos = majority_labeling(self.wpos, self.wneg)
        self.best = labeling_errors(self.best_pos, self.wpos, self.wneg)
        self.lower = self.prob.base
        self.master = CoverModel(self.prob.cost, threads=threads, solver=mip_solver)
        self.rounds = 0
        self.elapsed = 0.0
        self._started = False  # the first peeling passes over all points are done
        self._pending = None  # a master cover not yet tested when a run's deadline came
        self._improving = True  # the last round found a better labeling
        self._solved = 0  # the cuts in the master at its last solve
        if incumbent is not None:
            self.offer(np.asarray(incumbent, dtype=bool))

    def offer(self, positive: np.ndarray | None) -> None:
        """Take a labeling of all points as the incumbent if it is better; it is re-realized
        from the points it labels as preferred (if floating point cannot separate them, it
        is ignored), so the incumbent is always a strict classifier's labeling."""
        if positive is not None:
            self._offer(self.prob.labeling(~self.prob.given_up(positive)))

    def add_cuts(self, cuts) -> bool:
        """Take IISs verified elsewhere (arrays of point indices, each point labeled by its
        heavier weight, as :meth:`cut_sets` returns them) as cover rows. They replace the
        first peeling passes over all points (on thousands of points those take a budget's
        worth of LPs over all of them, where IISs found near the errors are as good a start
        for the master). Given ``samples``, only those with exact multipliers on them are
        taken, so that every IIS of the bound is witnessed there; returns whether all
        were."""
        position = np.full(len(self.prob.Z), -1)
        position[self.prob.active] = np.arange(len(self.prob.active))
        local = [np.sort(position[t]) for t in cuts]
        kept = [t for t in local if self.prob.oracle.on_samples(t)]
        if self.master.add_cuts(kept):
            self._started = True
        return len(kept) == len(local)

    def raise_bound(self, value: float) -> None:
        """Take a lower bound on the optimum proven elsewhere (it also tightens the
        master)."""
        if value > self.lower:
            self.lower = value
            self.master.set_floor(value - self.prob.base)

    def _offer(self, positive):
        if positive is None:
            return
        value = labeling_errors(positive, self.wpos, self.wneg)
        if value < self.best:
            self.best_pos, self.best = positive, value

    def cut_sets(self) -> list[np.ndarray]:
        """The IISs found so far, on which the bound rests: arrays of point indices, each
        point labeled by its heavier weight."""
        return [self.prob.active[t] for t in self.master.cuts]

    def farkas(self) -> dict[tuple[int, ...], list[int]]:
        """The exact Farkas multipliers of the IISs of :meth:`cut_sets` that were verified on
        the ``samples`` given (by the tuple of their point indices; see
        :func:`iis_witness`)."""
        return self._by_points(self.prob.oracle.farkas)

    def farkas_fixed(self) -> dict[tuple[int, ...], list[tuple[int, int, int]]]:
        """The fixed rows' multipliers in those certificates, ``[(feature, sign, v)]``."""
        return self._by_points(self.prob.oracle.farkas_fixed)

    def _by_points(self, known: dict) -> dict:
        return {tuple(self.prob.active[t].tolist()): known[tuple(t.tolist())]
                for t in self.master.cuts if tuple(t.tolist()) in known}

    def done(self) -> bool:
        """Whether the incumbent is proven optimal."""
        return self.best - self.lower <= self.master.rtol * abs(self.best)

    def _report(self, t0: float) -> None:
        if self.verbose >= 1:
            gap = (self.best - self.lower) / self.best if self.best > 0 else 0.0
            print(f"IIS cover: round {self.rounds}  cuts {len(self.master.cuts)}  "
                  f"best={self.best:g}  bound={self.lower:g}  gap={100 * gap:.1f}%  "
                  f"{self.elapsed + time.perf_counter() - t0:.2f}s", file=sys.stderr, flush=True)

    def _peel_all(self, deadline: float) -> bool:
        """Peeling passes over all points, until they mostly rediscover known IISs; False
        when the deadline stopped them first."""
        keep_all = np.ones(len(self.prob.active), dtype=bool)
        for _ in range(self.n_peels):
            cuts, kept = peel(self.prob.oracle, keep_all, self.prob.cost, self.rng, deadline)
            n_new = self.master.add_cuts(cuts)
            if kept is not None:
                self._offer(self.prob.labeling(kept))
            if kept is None:
                return False
            if n_new <= 0.1 * len(cuts):
                break
        return True

    def _cutoff(self) -> float:
        """Only covers better than the incumbent matter. With integer costs the
        incumbent's extra cost, the costs of the members it errs on, is a multiple of their
        common divisor (the master's unit), as is every cover's: better is a unit less."""
        extra = self.best - self.prob.base
        return (extra - 0.5 * self.master.scale if self.master.integral
                else extra - BOUND_RTOL * abs(self.best))

    def _solve_master(self, end: float, t0: float, first: bool) -> np.ndarray | None:
        """The integer master over all IISs until ``end`` (``first``: stopped at the first
        cover below the cutoff): its bound raises the lower bound; returns its cover below
        the cutoff, or None."""
        self._solved = len(self.master.cuts)
        x, bound, _ = self.master.solve(integer=True, time_limit=end - time.perf_counter(),
                                        cutoff=self._cutoff(), first=first)
        self.raise_bound(self.prob.base + bound)
        self._report(t0)
        return x

    def _round(self, deadline: float, end: float, t0: float) -> str | None:
        """One Benders round: the master may run until ``end`` (it sees every IIS, so no LP
        relaxation is owed after it), the peeling passes until ``deadline``; returns a stop
        reason, or None."""
        prob, master = self.prob, self.master
        self.rounds += 1
        # no MIP start: with one, HiGHS 1.16 returned the start as "Optimal"
        x, self._pending = self._pending, None
        if x is None or prob.cost @ x > self._cutoff():
            # while rounds find better labelings any cover below the cutoff is worth testing,
            # and HiGHS stops at the first; once they stall, the cheapest cover's IISs are
            # the ones that raise the bound (benchmarks/results/ice_vs_baselines.txt)
            x = self._solve_master(end, t0, first=self._improving)
        if self.done():
            return None
        if time.perf_counter() >= deadline:
            # a cover found before the deadline is tested first by the next run
            self._pending = x
            return None
        if x is None:
            return StopReason.MASTER_FAILED  # neither a cover below the cutoff nor a proof of none
        keep = x < 0.5
        n_new, before = 0, self.best
        for _ in range(self.round_peels):
            cuts, kept = peel(prob.oracle, keep, prob.cost, self.rng, deadline)
            if kept is not None:
                self._offer(prob.labeling(kept))
            n_new += master.add_cuts(cuts)
            if not cuts or kept is None:
                break
        self._improving = self.best < before
        if n_new == 0 and self.best == before:
            if time.perf_counter() < deadline:
                return StopReason.NUMERICAL  # the kept set is separable, yet not realized
            self._pending = x  # the deadline came first: the next run tests it again
        return None

    def _spend_reserve(self, end: float, t0: float) -> None:
        """The last seconds of a run that the rounds left: the LP relaxation of the master
        over the IISs of the last peeling passes, then, in what the LP leaves, the integer
        master over all IISs, for its bound (the next run's first round tests its cover
        if that is still below the cutoff)."""
        if len(self.master.cuts) > self._solved:
            self._solved = len(self.master.cuts)
            _, bound, _ = self.master.solve(
                integer=False, time_limit=max(end - time.perf_counter(), 1e-3))
            self.raise_bound(self.prob.base + bound)
        if not self.done() and end - time.perf_counter() >= _MIN_MASTER_SECONDS:
            self._pending = self._solve_master(end, t0, first=False)

    def run(self, time_limit: float | None = None, reserve: float = 0.0) -> IISCoverResult:
        """Go on for at most ``time_limit`` seconds (None: until proven optimal); see
        :func:`solve_iis_cover` for the result.

        ``reserve``: the peeling passes end that many seconds before ``time_limit`` (a
        master solve begun before may run into it: it sees every IIS), and the time left
        goes to the LP relaxation of the master over the IISs found since its last solve (a
        run's last peeling passes often find hundreds that no master saw, and the LP
        relaxation over them is cheap and can raise the bound a long way), then to the
        integer master.
        """
        t0 = time.perf_counter()
        end = math.inf if time_limit is None else t0 + time_limit
        deadline = end - reserve
        stop_reason = None
        try:
            if len(self.prob.active) and not self.done() and not self._started:
                # cut short by the deadline, the passes go on in the next run
                self._started = self._peel_all(deadline)
            while not self.done():
                if time.perf_counter() >= deadline:
                    stop_reason = StopReason.TIME_LIMIT
                    break
                stop_reason = self._round(deadline, end, t0)
                if stop_reason is not None:
                    break
            if reserve > 0 and stop_reason == StopReason.TIME_LIMIT and not self.done():
                self._spend_reserve(end, t0)
        except KeyboardInterrupt:
            stop_reason = StopReason.INTERRUPTED
            warn("solve_iis_cover interrupted: returning the best labeling found so "
                 "far", UserWarning)
        except FloatingPointError as exc:
            stop_reason = StopReason.NUMERICAL
            if self.verbose:
                print(f"IIS cover: stopped ({exc})", file=sys.stderr)
            # the pass's IISs verified before the undecidable subset still bound the optimum,
            # as do those of earlier passes when no master solve came yet
            self.master.add_cuts(getattr(exc, "cuts", ()))
            try:
                if self.master.cuts and not self.done():
                    _, bound, _ = self.master.solve(
                        integer=False, time_limit=max(deadline - time.perf_counter(), 1.0))
                    self.raise_bound(self.prob.base + bound)
            except KeyboardInterrupt:
                stop_reason = StopReason.INTERRUPTED
        complete = self.done()
        if complete:
            stop_reason = None
        elif stop_reason == StopReason.NUMERICAL:
            warn(
                "solve_iis_cover: floating point cannot decide the separability of some "
                "subsets (points in nearly degenerate position); optimality is not proven",
                ConvergenceWarning,
            )
        self._report(t0)
        self.elapsed += time.perf_counter() - t0
        return IISCoverResult(self.best, self.best_pos, min(self.lower, self.best), complete,
                              stop_reason, self.rounds, len(self.master.cuts), self.elapsed)


def solve_iis_cover(
    Z: np.ndarray,
    wpos: np.ndarray,
    wneg: np.ndarray,
    *,
    incumbent: np.ndarray | None = None,
    time_limit: float | None = None,
    random_state: int | np.random.Generator | None = 0,
    n_peels: int = 8,
    round_peels: int = 8,
    threads: int | None = None,
    verbose: int = 0,
) -> IISCoverResult:
    """Minimize the weighted 0-1 loss of an affine classifier of the unique points ``Z`` by
    Benders decomposition into a set-cover master and IIS cuts (see the module docstring).

    Parameters
    ----------
    Z : (n, d) array of distinct points.
    wpos, wneg : (n,) weights of the positive / negative samples at each point.
    incumbent : (n,) bool array, optional
        A labeling to beat (it is re-realized here; if floating point cannot separate it, it
        is ignored). Defaults to the best constant labeling.
    time_limit : float, optional
        Seconds; on expiry (or Ctrl-C) the best labeling found and a proven lower bound are
        returned with ``complete=False``.
    random_state : int, Generator or None
        Seeds the LP objectives that pick among the IISs (the result's value does not
        depend on it when ``complete``).
    n_peels : int
        Peeling passes (with different LP objectives) over all points before the first
        master solve (fewer when the passes stop finding new IISs).
    round_peels : int
        Peeling passes over the master's kept set at every round.
    threads : int, optional
        Threads of the MIP solver.
    verbose : int
        ``>= 1``: one progress line per round (best / bound / gap) on stderr.

    Returns
    -------
    IISCoverResult

    See Also
    --------
    IISCoverSolver : the same loop, resumable.

    Examples
    --------
    >>> Z = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> res = solve_iis_cover(Z, np.array([0, 1, 0, 1.0]), np.array([1, 0, 1, 0.0]))
    >>> res.value, res.lower_bound, res.complete
    (1.0, 1.0, True)
    """
    solver = IISCoverSolver(Z, wpos, wneg, incumbent=incumbent, random_state=random_state,
                            n_peels=n_peels, round_peels=round_peels, threads=threads,
                            verbose=verbose)
    return solver.run(time_limit)
