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

A second table, for monotone fits (``--monotone``): for each dataset and each sign pattern

- "lr": the signs of the coefficients of an L2 LogisticRegression on standardized features
  (a plausible domain direction a user would ask for),
- "anti-lr": the opposite signs (a wrong prior: what it costs),

one row with the unconstrained ICE fit (time limit T: errors, proven, seconds; the one of the
first table); ICEClassifier(monotonic_cst=signs, time_limit=T): errors, proven, bound,
seconds, and its time over the unconstrained fit's (the target: proven where the
unconstrained fit is, in at most 1.5 times its time), checked (the signs of coef_ and
``exactclf.verify``: 'ok' or 'FAIL'); the sign-constrained logistic regression at its best
intercept (what a user would otherwise fit); and a big-M MILP with the signs as bounds on the
weights (no indicators; the weight bound, margin and time limit of the first table): errors,
seconds, HiGHS's status. Then the time ratios where both fits are proven.

    python benchmarks/constraints.py [--k 1 2 3] [--time-limit 60] [--datasets haberman ...]
        [--monotone {lr,anti-lr,both,none}] [--output benchmarks/results/constraints.txt]

(``--monotone none``: the first table only; ``--k`` with no value: the second only.)
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

from exactclf import ICEClassifier, verify
from exactclf._base import merge_duplicates
from exactclf._highs import new_highs
from exactclf.datasets import load_dataset
from exactclf.linear._feature_subsets import best_threshold
from exactclf.linear._monotone import _best_intercept, signed_logistic

DATASETS = ["haberman", "bloodtransfer", "sepsis", "caesarian", "cryotherapy", "voicepath",
            "auction_verification", "rice_cammeo", "diabetic"]
#: the big-M model's weight bound (on standardized features) and margin, as the unconstrained
#: baseline of benchmarks/ice_vs_baselines.py
WEIGHT_BOUND, MARGIN = 1e3, 1.0
#: the sign patterns of the monotone table, by --monotone
PATTERNS = {"lr": ["lr"], "anti-lr": ["anti-lr"], "both": ["lr", "anti-lr"], "none": []}


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


def _plane_rows(Z: np.ndarray, wpos: np.ndarray, wneg: np.ndarray, extra: int):
    """The rows of the points in a big-M MILP over the columns ``a`` (d), ``b`` (1), ``t``
    (n: point i predicted positive) and ``extra`` more: ``a.z_i + b >= margin - M_i (1 -
    t_i)``, ``a.z_i + b <= -margin + M_i t_i``; (rows, their lower and upper bounds, the
    bound on ``|b|``, the cost of the columns a, b, t)."""
    import highspy
    import scipy.sparse as sp

    n = len(Z)
    l1 = np.abs(Z).sum(axis=1)
    b_bound = WEIGHT_BOUND * l1.max() + MARGIN
    big = 2 * MARGIN + WEIGHT_BOUND * l1 + b_bound
    inf = highspy.kHighsInf
    points = sp.hstack([sp.csr_matrix(Z), np.ones((n, 1)), sp.diags(-big),
                        sp.csr_matrix((n, extra))]).tocsr()
    rows = sp.vstack([points, points]).tocsr()
    row_lo = np.r_[MARGIN - big, np.full(n, -inf)]
    row_hi = np.r_[np.full(n, inf), np.full(n, -MARGIN)]
    return rows, row_lo, row_hi, b_bound, np.r_[np.zeros(Z.shape[1] + 1), wneg - wpos]


def _solve_milp(lower, upper, cost, first_binary: int, rows, row_lo, row_hi,
                time_limit: float) -> tuple[np.ndarray | None, str]:
    """``min cost.x`` subject to ``row_lo <= rows x <= row_hi``, ``lower <= x <= upper``,
    the columns from ``first_binary`` on integer, on HiGHS with a time limit and no gap
    tolerance; (the solution, None without one; HiGHS's status)."""
    import highspy

    n_cols = len(cost)
    h = new_highs()
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("mip_rel_gap", 0.0)
    h.addVars(n_cols, lower, upper)
    h.changeColsCost(n_cols, np.arange(n_cols, dtype=np.int32), cost)
    binary = np.arange(first_binary, n_cols, dtype=np.int32)
    h.changeColsIntegrality(len(binary), binary,
                            np.full(len(binary), highspy.HighsVarType.kInteger))
    h.addRows(rows.shape[0], row_lo, row_hi, rows.nnz, rows.indptr[:-1].astype(np.int32),
              rows.indices.astype(np.int32), rows.data)
    h.run()
    status = h.modelStatusToString(h.getModelStatus())
    x = np.asarray(h.getSolution().col_value)
    if x.size != n_cols or h.getInfo().primal_solution_status == 0:
        return None, status
    return x, status


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
    points, point_lo, point_hi, b_bound, cost = _plane_rows(Z, wpos, wneg, d)
    # columns: a (d), b (1), t (n), u (d)
    lower = np.r_[np.full(d, -WEIGHT_BOUND), -b_bound, np.zeros(n + d)]
    upper = np.r_[np.full(d, WEIGHT_BOUND), b_bound, np.ones(n + d)]
    a_on = sp.hstack([sp.eye(d), sp.csr_matrix((d, 1 + n)), -WEIGHT_BOUND * sp.eye(d)])
    a_neg = sp.hstack([-sp.eye(d), sp.csr_matrix((d, 1 + n)), -WEIGHT_BOUND * sp.eye(d)])
    card = sp.csr_matrix(np.r_[np.zeros(d + 1 + n), np.ones(d)])
    rows = sp.vstack([points, a_on, a_neg, card]).tocsr()
    row_lo = np.r_[point_lo, np.full(2 * d, -highspy.kHighsInf), -highspy.kHighsInf]
    row_hi = np.r_[point_hi, np.zeros(2 * d), k]
    x, status = _solve_milp(lower, upper, np.r_[cost, np.zeros(d)], d + 1, rows, row_lo,
                            row_hi, time_limit)
    if x is None:
        return min(int((y == 1).sum()), int((y != 1).sum())), time.perf_counter() - t0, status
    coef = np.where(x[d + 1 + n:] > 0.5, x[:d], 0.0)  # only the features switched on
    return errors_of(Zall @ coef + x[d], y), time.perf_counter() - t0, status


def sign_milp(X: np.ndarray, y: np.ndarray, signs: np.ndarray,
              time_limit: float) -> tuple[int, float, str]:
    """The big-M MILP of :func:`cardinality_milp` without indicators, with ``0 <= a_j <= W``
    where ``signs[j] = 1`` and ``-W <= a_j <= 0`` where ``signs[j] = -1`` (standardizing
    keeps the signs): (errors of its plane on the data, seconds, HiGHS's status)."""
    t0 = time.perf_counter()
    Zall = standardized(X)
    Z, wpos, wneg, _ = merge_duplicates(Zall, y == 1, np.ones(len(y)))
    n, d = Z.shape
    rows, row_lo, row_hi, b_bound, cost = _plane_rows(Z, wpos, wneg, 0)
    # columns: a (d), b (1), t (n)
    lower = np.r_[np.where(signs > 0, 0.0, -WEIGHT_BOUND), -b_bound, np.zeros(n)]
    upper = np.r_[np.where(signs < 0, 0.0, WEIGHT_BOUND), b_bound, np.ones(n)]
    x, status = _solve_milp(lower, upper, cost, d + 1, rows, row_lo, row_hi, time_limit)
    if x is None:
        return min(int((y == 1).sum()), int((y != 1).sum())), time.perf_counter() - t0, status
    return errors_of(Zall @ x[:d] + x[d], y), time.perf_counter() - t0, status


def ice(X: np.ndarray, y: np.ndarray, k: int | None, time_limit: float,
        **params) -> ICEClassifier:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return ICEClassifier(max_features=k, time_limit=time_limit, n_jobs=1,
                             **params).fit(X, y)


def free_fit(fits: dict, name: str, X: np.ndarray, y: np.ndarray,
             time_limit: float) -> ICEClassifier:
    """The unconstrained ICE fit of dataset ``name``, fitted once per run (kept in
    ``fits``): both tables report the same one."""
    if name not in fits:
        fits[name] = ice(X, y, None, time_limit)
    return fits[name]


def run(datasets, ks, time_limit: float, out, fits: dict) -> None:
    header = (f"{'dataset':<21}{'N':>5}{'D':>3}{'k':>3} | {'ICE':>5} {'proven':>6} {'bound':>6} "
              f"{'[s]':>6} | {'L1-LR':>5} {'nnz':>3} | {'MILP':>5} {'[s]':>6} {'status':<18} | "
              f"{'no limit':>8}")
    print(header, file=out, flush=True)
    ratios = []
    for name in datasets:
        X, y = load_dataset(name, return_X_y=True)
        N, D = X.shape
        if not [k for k in ks if k < D]:
            continue
        free = free_fit(fits, name, X, y, time_limit)
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


def lr_signs(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The signs (-1, 0, 1) of the coefficients of an L2 LogisticRegression (scikit-learn's
    defaults) on the standardized features: the "lr" pattern."""
    lr = LogisticRegression(max_iter=10000).fit(standardized(X), y)
    return np.sign(lr.coef_[0]).astype(int)


def signed_lr_errors(X: np.ndarray, y: np.ndarray, signs: np.ndarray) -> int:
    """Training errors of the sign-constrained L2 logistic regression at the intercept
    that minimizes them (the start of ICEClassifier(monotonic_cst=...))."""
    positive, w = y == 1, np.ones(len(y))
    coef, _ = signed_logistic(X, positive, w, signs)
    scores = X @ coef
    return errors_of(scores + _best_intercept(scores, positive, w), y)


def check_monotone(model: ICEClassifier, X: np.ndarray, y: np.ndarray,
                   signs: np.ndarray) -> str:
    """'ok' where the model's coef_ has the signs asked for and ``verify`` accepts its
    certificate, else 'FAIL' and what failed."""
    failed = []
    if np.any(signs * model.coef_[0] < 0):
        failed.append("signs")
    if not verify(model, X, y).ok:
        failed.append("verify")
    return "ok" if not failed else "FAIL:" + ",".join(failed)


def sign_text(signs: np.ndarray) -> str:
    """The pattern as one character per feature: '+', '-' or '0'."""
    return "".join("+" if s > 0 else "-" if s < 0 else "0" for s in signs)


def monotone_row(name: str, X, y, pattern: str, free: ICEClassifier, time_limit: float,
                 out) -> tuple[float, bool, bool]:
    """Fit, check and print one row of the monotone table; (the monotone fit's time over
    the unconstrained one's, whether both are proven, whether the check passed)."""
    signs = lr_signs(X, y) * (1 if pattern == "lr" else -1)
    clf = ice(X, y, None, time_limit, monotonic_cst=signs.tolist())
    check = check_monotone(clf, X, y, signs)
    s_lr = signed_lr_errors(X, y, signs)
    m_errors, m_seconds, status = sign_milp(X, y, signs, time_limit)
    ratio = clf.fit_time_ / max(free.fit_time_, 1e-9)
    N, D = X.shape
    print(f"{name:<21}{N:>5}{D:>3} {pattern:<7} | {free.training_errors_:>5g} "
          f"{'yes' if free.is_optimal_ else 'no':>6} {free.fit_time_:>6.1f} | "
          f"{clf.training_errors_:>5g} {'yes' if clf.is_optimal_ else 'no':>6} "
          f"{clf.lower_bound_:>6g} {clf.fit_time_:>6.1f} {ratio:>7.3g} {check:<5} | "
          f"{s_lr:>5} | {m_errors:>5} {m_seconds:>6.1f} {status[:18]:<18} | "
          f"{sign_text(signs)}", file=out, flush=True)
    return ratio, bool(free.is_optimal_ and clf.is_optimal_), check == "ok"


def run_monotone(datasets, patterns, time_limit: float, out, fits: dict) -> None:
    """The monotone table (see the module docstring) and its time ratios."""
    print(f"\n{'dataset':<21}{'N':>5}{'D':>3} {'pattern':<7} | {'free':>5} {'proven':>6} "
          f"{'[s]':>6} | {'mono':>5} {'proven':>6} {'bound':>6} {'[s]':>6} {'ratio':>7} "
          f"{'check':<5} | {'S-LR':>5} | {'MILP':>5} {'[s]':>6} {'status':<18} | signs",
          file=out, flush=True)
    ratios, failed = [], 0
    for name in datasets:
        X, y = load_dataset(name, return_X_y=True)
        free = free_fit(fits, name, X, y, time_limit)
        for pattern in patterns:
            ratio, proven, ok = monotone_row(name, X, y, pattern, free, time_limit, out)
            failed += not ok
            if proven:
                ratios.append((name, pattern, ratio))
    print("free: ICEClassifier unconstrained; mono: with monotonic_cst=signs (ratio: its "
          "seconds / free's; check: signs of coef_ and verify); S-LR: sign-constrained "
          "LogisticRegression at its best intercept; MILP: big-M with the signs as weight "
          f"bounds; {failed} FAIL", file=out)
    print("\nmonotone seconds / unconstrained seconds, where both are proven (target <= 1.5):",
          file=out)
    for name, pattern, ratio in ratios:
        print(f"  {name:<21} {pattern:<7}: {ratio:.3g}", file=out)
    if ratios:
        values = np.array([r for _, _, r in ratios])
        print(f"  median {np.median(values):.3g}, geometric mean "
              f"{np.exp(np.log(values).mean()):.3g}, {int((values <= 1.5).sum())} of "
              f"{len(values)} at most 1.5", file=out)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=DATASETS)
    parser.add_argument("--k", nargs="*", type=int, default=[1, 2, 3])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--monotone", choices=list(PATTERNS), default="both",
                        help="the sign patterns of the monotone table (none: no table)")
    parser.add_argument("--output", help="also write the tables to this file")

    args = parser.parse_args()
    files = [open(args.output, "w", encoding="utf-8")] if args.output else []
    out = Tee(sys.stdout, *files)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"# ==== {now}, {os.cpu_count()}-core machine ({platform.machine()}, shared: load "
          f"average {os.getloadavg()[0]:.1f} at the start)", file=out)
    print(f"# python benchmarks/constraints.py {' '.join(sys.argv[1:])}", file=out)
    t0 = time.perf_counter()
    fits: dict = {}  # the unconstrained ICE fits, shared by the two tables
    if args.k:
        run(args.datasets, args.k, args.time_limit, out, fits)
    if PATTERNS[args.monotone]:
        run_monotone(args.datasets, PATTERNS[args.monotone], args.time_limit, out, fits)
    print(f"# total {time.perf_counter() - t0:.0f} s", file=out)
    for f in files:
        f.close()
