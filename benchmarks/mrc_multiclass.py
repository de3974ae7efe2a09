"""MRCCCG with many classes (the CCG paper's multi-class setting) versus MRCpy's ``ccg``.

For each case: MRCCCG to convergence (within ``--time-limit`` seconds), MRCCCG stopped by a
``time_limit`` of a quarter of that fit's time (the anytime target: ``upper_`` within 10 % of
``R*``, here of the converged fit's ``lower_``, a proven lower bound on ``R*``), MRCpy 3.0's
``MRC(loss="0-1", solver="ccg")`` with its defaults (with ``--mrcpy-python``: its own
environment, ``benchmarks/README_mrcpy.md``) and the full LP when its matrix fits in
``--full-lp-max-nonzeros``. Columns: wall-clock and CPU seconds, the bound the method reports
(``upper_``), ``lower_`` (MRCCCG only), the true worst-case risk ``R(mu)`` of the solution
evaluated here over every training sample and every label subset
(:func:`exactclf._experiments.mrc.worst_case_risk`), and the training accuracy of
``predict``.

Cases: ``make_classification`` (``--n`` samples, ``--features`` features of which half
informative, standardized, ``phi="linear"``) for every ``--classes``, and with ``--digits``
the bundled digits of scikit-learn (1797 x 64, 10 classes, standardized) with
``--digits-components`` random Fourier features.

    python benchmarks/mrc_multiclass.py --n 10000 --classes 10 20 50 100 --features 64 512
    python benchmarks/mrc_multiclass.py --n 3000 --classes 10 20 --time-limit 120 \\
        --mrcpy-python /work/mrcpy-venv/bin/python
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits, make_classification
from sklearn.preprocessing import StandardScaler

from exactclf._experiments.mrc import (
    class_scores,
    evaluate_mrcpy,
    feature_statistics,
    full_lp,
    mrc_psi,
    ratio,
    run_mrcpy,
    worst_case_risk,
)
from exactclf.mrc import MRCCCG

RUNNER = Path(__file__).with_name("_mrcpy_runner.py")


def fit(X, y, time_limit, **params):
    """A timed MRCCCG fit: the estimator and its (wall-clock, CPU) seconds."""
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a stopped fit warns; the table says so
        clf = MRCCCG(time_limit=time_limit, random_state=0, **params).fit(X, y)
    return clf, (time.perf_counter() - t0, time.process_time() - c0)


def true_risk(clf: MRCCCG, X, y_idx) -> float:
    """``R(mu_)`` over every sample and label subset, from the definition (unscaled)."""
    Psi = mrc_psi(clf, X)
    K = len(clf.classes_)
    tau, lam = feature_statistics(Psi, y_idx, K, clf.s)
    return worst_case_risk(class_scores(Psi, clf.mu_, K), tau, lam, clf.mu_)[0]


def row(case, method, seconds, reported, lower, risk, accuracy, note):
    t = "-" if seconds is None else f"{seconds[0]:8.2f} {seconds[1]:8.2f}"
    cells = ["-" if v is None else f"{v:.6f}" for v in (reported, lower, risk, accuracy)]
    print(f"{case:30s} {method:24s} {t:>17s} " + " ".join(f"{c:>9s}" for c in cells)
          + f"  {note}", flush=True)


def run_case(case, X, y, args, **params):
    classes, y_idx = np.unique(y, return_inverse=True)
    K = len(classes)
    limit = args.time_limit.get(K, args.time_limit_default)
    clf, sec = fit(X, y, limit, **params)
    R = true_risk(clf, X, y_idx)
    gap = clf.upper_ - clf.lower_
    row(case, "MRCCCG", sec, clf.upper_, clf.lower_, R, (clf.predict(X) == y).mean(),
        f"{clf.n_iter_} iters, {'converged' if clf.converged_ else clf.stop_reason_}, "
        f"upper_ - lower_ = {gap:.1e} (target <= 1e-4 within {limit:g} s: "
        f"{'met' if gap <= 1e-4 and clf.converged_ else 'NOT met'})")
    quarter, qsec = fit(X, y, sec[0] / 4, **params)
    within = (quarter.upper_ - clf.lower_) / clf.lower_ if clf.lower_ > 0 else np.inf
    verdict = ("met" if within <= 0.1 else "NOT met") if clf.converged_ else (
        "not judged: the full fit did not converge, its lower_ is below R*")
    row(case, "MRCCCG at 1/4 the time", qsec, quarter.upper_, quarter.lower_,
        true_risk(quarter, X, y_idx), (quarter.predict(X) == y).mean(),
        f"time_limit={sec[0] / 4:.1f} s: upper_ {100 * within:.1f} % above the full fit's "
        f"lower_ (target <= 10 %: {verdict})")
    if args.mrcpy_python:
        sol = run_mrcpy(args.mrcpy_python, RUNNER, X, y_idx, params.get("phi", "linear"),
                        params.get("n_components", 300), clf.s, False, args.mrcpy_timeout)
        if sol["error"]:
            row(case, "MRCpy ccg default", None, None, None, None, None,
                f"failed: {sol['error']}"[:160])
        else:
            same_map = params.get("phi", "linear") == "linear"
            ev = evaluate_mrcpy(sol, mrc_psi(clf, X), y_idx, K, clf.s, same_map)
            psec = (float(sol["seconds"]), float(sol["cpu_seconds"]))
            acc = (np.argmax(class_scores(sol["psi"], np.ravel(sol["mu"]), K), axis=1)
                   == y_idx).mean()
            row(case, "MRCpy ccg default", psec, float(sol["upper"]), None, ev["own"], acc,
                f"{len(sol['psi_opt'])} rows optimized over, {len(sol['history'])} LP solves"
                + ("" if same_map else "; its own random features"))
            met = psec[0] >= 10 * sec[0] and R <= ev["own"] + 1e-9
            print(f"{case:30s} MRCpy default / MRCCCG: {ratio(psec, sec)}; R(mu) "
                  f"{ev['own']:.6f} vs "
                  f"{R:.6f} (target >= 10x faster at equal or lower risk: "
                  f"{'met' if met else 'NOT met'})", flush=True)
    R_full, true_full, fsec, note = full_lp(clf, mrc_psi(clf, X), y_idx, args.full_lp_time_limit,
                                            args.full_lp_max_nonzeros)
    row(case, "full LP (HiGHS)", fsec, R_full, None, true_full, None, note)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10000)
    parser.add_argument("--classes", type=int, nargs="+", default=[10, 20, 50, 100])
    parser.add_argument("--features", type=int, nargs="*", default=[64, 512],
                        help="make_classification's widths (none: only --digits)")
    parser.add_argument("--time-limit", type=float, nargs="+", default=[60, 120, 300, 600],
                        help="MRCCCG's time_limit per entry of --classes (the issue's targets)")
    parser.add_argument("--digits", action="store_true")
    parser.add_argument("--digits-components", type=int, default=512)
    parser.add_argument("--mrcpy-python", default=None)
    parser.add_argument("--mrcpy-timeout", type=float, default=1800.0)
    parser.add_argument("--full-lp-max-nonzeros", type=float, default=5e7)
    parser.add_argument("--full-lp-time-limit", type=float, default=600.0)
    args = parser.parse_args(argv)
    limits = args.time_limit + args.time_limit[-1:] * len(args.classes)
    args.time_limit = dict(zip(args.classes, limits, strict=False))
    args.time_limit_default = args.time_limit[args.classes[-1]]

    Xw, yw = make_classification(n_samples=60, n_features=4, random_state=0)
    MRCCCG().fit(Xw, yw)  # compiles the Numba kernel
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}, Python "
          f"{platform.python_version()}; MRCCCG defaults (eps1=1e-4)")
    print(f"{'case':30s} {'method':24s} {'time [s]':>8s} {'cpu [s]':>8s} {'reported':>9s} "
          f"{'lower_':>9s} {'R(mu)':>9s} {'accuracy':>9s}  note")
    for p in args.features:
        for K in args.classes:
            X, y = make_classification(n_samples=args.n, n_features=p, n_informative=p // 2,
                                       n_classes=K, random_state=0)
            run_case(f"make_classification n={args.n} p={p} K={K}",
                     StandardScaler().fit_transform(X), y, args)
    if args.digits:
        X, y = load_digits(return_X_y=True)
        args.time_limit_default = args.time_limit.get(10, args.time_limit_default)
        run_case(f"digits 1797x64 fourier {args.digits_components}",
                 StandardScaler().fit_transform(X), y, args, phi="fourier",
                 n_components=args.digits_components)


if __name__ == "__main__":
    main()
