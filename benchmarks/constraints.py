"""ICEClassifier(max_features=k) versus what a user would otherwise fit for a rule on at most k
features.

For each bundled dataset with D <= 19 features and N <= 4000 samples (the whole set) and each
k of ``--k`` below D, one row: the training errors of

- ICEClassifier(max_features=k, time_limit=T): errors, whether proven, its proven bound, seconds;
- L1-regularized LogisticRegression restricted to k features: on a path of C, every fit with
  1 to k nonzero coefficients, each at the best threshold of its score; the best of them;
- a big-M MILP on HiGHS with a binary indicator per feature and at most k of them on
  (|w_j| <= 1e3 on standardized features, margin 1, time limit T): fast, but not exact (its
  bounded weights cut off thin cells) and its bound is not one on the 0-1 loss;
- the unconstrained ICE optimum (time limit T): what the constraint costs.

Then, where ICE proved its optimum, the ratio of its proof time to the MILP's time.

    python benchmarks/constraints.py [--k 1 2 3] [--time-limit 60] [--datasets haberman ...]
        [--output benchmarks/results/constraints.txt]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.svm import l1_min_c

from exactclf import ICEClassifier
from exactclf._base import merge_duplicates
from exactclf._highs import new_highs
from exactclf.datasets import load_dataset
from exactclf.linear._feature_subsets import best_threshold

DATASETS = ["haberman", "bloodtransfer", "sepsis", "caesarian", "cryotherapy", "voicepath",
            "auction_verification", "rice_cammeo", "diabetic"]
#: the big-M model's weight bound (on standardized features) and margin, as the unconstrained
#: baseline of benchmarks/ice_vs_baselines.py
WEIGHT_BOUND, MARGIN = 1e3, 1.0


class Tee:
    """Writes to every stream given (the terminal and the results file)."""

    def __init__(self, *streams):
        self.streams = streams

    def write(self, text: str) -> None:
        for s in self.streams:
            s.write(text)

    def flush(self) -> None:
        for s in self.streams:
            s.flush()


def standardized(X: np.ndarray) -> np.ndarray:
    std = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(std == 0, 1.0, std)


def errors_of(score: np.ndarray, y: np.ndarray) -> int:
    return int(((score > 0) != (y == 1)).sum())


def l1_logistic(X: np.ndarray, y: np.ndarray, k: int, n_c: int = 40,
                n_bisect: int = 12) -> tuple[int | None, int]:
    """The fewest training errors of an L1 logistic regression with 1 to k nonzero
    coefficients, at the best threshold of its score (either way), over a path of C from
    the smallest that keeps a coefficient to 1e4 times it, refined by bisection (in log C)
    wherever the count of coefficients jumps past k (features can enter together); and that
    fit's number of nonzero coefficients. ``(None, 0)`` when no C gives 1 to k."""
    Z = standardized(X)
    fits: dict[float, tuple[int, int | None]] = {}

    def fit(C: float) -> int:
        lr = LogisticRegression(l1_ratio=1.0, solver="liblinear", C=C, max_iter=1000)
        lr.fit(Z, y)
        used = int(np.count_nonzero(lr.coef_))
        errors = (int(best_threshold(lr.decision_function(Z), y == 1,
                                     np.ones(len(y))).errors) if 1 <= used <= k else None)
        fits[C] = (used, errors)
        return used

    path = l1_min_c(Z, y, loss="log") * np.logspace(0.01, 4, n_c)
    used = [fit(C) for C in path]
    for lo, hi, u_lo, u_hi in zip(path[:-1], path[1:], used[:-1], used[1:], strict=True):
        if u_lo <= k < u_hi:
            for _ in range(n_bisect):
                mid = float(np.sqrt(lo * hi))
                lo, hi = (mid, hi) if fit(mid) <= k else (lo, mid)
    found = [(errors, u) for u, errors in fits.values() if errors is not None]
    return min(found) if found else (None, 0)


def cardinality_milp(X: np.ndarray, y: np.ndarray, k: int,
                     time_limit: float) -> tuple[int, float, str]:
    """The big-M MILP with at most k features on, on the standardized unique points:
    (errors of its plane on the data, seconds, HiGHS's status).

    Variables: the plane (a, b), ``t_i`` = point i predicted positive, ``u_j`` = feature j
    on; ``min sum wneg_i t_i + wpos_i (1 - t_i)`` subject to ``a.z_i + b >= margin -
    M_i (1 - t_i)``, ``a.z_i + b <= -margin + M_i t_i``, ``|a_j| <= W u_j``,
    ``sum u_j <= k``."""
    import highspy
    import scipy.sparse as sp

    t0 = time.perf_counter()
    Zall = standardized(X)
    Z, wpos, wneg, _ = merge_duplicates(Zall, y == 1, np.ones(len(y)))
    n, d = Z.shape
    l1 = np.abs(Z).sum(axis=1)
    b_bound = WEIGHT_BOUND * l1.max() + MARGIN
    big = 2 * MARGIN + WEIGHT_BOUND * l1 + b_bound
    inf = highspy.kHighsInf
    # columns: a (d), b (1), t (n), u (d)
    n_cols = 2 * d + 1 + n
    lower = np.r_[np.full(d, -WEIGHT_BOUND), -b_bound, np.zeros(n + d)]
    upper = np.r_[np.full(d, WEIGHT_BOUND), b_bound, np.ones(n + d)]
    cost = np.r_[np.zeros(d + 1), wneg - wpos, np.zeros(d)]
    points = sp.hstack([sp.csr_matrix(Z), np.ones((n, 1)), sp.diags(-big),
                        sp.csr_matrix((n, d))]).tocsr()
    a_on = sp.hstack([sp.eye(d), sp.csr_matrix((d, 1 + n)), -WEIGHT_BOUND * sp.eye(d)])
    a_neg = sp.hstack([-sp.eye(d), sp.csr_matrix((d, 1 + n)), -WEIGHT_BOUND * sp.eye(d)])
    card = sp.csr_matrix(np.r_[np.zeros(d + 1 + n), np.ones(d)])
    rows = sp.vstack([points, points, a_on, a_neg, card]).tocsr()
    row_lo = np.r_[MARGIN - big, np.full(n, -inf), np.full(2 * d, -inf), -inf]
    row_hi = np.r_[np.full(n, inf), np.full(n, -MARGIN), np.zeros(2 * d), k]
    h = new_highs()
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("mip_rel_gap", 0.0)
    h.addVars(n_cols, lower, upper)
    h.changeColsCost(n_cols, np.arange(n_cols, dtype=np.int32), cost)
    binary = np.arange(d + 1, n_cols, dtype=np.int32)
    h.changeColsIntegrality(len(binary), binary,
                            np.full(len(binary), highspy.HighsVarType.kInteger))
    h.addRows(rows.shape[0], row_lo, row_hi, rows.nnz, rows.indptr[:-1].astype(np.int32),
              rows.indices.astype(np.int32), rows.data)
    h.run()
    status = h.modelStatusToString(h.getModelStatus())
    x = np.asarray(h.getSolution().col_value)
    if x.size != n_cols or h.getInfo().primal_solution_status == 0:
        return min(int((y == 1).sum()), int((y != 1).sum())), time.perf_counter() - t0, status
    coef = np.where(x[d + 1 + n:] > 0.5, x[:d], 0.0)  # only the features switched on
    return errors_of(Zall @ coef + x[d], y), time.perf_counter() - t0, status


def ice(X: np.ndarray, y: np.ndarray, k: int | None, time_limit: float) -> ICEClassifier:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return ICEClassifier(max_features=k, time_limit=time_limit, n_jobs=1).fit(X, y)


def run(datasets, ks, time_limit: float, out) -> None:
    header = (f"{'dataset':<21}{'N':>5}{'D':>3}{'k':>3} | {'ICE':>5} {'proven':>6} {'bound':>6} "
              f"{'[s]':>6} | {'L1-LR':>5} {'nnz':>3} | {'MILP':>5} {'[s]':>6} {'status':<18} | "
              f"{'no limit':>8}")
    print(header, file=out, flush=True)
    ratios = []
    for name in datasets:
        X, y = load_dataset(name, return_X_y=True)
        N, D = X.shape
        free = ice(X, y, None, time_limit)
        free_text = f"{free.training_errors_:g}{'' if free.is_optimal_ else '*'}"
        for k in [k for k in ks if k < D]:
            clf = ice(X, y, k, time_limit)
            lr_errors, nnz = l1_logistic(X, y, k)
            lr_text = "-" if lr_errors is None else str(lr_errors)
            m_errors, m_seconds, status = cardinality_milp(X, y, k, time_limit)
            print(f"{name:<21}{N:>5}{D:>3}{k:>3} | {clf.training_errors_:>5g} "
                  f"{'yes' if clf.is_optimal_ else 'no':>6} {clf.lower_bound_:>6g} "
                  f"{clf.fit_time_:>6.1f} | {lr_text:>5} {nnz:>3} | {m_errors:>5} "
                  f"{m_seconds:>6.1f} {status[:18]:<18} | {free_text:>8}", file=out, flush=True)
            if clf.is_optimal_:
                ratios.append((name, k, clf.fit_time_ / m_seconds,
                               "time limit" in status.lower()))
    print("* not proven within the time limit (the errors of the best rule found); L1-LR "
          "'-': no C of the path gives 1 to k nonzero coefficients", file=out)
    print("\nICE's proof time / the MILP's time, where ICE proved its optimum:", file=out)
    for name, k, ratio, capped in ratios:
        print(f"  {name:<21} k={k}: {ratio:.3g}"
              + (" (the MILP hit its time limit: at most)" if capped else ""), file=out)
    if ratios:
        values = np.array([r for _, _, r, _ in ratios])
        print(f"  median {np.median(values):.3g}, geometric mean "
              f"{np.exp(np.log(values).mean()):.3g} over {len(values)} runs", file=out)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=DATASETS)
    parser.add_argument("--k", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--output", help="also write the table to this file")

    args = parser.parse_args()
    files = [open(args.output, "w", encoding="utf-8")] if args.output else []
    out = Tee(sys.stdout, *files)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"# ==== {now}, {os.cpu_count()}-core machine ({platform.machine()}, shared: load "
          f"average {os.getloadavg()[0]:.1f} at the start)", file=out)
    print(f"# python benchmarks/constraints.py {' '.join(sys.argv[1:])}", file=out)
    t0 = time.perf_counter()
    run(args.datasets, args.k, args.time_limit, out)
    print(f"# total {time.perf_counter() - t0:.0f} s", file=out)
    for f in files:
        f.close()
