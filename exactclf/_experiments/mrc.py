"""``exactclf reproduce mrc``: MRCCCG versus the full 0-1 MRC LP solved by HiGHS (and MRCpy's
``ccg`` if installed).

For each case prints the fit time and the minimax risk R* of

* ``MRCCCG``: constraint generation over all samples; R* is its certified ``upper_``
  (``lower_`` is printed too: the optimum lies in ``[lower_, upper_]``);
* ``full LP (HiGHS)``: the LP with all ``n (2^K - 1)`` rows built and solved in one go, in the
  same features (time includes building it);
* ``MRCpy ccg``: ``MRC(loss="0-1", solver="ccg").fit(X, y, X_=X)``, only when MRCpy imports.

Cases: ``make_classification`` with 20 standardized features for every ``--n`` x ``--classes``
(``phi="linear"``), then ``phi="fourier"`` with ``--n-components`` random features on the
bundled ai4i and skin_segmentation data (standardized), all with ``s=0.3``. Times are wall
clock, after a warm-up fit that compiles the Numba kernel.

    exactclf reproduce mrc                       # everything (long: full LPs)
    exactclf reproduce mrc --n 10000 --classes 2 --datasets
    exactclf reproduce mrc --skip-full-lp        # MRCCCG only, fast
    exactclf reproduce mrc --n --datasets ai4i --max-iter 10 --skip-full-lp
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings
from importlib.metadata import version

import numpy as np
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler

from ..datasets import load_dataset
from ..mrc import MRCCCG
from ..mrc._ccg import mrc_full_lp, mrc_statistics


def full_lp_nonzeros(Psi: np.ndarray, n_classes: int) -> int:
    """Nonzeros of the full LP's matrix: row (i, C) holds nu and (mu1, mu2) of the |C| class
    blocks at the nonzeros of psi(x_i)."""
    nnz_rows = np.count_nonzero(Psi, axis=1).sum()
    # sum over the nonempty subsets C of |C| = K 2^(K-1); 2^K - 1 rows per sample
    return int((2**n_classes - 1) * len(Psi) + 2 * n_classes * 2 ** (n_classes - 1) * nnz_rows)


def full_lp(clf: MRCCCG, X, y, time_limit, max_nonzeros):
    """The full LP in the features of the fitted ``clf`` (same psi, tau, lambda); ``R`` is
    None unless HiGHS proved it optimal."""
    t0 = time.perf_counter()
    Psi = clf._psi(X)
    K = len(clf.classes_)
    nnz = full_lp_nonzeros(Psi, K)
    if nnz > max_nonzeros:
        return None, None, (f"not run: {len(Psi) * (2**K - 1)} rows, {nnz:.2e} nonzeros > "
                            f"--full-lp-max-nonzeros={max_nonzeros:.0e} (memory)")
    scale = np.abs(Psi).max(axis=0)
    scale[scale == 0] = 1.0
    Psi = Psi / scale
    y_idx = np.searchsorted(clf.classes_, y)
    tau, lam = mrc_statistics(Psi, y_idx, K, clf.s)
    res = mrc_full_lp(Psi, y_idx, K, tau, lam, time_limit=time_limit)
    R = res.objective if res.status == "Optimal" else None
    return R, time.perf_counter() - t0, f"{res.status}, {res.n_rows} rows, {nnz:.2e} nonzeros"


def mrcpy_ccg(X, y, phi, n_components):
    try:
        from MRCpy import MRC
    except Exception as exc:  # noqa: BLE001 - any import failure means "not available"
        return None, None, f"not available ({type(exc).__name__})"
    t0 = time.perf_counter()
    try:
        kw = {"n_components": n_components} if phi == "fourier" else {}
        model = MRC(loss="0-1", phi=phi, s=0.3, solver="ccg", **kw)
        model.fit(X, y, X_=X)
        return float(model.upper_), time.perf_counter() - t0, "reported upper_"
    except Exception as exc:  # noqa: BLE001
        return None, time.perf_counter() - t0, f"failed: {type(exc).__name__}: {exc}"[:60]


def run_case(name, X, y, args, **params):
    rows = []
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = MRCCCG(eps1=args.eps1, device=args.device, lp_solver=args.lp_solver,
                     max_iter=args.max_iter, random_state=0, **params).fit(X, y)
    t_ccg = time.perf_counter() - t0
    note = (f"{clf.n_iter_} iters, {clf.n_constraints_} constraints ({clf.n_lp_rows_} in the "
            f"final LP), {clf.n_active_features_} features, lower_={clf.lower_:.8f}")
    if caught:
        note += f"; warning: {caught[0].message}"[:80]
    rows.append(("MRCCCG", clf.upper_, t_ccg, note))
    R_full = t_full = None
    if not args.skip_full_lp:
        R_full, t_full, note = full_lp(clf, X, y, args.full_lp_time_limit,
                                       args.full_lp_max_nonzeros)
        rows.append(("full LP (HiGHS)", R_full, t_full, note))
    R_p, t_p, note = mrcpy_ccg(X, y, params.get("phi", "linear"), params.get("n_components"))
    if t_p is not None or args.show_missing:
        rows.append(("MRCpy ccg", R_p, t_p, note))
    for label, R, sec, note in rows:
        dR = "" if R_full is None or R is None else f"{R - R_full:+.1e}"
        R_txt = "-" if R is None else f"{R:.8f}"
        sec_txt = "-" if sec is None else f"{sec:.2f}"
        print(f"{name:<28} {label:<16} {sec_txt:>9} {R_txt:>11} {dR:>9}  {note}", flush=True)
    if R_full is not None:
        print(f"{name:<28} speed-up full LP / MRCCCG: {t_full / t_ccg:.1f}x", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, nargs="*", default=[10000, 30000])
    parser.add_argument("--classes", type=int, nargs="*", default=[2, 5])
    parser.add_argument("--datasets", nargs="*", default=["ai4i", "skin_segmentation"])
    parser.add_argument("--n-components", type=int, default=400)
    parser.add_argument("--eps1", type=float, default=1e-4)
    parser.add_argument("--max-iter", type=int, default=500,
                        help="MRCCCG's max_iter (a cap gives a certified but possibly loose R)")
    parser.add_argument("--lp-solver", default="highs", choices=["highs", "gurobi"])
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "gpu"])
    parser.add_argument("--skip-full-lp", action="store_true")
    parser.add_argument("--full-lp-time-limit", type=float, default=None,
                        help="seconds; a full LP stopped by it reports no R*")
    parser.add_argument("--full-lp-max-nonzeros", type=float, default=1.2e8,
                        help="skip full LPs with more nonzeros (930000 rows x 21 features x "
                             "K=5 is 1.0e8, about 14 GB of peak memory in HiGHS)")
    parser.add_argument("--show-missing", action="store_true",
                        help="print a row for MRCpy also when it is not installed")
    args = parser.parse_args(argv)

    # compile the Numba kernel once (cached on disk afterwards), outside the timings
    Xw, yw = make_classification(n_samples=60, n_features=4, random_state=0)
    MRCCCG(device=args.device).fit(Xw, yw)
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()}, highspy "
          f"{version('highspy')}; MRCCCG eps1={args.eps1}, "
          f"lp_solver={args.lp_solver}, device={args.device}")
    print(f"{'case':<28} {'method':<16} {'time [s]':>9} {'R*':>11} {'R - full':>9}  note")
    for n in args.n:
        for K in args.classes:
            X, y = make_classification(n_samples=n, n_features=20, n_informative=10,
                                       n_classes=K, random_state=0)
            X = StandardScaler().fit_transform(X)
            run_case(f"make_classification n={n} K={K}", X, y, args, phi="linear")
    for name in args.datasets:
        X, y = load_dataset(name, return_X_y=True)
        X = StandardScaler().fit_transform(X)
        run_case(f"{name} {X.shape[0]}x{X.shape[1]} fourier", X, y, args, phi="fourier",
                 n_components=args.n_components)

