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

Solvers: exactclf's interior-point method on the Lasso dual followed by the HiGHS simplex
move to a sparse vertex of the optimal face (``solver="ipm"``, the default; timed as a whole,
with the interior-point part alone in the settings column), scikit-learn's ``LassoLars``
(LARS), scikit-learn's ``Lasso`` (cyclic coordinate descent, Cython), skglm's ``AndersonCD``
(working sets + Anderson extrapolation, numba; its one-off JIT compilation is timed
separately and excluded).

    python benchmarks/threshold_solvers.py [--n 1000] [--patterns 5000] [--d 10]
        [--betas 1e-3 1] [--rel-gap 1e-6] [--budget 120] [--lars-steps 5000]
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
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    D, y = design(args.n, args.d, args.patterns)
    loss0 = 0.5 * float(y @ y)
    bmax = float(np.abs(D.T @ y).max())
    print(f"design: n={D.shape[0]}, P={D.shape[1]} binary patterns (d={args.d}, "
          f"rank {np.linalg.matrix_rank(D)}), beta_max={bmax:.4g}; target gap "
          f"{args.rel_gap:g} * loss(0) = {args.rel_gap * loss0:.3g}; budget {args.budget:g} s")
    solvers = {"sklearn-CD": _solve_sklearn}
    if skglm_available():
        t0 = time.perf_counter()
        _solve_skglm(D[:50, :60], y[:50], 1.0, "squared", np.ones(50), 1e-6, 100, None)
        print(f"skglm JIT compilation (once per process): {time.perf_counter() - t0:.1f} s")
        solvers["skglm"] = _solve_skglm
    print(f"{'beta':>8s} {'solver':12s} {'seconds':>9s} {'gap':>10s} {'rel gap':>9s} "
          f"{'met':>4s} {'objective':>12s}  settings")
    for beta in args.betas:
        target = args.rel_gap * loss0
        t0 = time.perf_counter()
        w, it, reliable = _solve_lars(D, y, beta, np.ones(len(y)), args.lars_steps)
        dt = time.perf_counter() - t0
        p, gap = duality_gap(D, y, w, beta, "squared", np.ones(len(y)))
        rows = [("LARS", dt, gap, p, f"{it} steps, {np.count_nonzero(w)} non-zero"
                 f"{'' if reliable else ', LARS warned of a breakdown'}")]
        s = np.ones(len(y))
        t0 = time.perf_counter()
        _solve_ipm(D, y, beta, s, 1e-2 * target, 200)
        t_ipm = time.perf_counter() - t0
        t0 = time.perf_counter()
        w, it, p, gap, _ = solve_lasso(D, y, beta, "squared", "ipm", s, tol=args.rel_gap)
        rows.insert(0, ("IPM+vertex", time.perf_counter() - t0, gap, p,
                        f"{it} IPM iterations ({t_ipm:.1f} s), {np.count_nonzero(w)} non-zero"))
        for name, run in solvers.items():
            rows.append((name, *time_to_gap(run, D, y, beta, target, args.budget)))
        for name, dt, gap, p, note in rows:
            met = "yes" if gap <= target else "NO"
            print(f"{beta:8g} {name:12s} {dt:9.2f} {gap:10.3g} {gap / loss0:9.2g} {met:>4s} "
                  f"{p:12.6g}  {note}", flush=True)


if __name__ == "__main__":
    main()
