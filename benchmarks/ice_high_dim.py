"""Exact 0-1 linear classification at D = 5..8, and lower bounds on data beyond a proof.

Part 1 (instances with N <= 150, D = 5..8): the minimum-IIS-cover solver
(``exactclf._zero_one._iis.solve_iis_cover``), the enumeration (``solve_min01``, the exact
search of ICEClassifier, started from its surrogate incumbent) and the big-M MILP on HiGHS
(``bigm_milp``: the formulation a user would otherwise pick; not exact in general), side by
side in one run: seconds, errors, and whether optimality was proven.

Part 2 (500-1000 points, D = 3..5, plus Haberman): proven lower bounds after a budget of
5 s and 30 s (``exactclf._zero_one._bounds.lower_bound``: IIS packing / cover LP / cover MIP and
partition bounds, given the surrogates' labeling, whose errors half of the partitions are
grown around, with their blocks searched on ``--n-jobs`` workers), against the best
labeling known (the IIS solver's incumbent after the same budget, the surrogates).
``gap = (best - bound) / best``.

    python benchmarks/ice_high_dim.py [--cap 120] [--budgets 5 30] [--part 1 2] [--n-jobs -1]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from exactclf._base import merge_duplicates
from exactclf._geometry import affine_frame
from exactclf._zero_one._bounds import lower_bound
from exactclf._zero_one._iis import solve_iis_cover
from exactclf._zero_one._incumbent import best_incumbent
from exactclf._zero_one._milp import bigm_milp
from exactclf._zero_one._min01 import labeling_errors, solve_min01
from exactclf.datasets import load_dataset


def synthetic(n: int, d: int, noise: float, seed: int, n_flip: int | None = None):
    """Gaussian points labeled by a random hyperplane, a fraction ``noise`` (or exactly
    ``n_flip``) of the labels flipped."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X @ rng.normal(size=d) + 0.3 * rng.normal() > 0
    k = n_flip if n_flip is not None else int(round(noise * n))
    flip = rng.choice(n, size=k, replace=False)
    y[flip] = ~y[flip]
    return X, y


def real(name: str, n: int | None = None, seed: int = 0):
    X, y = load_dataset(name, return_X_y=True)
    if n is not None and n < len(X):
        idx = np.random.default_rng(seed).choice(len(X), size=n, replace=False)
        X, y = X[idx], y[idx]
    return X, y.astype(bool)


def merged(X, y):
    U, wpos, wneg, _ = merge_duplicates(np.asarray(X, float), np.asarray(y, bool),
                                        np.ones(len(y)))
    return U, wpos, wneg


def timed(f, *args, **kw):
    t0 = time.perf_counter()
    out = f(*args, **kw)
    return out, time.perf_counter() - t0


def part1(cap: float) -> None:
    instances = {
        "Cryotherapy 90x6": real("cryotherapy"),
        "Caesarian 80x5": real("caesarian"),
        "synthetic 90x6 10% noise": synthetic(90, 6, 0.10, seed=1),
        "synthetic 120x7 7% noise": synthetic(120, 7, 0.07, seed=2),
        "synthetic 80x8 8% noise": synthetic(80, 8, 0.08, seed=3),
        "synthetic 130x5 1 error": synthetic(130, 5, 0.0, seed=4, n_flip=1),
    }
    print(f"Part 1: exact solvers, cap {cap:g} s each (errors / seconds / proven)")
    head = (f"{'data':<26} {'unique':>6} | {'IIS cover':>22} | {'enumeration (ICE)':>22} | "
            f"{'big-M MILP':>22} | {'MILP/IIS':>8}")
    print(head)
    print("-" * len(head))
    for name, (X, y) in instances.items():
        U, wpos, wneg = merged(X, y)
        Z = affine_frame(U).transform(U)
        iis, t_iis = timed(solve_iis_cover, U, wpos, wneg, time_limit=cap)
        inc = best_incumbent(Z, wpos, wneg)[0]  # (positive, errors, ...)
        ice, t_ice = timed(solve_min01, U, wpos, wneg, incumbent=inc, time_limit=cap)
        milp, t_milp = timed(bigm_milp, Z, wpos, wneg, time_limit=cap)
        milp_err = labeling_errors(Z @ milp.coef + milp.intercept > 0, wpos, wneg)

        def cell(value, seconds, proven):
            return f"{value:>6g} {seconds:>8.2f}s {'yes' if proven else 'no':>5}"

        print(f"{name:<26} {len(U):>6} | {cell(iis.value, t_iis, iis.complete)} | "
              f"{cell(ice.value, t_ice, ice.complete)} | "
              f"{cell(milp_err, t_milp, milp.optimal)} | {t_milp / t_iis:>8.2f}", flush=True)


def part2(budgets: list[float], n_jobs: int) -> None:
    instances = {
        "Haberman 306x3 (opt 66)": real("haberman"),
        "Sepsis 975x3": real("sepsis"),
        "Blood transfusion 502x4": real("bloodtransfer"),
        "synthetic 1000x3 15% noise": synthetic(1000, 3, 0.15, seed=5),
        "synthetic 800x4 10% noise": synthetic(800, 4, 0.10, seed=6),
        "synthetic 600x5 10% noise": synthetic(600, 5, 0.10, seed=7),
    }
    print()
    print("Part 2: proven lower bounds after a budget (best = best labeling known)")
    head = f"{'data':<28} {'unique':>6} {'budget':>7} {'bound':>7} {'best':>6} {'gap':>6}  method"
    print(head)
    print("-" * (len(head) + 20))
    for name, (X, y) in instances.items():
        U, wpos, wneg = merged(X, y)
        Z = affine_frame(U).transform(U)
        positive, surrogate = best_incumbent(Z, wpos, wneg)[:2]
        for budget in budgets:
            lb, t_lb = timed(lower_bound, U, wpos, wneg, time_limit=budget,
                             incumbent=positive, n_jobs=n_jobs)
            ub = solve_iis_cover(U, wpos, wneg, time_limit=budget)
            best = min(surrogate, ub.value)
            gap = (best - lb.value) / best if best > 0 else 0.0
            print(f"{name:<28} {len(U):>6} {budget:>6g}s {lb.value:>7g} {best:>6g} "
                  f"{100 * gap:>5.1f}%  {lb.method} ({t_lb:.1f}s)", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cap", type=float, default=120.0)
    parser.add_argument("--budgets", type=float, nargs="+", default=[5.0, 30.0])
    parser.add_argument("--part", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--n-jobs", type=int, default=-1,
                        help="workers of the partition bounds' blocks (part 2)")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if 1 in args.part:
        part1(args.cap)
    if 2 in args.part:
        part2(args.budgets, args.n_jobs)
