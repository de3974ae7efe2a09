"""The Lasso-dual witness of the threshold networks, re-derived from the definitions.

A two-layer threshold network ``f(x) = sum_j w_j 1{a_j . x + b_j >= 0}`` takes, on the
training inputs, the values ``D w``, where the columns of ``D`` are the network's neurons'
arrangement patterns (linear dichotomies of the inputs). Its training objective is
``L(f) + beta |w|_1`` with ``L(f) = sum_i s_i l(f_i, y_i)``. For any ``theta`` with
``|d^T theta| <= beta`` for every column ``d`` of a dictionary, weak duality gives, for every
network whose neurons' patterns are columns of it (Fenchel-Young on ``L``, Hoelder on the
penalty)::

    L(D w) + beta |w|_1  >=  -L^*(-theta)  =  sum_i -s_i l^*(-theta_i / s_i).

The conjugate terms, re-derived here (``q_i = theta_i y_i / s_i``):

* squared, ``s/2 (f - y)^2``: ``theta_i y_i - theta_i^2 / (2 s_i)``, any ``theta_i``;
* logistic, ``s log(1 + exp(-y f))``: ``s_i H(q_i)``, ``q_i`` in ``[0, 1]``, ``H`` the
  binary entropy (natural log);
* hinge, ``s max(0, 1 - y f)``: ``s_i q_i``, ``q_i`` in ``[0, 1]``;

and a sample of weight 0 must have ``theta_i = 0``. Dual feasibility is checked against
every linear dichotomy of the inputs, enumerated here in exact integer arithmetic (every
float64 is an integer times a power of two), when the certificate claims the whole
arrangement and the enumeration is affordable; otherwise against the witness's patterns,
saying so in ``not_checked``. Nothing here imports the package's solvers, arrangement
enumerator or losses.
"""

from __future__ import annotations

import base64
import math
from fractions import Fraction
from itertools import combinations

import numpy as np
from scipy.special import entr

__all__ = ["check_lasso_dual", "every_pattern_norms", "feasible_for_every_pattern",
           "lasso_objective", "linear_dichotomies", "point_sums"]

#: rounding slack of the re-computed objectives and dual constraints, relative to their
#: scale (the zero network's loss; beta): both sides are sums of n float64 terms
_RTOL = 1e-9
#: dual points of the logistic and hinge losses have ``q`` in [0, 1]; computed as
#: ``s y q``, they may leave it by rounding
_DOMAIN_ATOL = 1e-12
#: hyperplanes (point subsets) the exact enumeration may examine before it gives up
ENUMERATION_BUDGET = 100_000


class _OverBudget(Exception):
    pass


def _integer_points(U: np.ndarray) -> list[tuple[int, ...]]:
    """The rows of ``U`` scaled by one power of two into integers (exactly: an affine map,
    which keeps every dichotomy)."""
    ratios = [[float(v).as_integer_ratio() for v in row] for row in U]
    den = max((d for row in ratios for _, d in row), default=1)  # all powers of two
    return [tuple(n * (den // d) for n, d in row) for row in ratios]


def _echelon_pivots(rows: list[list[Fraction]]) -> list[int]:
    """The pivot columns of ``rows`` in row echelon form (exact)."""
    rows = [list(r) for r in rows]
    pivots, r = [], 0
    n_cols = len(rows[0]) if rows else 0
    for c in range(n_cols):
        p = next((i for i in range(r, len(rows)) if rows[i][c] != 0), None)
        if p is None:
            continue
        rows[r], rows[p] = rows[p], rows[r]
        for i in range(r + 1, len(rows)):
            if rows[i][c] != 0:
                f = Fraction(rows[i][c]) / rows[r][c]
                rows[i] = [a - f * b for a, b in zip(rows[i], rows[r], strict=True)]
        pivots.append(c)
        r += 1
    return pivots


def _hull_coordinates(P: list[tuple]) -> list[tuple]:
    """The points in coordinates of their affine hull: the coordinates on which the
    projection is one-to-one on the hull (the pivots of the differences), so a dichotomy of
    the projected points is one of the points."""
    pivots = _echelon_pivots([[a - b for a, b in zip(p, P[0], strict=True)] for p in P[1:]])
    return [tuple(p[j] for j in pivots) for p in P]


def _det(M: list[list[int]]) -> int:
    """The determinant of an integer matrix, by fraction-free (Bareiss) elimination."""
    M = [list(r) for r in M]
    k, sign, prev = len(M), 1, 1
    for c in range(k - 1):
        p = next((i for i in range(c, k) if M[i][c] != 0), None)
        if p is None:
            return 0
        if p != c:
            M[c], M[p], sign = M[p], M[c], -sign
        for i in range(c + 1, k):
            M[i] = [(M[i][j] * M[c][c] - M[i][c] * M[c][j]) // prev for j in range(k)]
        prev = M[c][c]
    return sign * M[-1][-1] if k else 1


def _normal(rows: list[tuple]) -> list[int] | None:
    """The integer vector orthogonal to the ``k`` integer rows of length ``k + 1`` (their
    generalized cross product: signed maximal minors), or None when they are linearly
    dependent (every minor 0)."""
    k = len(rows)
    x = [(-1) ** j * _det([[r[c] for c in range(k + 1) if c != j] for r in rows])
         for j in range(k + 1)]
    return x if any(x) else None


def _dichotomies(P: list[tuple], budget: list[int]) -> set[int]:
    """Every set ``{i : a . p_i + b >= 0}`` of the distinct points ``P`` as a bitmask, the
    empty and the full set included.

    The sets are the sign vectors of the cells of the arrangement of the hyperplanes
    ``{(a, b) : a . p_i + b = 0}``; every cell has an extreme ray, a hyperplane through ``k``
    affinely independent points (``k`` the dimension of the hull), and the cells at that ray
    are the ray's signs off the plane with any dichotomy of the points on it (one dimension
    down)."""
    n = len(P)
    full = (1 << n) - 1
    if n <= 1:
        return {0, full}
    Q = _hull_coordinates(P)
    k = len(Q[0])
    if k == n - 1:  # affinely independent: every subset
        return set(range(1 << n))
    budget[0] -= math.comb(n, k)
    if budget[0] < 0:
        raise _OverBudget
    out, seen = {0, full}, set()
    for c in combinations(range(n), k):
        normal = _normal([(*Q[i], 1) for i in c])
        if normal is None:
            continue
        vals = [sum(a * b for a, b in zip(normal, (*q, 1), strict=True)) for q in Q]
        on = tuple(i for i in range(n) if vals[i] == 0)
        pos = sum(1 << i for i in range(n) if vals[i] > 0)
        if (pos, on) in seen:  # the same plane, through other points of it
            continue
        neg = full & ~pos & ~sum(1 << i for i in on)
        seen.update({(pos, on), (neg, on)})
        for t in _dichotomies([Q[i] for i in on], budget):
            sub = sum(1 << on[j] for j in range(len(on)) if t >> j & 1)
            out.update({pos | sub, neg | sub})
    return out


def linear_dichotomies(X, budget: int = ENUMERATION_BUDGET) -> np.ndarray | None:
    """Every non-empty pattern ``1{X a + b >= 0}`` of the distinct rows of ``X`` (exact), as a
    boolean ``(n_rows, n_patterns)`` matrix, or None when the enumeration would examine more
    than ``budget`` hyperplanes.

    Examples
    --------
    >>> linear_dichotomies([[0.0], [1.0], [2.0]]).sum(axis=1)   # 5 patterns: the empty is not
    array([3, 3, 3])
    >>> linear_dichotomies([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]).shape  # no XOR
    (4, 13)
    """
    P = _integer_points(np.asarray(X, dtype=np.float64))
    try:
        masks = sorted(_dichotomies(P, [budget]) - {0})
    except _OverBudget:
        return None
    n = len(P)
    nbytes = (n + 7) // 8
    bits = np.frombuffer(b"".join(m.to_bytes(nbytes, "little") for m in masks), np.uint8)
    return np.unpackbits(bits.reshape(len(masks), nbytes), axis=1, count=n,
                         bitorder="little").T.astype(bool)


def point_sums(X, theta) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows ``U`` of ``X`` and, per row of ``U``, the sum of ``theta`` (samples
    x outputs) over the samples at it: ``d^T theta`` of a pattern ``d`` of the samples is
    ``d_U^T sums``, since a pattern gives equal rows one value."""
    U, inverse = np.unique(X, axis=0, return_inverse=True)
    sums = np.zeros((len(U), theta.shape[1]))
    np.add.at(sums, inverse.ravel(), theta)
    return U, sums


def every_pattern_norms(U, sums) -> np.ndarray | None:
    """``max |d^T sums|`` per output over every arrangement pattern ``d`` of the distinct
    points ``U``, enumerated exactly (:func:`linear_dichotomies`); None beyond its budget."""
    patterns = linear_dichotomies(U, ENUMERATION_BUDGET)
    if patterns is None:
        return None
    return np.abs(patterns.T.astype(np.float64) @ sums).max(axis=0)


def feasible_for_every_pattern(X, theta, beta: float) -> bool | None:
    """Whether the dual point ``theta`` (samples of ``X`` x outputs) meets ``|d^T theta| <=
    beta`` (up to rounding) for every arrangement pattern of ``X``, as exact arithmetic
    enumerates them; None beyond the enumeration's budget.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0]])
    >>> feasible_for_every_pattern(X, np.array([[0.5], [-0.5], [0.5]]), 0.5)
    True
    >>> feasible_for_every_pattern(X, np.array([[0.5], [0.1], [0.5]]), 0.5)
    False
    """
    norms = every_pattern_norms(*point_sums(np.asarray(X, dtype=np.float64), theta))
    return None if norms is None else bool(np.all(norms <= beta * (1.0 + _RTOL)))


def _affinely_independent(X) -> bool:
    P = _integer_points(np.asarray(X, dtype=np.float64))
    return len(P) <= 1 or len(_hull_coordinates(P)[0]) == len(P) - 1


def _targets(model, y, n):
    """The targets the network is trained on (+-1 per class for a classifier), or None
    when a label is not one of the model's classes."""
    if not hasattr(model, "classes_"):
        return np.asarray(y, dtype=np.float64).reshape(n, -1)
    classes = np.asarray(model.classes_)
    y = np.asarray(y)
    idx = np.clip(np.searchsorted(classes, y), 0, len(classes) - 1)
    if not np.all(classes[idx] == y):
        return None
    if len(classes) == 2:
        return np.where(idx == 1, 1.0, -1.0)[:, None]
    return np.where(idx[:, None] == np.arange(len(classes)), 1.0, -1.0)


def _loss(name, F, T, w):
    """``sum_i w_i l(F_i, T_i)`` per output."""
    if name == "squared":
        terms = 0.5 * (F - T) ** 2
    elif name == "logistic":
        terms = np.logaddexp(0.0, -T * F)
    else:
        terms = np.maximum(0.0, 1.0 - T * F)
    return (w[:, None] * terms).sum(axis=0)


def _dual_value(name, theta, T, w):
    """``-L^*(-theta)`` per output, at ``theta`` (zero on weightless samples) projected onto
    the conjugate's domain; also how far outside it ``theta`` was (``q`` below 0 or above 1)."""
    pos = w > 0
    th, t, s = theta[pos], T[pos], w[pos][:, None]
    if name == "squared":
        return (th * t - th**2 / (2.0 * s)).sum(axis=0), 0.0
    q = th * t / s
    out = float(max(-q.min(initial=0.0), q.max(initial=1.0) - 1.0))
    q = np.clip(q, 0.0, 1.0)
    if name == "logistic":
        return (s * (entr(q) + entr(1.0 - q))).sum(axis=0), out
    return (s * q).sum(axis=0), out


def _decode_patterns(spec) -> np.ndarray:
    rows, cols = spec["shape"]
    packed = np.frombuffer(base64.b64decode(spec["packbits"]), np.uint8)
    return np.unpackbits(packed.reshape(cols, -1), axis=1, count=rows).T.astype(bool)


def lasso_objective(model, X, y, w) -> tuple[float, float]:
    """The training objective of a threshold network (its loss and ``beta`` from the model),
    from its own public methods, and the zero network's loss (the objective's scale);
    ``ValueError`` when a label is not one of the model's classes."""
    X = np.asarray(X, dtype=np.float64)
    T = _targets(model, y, len(X))
    if T is None:
        raise ValueError("a label is not one of the model's classes")
    name, beta = getattr(model, "loss", "squared"), _model_beta(model)
    F = (model.decision_function(X) if hasattr(model, "classes_") else model.predict(X))
    F = np.asarray(F, dtype=np.float64).reshape(T.shape)
    value = float(_loss(name, F, T, w).sum() + beta * np.abs(model.coef_).sum())
    return value, max(_zero_network_loss(name, T, w), abs(value))


def _zero_network_loss(name, T, w) -> float:
    """The loss of the network that outputs 0: the scale of the objective that no fit moves
    (the optimum is at most it), kept above 0."""
    return max(float(_loss(name, np.zeros_like(T), T, w).sum()), 1e-300)


def _model_beta(model) -> float:
    beta = getattr(model, "beta_", None)
    return float(getattr(model, "beta", None) if beta is None else beta)


def check_lasso_dual(model, cert, X, y, w, report, rtol) -> tuple[float, float] | None:
    """Re-check a ``"lasso_dual"`` witness on the training data: the dual objective of
    ``theta`` (the bound) and its feasibility for every column of the dictionary the
    certificate names (``rtol`` unused: the bound is re-derived). Returns the bound the
    witness proves and its rounding slack, or None when the witness does not fit the model
    and data."""
    data = cert.witness.data
    name, beta = data["loss"], float(data["beta"])
    X = np.asarray(X, dtype=np.float64)
    n = len(X)
    model_beta = _model_beta(model)
    model_loss = getattr(model, "loss", "squared")
    T = _targets(model, y, n)
    theta = np.asarray(data["theta"], dtype=np.float64)
    fits = [
        report.add("beta", beta == model_beta,
                   f"witness beta {beta!r}, the model's {model_beta!r}"),
        report.add("loss", name == model_loss and name in ("squared", "logistic", "hinge"),
                   f"witness loss {name!r}, the model's {model_loss!r}"),
        report.add("labels", T is not None, "every label is a class of the model"),
    ]
    if not all(fits):
        return None
    if theta.shape != T.shape or not np.all(np.isfinite(theta)):
        report.add("dual point", False, f"theta of shape {theta.shape} (finite: "
                   f"{np.all(np.isfinite(theta))}), the targets {T.shape}")
        return None
    scale = _zero_network_loss(name, T, w)

    pos = w > 0
    report.add("dual point on weightless samples", bool(np.all(theta[~pos] == 0)),
               "theta is 0 where the weight is 0 (the conjugate of 0 is finite at 0 only)")
    _, outside = _dual_value(name, theta, T, w)
    report.add("dual point in the conjugate's domain", outside <= _DOMAIN_ATOL,
               f"theta_i y_i / s_i leaves [0, 1] by {outside:.3g}")

    # the dictionary: patterns on the distinct inputs of positive weight
    U, sums = point_sums(X[pos], theta[pos])
    listed = _decode_patterns(data["patterns"]) if "patterns" in data else None
    if listed is not None and listed.shape[0] != int(pos.sum()):
        report.add("patterns", False, f"{listed.shape[0]} rows for {int(pos.sum())} samples "
                   "of positive weight")
        return None
    if data["dictionary"] == "all":
        if _affinely_independent(U):  # every subset is a pattern
            norms = np.maximum(np.where(sums > 0, sums, 0).sum(axis=0),
                               -np.where(sums < 0, sums, 0).sum(axis=0))
            source = f"all {2 ** len(U) - 1} subsets of the {len(U)} affinely independent inputs"
        else:
            norms = every_pattern_norms(U, sums)
            if norms is None and listed is None:
                report.add("dictionary", False, "too many patterns to enumerate, none listed")
                return None
            if norms is None:
                report.not_checked.append(
                    f"that the witness's {listed.shape[1]} patterns are every arrangement "
                    f"pattern of the {len(U)} distinct inputs (beyond the checker's "
                    f"enumeration budget of {ENUMERATION_BUDGET} hyperplanes): dual "
                    "feasibility is checked against those patterns")
                norms = np.abs(listed.T.astype(np.float64) @ theta[pos]).max(axis=0)
                source = f"the witness's {listed.shape[1]} patterns"
            else:
                source = (f"every arrangement pattern of the {len(U)} distinct inputs "
                          "(enumerated exactly)")
    else:
        if listed is None:
            report.add("dictionary", False, "a listed dictionary without patterns")
            return None
        norms = np.abs(listed.T.astype(np.float64) @ theta[pos]).max(axis=0)
        source = f"the witness's {listed.shape[1]} patterns"
        # the value is a network of the bound's class: its neurons are listed patterns
        H = np.asarray(model.hidden_activations(X[pos]), dtype=bool)
        used = np.abs(np.asarray(model.coef_).reshape(-1, H.shape[1])).sum(axis=0) > 0
        used &= H.any(axis=0)  # a neuron that never fires adds nothing to the outputs
        known = {col.tobytes() for col in np.packbits(listed.T, axis=1)}
        missing = sum(col.tobytes() not in known for col in np.packbits(H[:, used].T, axis=1))
        report.add("network in the dictionary", missing == 0,
                   f"{missing} of the network's {int(used.sum())} neurons are not patterns "
                   "of the dictionary")
    report.add("dual feasibility", bool(np.all(norms <= beta * (1.0 + _RTOL))),
               f"max |d^T theta| per output {norms.tolist()} over {source}; beta {beta!r}")
    # the bound of the feasible point theta * min(1, beta / norm): a rounding-size excess
    # shrinks it by as little
    shrink = np.minimum(1.0, beta / np.maximum(norms, 1e-300))
    proven = float(_dual_value(name, theta * shrink, T, w)[0].sum())
    if cert.is_optimal:
        report.add("optimal over every network", data["dictionary"] == "all",
                   "an optimality claim needs the dictionary of every arrangement pattern")
    return proven, _RTOL * scale
