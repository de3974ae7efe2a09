"""Geometry shared by the exact searches: affine frames, hyperplanes through points, margins.

Conventions
-----------
Points live in a well-conditioned *frame*: features are standardized, then projected onto the
affine hull of the data (so that the points span the space they live in, whatever the original
dimension, duplicates or collinearities), each principal direction scaled to the same spread
(a thin but real direction is data, not rounding), then scaled to unit RMS norm. Affine maps
preserve which labelings a hyperplane can realize, so the search runs in the frame and only the
final model is mapped back to the original features. A direction dropped as rounding is checked
in exact rational arithmetic on the float64 values: if a point lies off the kept subspace, by
however little, the projection is not the data and its optimum is not certified.

In homogeneous coordinates ``xh = (z, 1)`` the hyperplane through ``D`` affinely independent
points is the one-dimensional null space of their ``D x (D + 1)`` matrix. The search builds it
incrementally: after choosing points ``c_0, ..., c_{j-1}``, every point is represented by its
component orthogonal to their span, expressed in an orthonormal basis of the complement
(coordinates of length ``D + 1 - j``); adding ``c_j`` applies one Householder reflection that
maps ``c_j``'s coordinates onto the first axis and drops it. Orthogonal maps keep norms, so the
relative tolerances below mean the same thing at every level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg
from numba import njit

from ._certificate import StopReason

__all__ = [
    "AffineFrame",
    "affine_frame",
    "check_spread",
    "homogeneous",
    "plane_coordinates",
    "row_coordinates",
    "project_out",
    "make_levels",
    "update_levels",
    "pivot",
    "cross",
    "side_code",
    "leaf_sides",
    "batch_leaf_sides",
    "is_canonical_basis",
    "canonical_on_levels",
    "plane_coordinates_kernel",
]

#: relative tolerance deciding "this point lies on that hyperplane" (cosine of the angle
#: between the homogeneous point and the plane's normal) and "this point is in the span of
#: those" (norm of the orthogonal component relative to the point's norm).
COPLANAR_RTOL = 1e-9
#: relative tolerance on singular values deciding the dimension of the affine hull of points
#: already in a well-conditioned frame (sub-problems on a hyperplane).
RANK_RTOL = 1e-10
#: the largest condition number (widest over thinnest direction of the standardized points)
#: at which the exact searches certify their optimum: the frame scales every direction to
#: the same spread, which multiplies the rounding error of the thinnest one by this much, and
#: the geometric decisions (``COPLANAR_RTOL``) need it well below their tolerance
CERTIFIED_COND = 1e5
#: a feature takes part in the directions the frame drops when its component along them
#: exceeds this: the SVD's error on them is about eps times ``cond`` (at most
#: :data:`CERTIFIED_COND` where a certificate is possible). One left out of an exact
#: relation only costs the certificate (see :func:`_on_affine_subspace`), one taken in time.
_SUPPORT_TOL = 1e-8
#: points per block of the exact check (see :func:`_on_affine_subspace`)
_EXACT_BLOCK = 4096
#: the ``stop_reason_`` of a fit not certified for that reason
#: (an alias of the StopReason member, kept so that imports of it go on working)
THIN_POINTS = StopReason.THIN_POINTS
# the member's text states the threshold; it must follow CERTIFIED_COND if that changes
assert f"less than {1 / CERTIFIED_COND:.0e} of the widest" in THIN_POINTS, THIN_POINTS


@dataclass(frozen=True)
class AffineFrame:
    """Affine coordinates ``z = (((x - origin) - shift) / scale) @ basis / norm`` of a point set.

    ``origin`` is a data point (so that ``x - origin`` is exact for features that carry a
    large offset, see :func:`affine_frame`), ``shift`` the mean of ``x - origin``.
    ``basis`` (d x r, orthogonal columns) spans the affine hull of the points after
    standardization; ``r`` is the affine dimension (0 when all points coincide). ``cond``
    is the ratio of the widest to the thinnest spread of the points along ``basis`` before
    it scaled them to the same spread (1 without standardization). ``faithful``: the points,
    their float64 values read as exact rationals, lie in the affine subspace that ``basis``
    spans, so that the frame loses nothing (see :func:`_on_affine_subspace`); frames that keep
    the units (``standardize=False``) do not check and claim it only when they drop no
    direction.
    """

    origin: np.ndarray
    shift: np.ndarray
    scale: np.ndarray
    basis: np.ndarray
    norm: float
    cond: float = 1.0
    faithful: bool = True

    @property
    def certifiable(self) -> bool:
        """Whether the exact searches resolve these points in float64: ``cond`` at most
        :data:`CERTIFIED_COND`, and the frame ``faithful`` (a direction it drops as rounding
        that still holds points, however thin, lets a hyperplane realize labelings that the
        projection cannot: two lines 3e-16 apart are separable by a line)."""
        return self.cond <= CERTIFIED_COND and self.faithful

    @property
    def dim(self) -> int:
        return self.basis.shape[1]

    @property
    def mean(self) -> np.ndarray:
        """The center of the frame in the original features."""
        return self.origin + self.shift

    def transform(self, X: np.ndarray) -> np.ndarray:
        return (((X - self.origin) - self.shift) / self.scale) @ self.basis / self.norm

    def to_original(self, a: np.ndarray, b: float) -> tuple[np.ndarray, float]:
        """Map the affine function ``a . z + b`` of the frame to ``coef . x + intercept``.

        Raises ``ValueError`` when the coefficients in the original units overflow float64.
        """
        coef = (self.basis @ a) / self.norm / self.scale
        intercept = float(b - coef @ self.shift - coef @ self.origin)
        if not (np.all(np.isfinite(coef)) and np.isfinite(intercept)):
            raise ValueError(
                "the classifier's coefficients in the units of the features overflow float64 "
                "(features with a spread near the smallest float64 numbers): rescale the "
                "features, e.g. with sklearn.preprocessing.StandardScaler"
            )
        return coef, intercept


def check_spread(X) -> None:
    """Raise ``ValueError`` when the range of a feature of ``X`` (dense or scipy.sparse)
    overflows float64: a model compares every pair of points, so the whole range must be
    representable, not only the values.

    Examples
    --------
    >>> check_spread(np.array([[1e308], [-1e308]]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: the differences between values of feature 0 overflow float64 ...
    """
    hi, lo = X.max(axis=0), X.min(axis=0)
    if hasattr(hi, "toarray"):  # scipy.sparse
        hi, lo = hi.toarray().ravel(), lo.toarray().ravel()
    with np.errstate(over="ignore", invalid="ignore"):
        span = np.asarray(hi) - np.asarray(lo)
    if not np.all(np.isfinite(span)):
        j = int(np.flatnonzero(~np.isfinite(span))[0])
        raise ValueError(
            f"the differences between values of feature {j} overflow float64 (values up to "
            f"{max(abs(hi[j]), abs(lo[j])):.3g}): rescale the features, e.g. with "
            "sklearn.preprocessing.StandardScaler"
        )


def _centered(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X - origin) - shift`` with ``origin`` a data point per feature (its lower median)
    and ``shift`` the mean of ``X - origin``.

    Subtracting a data value is exact for the values within a factor 2 of it (Sterbenz), so
    a feature ``t + 1e10`` (or Unix timestamps) is centered exactly as ``t`` itself would be:
    coplanarity of integer data survives any offset.
    """
    n = X.shape[0]
    origin = np.partition(X, (n - 1) // 2, axis=0)[(n - 1) // 2]
    check_spread(X)
    # scaled by the largest difference so that neither the sum nor the squares overflow or
    # underflow, whatever the units
    D = X - origin
    big = np.abs(D).max(axis=0)
    big[big == 0] = 1.0
    shift = (D / big).mean(axis=0) * big
    return D - shift, origin, shift


def affine_frame(X: np.ndarray, *, standardize: bool = True) -> AffineFrame:
    """Center ``X`` (and standardize it), then find an orthonormal basis of its affine hull.

    Every decision is invariant to a change of units of each feature (``a_j x_j + c_j``):
    features are centered exactly (see :func:`_centered`) and compared with their own
    centered spread. A feature is constant only when its centered values are at the rounding
    level of its magnitude; the rank of the standardized points decides the dimension.
    ``standardize=False`` keeps the units (only centering, then the rank decision): for
    points already given in a well-conditioned frame, whose rank must not depend on the
    orientation of the axes (sub-problems on a hyperplane). With standardization, a frame
    that drops a direction checks that the points lie in the subspace it keeps, exactly
    (``faithful``, see :func:`_on_affine_subspace`).

    Raises ``ValueError`` when the data cannot be centered in float64 (overflow).

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])   # collinear points
    >>> affine_frame(X).dim
    1
    >>> affine_frame(X + [1e10, 0.0]).dim, affine_frame(X * 1e-200).dim
    (1, 1)
    """
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    if n < 2 or d == 0:
        mean = X[0].copy() if n else np.zeros(d)
        return AffineFrame(mean, np.zeros(d), np.ones(d), np.zeros((d, 0)), 1.0)
    Xc, origin, shift = _centered(X)
    scale = np.ones(d)
    if standardize:
        spread = np.abs(Xc).max(axis=0)
        # rounding noise of the centering is a few ulps of the values: scaling it up would
        # invent a dimension
        constant = spread <= 8 * np.finfo(float).eps * np.abs(X).max(axis=0)
        Xc[:, constant] = 0.0
        live = ~constant
        # std computed on values scaled by their spread: no overflow or underflow
        scale[live] = spread[live] * (Xc[:, live] / spread[live]).std(axis=0)
        Xc[:, live] /= scale[live]
    _, s, Vt = np.linalg.svd(Xc, full_matrices=False)
    if s[0] == 0:  # features constant up to the rounding of their values
        return AffineFrame(origin, shift, scale, np.zeros((d, 0)), 1.0,
                           faithful=bool(np.all(X == X[0])))
    cond = 1.0
    if standardize:
        # a direction is real down to the rounding level of the (exactly centered,
        # standardized) values; every real one gets the same spread, so that a thin but
        # real direction (points on two lines 1e-11 apart) is not projected away and the
        # decisions of the searches are invariant to any affine change of the features
        r = int(np.sum(s > max(n, d) * np.finfo(float).eps * s[0]))
        basis = Vt[:r].T / (s[:r] / s[0])
        cond = float(s[0] / s[r - 1])
    else:
        r = int(np.sum(s > RANK_RTOL * s[0]))
        basis = Vt[:r].T.copy()
    Z = Xc @ basis
    # n points span at most min(n - 1, d) dimensions: below that a direction was dropped
    faithful = r == min(n - 1, d)
    if standardize and not faithful:
        # the features that the dropped directions involve (all of them when the SVD of
        # fewer points than features leaves some of those directions out)
        involved = (np.arange(d) if len(s) < d
                    else np.flatnonzero(np.linalg.norm(Vt[r:], axis=0) > _SUPPORT_TOL))
        faithful = _on_affine_subspace(X[:, involved], Z, d - r)
    norm = float(np.sqrt(np.mean(np.sum(Z**2, axis=1))))
    return AffineFrame(origin, shift, scale, basis, norm if norm > 0 else 1.0, cond, faithful)


def _dyadic_integers(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(I, E)`` with ``X == I * 2.0**E`` exactly: ``I`` integers (int64 when all of them fit
    in 62 bits, Python ints in an object array otherwise), one exponent ``E`` per column.

    Every float64 is a dyadic rational ``M * 2**e``; with ``M`` odd and ``E`` the smallest
    ``e`` of the column, integer data stay small integers.
    """
    m, e = np.frexp(X)
    M = (m * 2.0**53).astype(np.int64)  # |m| < 1 has 53 significant bits: exact
    e = e.astype(np.int64) - 53
    # trailing zero bits of M: the exponent of its lowest set bit (a power of two, exact)
    tz = np.where(M != 0, np.frexp((M & -M).astype(np.float64))[1] - 1, 0)
    M, e = M >> tz, e + tz
    top = np.iinfo(np.int64).max
    E = np.where(M != 0, e, top).min(axis=0, initial=top)
    E[E == top] = 0  # a column of zeros
    shift = np.where(M != 0, e - E, 0)
    bits = np.frexp(np.abs(M).astype(np.float64))[1] + shift  # |M| < 2**53: exact
    if bits.size == 0 or bits.max() <= 62:
        return M << shift, E
    return M.astype(object) << shift.astype(object), E


def _integer_null_space(A: list[list[int]], d: int) -> list[list[int]]:
    """An integer basis of the null space of the integer matrix ``A`` (rows of ``d`` Python
    ints).

    Gauss-Jordan elimination in integers, each row divided by the gcd of its entries so that
    they stay as small as the data allow.
    """
    rows = [list(a) for a in A]
    pivots: list[int] = []
    for c in range(d):
        k = next((i for i in range(len(pivots), len(rows)) if rows[i][c]), None)
        if k is None:
            continue
        p = len(pivots)
        rows[p], rows[k] = rows[k], rows[p]
        top = rows[p]
        for i, row in enumerate(rows):
            if i != p and row[c]:
                f, g = row[c], top[c]
                row = [g * a - f * b for a, b in zip(row, top, strict=True)]
                h = math.gcd(*row) or 1
                rows[i] = [a // h for a in row]
        pivots.append(c)
    lcm = math.lcm(*(rows[i][c] for i, c in enumerate(pivots)))
    basis = []
    for f in sorted(set(range(d)) - set(pivots)):
        v = [0] * d
        v[f] = lcm
        for i, c in enumerate(pivots):
            v[c] = -rows[i][f] * lcm // rows[i][c]
        h = math.gcd(*v)
        basis.append([a // h for a in v])
    return basis


def _on_affine_subspace(X: np.ndarray, Z: np.ndarray, k: int) -> bool:
    """Whether the points ``X``, their float64 values read as exact rationals, satisfy ``k``
    independent affine equations (``Z``: their frame coordinates, ``r`` columns).

    ``X`` holds the features that the frame's dropped directions involve (``k`` of them,
    the others kept, ``r``): the points then lie in an ``r``-dimensional affine subspace,
    and an affine map, injective on it, takes them to ``Z``. A hyperplane realizes the same
    labelings of both, and the searches' optimum on ``Z`` is the optimum on the points.
    Otherwise a dropped direction holds points: a hyperplane along it may realize labelings
    that the frame cannot see, however thin it is (no threshold on its width decides that).

    Exact, in integers: ``r + 1`` points that span the frame (the pivot rows of an LU
    factorization with partial pivoting of their homogeneous frame coordinates, well spread
    by the whitening) give an integer basis of the null space of their differences; every
    point's difference must be orthogonal to it. Only the features that basis involves
    are read for every point, in int64 where no sum can overflow (Python ints otherwise).

    Examples
    --------
    >>> t = np.arange(5.0)[:, None]
    >>> _on_affine_subspace(np.hstack([t, 3 * t + 1]), t - 2.0, 1)   # exact in float64
    True
    >>> _on_affine_subspace(np.hstack([t, 0.1 * t]), t - 2.0, 1)     # 0.1 * 3 is rounded
    False
    """
    r = Z.shape[1]
    lu_rows = scipy.linalg.lu(homogeneous(Z), p_indices=True, check_finite=False)[0]
    base = np.argsort(lu_rows)[:r + 1]
    B, E_base = _dyadic_integers(X[base])
    B = B.astype(object)
    null = _integer_null_space([list(b - B[0]) for b in B[1:]], X.shape[1])
    if len(null) < k:  # the chosen points already span more than r dimensions
        return False
    N = np.array(null, dtype=object).T
    used = np.flatnonzero(np.any(N != 0, axis=1))
    N = N[used]
    # in blocks of points, each with the first base point: points off the subspace are
    # usually found in the first block, before converting the others
    n = len(X)
    for start in range(0, n, _EXACT_BLOCK):
        P, E = _dyadic_integers(X[np.r_[base[0], start:min(start + _EXACT_BLOCK, n)]][:, used])
        # P counts in units 2**E, the null vectors were found in units 2**-E_base: scaling
        # each one by 2**(max(g) - g), g = E_base - E, makes their products with P integers
        g = E_base[used] - E
        Ng = N << (g.max() - g).astype(object)[:, None]
        big = max(abs(int(P.max())), abs(int(P.min())))
        if P.dtype == np.int64 and 2 * big * max(abs(v) for v in Ng.flat) * len(used) < 2**63:
            off = (P[1:] - P[0]) @ Ng.astype(np.int64)
        else:
            off = (P[1:].astype(object) - P[0]) @ Ng
        if np.any(off):
            return False
    return True


def homogeneous(Z: np.ndarray) -> np.ndarray:
    """``[Z, 1]`` as a C-contiguous float64 array."""
    return np.ascontiguousarray(np.hstack([Z, np.ones((Z.shape[0], 1))]), dtype=np.float64)


def plane_coordinates(Z: np.ndarray, combo: np.ndarray, on: np.ndarray) -> np.ndarray:
    """Coordinates of the points ``Z[on]`` in an orthonormal basis of the hyperplane through
    the affinely independent points ``Z[combo]`` (``d - 1`` columns; the component along the
    normal, equal for all of them up to rounding, is dropped).

    Sub-problems on a hyperplane get their points this way, so that their dimension is at
    most ``d - 1`` by construction rather than by a tolerance.

    Examples
    --------
    >>> Z = np.array([[0.0, 1.0], [2.0, 1.0], [5.0, 1.0], [0.0, 0.0]])
    >>> np.round(np.abs(plane_coordinates(Z, np.array([0, 1]), np.array([0, 1, 2]))), 12).ravel()
    array([0., 2., 5.])
    """
    return plane_coordinates_kernel(np.ascontiguousarray(Z, dtype=np.float64),
                                    np.asarray(combo, dtype=np.int64),
                                    np.asarray(on, dtype=np.int64))


def row_coordinates(Xh: np.ndarray, combo: np.ndarray, on: np.ndarray) -> np.ndarray:
    """Coordinates of the rows ``Xh[on]`` in an orthonormal basis of the linear hyperplane
    spanned by the independent rows ``Xh[combo]`` (one column fewer than ``Xh``).

    The homogeneous counterpart of :func:`plane_coordinates`, for rows that are not all
    points ``(z, 1)`` (points at infinity among them): the sub-problem is again one of rows.

    Examples
    --------
    >>> Xh = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    >>> row_coordinates(Xh, np.array([0, 1]), np.array([0, 1, 2])).shape
    (3, 2)
    """
    Xh = np.asarray(Xh, dtype=np.float64)
    m = Xh.shape[1]
    _, _, Vt = np.linalg.svd(Xh[combo], full_matrices=True)
    normal = Vt[m - 1]
    _, _, B = np.linalg.svd(normal.reshape(1, m))
    return np.ascontiguousarray(Xh[on] @ B[1:].T)


@njit(cache=True, nogil=True)
def plane_coordinates_kernel(Z, combo, on):
    """:func:`plane_coordinates` (C-contiguous float64 ``Z``, int64 indices)."""
    d = Z.shape[1]
    A = np.ones((combo.shape[0], d + 1))
    for t in range(combo.shape[0]):
        A[t, :d] = Z[combo[t]]
    _, _, Vt = np.linalg.svd(A)
    normal = np.ascontiguousarray(Vt[d, :d]).reshape(1, d)
    _, _, B = np.linalg.svd(normal)
    P = np.empty((on.shape[0], d))
    for t in range(on.shape[0]):
        P[t] = Z[on[t]]
    return P @ np.ascontiguousarray(B[1:].T)


@njit(cache=True, nogil=True)
def project_out(Qin, m, p, Qout, v):
    """Reflect every row of ``Qin[:, :m]`` so that row ``p`` maps onto the first axis and
    write the remaining ``m - 1`` coordinates to ``Qout[:, :m - 1]`` (``v``: scratch of
    length >= m).

    Returns the norm of row ``p`` (its distance from the span of the earlier pivots).
    """
    alpha = 0.0
    for a in range(m):
        alpha += Qin[p, a] * Qin[p, a]
    alpha = np.sqrt(alpha)
    if alpha == 0.0:
        return 0.0
    for a in range(m):
        v[a] = Qin[p, a]
    v[0] += alpha if v[0] >= 0.0 else -alpha
    vv = 0.0
    for a in range(m):
        vv += v[a] * v[a]
    for i in range(Qin.shape[0]):
        t = 0.0
        for a in range(m):
            t += v[a] * Qin[i, a]
        t = 2.0 * t / vv
        for a in range(1, m):
            Qout[i, a - 1] = Qin[i, a] - t * v[a]
    return alpha


@njit(cache=True, nogil=True)
def make_levels(Xh):
    """Storage for the levels of the incremental search, level 0 filled with ``Xh``.

    Level ``L`` (``0 <= L <= D - 2``) holds the points' coordinates orthogonal to the first
    ``L`` chosen points: ``D + 1 - L`` columns, so the last level has 3. For ``D = 1`` the
    single level is ``Xh`` padded with a zero column (see :func:`pivot`).
    """
    n, m0 = Xh.shape
    D = m0 - 1
    if D >= 2:
        Qb = np.empty((D - 1, n, m0))
        Qb[0] = Xh
    else:
        Qb = np.zeros((1, n, 3))
        Qb[0, :, :2] = Xh
    return Qb


@njit(cache=True, nogil=True)
def update_levels(Qb, c, valid, tn, scratch):
    """Recompute levels ``valid + 1 .. D - 2`` for the prefix ``c``.

    Returns ``(valid, dep_at)``: the highest level now up to date, and the position of the
    first chosen point found in the span of the points before it (-1 if none), including
    the pivot ``c[D - 2]`` checked at the last level.
    """
    D = c.shape[0]
    m0 = D + 1
    while valid < D - 2:
        p = c[valid]
        if project_out(Qb[valid], m0 - valid, p, Qb[valid + 1], scratch) <= tn[p]:
            return valid, valid
        valid += 1
    if D >= 2:
        j = c[D - 2]
        a = Qb[D - 2, j]
        if np.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]) <= tn[j]:
            return valid, D - 2
    return valid, -1


@njit(cache=True, nogil=True, inline="always")
def pivot(Qb, c):
    """Last-level coordinates of the pivot ``c[D - 2]`` (a virtual ``(0, 0, 1)`` if D = 1)."""
    D = c.shape[0]
    if D >= 2:
        j = c[D - 2]
        return Qb[D - 2, j, 0], Qb[D - 2, j, 1], Qb[D - 2, j, 2]
    return 0.0, 0.0, 1.0


@njit(cache=True, nogil=True, inline="always")
def cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True, nogil=True, inline="always")
def side_code(w0, w1, w2, nw, q0, q1, q2, tol_i):
    """Side (+1, -1, or 0 = on the plane) of a point with last-level coordinates ``q``
    with respect to the plane of last-level normal ``w`` (``nw``: its norm; ``tol_i``: the
    relative tolerance times the point's norm)."""
    s = w0 * q0 + w1 * q1 + w2 * q2
    thr = nw * tol_i
    if s > thr:
        return 1
    if s < -thr:
        return -1
    return 0


@njit(cache=True, nogil=True)
def leaf_sides(Xh, nrm, combo, rtol):
    """Side of every point with respect to the plane through the points ``combo``.

    Uses exactly the floating-point operations of the incremental search, so it reproduces
    its decisions bit for bit. Returns ``(codes, ok)``: ``codes[i]`` in {+1, -1, 0} (0: on the
    plane, the defining points included); ``ok`` is False when the points of ``combo`` are
    affinely dependent (no unique plane).
    """
    codes, ok = batch_leaf_sides(Xh, nrm, combo.reshape(1, combo.shape[0]), rtol, False)
    return codes[0], ok[0]


@njit(cache=True, nogil=True)
def batch_leaf_sides(Xh, nrm, combos, rtol, canonical):
    """:func:`leaf_sides` for each row of ``combos``: ``(codes (m, n) int8, ok (m,) bool)``.
    With ``canonical``, ``ok`` is also False for a row that is not the canonical basis of
    its plane (:func:`is_canonical_basis`; only planes through more than D points have
    others), so that each plane is reported once.

    Consecutive rows that share a prefix share its levels, as in the incremental search
    (rows in lexicographic order, as :func:`exactclf._combinatorics.unrank_batch` makes
    them, recompute little)."""
    m, D = combos.shape
    n = Xh.shape[0]
    codes = np.zeros((m, n), dtype=np.int8)
    ok = np.zeros(m, dtype=np.bool_)
    Qb = make_levels(Xh)
    Q = Qb[max(D - 2, 0)]
    tn = rtol * nrm
    scratch = np.empty(D + 1)
    onp = np.empty(n, dtype=np.int64)
    c = combos[0].copy() if m else np.empty(D, dtype=combos.dtype)
    valid = 0
    for j in range(m):
        first = 0
        while first < D and combos[j, first] == c[first]:
            first += 1
        c[:] = combos[j]
        valid, dep_at = update_levels(Qb, c, min(valid, first), tn, scratch)
        if dep_at >= 0:
            continue
        a0, a1, a2 = pivot(Qb, c)
        na = np.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
        k = c[D - 1]
        w0, w1, w2 = cross(a0, a1, a2, Q[k, 0], Q[k, 1], Q[k, 2])
        nw = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
        if nw <= na * tn[k]:
            continue
        for i in range(n):
            codes[j, i] = side_code(w0, w1, w2, nw, Q[i, 0], Q[i, 1], Q[i, 2], tn[i])
        for t in range(D):
            codes[j, c[t]] = 0
        ok[j] = True
        if canonical:
            non = 0
            for i in range(n):
                if codes[j, i] == 0:
                    onp[non] = i
                    non += 1
            if non > D:
                ok[j] = canonical_on_levels(Qb, tn, c, k, a0, a1, a2, na, onp, non)
    return codes, ok


@njit(cache=True, nogil=True)
def canonical_on_levels(Qb, tn, c, k, a0, a1, a2, na, onp, non):
    """:func:`is_canonical_basis` inside the incremental search: the plane of the prefix
    ``c[:D - 1]`` (levels ``Qb``, pivot ``a`` of norm ``na``) and the leaf ``k``, the points
    on it ``onp[:non]``, ``tn`` the tolerances of :func:`leaf_sides`."""
    D = c.shape[0]
    m0 = D + 1
    L = max(D - 2, 0)
    for t in range(non):
        p = onp[t]
        if p >= k:
            continue
        j = 0
        while j < D - 1 and c[j] < p:
            j += 1
        if j < D - 1 and c[j] == p:
            continue
        if j <= D - 2:  # p must be in the span of c[:j]: nothing left at level j
            nn = 0.0
            for a in range(m0 - j):
                nn += Qb[j, p, a] * Qb[j, p, a]
            if np.sqrt(nn) > tn[p]:
                return False
        else:  # p must be in the span of c[:D - 1]: parallel to the pivot at level D - 2
            w0, w1, w2 = cross(a0, a1, a2, Qb[L, p, 0], Qb[L, p, 1], Qb[L, p, 2])
            if np.sqrt(w0 * w0 + w1 * w1 + w2 * w2) > na * tn[p]:
                return False
    return True


def is_canonical_basis(Xh: np.ndarray, combo: np.ndarray, on_plane: np.ndarray) -> bool:
    """Whether ``combo`` is the greedy (lexicographically first) basis of the points
    ``on_plane`` that span its hyperplane.

    A plane through more than ``D`` points is reached by many D-subsets; only this one
    represents it, so every plane is evaluated once. The greedy basis scans the points in
    index order and keeps each one not in the affine span of those kept so far; ``combo``
    is it iff every other point of the plane below ``combo[-1]`` lies in the span of the
    members of ``combo`` below it.
    """
    combo = np.asarray(combo)
    for p in on_plane:
        if p in combo or p > combo[-1]:
            continue
        before = combo[combo < p]
        if before.size == 0:
            return False
        A = Xh[before].T
        coef, *_ = np.linalg.lstsq(A, Xh[p], rcond=None)
        if np.linalg.norm(A @ coef - Xh[p]) > COPLANAR_RTOL * np.linalg.norm(Xh[p]):
            return False
    return True
