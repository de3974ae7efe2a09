"""``exactclf reproduce mrc``: MRCCCG versus the full 0-1 MRC LP solved by HiGHS and, run in its
own environment, MRCpy's ``ccg``.

For each case prints the fit time, the bound the method reports, and the worst-case risk
``R(mu) = -tau^T mu + lambda^T |mu| + nu(mu)`` that its solution really has: evaluated here
over *all* training samples and all label subsets (:func:`worst_case_risk`), with ``tau`` and
``lambda`` computed here from the training rows (:func:`feature_statistics`):

* ``MRCCCG``: reports its certified ``upper_`` (the note gives ``lower_``; the optimum ``R*``
  lies in ``[lower_, upper_]``); with MRCpy and two classes also ``MRCCCG one_hot=False``,
  MRCpy's binary model (below);
* ``full LP (HiGHS)``: the LP with all ``n (2^K - 1)`` rows built and solved in one go, in the
  same features (time includes building it); reports its optimal value;
* ``MRCpy ccg``, only with ``--mrcpy-python``: ``MRC(loss="0-1", phi=..., s=0.3, solver="ccg",
  random_state=0)`` fitted by ``benchmarks/_mrcpy_runner.py`` under that Python (MRCpy 3.0
  needs scikit-learn <= 1.5, hence its own environment: ``benchmarks/README_mrcpy.md``), the
  data passed in a temporary ``.npz`` file; reports its ``upper_``. Two modes: ``default``
  (MRCpy optimizes over 5000 rows, the first ``5000 / K`` of each class) and ``all rows``
  (``fit(X, y, X_=X)``). Its time is the ``fit`` call, measured inside the subprocess.

How MRCpy's solution is evaluated, apples to apples. MRCpy's linear map is ``psi(x) = (1, x)``
(intercept first), MRCCCG's too. With ``K > 2`` classes MRCpy's features are one-hot,
``Phi(x, y) = e_y (x) psi(x)`` with ``mu`` in the layout ``y d + l``, ``tau`` the mean of
``Phi(x_i, y_i)`` and ``lambda = s std(Phi(x_i, y_i)) / sqrt(n)``: MRCCCG's model exactly. With
two classes MRCpy's default features are signed, ``Phi(x, 0) = psi(x)``, ``Phi(x, 1) =
-psi(x)`` (``one_hot=False``, ``mu`` of length ``d``), with ``tau`` and ``lambda`` of those:
another uncertainty set. Its ``R(mu)`` is evaluated in that model, which
``MRCCCG(one_hot=False)`` fits too (with the negated features ``Phi(x, 0) = -psi(x)``,
``Phi(x, 1) = psi(x)``: its ``R(mu)`` is evaluated at ``-mu_`` in MRCpy's convention) and whose
optimum over all rows is also solved here directly by HiGHS (:func:`signed_binary_lp`); and in
the one-hot model with ``mu = (m, -m)``, which gives the same scores ``Phi(x, y)^T mu`` and so
the same classifier. The run checks that MRCpy's ``psi`` on every row equals the one used here
and that its ``tau_mat`` and ``lambda_mat`` equal ``tau`` and ``lambda`` computed here, and
prints the largest differences. MRCpy's ``upper_`` is the value of its LP restricted to the
rows it optimized over; ``R(mu)`` over those rows is printed too (it matches up to MRCpy's
``eps1=1e-2`` when MRCpy converged).

Cases: ``make_classification`` (20 features, 10 informative, standardized) for every ``--n`` x
``--classes`` (``phi="linear"``), then ``phi="fourier"`` with ``--n-components`` random features
on the bundled ai4i and skin_segmentation data (standardized), all with ``s=0.3``. Times are wall
clock, after a warm-up fit that compiles the Numba kernel. With MRCpy, the fourier cases compare
different random features (its own and MRCCCG's): their risks are not of the same model.

    exactclf reproduce mrc                       # everything (long: full LPs)
    exactclf reproduce mrc --n 10000 --classes 2 --datasets
    exactclf reproduce mrc --skip-full-lp        # MRCCCG only, fast
    exactclf reproduce mrc --datasets --mrcpy-python /work/mrcpy-venv/bin/python
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import tempfile
import time
import warnings
from importlib.metadata import version
from pathlib import Path

import numpy as np
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler

from ..datasets import load_dataset
from ..mrc import MRCCCG, mrc_full_lp

#: the runner inside a source checkout (``exactclf`` installed with ``pip install -e .``)
DEFAULT_RUNNER = Path(__file__).resolve().parents[2] / "benchmarks" / "_mrcpy_runner.py"
MRCPY_MODES = ("default", "all rows")


# ------------------------------------------------------------------ risk of a given solution
def worst_case_risk(scores: np.ndarray, tau: np.ndarray, lam: np.ndarray,
                    mu: np.ndarray) -> tuple[float, float]:
    """``R(mu) = -tau^T mu + lam^T |mu| + nu(mu)`` and ``nu(mu)``, where ``nu(mu)`` is the
    largest left-hand side of the 0-1 MRC constraints over the given rows and all nonempty
    label subsets ``C``: ``max_i max_C (sum_{y in C} scores[i, y] - 1) / |C| + 1``, with
    ``scores[i, y] = Phi(x_i, y)^T mu`` (:func:`class_scores`).

    For a fixed size ``|C| = k`` the best subset holds the ``k`` largest scores, so the
    maximum over the ``2^K - 1`` subsets is one over ``K`` prefix sums of the sorted scores.

    Examples
    --------
    >>> import itertools
    >>> import numpy as np
    >>> scores = np.array([[0.9, 0.8, -1.0], [0.2, 0.1, 0.0]])
    >>> R, nu = worst_case_risk(scores, np.array([0.1, 0.2]), np.array([0.01, 0.01]),
    ...                         np.array([0.5, -0.5]))
    >>> round(nu, 6), round(R, 6)  # C = {0, 1} of row 0; R = nu + 0.05 + 0.01
    (1.35, 1.41)
    >>> subsets = [c for k in (1, 2, 3) for c in itertools.combinations(range(3), k)]
    >>> brute = max((scores[:, c].sum(axis=1) - 1).max() / len(c) + 1 for c in subsets)
    >>> round(float(brute), 6)
    1.35
    """
    scores = np.asarray(scores, dtype=np.float64)
    K = scores.shape[1]
    prefix = np.cumsum(-np.sort(-scores, axis=1), axis=1)
    nu = float(((prefix - 1.0) / np.arange(1, K + 1)).max() + 1.0)
    return float(-tau @ mu + lam @ np.abs(mu) + nu), nu


def class_scores(Psi: np.ndarray, mu: np.ndarray, n_classes: int) -> np.ndarray:
    """``Phi(x_i, y)^T mu`` for every row ``psi(x_i)`` of ``Psi`` and every class ``y``.

    One-hot features ``Phi(x, y) = e_y (x) psi(x)`` when ``mu`` has ``n_classes * d`` entries
    (layout ``y d + l``: MRCCCG's, and MRCpy's for more than two classes); MRCpy's default
    binary features ``Phi(x, 0) = psi(x)``, ``Phi(x, 1) = -psi(x)`` when ``n_classes == 2`` and
    ``mu`` has ``d`` entries.

    Examples
    --------
    >>> import numpy as np
    >>> Psi = np.array([[1.0, 2.0]])
    >>> class_scores(Psi, np.array([1.0, 0.0, 0.0, 1.0]), 2).tolist()
    [[1.0, 2.0]]
    >>> class_scores(Psi, np.array([1.0, 1.0]), 2).tolist()
    [[3.0, -3.0]]
    """
    mu = np.ravel(mu)
    d = Psi.shape[1]
    if mu.size == n_classes * d:
        return Psi @ mu.reshape(n_classes, d).T
    if n_classes == 2 and mu.size == d:
        v = Psi @ mu
        return np.column_stack([v, -v])
    raise ValueError(f"mu has {mu.size} entries; expected {n_classes * d} (one-hot) or, for "
                     f"two classes, {d} (signed)")


def feature_statistics(Psi: np.ndarray, y: np.ndarray, n_classes: int, s: float, *,
                       one_hot: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``tau`` (mean of the rows ``Phi(x_i, y_i)``) and ``lambda`` (``s`` times their
    population standard deviation over ``sqrt(n)``), for one-hot features (layout ``y d + l``)
    or, with ``one_hot=False``, the signed binary features of :func:`class_scores`.

    Examples
    --------
    >>> import numpy as np
    >>> Psi, y = np.ones((4, 1)), np.array([0, 0, 0, 1])
    >>> tau, lam = feature_statistics(Psi, y, 2, 1.0)
    >>> tau.tolist(), np.round(lam, 4).tolist()
    ([0.75, 0.25], [0.2165, 0.2165])
    >>> tau, lam = feature_statistics(Psi, y, 2, 1.0, one_hot=False)
    >>> tau.tolist(), np.round(lam, 4).tolist()
    ([0.5], [0.433])
    """
    n = len(Psi)
    if one_hot:
        blocks = [Psi * (y == k)[:, None] for k in range(n_classes)]
    else:
        blocks = [Psi * np.where(y == 0, 1.0, -1.0)[:, None]]
    tau = np.concatenate([b.mean(axis=0) for b in blocks])
    lam = s * np.concatenate([b.std(axis=0) for b in blocks]) / np.sqrt(n)
    return tau, lam


def signed_binary_lp(Psi: np.ndarray, tau: np.ndarray, lam: np.ndarray) -> float | None:
    """``R*`` of the binary MRC in signed features over every row of ``Psi``: ``min -tau^T m +
    lam^T |m| + nu`` s.t. ``|psi(x_i)^T m| <= nu`` and ``nu >= 1/2`` (the subset of both
    labels), solved by HiGHS; None unless proved optimal.

    Examples
    --------
    One constant feature, three samples of class 0 and one of class 1: ``tau = 1/2``, and
    ``R(m) = -m/2 + lam |m| + max(|m|, 1/2)`` is smallest at ``m = 1/2``:

    >>> import numpy as np
    >>> Psi, y = np.ones((4, 1)), np.array([0, 0, 0, 1])
    >>> tau, lam = feature_statistics(Psi, y, 2, 0.3, one_hot=False)
    >>> m = np.array([0.5])
    >>> R_half, _ = worst_case_risk(class_scores(Psi, m, 2), tau, lam, m)
    >>> round(signed_binary_lp(Psi, tau, lam), 6), round(R_half, 6)
    (0.314952, 0.314952)
    """
    from scipy.optimize import linprog

    n, d = Psi.shape
    ones = np.ones((n, 1))
    A = np.block([[Psi, -Psi, -ones], [-Psi, Psi, -ones]])
    c = np.r_[-(tau - lam), tau + lam, 1.0]
    bounds = [(0.0, None)] * (2 * d) + [(0.5, None)]
    res = linprog(c, A_ub=A, b_ub=np.zeros(2 * n), bounds=bounds, method="highs")
    return float(res.fun) if res.status == 0 else None


def mrc_psi(clf: MRCCCG, X) -> np.ndarray:
    """``psi(x)`` of a fitted MRCCCG on ``X``: its feature map, after a constant 1 when it
    fits an intercept."""
    Psi = clf.phi_.transform(X)
    if clf.fit_intercept:
        Psi = np.hstack([np.ones((len(Psi), 1)), Psi])
    return Psi


# ------------------------------------------------------------------------------ full LP
def full_lp_nonzeros(Psi: np.ndarray, n_classes: int) -> int:
    """Nonzeros of the full LP's matrix: row (i, C) holds nu and (mu1, mu2) of the |C| class
    blocks at the nonzeros of psi(x_i)."""
    nnz_rows = int(np.count_nonzero(Psi, axis=1).sum())  # Python int: 2^K overflows int64
    # sum over the nonempty subsets C of |C| = K 2^(K-1); 2^K - 1 rows per sample
    return int((2**n_classes - 1) * len(Psi) + 2 * n_classes * 2 ** (n_classes - 1) * nnz_rows)


def full_lp(clf: MRCCCG, Psi, y_idx, time_limit, max_nonzeros):
    """The full LP in the features of the fitted ``clf`` (same psi, tau, lambda); returns its
    value (None unless HiGHS proved it optimal), the true risk of its solution, the
    (wall-clock, CPU) seconds and a note."""
    t0, c0 = time.perf_counter(), time.process_time()
    K = len(clf.classes_)
    nnz = full_lp_nonzeros(Psi, K)
    if nnz > max_nonzeros:
        return None, None, None, (f"not run: {len(Psi) * (2**K - 1)} rows, {nnz:.2e} nonzeros > "
                                  f"--full-lp-max-nonzeros={max_nonzeros:.0e} (memory)")
    scale = np.abs(Psi).max(axis=0)
    scale[scale == 0] = 1.0
    Psi = Psi / scale
    tau, lam = feature_statistics(Psi, y_idx, K, clf.s)
    res = mrc_full_lp(Psi, y_idx, K, tau, lam, time_limit=time_limit)
    seconds = (time.perf_counter() - t0, time.process_time() - c0)
    R = res.objective if res.status == "Optimal" else None
    true, _ = worst_case_risk(class_scores(Psi, res.mu, K), tau, lam, res.mu)
    return R, true, seconds, f"{res.status}, {res.n_rows} rows, {nnz:.2e} nonzeros"


# -------------------------------------------------------------------------------- MRCpy
def run_mrcpy(python: str, runner: Path, X, y_idx, phi: str, n_components: int, s: float,
              all_rows: bool, timeout: float) -> dict:
    """Fit MRCpy under ``python`` through ``runner`` (a subprocess; data in a temporary
    ``.npz``); its solution as the runner saves it, or ``{"error": why}``."""
    with tempfile.TemporaryDirectory() as tmp:
        path_in, path_out = Path(tmp, "in.npz"), Path(tmp, "out.npz")
        np.savez(path_in, X=X, y=y_idx, phi=phi, s=s, n_components=n_components,
                 all_rows=all_rows, random_state=0)
        try:
            proc = subprocess.run([python, str(runner), str(path_in), str(path_out)],
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"stopped after --mrcpy-timeout={timeout:g} s"}
        except OSError as exc:
            return {"error": f"cannot run {python}: {exc}"}
        if not path_out.exists():
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            return {"error": f"runner exited with {proc.returncode}: {last}"}
        with np.load(path_out) as f:
            sol = {k: f[k] for k in f.files}
    sol["error"] = str(sol["error"])
    sol["versions"] = str(sol["versions"])
    return sol


def evaluate_mrcpy(sol: dict, Psi, y_idx, n_classes: int, s: float, same_map: bool) -> dict:
    """The risk of MRCpy's solution over all rows in its own model (``own``), over the rows it
    optimized over (``on_opt``) and in MRCCCG's one-hot model (``onehot``: equal to ``own``
    for more than two classes; None when the feature maps differ), plus the largest
    differences between its ``psi``, ``tau_mat``, ``lambda_mat`` and the ones computed here."""
    psi, mu = sol["psi"], np.ravel(sol["mu"])
    one_hot = mu.size == n_classes * psi.shape[1]
    tau, lam = feature_statistics(psi, y_idx, n_classes, s, one_hot=one_hot)
    out = {
        "one_hot": one_hot,
        "own": worst_case_risk(class_scores(psi, mu, n_classes), tau, lam, mu)[0],
        "on_opt": worst_case_risk(class_scores(sol["psi_opt"], mu, n_classes), tau, lam,
                                  mu)[0],
        "d_stats": max(np.abs(tau - np.ravel(sol["tau"])).max(),
                       np.abs(lam - np.ravel(sol["lam"])).max()),
        "d_psi": (float(np.abs(psi - Psi).max()) if same_map and psi.shape == Psi.shape
                  else None),
        "tau": tau, "lam": lam,
    }
    if not same_map:
        out["onehot"] = None
    elif one_hot:
        out["onehot"] = out["own"]
    else:
        mu1 = np.r_[mu, -mu]
        tau1, lam1 = feature_statistics(psi, y_idx, n_classes, s)
        out["onehot"] = worst_case_risk(class_scores(psi, mu1, n_classes), tau1, lam1, mu1)[0]
    return out


def mrcpy_rows(args, X, y_idx, clf: MRCCCG, Psi, phi: str, n_components: int):
    """The table rows of MRCpy's modes and, per mode, (seconds, ``R(mu)`` in its own model,
    ``R(mu)`` in MRCCCG's one-hot model or None)."""
    K = len(clf.classes_)
    rows, results, signed_R = [], {}, "?"
    for mode in args.mrcpy_modes:
        sol = run_mrcpy(args.mrcpy_python, args.mrcpy_runner, X, y_idx, phi, n_components,
                        clf.s, mode == "all rows", args.mrcpy_timeout)
        label = f"MRCpy ccg {mode}"
        if sol["error"]:
            rows.append((label, None, None, None, f"failed: {sol['error']}"[:160]))
            continue
        ev = evaluate_mrcpy(sol, Psi, y_idx, K, clf.s, same_map=phi == "linear")
        history = sol["history"]
        note = (f"{len(sol['psi_opt'])} rows optimized over (R(mu) there {ev['on_opt']:.6f}), "
                f"{len(history)} LP solves, tau/lambda diff {ev['d_stats']:.1e}")
        note += "" if ev["d_psi"] is None else f", psi diff {ev['d_psi']:.1e}"
        if not ev["one_hot"]:
            if signed_R == "?":
                R_s = signed_binary_lp(sol["psi"], ev["tau"], ev["lam"])
                signed_R = "not solved" if R_s is None else f"{R_s:.6f}"
            note += f"; signed binary features, R* of that model (HiGHS, all rows) {signed_R}"
            if ev["onehot"] is not None:
                note += f"; R(mu) in the one-hot model {ev['onehot']:.6f}"
        seconds = (float(sol["seconds"]), float(sol["cpu_seconds"]))
        rows.append((label, float(sol["upper"]), ev["own"], seconds, note))
        results[mode] = (seconds, ev["own"], ev["onehot"])
    return rows, results


def fit_mrcccg(X, y, args, **params):
    """A timed MRCCCG fit: the estimator, its (wall-clock, CPU) seconds and a note."""
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = MRCCCG(eps1=args.eps1, device=args.device, lp_solver=args.lp_solver,
                     max_iter=args.max_iter, random_state=0, **params).fit(X, y)
    seconds = (time.perf_counter() - t0, time.process_time() - c0)
    note = (f"{clf.n_iter_} iters, {clf.n_constraints_} constraints ({clf.n_lp_rows_} in the "
            f"final LP), {clf.n_active_features_} features, lower_={clf.lower_:.8f}")
    if caught:
        note += f"; warning: {caught[0].message}"[:80]
    return clf, seconds, note


def ratio(seconds, ref_seconds) -> str:
    """``seconds / ref_seconds`` in wall-clock and CPU time (both are pairs)."""
    return (f"{seconds[0] / ref_seconds[0]:.1f}x the time "
            f"({seconds[1] / ref_seconds[1]:.1f}x the CPU time)")


def verdict(name, label, seconds, risk, ref_label, ref_seconds, ref_risk, eps1):
    """One line: how much longer MRCpy took than MRCCCG, both risks in the same model, and
    whether the target (MRCCCG >= 10x faster in wall-clock time at equal or better risk) is
    met."""
    met = seconds[0] >= 10 * ref_seconds[0] and ref_risk <= risk + eps1
    print(f"{name:<28} {label} / {ref_label}: {ratio(seconds, ref_seconds)}; R(mu) "
          f"{risk:.6f} vs {ref_risk:.6f} (target >= 10x faster at equal or better risk: "
          f"{'met' if met else 'NOT met'})", flush=True)


def run_case(name, X, y, args, **params):
    rows = []
    clf, t_ccg, note = fit_mrcccg(X, y, args, **params)
    K = len(clf.classes_)
    y_idx = np.searchsorted(clf.classes_, y)
    Psi = mrc_psi(clf, X)
    tau, lam = feature_statistics(Psi, y_idx, K, clf.s)
    true_ccg, _ = worst_case_risk(class_scores(Psi, clf.mu_, K), tau, lam, clf.mu_)
    rows.append(("MRCCCG", clf.upper_, true_ccg, t_ccg, note))
    compact = None
    if args.mrcpy_python and K == 2:
        # MRCpy's default binary model; MRCCCG's compact features are Phi(x, y) = (-1, +1)_y
        # psi(x), the negatives of MRCpy's, so its mu_ is evaluated as -mu_ in MRCpy's
        clf2, t2, note2 = fit_mrcccg(X, y, args, one_hot=False, **params)
        tau2, lam2 = feature_statistics(Psi, y_idx, K, clf.s, one_hot=False)
        true2, _ = worst_case_risk(class_scores(Psi, -clf2.mu_, K), tau2, lam2, -clf2.mu_)
        rows.append(("MRCCCG one_hot=False", clf2.upper_, true2, t2, note2))
        compact = (t2, clf2.upper_)
    t_full = None
    if not args.skip_full_lp:
        R_full, true_full, t_full, note = full_lp(clf, Psi, y_idx, args.full_lp_time_limit,
                                                  args.full_lp_max_nonzeros)
        rows.append(("full LP (HiGHS)", R_full, true_full, t_full, note))
    mrcpy = {}
    if args.mrcpy_python:
        more, mrcpy = mrcpy_rows(args, X, y_idx, clf, Psi, params.get("phi", "linear"),
                                 params.get("n_components", 0))
        rows += more
    for label, R, true, sec, note in rows:
        wall, cpu = (None, None) if sec is None else sec
        cells = ["-" if v is None else f"{v:.{p}f}"
                 for v, p in ((wall, 2), (cpu, 2), (R, 8), (true, 8))]
        print(f"{name:<28} {label:<20} {cells[0]:>9} {cells[1]:>8} {cells[2]:>11} "
              f"{cells[3]:>11}  {note}", flush=True)
    if t_full is not None:
        print(f"{name:<28} full LP / MRCCCG: {ratio(t_full, t_ccg)}", flush=True)
    for mode, (sec, own, onehot) in mrcpy.items():
        label = f"MRCpy {mode}"
        if compact is not None:
            verdict(name, label, sec, own, "MRCCCG one_hot=False", *compact, args.eps1)
        if onehot is not None:
            verdict(name, label, sec, onehot, "MRCCCG", t_ccg, clf.upper_, args.eps1)
        elif compact is None:
            print(f"{name:<28} {label} / MRCCCG: {ratio(sec, t_ccg)} (different feature "
                  "maps: risks not comparable)", flush=True)


def main(argv: list[str] | None = None, mrcpy_runner: Path = DEFAULT_RUNNER) -> None:
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
    parser.add_argument("--mrcpy-python", metavar="PYTHON",
                        help="a Python with MRCpy 3.0 installed (benchmarks/README_mrcpy.md); "
                             "without it MRCpy is not run")
    parser.add_argument("--mrcpy-runner", type=Path, default=mrcpy_runner,
                        help="the script run under --mrcpy-python (default: %(default)s)")
    parser.add_argument("--mrcpy-modes", nargs="+", default=list(MRCPY_MODES),
                        choices=MRCPY_MODES,
                        help="MRCpy's 5000-row subsample (default) and/or X_=X (all rows)")
    parser.add_argument("--mrcpy-timeout", type=float, default=1800.0,
                        help="seconds per MRCpy fit (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.mrcpy_python and not args.mrcpy_runner.is_file():
        parser.error(f"--mrcpy-runner {args.mrcpy_runner} does not exist (it is "
                     "benchmarks/_mrcpy_runner.py of the source tree)")

    # compile the Numba kernel once (cached on disk afterwards), outside the timings
    Xw, yw = make_classification(n_samples=60, n_features=4, random_state=0)
    MRCCCG(device=args.device).fit(Xw, yw)
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}, Python "
          f"{platform.python_version()}, highspy {version('highspy')}; MRCCCG eps1={args.eps1}, "
          f"lp_solver={args.lp_solver}, device={args.device}")
    if args.mrcpy_python:
        probe = run_mrcpy(args.mrcpy_python, args.mrcpy_runner, Xw, yw, "linear", 0, 0.3, False,
                          args.mrcpy_timeout)
        if probe["error"]:
            parser.error(f"MRCpy does not run under --mrcpy-python {args.mrcpy_python}: "
                         f"{probe['error']}")
        print(f"# MRCpy under {args.mrcpy_python}: {probe['versions']}; MRC(loss='0-1', "
              "solver='ccg') defaults (eps1=1e-2, n_max=400, max_iters=150)")
    else:
        print("# MRCpy not run (--mrcpy-python not given)")
    print(f"{'case':<28} {'method':<20} {'time [s]':>9} {'cpu [s]':>8} {'reported':>11} "
          f"{'R(mu)':>11}  note")
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
