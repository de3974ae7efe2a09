"""Certified bounds of the 0-1 minimax risk classifier.

* :func:`minimax_risk` evaluates ``R(mu) = -tau^T mu + lambda^T |mu| + nu(mu)`` exactly, over
  every sample and every nonempty label subset (the most violated subset of a sample is found
  by the kernels of :mod:`exactclf.mrc._kernels`): an upper bound on ``R*`` for any
  ``mu``.
* :func:`dual_lower_bound` turns any nonnegative weights on LP rows into a lower bound on
  ``R*``.
* :func:`dual_point` optimizes such weights over all rows (column generation from the rows
  most violated at a given ``mu``): the dual point that the certificate of
  :class:`~exactclf.mrc.MRCCCG` carries.
* :func:`forbidden_labels` names the (sample, label) pairs that such weights must leave out
  for the bound not to collapse to 0 on features that are constant over the training pairs.
"""

from __future__ import annotations

import time
from functools import partial
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp, softmax

from .._backend import REFERENCE, Backend
from ._kernels import most_violated_cpu, most_violated_xp
from ._lp import HighsLP

__all__ = [
    "RiskEvaluation",
    "minimax_risk",
    "scores",
    "risk_from_scores",
    "class_scores_matrix",
    "most_violated",
    "most_violated_bruteforce",
    "dual_lower_bound",
    "mixture_lower_bound",
    "DualPoint",
    "dual_point",
    "forbidden_labels",
    "pinned_features",
]


def most_violated(V, backend: Backend = REFERENCE):
    """Value and size of the most violated label subset of every sample.

    For scores ``V[i, y] = Phi(x_i, y)^T mu`` returns ``g[i] = max_C (sum_{y in C} V[i, y] - 1)
    / |C| + 1`` (the left-hand side ``F_(i,C) mu - b_C`` of the LP row, maximized over C) and
    the size of the maximizing subset (the smallest one on ties); the subset itself holds the
    ``size[i]`` largest scores. The CPU backend runs a Numba kernel, the others array-generic
    code on ``backend.xp``; all return identical values.

    Examples
    --------
    >>> import numpy as np
    >>> g, size = most_violated(np.array([[0.9, 0.8, -1.0], [0.2, 0.1, 0.0]]))
    >>> np.round(g, 6).tolist(), size.tolist()
    ([1.35, 0.766667], [2, 3])
    """
    if backend.name == "cpu":
        return most_violated_cpu(np.ascontiguousarray(V, dtype=np.float64))
    return most_violated_xp(V, backend.xp)


def most_violated_bruteforce(V: np.ndarray) -> np.ndarray:
    """``g`` of :func:`most_violated` by enumerating all ``2^K - 1`` subsets (reference)."""
    n, K = V.shape
    best = np.full(n, -np.inf)
    for mask in range(1, 2**K):
        members = [k for k in range(K) if mask >> k & 1]
        best = np.maximum(best, (V[:, members].sum(axis=1) - 1.0) / len(members) + 1.0)
    return best


class RiskEvaluation(NamedTuple):
    """``R(mu)``, ``nu(mu)``, per sample the value ``g`` and size of its most violated label
    subset (NumPy arrays), and the scores ``V`` (on the backend's device)."""

    R: float
    nu: float
    g: np.ndarray
    size: np.ndarray
    V: object


def class_scores_matrix(mu, n_classes: int, d: int, embedding=None) -> np.ndarray:
    """The ``K x d`` matrix whose row ``y`` maps ``psi(x)`` to the score ``Phi(x, y)^T mu``
    (``Phi(x, y) = B_y (x) psi(x)``, ``B = embedding``; None: one-hot)."""
    if embedding is None:
        return mu.reshape(n_classes, d)
    return embedding @ mu.reshape(embedding.shape[1], d)


def minimax_risk(Psi, mu, tau, lam, n_classes: int, backend: Backend = REFERENCE,
                 embedding=None) -> RiskEvaluation:
    """Certified ``R(mu) = -tau^T mu + lambda^T |mu| + nu(mu)`` over all samples and subsets.

    ``R(mu) >= R*`` for every ``mu``: it is the objective of the MRC LP at ``mu`` with ``nu``
    at its smallest feasible value.

    Parameters
    ----------
    Psi : array of shape (n_samples, d)
        ``psi(x_i)``, on ``backend``'s device (or a SciPy sparse matrix).
    mu, tau, lam : ndarray of shape (q * d,)
    n_classes : int
    backend : Backend
    embedding : ndarray of shape (n_classes, q) or None
        ``Phi(x, y) = embedding[y] (x) psi(x)``; None: one-hot (``q = n_classes``).

    Returns
    -------
    RiskEvaluation

    Examples
    --------
    >>> import numpy as np
    >>> ev = minimax_risk(np.ones((3, 1)), np.zeros(2), np.array([0.5, 0.5]), np.zeros(2), 2)
    >>> ev.R, ev.nu  # mu = 0: the uniform rule, 1 - 1/K
    (0.5, 0.5)
    """
    return risk_from_scores(scores(Psi, mu, n_classes, backend, embedding), mu, tau, lam,
                            backend)


def scores(Psi, mu, n_classes: int, backend: Backend = REFERENCE, embedding=None):
    """``V[i, y] = Phi(x_i, y)^T mu`` of every sample (on ``backend``'s device)."""
    M = np.ascontiguousarray(class_scores_matrix(mu, n_classes, Psi.shape[1], embedding).T)
    if sp.issparse(Psi):
        return backend.xp.asarray(np.ascontiguousarray(Psi @ M))
    return Psi @ backend.xp.asarray(M)


def risk_from_scores(V, mu, tau, lam, backend: Backend = REFERENCE) -> RiskEvaluation:
    """:func:`minimax_risk` at ``mu`` given its scores ``V`` (:func:`scores`)."""
    g, size = most_violated(V, backend)
    g = backend.asnumpy(g)
    nu = float(g.max())
    R = float(-tau @ mu + lam @ np.abs(mu) + nu)
    return RiskEvaluation(R, nu, g, backend.asnumpy(size), V)


def dual_lower_bound(U, masks, alpha, tau, lam, zero_tol: float = 0.0, embedding=None):
    """A lower bound on ``R*`` from any nonnegative weights ``alpha`` on LP rows.

    Row ``r`` is the constraint of a sample with features ``U[r] = psi(x)`` and label subset
    ``masks[r]`` (or a convex combination of such rows). For weights ``a`` summing to 1 and any
    ``mu``, ``nu(mu) >= sum_r a_r (F_r mu - b_r)``, hence

        R(mu) >= D(a) + sum_j (z_j mu_j + lambda_j |mu_j|),   D(a) = sum_r a_r (1 - 1/|C_r|),
        z = F^T a - tau,

    and ``R* >= D(a)`` when ``|z| <= lambda``. The empirical distribution (weight ``1/n`` on
    every ``(i, {y_i})``) has ``z = 0`` and ``D = 0``; mixing it in with weight ``t`` scales
    ``z`` and ``D`` by ``1 - t``, so the smallest ``t`` with ``(1 - t) |z| <= lambda`` gives
    the bound ``(1 - t) D(a)``. No row or feature needs to be in the LP for this: the bound
    holds for any ``alpha``, priced over *every* feature. An excess ``|z_j| - lambda_j <=
    zero_tol`` is accepted as rounding (at a dual optimum the exact ``|z_j|`` is at most
    ``lambda_j``; where ``lambda_j`` is itself at rounding level, say a feature constant
    within a class, mixing would otherwise pay the whole bound for it). On a coordinate with
    ``lambda_j = 0`` no mixing helps: a larger ``|z_j|`` gives the trivial bound 0.

    Parameters
    ----------
    U : ndarray or scipy.sparse matrix of shape (n_rows, d)
    masks : ndarray of shape (n_rows, n_classes), bool
    alpha : ndarray of shape (n_rows,)
        Weights (the negated row duals of the restricted LP); clipped at 0 and normalized.
    tau, lam : ndarray of shape (q * d,)
    zero_tol : float, default=0.0
    embedding : ndarray of shape (n_classes, q) or None
        ``Phi(x, y) = embedding[y] (x) psi(x)``; None: one-hot.

    Returns
    -------
    bound : float
        A lower bound on ``R*``, at least 0.
    excess : ndarray of shape (q * d,)
        ``|z| - lambda`` (the dual infeasibility of every feature, before any mixing).

    Examples
    --------
    >>> import numpy as np
    >>> U = np.array([[1.0], [1.0], [1.0]])
    >>> masks = np.array([[True, False], [False, True], [True, True]])
    >>> tau, lam = np.array([0.5, 0.5]), np.array([0.1, 0.1])
    >>> bound, excess = dual_lower_bound(U, masks, np.array([0.0, 0.0, 1.0]), tau, lam)
    >>> float(bound), excess.tolist()  # z = 0: D = 1 - 1/2 is a valid bound
    (0.5, [-0.1, -0.1])
    >>> bound, _ = dual_lower_bound(U, masks, np.array([0.2, 0.0, 0.8]), tau, lam)
    >>> round(float(bound), 6)  # |z| = 0.1 = lambda: still feasible
    0.4
    >>> bound, _ = dual_lower_bound(U, masks, np.array([0.4, 0.0, 0.6]), tau, lam)
    >>> round(float(bound), 6)  # |z| = 0.2: half of D(a) = 0.3 remains
    0.15
    """
    sizes = masks.sum(axis=1)
    return mixture_lower_bound(U, masks / sizes[:, None], 1.0 - 1.0 / sizes, alpha, tau, lam,
                               zero_tol, embedding)


def mixture_lower_bound(U, Q, values, alpha, tau, lam, zero_tol: float = 0.0, embedding=None):
    """The bound of :func:`dual_lower_bound` for rows given by label distributions.

    Row ``r`` pairs a psi-vector ``U[r]`` with a distribution ``Q[r]`` over the labels and a
    value ``values[r]`` such that ``nu(mu) >= Q[r]^T V_r(mu) + values[r]`` for every ``mu``
    (``V_r`` the scores of ``U[r]``). For the 0-1 loss a row ``(x, C)`` has ``Q`` uniform on
    ``C`` and value ``1 - 1/|C|``; for the log loss, whose ``nu`` is a log-sum-exp, any ``Q``
    with its entropy as value (and ``Q = e_y`` with value 0). Then, for weights ``a``
    summing to 1, ``R* >= (1 - t) sum_r a_r values[r]`` with ``t`` the smallest mixing weight
    of the empirical distribution (value 0) that makes ``|z| <= lambda``,
    ``z = sum_r a_r (Q[r] B) (x) U[r] - tau``.

    Returns
    -------
    bound : float
    excess : ndarray of shape (q * d,)
        ``|z| - lambda``.

    Examples
    --------
    >>> import numpy as np
    >>> U = np.ones((1, 1))
    >>> tau, lam = np.array([0.5, 0.5]), np.zeros(2)
    >>> bound, _ = mixture_lower_bound(U, np.array([[0.5, 0.5]]), np.array([np.log(2)]),
    ...                                np.ones(1), tau, lam)
    >>> round(float(bound), 6)  # the uniform rule's log loss, log 2
    0.693147
    """
    w = np.maximum(np.asarray(alpha, dtype=np.float64), 0.0)
    total = w.sum()
    if not total > 0.0:
        return 0.0, np.abs(tau) - lam
    w = w / total
    D = float(w @ values)
    E = Q if embedding is None else Q @ embedding
    z = np.asarray(U.T @ (E * w[:, None])).T.ravel() - tau
    az = np.abs(z)
    excess = az - lam
    over = excess > zero_tol
    scaled = over & (lam > 0.0)
    if np.any(over & (lam == 0.0)):
        return 0.0, excess
    t = float(np.max(1.0 - lam[scaled] / az[scaled])) if scaled.any() else 0.0
    return max((1.0 - t) * D, 0.0), excess


def pinned_features(Psi, y, n_classes: int, embedding=None) -> np.ndarray:
    """The features ``j`` whose ``Phi_j(x_i, y_i)`` is the same over every training pair, flat
    in the layout ``k * d + l``: their ``lambda_j`` is 0 whatever ``s``. One-hot, ``(k, l)`` is
    pinned where ``psi_l`` is 0 on every sample of class ``k`` (a pixel that is never inked in
    one digit's images); every feature of a column of zeros is.

    Examples
    --------
    >>> import numpy as np
    >>> Psi = np.array([[1.0, 0.0, 2.0], [1.0, 3.0, 0.0], [1.0, 0.0, 0.0]])
    >>> pinned_features(Psi, np.array([0, 1, 1]), 2).reshape(2, 3).tolist()
    [[False, True, False], [False, False, True]]
    """
    n, d = Psi.shape
    if embedding is None:
        onehot = np.zeros((n, n_classes))
        onehot[np.arange(n), y] = 1.0
        nonzero = abs(sp.csr_matrix(Psi)).sign() if sp.issparse(Psi) else (Psi != 0.0) * 1.0
        # (the product of 0/1 entries counts exactly)
        return np.asarray(nonzero.T @ onehot).T.ravel() == 0.0
    B = np.asarray(embedding, dtype=np.float64)
    pinned = np.zeros((B.shape[1], d), dtype=bool)
    for c in range(B.shape[1]):
        G = sp.diags(B[y, c]) @ sp.csr_matrix(Psi) if sp.issparse(Psi) else Psi * B[y, c, None]
        top = np.asarray(G.max(axis=0).todense() if sp.issparse(G) else G.max(axis=0)).ravel()
        low = np.asarray(G.min(axis=0).todense() if sp.issparse(G) else G.min(axis=0)).ravel()
        pinned[c] = top == low
    return pinned.ravel()


def _pinned_columns(Psi, y, n_classes: int, tau, embedding, zero_tol: float):
    """Per column ``c`` of the embedding with pinned features ``(c, l)``
    (:func:`pinned_features`), a list over the values ``b`` of ``B[:, c]`` of the deviations
    ``Phi_j(x_i, k) - tau_j = b psi_l(x_i) - tau_j`` of its labels ``k`` (``B[k, c] = b``):
    ``(labels, above, below, hit)``, whether some sample deviates above ``zero_tol`` (below
    ``-zero_tol``) on each feature, and ``hit(mask)``, per sample whether it deviates on one
    of the features ``mask``. A sparse ``psi`` stays sparse (one-hot: ``tau_j = 0``)."""
    pinned = pinned_features(Psi, y, n_classes, embedding)
    n, d = Psi.shape
    B = np.eye(n_classes) if embedding is None else np.asarray(embedding, dtype=np.float64)
    for c in range(B.shape[1]):
        cols = np.flatnonzero(pinned[c * d:(c + 1) * d])
        if not len(cols):
            continue
        P, t = Psi[:, cols], tau[c * d + cols]
        parts = []
        for b in np.unique(B[:, c]):
            labels = np.flatnonzero(B[:, c] == b)
            if b == 0.0:  # the same for every sample: -tau_j
                off = np.abs(t) > zero_tol
                parts.append((labels, -t > zero_tol, t > zero_tol,
                              lambda mask, off=off: np.full(n, bool(np.any(off[mask])))))
            elif sp.issparse(P) and not np.any(np.abs(t) > zero_tol):
                out = abs(P) * abs(b) > zero_tol
                sign = P * b > 0
                parts.append((labels, _any_rows(out.multiply(sign)),
                              _any_rows(out - out.multiply(sign)),
                              lambda mask, out=out: _any_cols(out[:, mask])))
            else:
                dev = b * (P.toarray() if sp.issparse(P) else np.asarray(P)) - t
                out = np.abs(dev) > zero_tol
                parts.append((labels, (dev > zero_tol).any(axis=0),
                              (dev < -zero_tol).any(axis=0),
                              lambda mask, out=out: out[:, mask].any(axis=1)))
        yield parts


def _any_rows(A) -> np.ndarray:
    """Per column of the sparse boolean ``A``: whether some row holds a True."""
    return np.asarray(A.sum(axis=0)).ravel() > 0


def _any_cols(A) -> np.ndarray:
    """Per row of the sparse boolean ``A``: whether some column holds a True."""
    return np.asarray(A.sum(axis=1)).ravel() > 0


def _one_sign(parts) -> np.ndarray:
    """Per pinned feature of one column ``c`` (its ``parts`` of :func:`_pinned_columns`):
    whether its deviations over all samples and labels have one sign."""
    above = np.any([part[1] for part in parts], axis=0)
    below = np.any([part[2] for part in parts], axis=0)
    return ~(above & below)


def forbidden_labels(Psi, y, n_classes: int, tau, embedding=None, zero_tol: float = 0.0):
    """The labels that the rows of a dual point leave out, per sample: ``F[i, k]`` where a
    :func:`pinned_features` ``j`` whose ``Phi_j(x, k) - tau_j`` has one sign over all samples
    and labels has ``|Phi_j(x_i, k) - tau_j| > zero_tol``; None where there is none.

    A pinned feature has ``lambda_j = 0``, so a dual point proves a bound only with ``z_j =
    sum_r a_r sum_k Q_r[k] (Phi_j(x_r, k) - tau_j) = 0`` (no mixing repairs it: the bound is
    0 otherwise). Where those terms have one sign (a nonnegative ``psi``: pixels, counts),
    every feasible dual point, the optimal one included, weighs none of these labels, so
    leaving them out costs no bound; and it makes ``z_j`` 0 in floating point, where an
    interior point method's duals leave rounding-level weights on them. (Where a pinned
    feature's terms take both signs they may cancel, and are not left out.) A sample's own
    label is never forbidden (``Phi_j(x_i, y_i) = tau_j``) and neither are the class-average
    rows, so what is left still holds the class proportions (``z = 0``).

    Examples
    --------
    >>> import numpy as np
    >>> Psi = np.array([[1.0, 0.0, 2.0], [1.0, 3.0, 0.0], [1.0, 0.0, 0.0]])
    >>> y = np.array([0, 1, 1])
    >>> forbidden_labels(Psi, y, 2, np.zeros(6)).tolist()  # sample 0 inks psi_2, never class 1
    [[False, True], [True, False], [False, False]]
    """
    forbidden = None
    for parts in _pinned_columns(Psi, y, n_classes, tau, embedding, zero_tol):
        one_sign = _one_sign(parts)
        if not one_sign.any():
            continue
        if forbidden is None:
            forbidden = np.zeros((Psi.shape[0], n_classes), dtype=bool)
        for labels, _, _, hit in parts:
            forbidden[:, labels] |= hit(one_sign)[:, None]
    return forbidden


def pinned_signs_agree(Psi, y, n_classes: int, tau, embedding=None,
                       zero_tol: float = 0.0) -> bool:
    """Whether every pinned feature's ``Phi_j(x_i, k) - tau_j`` has one sign over all
    samples and labels (:func:`forbidden_labels`: where one does not, only a dual point
    whose weights cancel exactly in floating point proves a bound).

    Examples
    --------
    >>> import numpy as np
    >>> Psi, y = np.array([[1.0, 0.0], [1.0, 2.0], [1.0, -2.0]]), np.array([0, 1, 1])
    >>> tau = np.zeros(4)
    >>> pinned_signs_agree(Psi, y, 2, tau), pinned_signs_agree(abs(Psi), y, 2, tau)
    (False, True)
    """
    return all(_one_sign(parts).all()
               for parts in _pinned_columns(Psi, y, n_classes, tau, embedding, zero_tol))


class DualPoint(NamedTuple):
    """Weights on rows that prove a lower bound on ``R*`` (:func:`mixture_lower_bound`).

    Row ``r`` is sample ``sample[r]`` with the label distribution ``Q[r]`` (0-1 loss: uniform
    on a label subset); ``class_alpha[c]`` weighs the class-average row of class ``c`` (the
    weighted mean of its samples' singleton rows: label ``c``, value 0). ``bound`` is what
    the weights prove, every feature priced.
    """

    sample: np.ndarray
    Q: np.ndarray
    alpha: np.ndarray
    class_alpha: np.ndarray
    bound: float


#: rows a round of :func:`dual_point` adds at most (the most attractive, one per sample)
_ROWS_PER_ROUND = 100
#: LP solves of :func:`dual_point` at most
_MAX_ROUNDS = 200
#: a seed of :func:`dual_point` with more rows times features than this is one column
_SEED_ENTRIES = 1e7


def dual_point(Psi, y, n_classes: int, tau, lam, V, *, loss: str = "0-1", tol: float,
               sample_weight=None, embedding=None, zero_tol: float = 0.0,
               deadline: float | None = None, seed=None, upper: float = np.inf,
               enough: float | None = None) -> DualPoint:
    """A dual point of the MRC program over *all* its rows, by column generation from the
    rows most violated at the scores ``V``.

    The dual of the MRC program maximizes ``sum_r a_r values[r]`` over weights ``a >= 0``
    summing to 1 on its rows subject to ``|z| <= lambda`` on every feature; its value is
    ``R*``. The LP over a subset of rows (with the class-average rows, which alone make it
    feasible: the class proportions give ``z = 0``) is solved by HiGHS' simplex; the duals
    ``eta`` of its feature constraints price every other row: the gain of a row of sample
    ``i`` is, with the scores ``s_i = Phi(x_i, .)^T eta``, ``(sum_{y in C} s_iy - 1) / |C| +
    1`` for the 0-1 row ``(i, C)`` (largest for ``C`` the ``k`` largest scores, some ``k``)
    and ``q^T s_i + H(q)`` for the log loss's row ``(i, q)`` (largest, ``LSE(s_i)``, for ``q``
    the softmax of ``s_i``), less the dual of ``sum a = 1``. Rows gaining more than ``tol``
    are added (the best row of each of the ``_ROWS_PER_ROUND`` best samples) and the LP
    re-solved warm, until none does (the LP's value is then within ``tol`` of ``R*``), after
    ``_MAX_ROUNDS`` solves, or at ``deadline``. The first LP has the best rows at ``V``: at an
    optimal ``mu`` the rows carrying an optimal dual point are among the most violated; and
    the rows of ``seed``, a dual point found elsewhere (the generation's last; where it is
    large, one column, the mixture of its rows, spread over them again in the result), which is
    the result with no LP solved where it proves ``upper - enough`` (from the best rows alone,
    the rounds can take as long as the generation itself). For
    the log loss, a sample's rows are finally merged into one (the same ``z``; the entropy is
    concave, so the value only rises). The simplex vertex meets ``|z| <= lambda`` only to the
    solver's tolerance (its tightest: a violation costs the bound in proportion to it over
    ``lambda``, which may be tiny); :func:`mixture_lower_bound` repairs that, so ``bound``
    holds exactly. Where ``lambda_j = 0`` no repair helps; on the pinned features
    (:func:`pinned_features`) the rows leave out the :func:`forbidden_labels` (in the pricing,
    and in the seed), which makes ``z_j`` exactly 0 there.

    Parameters
    ----------
    Psi : ndarray or scipy.sparse matrix of shape (n_samples, d)
    y : ndarray of shape (n_samples,)
        Class indices.
    n_classes : int
    tau, lam : ndarray of shape (q * d,)
    V : ndarray of shape (n_samples, n_classes)
        The scores ``Phi(x_i, y)^T mu`` of a (nearly) optimal ``mu``.
    loss : {"0-1", "log"}, default="0-1"
    tol : float
        Rows gaining at most this are not added.
    sample_weight : ndarray of shape (n_samples,) or None
    embedding : ndarray of shape (n_classes, q) or None
    zero_tol : float, default=0.0
        See :func:`dual_lower_bound`.
    deadline : float or None, default=None
        A ``time.perf_counter()`` by which the LP solves end (the first gets at least 1 ms;
        cut off, it leaves the class-average rows alone, a bound of 0).
    seed : tuple or None, default=None
        ``(sample, Q, values, alpha, class_alpha)``: weights ``alpha`` on rows of the program
        (any: the bound is priced here) and ``class_alpha`` on the class-average rows.
    upper : float, default=inf
        An upper bound on ``R*`` (``R`` of the returned ``mu``).
    enough : float or None, default=None
        The seed is the result where it proves ``upper - enough`` (None: ``tol``), or where
        it proves more than the LP's point (a ``deadline`` that cut the LP short).

    Returns
    -------
    DualPoint

    Examples
    --------
    >>> import numpy as np
    >>> Psi, y = np.ones((4, 1)), np.array([0, 0, 1, 1])
    >>> tau, lam = np.array([0.5, 0.5]), np.zeros(2)
    >>> point = dual_point(Psi, y, 2, tau, lam, np.zeros((4, 2)), tol=1e-9)
    >>> float(point.bound)  # one feature: R* is the uniform rule's 1/2
    0.5
    """
    n, d = Psi.shape
    K = n_classes
    B = np.eye(K) if embedding is None else np.asarray(embedding, dtype=np.float64)
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    onehot = np.zeros((n, K))
    onehot[np.arange(n), y] = w
    class_weight = onehot.sum(axis=0)
    centroids = np.asarray(Psi.T @ onehot).T / class_weight[:, None]
    m = len(tau)
    # rows only over the labels that keep z_j = 0 exactly on the pinned features
    forbidden = forbidden_labels(Psi, y, K, tau, embedding, zero_tol)
    best_rows = partial(_best_rows, loss=loss, forbidden=forbidden)
    seeded = None
    if seed is not None:
        seed = _allowed_rows(seed, forbidden)
        seeded = _priced(centroids, Psi, *seed, tau, lam, zero_tol, embedding)
        if seeded.bound >= upper - (tol if enough is None else enough):
            return seeded
    # the dual LP: a row per feature (tau - lambda <= z + tau <= tau + lambda) and sum a = 1;
    # a column per MRC row, added as generated, re-solved warm by the primal simplex
    lp = HighsLP(tol=1e-10)
    lp.add_rows(np.r_[tau - lam, 1.0], np.r_[tau + lam, 1.0], np.zeros(m + 1, dtype=np.int32),
                np.empty(0, dtype=np.int32), np.empty(0))
    gain, Q_best, value_best = best_rows(V)
    sample = np.argsort(-gain, kind="stable")[:_ROWS_PER_ROUND]
    Q, values = Q_best[sample], value_best[sample]
    _add_dual_columns(lp, centroids, np.eye(K), np.zeros(K), B)
    # a large seed enters as one column, its rows mixed by its weights (a column per row
    # makes the LP's construction alone cost seconds on many features); a small one row by
    # row, which the LP may weigh anew (as one column it can make the pricing take far
    # longer)
    n_seed = int(seed is not None and len(seed[0]) * m > _SEED_ENTRIES)
    if n_seed:
        _add_seed_column(lp, centroids, Psi, seed, B)
    elif seed is not None:
        sample = np.r_[sample, seed[0]]
        Q, values = np.vstack([Q, seed[1]]), np.r_[values, seed[2]]
    _add_dual_columns(lp, Psi[sample], Q, values, B)
    # the class-average rows alone, by the class proportions (z = 0): the point if no solve
    # completes; later, a solve cut off keeps the previous round's point (zero on new rows)
    a = np.r_[class_weight, np.zeros(n_seed + len(sample))]
    for round_ in range(1, _MAX_ROUNDS + 1):
        res = lp.solve("primal", None if deadline is None else deadline - time.perf_counter())
        if not res.optimal:
            a = np.r_[a, np.zeros(K + n_seed + len(sample) - len(a))]
            break
        a = np.maximum(res.x, 0.0)
        if round_ == _MAX_ROUNDS or (deadline is not None and time.perf_counter() > deadline):
            break
        eta = res.row_dual[:m]
        gain, Q_best, value_best = best_rows(np.asarray(Psi @ eta.reshape(B.shape[1], d).T) @ B.T)
        new = np.flatnonzero(gain + res.row_dual[m] > tol)
        if not len(new):
            break
        new = new[np.argsort(-gain[new], kind="stable")][:_ROWS_PER_ROUND]
        sample = np.r_[sample, new]
        Q, values = np.vstack([Q, Q_best[new]]), np.r_[values, value_best[new]]
        _add_dual_columns(lp, Psi[new], Q_best[new], value_best[new], B)
    class_alpha, alpha = a[:K], a[K + n_seed:]
    if n_seed:  # the seed's column spread over its rows again
        s_sample, s_Q, s_values, s_alpha, s_class = seed
        total = s_alpha.sum() + s_class.sum()
        class_alpha = class_alpha + a[K] * s_class / total
        sample, Q = np.r_[s_sample, sample], np.vstack([s_Q, Q])
        values, alpha = np.r_[s_values, values], np.r_[a[K] * s_alpha / total, alpha]
    if loss == "log":
        P = np.zeros((n, K))
        np.add.at(P, sample, alpha[:, None] * Q)
        sample = np.flatnonzero(P.sum(axis=1) > 0.0)
        alpha = P[sample].sum(axis=1)
        Q = P[sample] / alpha[:, None]
        values = _entropy(Q)
    else:
        used = alpha > 0.0
        sample, Q, values, alpha = sample[used], Q[used], values[used], alpha[used]
    point = _priced(centroids, Psi, sample, Q, values, alpha, class_alpha, tau, lam, zero_tol,
                    embedding)
    # (a deadline that cuts the LP short keeps the class-average rows' point: the seed's may
    # prove more)
    return seeded if seeded is not None and seeded.bound > point.bound else point


def _priced(centroids, Psi, sample, Q, values, alpha, class_alpha, tau, lam, zero_tol,
            embedding) -> DualPoint:
    """The :class:`DualPoint` of the weights ``alpha`` on the rows ``(sample, Q, values)`` and
    ``class_alpha`` on the class-average rows, its bound priced over every feature."""
    K = len(class_alpha)
    bound, _ = mixture_lower_bound(_stack(centroids, Psi[sample]), np.vstack([np.eye(K), Q]),
                                   np.r_[np.zeros(K), values], np.r_[class_alpha, alpha], tau,
                                   lam, zero_tol, embedding)
    return DualPoint(sample, Q, alpha, class_alpha, float(bound))


def _best_rows(S, loss: str, forbidden=None):
    """Per sample, the largest ``q^T s + value`` over its rows, and that row's ``q`` and
    value: the 0-1 loss's subsets (the ``k`` largest scores, the best ``k``), or the log
    loss's distributions (the softmax); over the labels not ``forbidden`` (a sample's own
    label never is, :func:`forbidden_labels`)."""
    if forbidden is not None:
        S = np.where(forbidden, -np.inf, S)
    if loss == "log":
        Q = softmax(S, axis=1)
        return logsumexp(S, axis=1), Q, _entropy(Q)
    n, K = S.shape
    order = np.argsort(-S, axis=1, kind="stable")
    top = np.cumsum(np.take_along_axis(S, order, axis=1), axis=1)
    g = (top - 1.0) / np.arange(1, K + 1) + 1.0
    size = np.argmax(g, axis=1) + 1
    masks = np.argsort(order, axis=1) < size[:, None]
    return g[np.arange(n), size - 1], masks / size[:, None], 1.0 - 1.0 / size


def _allowed_rows(seed, forbidden):
    """The dual point ``seed`` (``(sample, Q, values, alpha, class_alpha)``) without its rows
    that weigh a ``forbidden`` label (:func:`forbidden_labels`)."""
    if forbidden is None:
        return seed
    sample, Q, values, alpha, class_alpha = seed
    keep = ~np.any((Q > 0.0) & forbidden[sample], axis=1)
    if keep.all():
        return seed
    return sample[keep], Q[keep], values[keep], alpha[keep], class_alpha


def _stack(centroids, rows):
    if sp.issparse(rows):
        return sp.vstack([sp.csr_matrix(centroids), rows], format="csr")
    return np.vstack([centroids, rows])


def _entropy(Q):
    return -np.sum(Q * np.log(np.where(Q > 0.0, Q, 1.0)), axis=1)


def _add_seed_column(lp, centroids, Psi, seed, B) -> None:
    """One column of the dual LP for the dual point ``seed`` (``(sample, Q, values, alpha,
    class_alpha)``), its weights normalized: the mixture of its rows' columns."""
    sample, Q, values, alpha, class_alpha = seed
    total = alpha.sum() + class_alpha.sum()
    E = (Q @ B) * (alpha / total)[:, None]
    z = np.asarray(Psi[sample].T @ E).T + (B * (class_alpha / total)[:, None]).T @ centroids
    col = np.r_[z.ravel(), 1.0]
    rows = np.flatnonzero(col)
    lp.add_cols(np.array([-float(values @ alpha) / total]), np.zeros(1), np.full(1, np.inf),
                np.zeros(1, dtype=np.int32), rows.astype(np.int32), col[rows])


def _add_dual_columns(lp, U, Q, values, B) -> None:
    """Columns of the rows ``(U[r], Q[r], values[r])`` in the dual LP: cost ``-values[r]``,
    the features ``(Q[r] B) (x) U[r]`` (layout ``k * d + l``) and a 1 in the row of ``sum a``."""
    E = Q @ B
    U = sp.csr_matrix(U)
    G = sp.vstack([sp.csr_matrix(U.multiply(E[:, [k]]).T) for k in range(E.shape[1])]
                  + [sp.csr_matrix(np.ones((1, len(values))))], format="csc")
    G.sort_indices()
    lp.add_cols(-np.asarray(values, dtype=np.float64), np.zeros(len(values)),
                np.full(len(values), np.inf), G.indptr[:-1], G.indices, G.data)
