"""Constraint and column generation for the 0-1 minimax risk classifier (MRC) LP.

The math (everything below is re-derived here; notation of the design document):

* Features ``Phi(x, y) = e_y (x) psi(x)`` of dimension ``m = K d``; ``tau`` is the mean of
  ``Phi(x_i, y_i)`` over the training samples and ``lambda = s std(Phi(x_i, y_i)) / sqrt(n)``
  (population standard deviation, coordinate-wise). The uncertainty set ``U`` holds the
  distributions whose feature expectation lies within ``tau +- lambda``; it contains the
  empirical distribution.
* For a parameter ``mu`` (viewed as a ``K x d`` matrix, ``v_y(x) = psi(x)^T mu_y``) let
  ``nu(mu) = max_i max_{C != {}} (sum_{y in C} v_y(x_i) - 1) / |C| + 1``. The worst-case 0-1 risk
  over ``U`` of the rule below is at most ``R(mu) = -tau^T mu + lambda^T |mu| + nu(mu)``, and the
  MRC is ``mu* = argmin R``. With ``mu = mu1 - mu2`` this is the LP

      min  -(tau - lambda)^T mu1 + (tau + lambda)^T mu2 + nu
      s.t. F_(i,C) (mu1 - mu2) - nu <= 1/|C| - 1   for every sample i and subset C,
           mu1, mu2 >= 0,

  ``F_(i,C) = sum_{y in C} Phi(x_i, y)^T / |C|``, with ``n (2^K - 1)`` rows.
* The inner maximum over subsets is exact and cheap: for a fixed size k the best C holds the k
  largest ``v_y``, so sorting ``v`` once and scanning the prefix sums finds the most violated
  subset of every sample in ``O(K log K)``.
* Rule: ``h(y|x) = (v_y(x) - nu + 1)_+ / c_x`` with ``c_x`` the sum over ``y`` (uniform when
  ``c_x = 0``). On every training input ``c_x <= 1`` by definition of ``nu``, so
  ``h(y|x) >= v_y(x) - nu + 1`` and for every ``p`` in ``U`` *supported on the training
  inputs*: ``E_p[1 - h(y|x)] <= nu - E_p Phi^T mu <= R(mu)``. (At other inputs ``c_x`` may
  exceed 1 and the bound does not follow.) The empirical distribution is such a ``p``, hence
  the *expected training 0-1 error of the randomized rule* ``predict_proba`` is at most
  ``R(mu)``. The deterministic rule ``predict`` (an argmax of ``v``, hence of ``h``) errs
  only where ``h(y|x) <= 1/2`` for the true ``y``, so its expected 0-1 error under the same
  ``p`` is at most twice the randomized rule's: at most ``2 R(mu)``, not ``R(mu)``.
* Lower bound: for any weights ``alpha >= 0`` on rows, summing to 1, ``R(mu) >=
  D(alpha) + sum_j (z_j mu_j + lambda_j |mu_j|)`` with ``D(alpha) = sum alpha_r (1 - 1/|C_r|)``
  and ``z = F^T alpha - tau``; so ``R* >= D(alpha)`` when ``|z| <= lambda``, and mixing in
  the empirical distribution (``z = 0``, ``D = 0``) repairs any violation at a proportional
  cost (:func:`~._bounds.dual_lower_bound`). The restricted LP's row duals, priced over *every*
  feature, give a rigorous bound however the generation stopped.

Algorithm: one persistent LP -- the LP above restricted to the generated constraints (rows)
and the active features (columns ``mu1_j, mu2_j``, plus ``nu``) -- starts with one implied
constraint per class (the average of that class's singleton rows, which keeps every restricted
LP bounded: the class proportions are a feasible dual) and with all features (or, when there
are more than ``m_max``, the ``m_max`` with the largest class-mean deviation). Each iteration
re-solves it warm from the previous basis with the dual simplex, evaluates the most violated
subset of *every* training sample, adds the ``n_max`` most violated constraints (violation >
``eps1``) and, with column generation, the ``m_max`` features whose dual constraint
``|F^T alpha - tau| <= lambda`` is violated by more than ``eps2`` (``alpha``: the negated row
duals). Rows whose slack has stayed basic for ``_DROP_AFTER`` solves are deleted, but only
after the LP value has risen since the previous deletion (so no cycling), and may be generated
again later. Every iterate is certified both ways: ``upper_ = min R(mu)``, evaluated exactly
over all samples and subsets, and ``lower_ = max D``, the dual bound above over all features.
When no row is violated by more than ``eps1`` and no feature by more than ``eps2``, but the
bound is still more than ``eps1`` below ``upper_`` (features violated by less than ``eps2``
cost the bound ``D`` in proportion to their violation), every violated feature is added and
the generation goes on; so on convergence ``R* in [lower_, upper_]`` and ``upper_ - lower_
<= eps1`` (up to the LP solver's tolerance).

Box step: the restricted LP of the first iterations, cut by few rows, puts ``mu`` far from
the optimum (``R(mu)`` of 4-7 where ``R*`` is 0.73, on make_classification with 5 classes),
and the rows generated there are mostly deleted again. So every solve keeps ``mu`` in a box
around the best iterate so far (``mu1_j <= max(c_j, 0) + r_j``, ``mu2_j <= max(-c_j, 0) +
r_j``: column bounds, which the dual simplex re-solves warm), with ``r_j`` the radius over
feature ``j``'s largest ``|Phi_j|``, so that a step moves any score by at most the radius
per feature. The box binds where a column sits at its bound with a negative reduced cost
(lifting the bound would lower the LP value; at a zero reduced cost, on a flat optimal face,
it would not). The radius doubles after every solve at which the box binds, the generation
never ends while it binds (an LP point where no bound binds is the restricted LP's optimum,
as without the box), and after 30 doublings the box is dropped. The certificates do not
depend on it: ``upper_`` is ``R(mu)`` evaluated exactly, and the dual bound uses the row
duals only (the box's duals show up as dual infeasible features, which the mixing
repairs). Measured in ``benchmarks/results/mrc_vs_baselines.txt`` with ``n_max=200``:
make_classification, 5 classes, about twice as fast; the Fourier datasets 10-40 % faster.

Why this form (measured on ai4i, 10000 samples, 400 random Fourier features, so dense rows):
the LP dual of the above (generated constraints as columns, features as rows: a smaller basis)
needed 5000-18000 primal-simplex pivots per warm re-solve and over 1200 s per fit; in this
form each re-solve takes a few hundred to two thousand dual-simplex pivots. Deleting inactive
rows keeps every pivot cheap (the LP stays near a thousand rows instead of growing by
``n_max`` per iteration). After new feature columns, HiGHS' dual simplex (which repairs the
few dual infeasibilities) re-solves in tens to hundreds of pivots where its primal simplex took
thousands of degenerate ones. Cuts found at the midpoint of the LP point and the best iterate
(in-out stabilization) cost more iterations than they saved in this form.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .._backend import REFERENCE, Backend
from ._bounds import dual_lower_bound, minimax_risk
from ._lp import make_lp
from ._rows import lp_columns, lp_costs, lp_rows, stack_rows

__all__ = ["mrc_ccg", "CCGResult"]

#: a row whose slack has been basic in this many consecutive solves is deleted
_DROP_AFTER = 3
#: box step: every LP solve keeps mu within this radius of the best iterate, in units of
#: score (feature j moves by at most radius / max_i |Phi_j(x_i)|); the radius grows by
#: _BOX_GROWTH after every solve at which the box binds, and after _BOX_GROWTHS growths the
#: box is dropped (radii near the float64 range would make the LP meaningless)
_BOX_RADIUS = 0.1
_BOX_GROWTH = 2.0
_BOX_GROWTHS = 30


@dataclass
class CCGResult:
    """Outcome of :func:`mrc_ccg` (in the coordinates of the ``Psi`` it was given)."""

    mu: np.ndarray
    upper: float
    nu: float
    lower: float
    n_iter: int
    converged: bool
    R_history: list = field(default_factory=list)
    lower_history: list = field(default_factory=list)
    n_constraints: int = 0
    n_lp_rows: int = 0
    active_features: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    lp_solver: str = "highs"
    max_violation: float = 0.0
    stop_reason: str | None = None


def mrc_ccg(
    Psi,
    y: np.ndarray,
    n_classes: int,
    tau: np.ndarray,
    lam: np.ndarray,
    *,
    sample_weight: np.ndarray | None = None,
    embedding: np.ndarray | None = None,
    eps1: float = 1e-4,
    eps2: float = 1e-5,
    n_max: int = 200,
    m_max: int = 400,
    max_iter: int = 500,
    lp_solver: str = "highs",
    tol: float = 1e-6,
    time_limit: float | None = None,
    backend: Backend = REFERENCE,
    verbose: int = 0,
) -> CCGResult:
    """Solve the 0-1 MRC LP by constraint (and column) generation over all ``n`` samples.

    The persistent LP is the MRC LP restricted to the generated constraints (its rows) and the
    active features (its columns ``nu, mu1_j, mu2_j``), re-solved from the previous basis by
    the dual simplex: new rows keep that basis dual feasible, and after new feature columns the
    dual simplex repairs their few dual infeasibilities faster than the primal simplex. Rows
    whose slack has stayed basic for ``_DROP_AFTER`` solves are deleted (the current solution
    stays optimal, so the LP value does not drop) whenever the LP value has risen since the
    last deletion, which keeps the LP small without allowing cycles. ``alpha``, the negated row
    duals, prices every feature: it gives :func:`~._bounds.dual_lower_bound` and the features
    to add.

    ``time_limit`` and ``KeyboardInterrupt`` (Ctrl-C) stop the generation; the result is then
    the best certified iterate so far (``mu = 0``, the uniform rule, before the first LP
    solve), with the best lower bound so far and ``stop_reason`` saying why.

    Parameters
    ----------
    Psi : ndarray or scipy.sparse matrix of shape (n_samples, d)
        ``psi(x_i)`` of every training sample (intercept column included, if any).
    y : ndarray of shape (n_samples,)
        Class indices in ``range(n_classes)``; every class must occur.
    n_classes : int
    tau, lam : ndarray of shape (q * d,)
        From :func:`~exactclf.mrc._statistics.mrc_statistics` (same ``sample_weight`` and
        ``embedding``).
    sample_weight : ndarray of shape (n_samples,) or None
        Positive weights (the class-average rows that start the LP are weighted means); None:
        all 1.
    embedding : ndarray of shape (n_classes, q) or None
        ``Phi(x, y) = embedding[y] (x) psi(x)``; None is the one-hot ``e_y`` (``q = K``).
    eps1, eps2, n_max, m_max, max_iter, lp_solver, tol, time_limit, verbose
        See :class:`~exactclf.mrc.MRCCCG`.
    backend : Backend
        Where the scores and most violated subsets of all samples are computed.

    Returns
    -------
    CCGResult
        ``mu`` is the iterate with the smallest certified ``R(mu)`` (``upper``); ``lower`` is
        the largest :func:`~._bounds.dual_lower_bound` of the iterates, a lower bound on ``R*``
        however the generation stopped (``lower_history`` holds that bound per iterate).

    Examples
    --------
    >>> import numpy as np
    >>> from exactclf.mrc import mrc_full_lp, mrc_statistics
    >>> Psi = np.c_[np.ones(6), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]]
    >>> y = np.array([0, 0, 1, 0, 1, 1])
    >>> tau, lam = mrc_statistics(Psi, y, 2, 0.3)
    >>> res = mrc_ccg(Psi, y, 2, tau, lam, eps1=1e-9, tol=1e-9)
    >>> full = mrc_full_lp(Psi, y, 2, tau, lam, tol=1e-9)
    >>> res.converged, abs(res.upper - full.objective) < 1e-7
    (True, True)
    """
    t_start = time.perf_counter()
    n, d = Psi.shape
    K = n_classes
    B = np.eye(K) if embedding is None else np.asarray(embedding, dtype=np.float64)
    m = B.shape[1] * d
    sparse = sp.issparse(Psi)
    if sparse:
        Psi = sp.csr_matrix(Psi)
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    # scores on the device: a sparse Psi stays on the CPU (the product is dense and small)
    Psi_dev = Psi if sparse else backend.xp.asarray(Psi)
    class_weight = np.bincount(y, weights=w, minlength=K)

    # initial features: all, or the m_max with the largest class-mean deviation
    if m > m_max:
        mean_psi = np.asarray(Psi.T @ w).ravel() / w.sum()
        dev = np.abs(tau - np.outer(class_weight / w.sum() @ B, mean_psi).ravel())
        score = np.where(lam > 0, dev / np.where(lam > 0, lam, 1.0), np.where(dev > 0, np.inf, 0))
        active = np.sort(np.argsort(-score, kind="stable")[:m_max])
    else:
        active = np.arange(m)
    is_active = np.zeros(m, dtype=bool)
    is_active[active] = True

    # the largest |psi_j| of every column: the box step's unit (below) and the rounding scale
    col_top = (np.asarray(abs(Psi).max(axis=0).todense()).ravel() if sparse
               else np.abs(Psi).max(axis=0))
    # z of a coordinate with lambda = 0 is a weighted mean of psi values: in exact arithmetic 0
    # at a dual optimum, in floating point a rounding error far below this
    zero_tol = 1e-12 * max(float(col_top.max()), 1e-300)

    lp = make_lp(lp_solver, tol=tol, verbose=verbose)
    # column 0: nu (free); columns 1 + 2p, 2 + 2p: mu1, mu2 of feature active[p]
    lp.add_cols(np.r_[1.0, lp_costs(tau, lam, active)], np.r_[-np.inf, np.zeros(2 * len(active))],
                np.full(1 + 2 * len(active), np.inf))

    # the box step (module docstring): a feature's unit is its largest |Phi_j|
    unit = np.kron(np.abs(B).max(axis=0), col_top)
    unit = np.where(unit > 0.0, unit, 1.0)
    radius = _BOX_RADIUS
    growths = 0
    center = np.zeros(m)

    def set_box():
        """Bound mu1, mu2 of the active features to the box around ``center`` (no bound
        once the box is dropped); returns the columns and their upper bounds."""
        cols = np.arange(1, 1 + 2 * len(active))
        ub = np.full(2 * len(active), np.inf)
        if radius is not None:
            r = radius / unit[active]
            c = center[active]
            ub[0::2] = np.maximum(c, 0.0) + r
            ub[1::2] = np.maximum(-c, 0.0) + r
        lp.set_col_bounds(cols, np.zeros(len(cols)), ub)
        return cols, ub

    # the LP's rows: psi-vectors, subset masks, (sample, subset) keys, solves with a basic slack
    U_rows = sp.csr_matrix((0, d)) if sparse else np.zeros((0, d))
    M_rows = np.zeros((0, K), dtype=bool)
    keys: list = []
    age = np.zeros(0, dtype=np.int64)
    seen: set = set()  # keys of the rows in the LP

    def add_constraints(U, masks, new_keys):
        nonlocal U_rows, M_rows, age
        upper, starts, idx, val = lp_rows(U, masks, active, d, B)
        lp.add_rows(np.full(U.shape[0], -np.inf), upper, starts, idx, val)
        U_rows = stack_rows(U_rows, U)
        M_rows = np.vstack([M_rows, masks])
        keys.extend(new_keys)
        age = np.r_[age, np.zeros(U.shape[0], dtype=np.int64)]

    best = None
    R_hist, L_hist = [], []
    converged = False
    stop_reason = "max_iter"
    n_generated = 0
    max_viol = np.inf
    lower = 0.0  # R* >= 0: the empirical distribution is a feasible dual point
    try:
        # initial constraints: per class, the (weighted) average of its singleton rows;
        # implied by the MRC LP, and with the class proportions as alpha the dual is feasible:
        # bounded from the start. They are never deleted (key None).
        onehot = np.zeros((n, K))
        onehot[np.arange(n), y] = w
        centroids = np.asarray(Psi.T @ onehot).T / class_weight[:, None]
        add_constraints(centroids, np.eye(K, dtype=bool), [None] * K)
        n_generated = K
        drop_level = -np.inf
        for it in range(1, max_iter + 1):
            remaining = None
            if time_limit is not None:
                remaining = time_limit - (time.perf_counter() - t_start)
                if remaining <= 0.0:
                    stop_reason = "time_limit"
                    break
            box_cols, box_ub = set_box()
            res = lp.solve("dual", time_limit=remaining)
            if res.time_limit_reached:
                stop_reason = "time_limit"
                break
            if not res.optimal:
                raise RuntimeError(
                    f"the restricted MRC LP was not solved to optimality by {lp.name} "
                    f"(status: {res.status}) at iteration {it}; try lp_solver='highs' or "
                    "another tol"
                )
            mu = np.zeros(m)
            mu[active] = res.x[1::2] - res.x[2::2]
            nu_lp = res.x[0]
            ev = minimax_risk(Psi_dev, mu, tau, lam, K, backend, B)
            if best is None or ev.R < best[0]:
                best = (ev.R, mu.copy(), ev.nu)
            R_hist.append(ev.R)
            # the box binds where a column sits at its bound with a negative reduced cost
            # (at zero, e.g. on a flat optimal face, lifting the bound gains nothing)
            at_bound = res.x[box_cols] >= box_ub * (1.0 - 1e-9)
            binds = radius is not None and bool(np.any(at_bound & (res.col_dual[box_cols]
                                                                   < -tol)))
            if binds:
                growths += 1
                radius = radius * _BOX_GROWTH if growths < _BOX_GROWTHS else None
            center = best[1]

            # constraints: the n_max most violated samples (ties: lowest index), each with
            # the subset of its size[i] largest scores
            viol = ev.g - nu_lp
            max_viol = float(viol.max())
            cand = np.flatnonzero(viol > eps1)
            cand = cand[np.argsort(-viol[cand], kind="stable")]
            new_idx, new_M, new_keys = [], [], []
            for start in range(0, len(cand), n_max):
                block = cand[start:start + n_max]
                Vb = backend.asnumpy(ev.V[backend.xp.asarray(block)])
                rank = np.argsort(np.argsort(-Vb, axis=1, kind="stable"), axis=1)
                masks = rank < ev.size[block][:, None]
                for i, mask in zip(block, masks, strict=True):
                    key = (int(i), mask.tobytes())
                    if key in seen:
                        continue
                    seen.add(key)
                    new_idx.append(i)
                    new_M.append(mask)
                    new_keys.append(key)
                    if len(new_idx) == n_max:
                        break
                if len(new_idx) == n_max:
                    break

            # every feature is priced: a rigorous bound on R* from the row duals, and the
            # features whose dual constraint |F^T alpha - tau| <= lambda is violated by > eps2
            bound, excess = dual_lower_bound(U_rows, M_rows, -res.row_dual, tau, lam, zero_tol,
                                             B)
            lower = max(lower, bound)
            L_hist.append(bound)
            new_feats = np.empty(0, dtype=np.int64)
            if not is_active.all():
                dv = np.where(is_active, -np.inf, excess)
                cand_f = np.flatnonzero(dv > eps2)
                if not new_idx and len(cand_f) == 0 and best[0] - lower > eps1:
                    # generation is done, but features violated by less than eps2 keep the
                    # bound more than eps1 below R(mu): add every violated one
                    cand_f = np.flatnonzero(dv > np.where(lam > 0.0, 0.0, zero_tol))
                new_feats = np.sort(cand_f[np.argsort(-dv[cand_f], kind="stable")][:m_max])

            # delete the rows that have stayed inactive, when the LP value rose since last time
            age = np.where(res.row_basic, age + 1, 0)
            n_deleted = 0
            if new_idx and res.objective > drop_level + 1e-12 * max(1.0, abs(res.objective)):
                drop = np.flatnonzero(age >= _DROP_AFTER)
                drop = drop[drop >= K]  # never the class constraints
                if len(drop):
                    lp.delete_rows(drop)
                    keep = np.ones(len(age), dtype=bool)
                    keep[drop] = False
                    for j in drop:
                        seen.discard(keys[j])
                    keys[:] = [k for k, kept in zip(keys, keep, strict=True) if kept]
                    U_rows, M_rows, age = U_rows[keep], M_rows[keep], age[keep]
                    drop_level = res.objective
                    n_deleted = len(drop)
            if verbose:
                print(
                    f"[MRCCCG] iter {it:4d}  LP {res.objective:.8f}  R(mu) {ev.R:.8f}  "
                    f"lower {lower:.8f}  max violation {max_viol:.2e}  simplex iterations "
                    f"{res.iterations}  LP rows {lp.n_rows}  features {len(active)}/{m}  "
                    f"+rows {len(new_idx)}  -rows {n_deleted}  +features {len(new_feats)}"
                    + ("  no box" if radius is None
                       else f"  box {radius:g}{' (binds)' if binds else ''}")
                )
            if not new_idx and len(new_feats) == 0:
                if binds:  # the restricted LP's optimum may lie outside the box
                    continue
                converged = True
                stop_reason = None
                break
            if len(new_feats):
                starts, idx, val = lp_columns(U_rows, M_rows, new_feats, d, B)
                lp.add_cols(lp_costs(tau, lam, new_feats), np.zeros(2 * len(new_feats)),
                            np.full(2 * len(new_feats), np.inf), starts, idx, val)
                active = np.concatenate([active, new_feats])
                is_active[new_feats] = True
            if new_idx:
                add_constraints(Psi[np.asarray(new_idx)], np.asarray(new_M), new_keys)
                n_generated += len(new_idx)
    except KeyboardInterrupt:
        stop_reason = "interrupted"

    if best is None:  # stopped before the first LP solution: the uniform rule mu = 0
        mu = np.zeros(m)
        ev = minimax_risk(Psi_dev, mu, tau, lam, K, backend, B)
        best = (ev.R, mu, ev.nu)
    R, mu, nu = best
    return CCGResult(
        mu=mu, upper=R, nu=nu, lower=float(lower), n_iter=len(R_hist), converged=converged,
        R_history=R_hist, lower_history=L_hist, n_constraints=n_generated,
        n_lp_rows=lp.n_rows, active_features=np.sort(active), lp_solver=lp.name,
        max_violation=max_viol, stop_reason=stop_reason,
    )
