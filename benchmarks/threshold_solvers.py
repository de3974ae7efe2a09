"""Lasso solvers for ThresholdNetLasso on a realistic arrangement design, at equal duality gap.

The design: ``n`` Gaussian points in dimension ``d`` (labels from a random tanh teacher,
``y`` in {-1, +1}), ``P`` sampled hyperplane-arrangement patterns (binary, deduplicated, the
all-ones bias column first), exactly as ``ThresholdNetLasso(arrangements="sample")`` builds
it. The problem: ``min_w 1/2 |D w - y|^2 + beta |w|_1``. Each solver is timed from a cold
start until the duality gap -- computed by exactclf from the returned ``w`` alone, the same
certificate the estimator reports -- is at most ``rel_gap * 1/2 |y|^2``; coordinate-descent
solvers are run with tighter internal tolerances (and a larger iteration budget) until they
get there or the time budget is spent. LARS (the exact homotopy) has no tolerance: its gap is
what it is.

Maintained QP solvers on the same Lasso dual the interior-point method solves,
``min_theta theta^2 / 2 - y . theta`` s.t. ``-beta <= D^T theta <= beta`` (the Lasso's ``w`` is
the difference of the two rows' multipliers): PIQP (dense interior point), Clarabel (conic
interior point, sparse) and OSQP (ADMM, sparse); each is run with tightening tolerances until
exactclf's own duality gap of its ``(w, theta)`` meets the target, like coordinate descent.
``--design bloodtransfer`` uses the degenerate design of the bundled Blood transfusion data
(integer features, ties) instead of the Gaussian one.

Solvers: exactclf's ``solver="ipm"`` (the default: PIQP on the Lasso dual with exactclf's
tolerance loop, followed by the HiGHS simplex move to a sparse vertex of the optimal face;
timed as a whole, with the interior-point part alone in the settings column; until this
version it was a hand-written interior-point method), scikit-learn's ``LassoLars``
(LARS), scikit-learn's ``Lasso`` (cyclic coordinate descent, Cython), skglm's ``AndersonCD``
(working sets + Anderson extrapolation, numba; its one-off JIT compilation is timed
separately and excluded).

    python benchmarks/threshold_solvers.py [--n 1000] [--patterns 5000] [--d 10]
        [--betas 1e-3 1] [--rel-gap 1e-6] [--budget 120] [--lars-steps 5000]
        [--design gaussian|bloodtransfer] [--solvers ...]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from exactclf.threshold._arrangements import sample_patterns
from exactclf.threshold._solvers import (
    _solve_ipm,
    _solve_lars,
    _solve_skglm,
    _solve_sklearn,
    duality_gap,
    skglm_available,
    solve_lasso,
)


def design(n, d, P, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    W1 = rng.standard_normal((d, 10)) / np.sqrt(d)
    y = np.where(np.tanh(X @ W1) @ rng.standard_normal(10) >= 0, 1.0, -1.0)
    Z = (X - X.mean(axis=0)) / np.sqrt(np.mean(np.sum((X - X.mean(axis=0)) ** 2, axis=1)))
    D = sample_patterns(Z, P, rng).patterns.astype(np.float64)
    return D, y


def bloodtransfer_design(P, seed=0):
    from exactclf._geometry import affine_frame
    from exactclf.datasets import load_dataset

    data = load_dataset("bloodtransfer")
    U, inverse = np.unique(data.data, axis=0, return_inverse=True)
    Z = affine_frame(U).transform(U)
    D = sample_patterns(Z, P, np.random.default_rng(seed)).patterns[inverse.ravel()]
    return D.astype(np.float64), np.where(data.target == data.target.max(), 1.0, -1.0)


def _dual_piqp(D, y, beta, eps):
    import piqp

    P = D.shape[1]
    solver = piqp.DenseSolver()
    solver.settings.verbose = False
    solver.settings.eps_abs = solver.settings.eps_rel = eps
    solver.settings.max_iter = 500
    solver.setup(np.asfortranarray(np.eye(len(y))), -y, G=np.asfortranarray(D.T),
                 h_l=np.full(P, -beta), h_u=np.full(P, beta))
    solver.solve()
    r = solver.result
    return np.asarray(r.z_u) - np.asarray(r.z_l), np.asarray(r.x)


def _dual_clarabel(D, y, beta, eps):
    import clarabel
    from scipy import sparse

    P = D.shape[1]
    A = sparse.csc_matrix(np.vstack([D.T, -D.T]))
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = eps
    sol = clarabel.DefaultSolver(sparse.identity(len(y), format="csc"), -y, A,
                                 np.full(2 * P, beta), [clarabel.NonnegativeConeT(2 * P)],
                                 settings).solve()
    z = np.asarray(sol.z)
    return z[:P] - z[P:], np.asarray(sol.x)


def _dual_osqp(D, y, beta, eps):
    import osqp
    from scipy import sparse

    P = D.shape[1]
    prob = osqp.OSQP()
    prob.setup(sparse.identity(len(y), format="csc"), -y, sparse.csc_matrix(D.T),
               np.full(P, -beta), np.full(P, beta), eps_abs=eps, eps_rel=eps,
               max_iter=200000, polishing=True, verbose=False)
    res = prob.solve()
    return np.asarray(res.y), np.asarray(res.x)


DUAL_QP = {"PIQP": _dual_piqp, "Clarabel": _dual_clarabel, "OSQP": _dual_osqp}


def dual_time_to_gap(run, D, y, beta, target, budget):
    """Tightening tolerances until exactclf's gap at ``(w, theta)`` meets ``target``."""
    s = np.ones(len(y))
    spent = 0.0
    for eps in (1e-6, 1e-8, 1e-10, 1e-12):
        t0 = time.perf_counter()
        w, theta = run(D, y, beta, eps)
        dt = time.perf_counter() - t0
        spent += dt
        try:
            p, gap = duality_gap(D, y, w, beta, "squared", s, theta=theta)
        except ValueError:  # a non-finite answer
            p, gap = np.nan, np.inf
        p2, gap2 = duality_gap(D, y, w, beta, "squared", s)
        if gap2 < gap:
            p, gap = p2, gap2
        if gap <= target or spent > budget:
            break
    return dt, gap, p, f"eps={eps:g}, {np.count_nonzero(np.abs(w) > 1e-9)} |w|>1e-9"


def time_to_gap(run, D, y, beta, target, budget):
    """Cold-start runs with tighter tolerances until the gap meets ``target``; returns
    ``(seconds of the successful run, gap, objective, settings)`` or the last failure."""
    s = np.ones(len(y))
    spent = 0.0
    for tol, max_iter in [(1e-4, 1000), (1e-6, 10**4), (1e-8, 10**5), (1e-10, 10**6),
                          (1e-12, 10**7)]:
        t0 = time.perf_counter()
        w, _ = run(D, y, beta, "squared", s, tol, max_iter, None)
        dt = time.perf_counter() - t0
        p, gap = duality_gap(D, y, w, beta, "squared", s)
        spent += dt
        if gap <= target or spent > budget:
            break
    return dt, gap, p, f"tol={tol:g}, max_iter={max_iter}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--patterns", type=int, default=5000)
    parser.add_argument("--betas", type=float, nargs="+", default=[1e-3, 1.0])
    parser.add_argument("--rel-gap", type=float, default=1e-6)
    parser.add_argument("--budget", type=float, default=120.0)
    parser.add_argument("--lars-steps", type=int, default=5000)
    parser.add_argument("--design", choices=["gaussian", "bloodtransfer"], default="gaussian")
    parser.add_argument("--solvers", nargs="+",
                        default=["IPM", "LARS", "sklearn-CD", "skglm", *DUAL_QP])
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.design == "gaussian":
        D, y = design(args.n, args.d, args.patterns)
    else:
        D, y = bloodtransfer_design(args.patterns)
    loss0 = 0.5 * float(y @ y)
    bmax = float(np.abs(D.T @ y).max())
    source = f"d={args.d}" if args.design == "gaussian" else "bloodtransfer"
    print(f"design: n={D.shape[0]}, P={D.shape[1]} binary patterns ({source}, "
          f"rank {np.linalg.matrix_rank(D)}), beta_max={bmax:.4g}; target gap "
          f"{args.rel_gap:g} * loss(0) = {args.rel_gap * loss0:.3g}; budget {args.budget:g} s")
    solvers = {"sklearn-CD": _solve_sklearn} if "sklearn-CD" in args.solvers else {}
    if skglm_available() and "skglm" in args.solvers:
        t0 = time.perf_counter()
        _solve_skglm(D[:50, :60], y[:50], 1.0, "squared", np.ones(50), 1e-6, 100, None)
        print(f"skglm JIT compilation (once per process): {time.perf_counter() - t0:.1f} s")
        solvers["skglm"] = _solve_skglm
    print(f"{'beta':>8s} {'solver':12s} {'seconds':>9s} {'gap':>10s} {'rel gap':>9s} "
          f"{'met':>4s} {'objective':>12s}  settings")
    for beta in args.betas:
        target = args.rel_gap * loss0
        s = np.ones(len(y))
        rows = []
        if "IPM" in args.solvers:
            t0 = time.perf_counter()
            _solve_ipm(D, y, beta, s, 1e-2 * target, 200)
            t_ipm = time.perf_counter() - t0
            t0 = time.perf_counter()
            w, it, p, gap, _ = solve_lasso(D, y, beta, "squared", "ipm", s, tol=args.rel_gap)
            rows.append(("IPM+vertex", time.perf_counter() - t0, gap, p,
                         f"{it} IPM iterations (IPM alone {t_ipm:.2f} s), "
                         f"{np.count_nonzero(w)} non-zero"))
        if "LARS" in args.solvers:
            t0 = time.perf_counter()
            w, it, reliable = _solve_lars(D, y, beta, s, args.lars_steps)
            dt = time.perf_counter() - t0
            p, gap = duality_gap(D, y, w, beta, "squared", s)
            rows.append(("LARS", dt, gap, p, f"{it} steps, {np.count_nonzero(w)} non-zero"
                         f"{'' if reliable else ', LARS warned of a breakdown'}"))
        for name, run in DUAL_QP.items():
            if name in args.solvers:
                rows.append((name, *dual_time_to_gap(run, D, y, beta, target, args.budget)))
        for name, run in solvers.items():
            rows.append((name, *time_to_gap(run, D, y, beta, target, args.budget)))
        for name, dt, gap, p, note in rows:
            met = "yes" if gap <= target else "NO"
            print(f"{beta:8g} {name:12s} {dt:9.2f} {gap:10.3g} {gap / loss0:9.2g} {met:>4s} "
                  f"{p:12.6g}  {note}", flush=True)


if __name__ == "__main__":
    main()
