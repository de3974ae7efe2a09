"""ThresholdNetLassoCV against GridSearchCV(ThresholdNetLasso) over the same grid and folds.

A user choosing ``beta`` by cross-validation would otherwise write
``GridSearchCV(ThresholdNetLasso(random_state=0), {"beta": grid}, cv=5)``: it rebuilds the
arrangement dictionary and re-solves from scratch for every (beta, fold), and reconstructs
every selected neuron each time. ThresholdNetLassoCV builds one dictionary per fold, solves
the path on it (each interior-point solve on a working set seeded from the previous beta's
solution, checked against the whole dictionary) and reconstructs each pattern's plane once
per fold. Both are timed in the same run, serial (``n_jobs=1``: folds, and GridSearchCV's
fits, one at a time), on the same grid (``ThresholdNetLassoCV.betas_``) and
the same stratified folds; the table reports the chosen beta, the mean held-out accuracy at it
and the wall times (the fastest of ``--repeats`` runs of each, alternating which goes first,
as the machine's load varies).

    python benchmarks/threshold_cv.py [--dataset bloodtransfer] [--n-samples 0] [--betas 12]
        [--folds 5] [--n-arrangements 1000] [--loss squared] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from exactclf.datasets import load_dataset
from exactclf.threshold import ThresholdNetLasso, ThresholdNetLassoCV


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="bloodtransfer")
    parser.add_argument("--n-samples", type=int, default=0, help="subsample (0: all)")
    parser.add_argument("--betas", type=int, default=12)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--n-arrangements", type=int, default=1000)
    parser.add_argument("--loss", default="squared")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    data = load_dataset(args.dataset)
    X, y = data.data, data.target
    if args.n_samples:
        idx = np.random.default_rng(0).choice(len(X), args.n_samples, replace=False)
        X, y = X[idx], y[idx]
    print(f"{args.dataset}: {X.shape[0]} x {X.shape[1]}, {args.betas} betas, {args.folds} "
          f"folds, n_arrangements={args.n_arrangements}, loss={args.loss}; "
          f"load average {os.getloadavg()[0]:.1f}")
    folds = StratifiedKFold(args.folds)
    common = {"n_arrangements": args.n_arrangements, "loss": args.loss, "random_state": 0}
    grid = ThresholdNetLassoCV(betas=args.betas, cv=folds, **common).fit(X, y).betas_

    def run_cv():
        return ThresholdNetLassoCV(betas=args.betas, cv=folds, **common).fit(X, y)

    def run_grid():
        return GridSearchCV(ThresholdNetLasso(**common), {"beta": list(grid)}, cv=folds).fit(
            X, y)

    times = {"cv": [], "grid": []}
    for r in range(args.repeats):
        for name in (("cv", "grid") if r % 2 == 0 else ("grid", "cv")):
            t0 = time.perf_counter()
            fitted = run_cv() if name == "cv" else run_grid()
            times[name].append(time.perf_counter() - t0)
            if name == "cv":
                cv = fitted
            else:
                gs = fitted
    t_cv, t_gs = min(times["cv"]), min(times["grid"])
    print("seconds per run: ThresholdNetLassoCV " + ", ".join(f"{t:.1f}" for t in times["cv"])
          + "; GridSearchCV " + ", ".join(f"{t:.1f}" for t in times["grid"]))
    mean = cv.accuracy_path_.mean(axis=1)
    gs_mean = gs.cv_results_["mean_test_score"]
    print(f"{'method':22s} {'beta':>10s} {'CV accuracy':>12s} {'seconds':>9s}  final fit")
    print(f"{'ThresholdNetLassoCV':22s} {cv.beta_:10.4g} {mean.max():12.4f} {t_cv:9.1f}  "
          f"{cv.n_neurons_} neurons, dual gap {cv.dual_gap_:.2g}")
    best = gs.best_estimator_
    print(f"{'GridSearchCV':22s} {gs.best_params_['beta']:10.4g} {gs.best_score_:12.4f} "
          f"{t_gs:9.1f}  {best.n_neurons_} neurons, dual gap {best.dual_gap_:.2g}")
    print(f"same beta: {cv.beta_ == gs.best_params_['beta']}; largest difference of the "
          f"mean accuracy paths: {np.max(np.abs(mean - gs_mean)):.2g}; speed-up (fastest "
          f"runs) {t_gs / t_cv:.2f}x; load average after the runs {os.getloadavg()[0]:.1f}")
    print("beta        mean acc (CV)  mean acc (grid)  neurons (fold mean)")
    for b, m, g, k in zip(cv.betas_, mean, gs_mean, cv.n_neurons_path_.mean(axis=1),
                          strict=True):
        print(f"{b:10.4g}  {m:13.4f}  {g:15.4f}  {k:10.1f}")


if __name__ == "__main__":
    main()
