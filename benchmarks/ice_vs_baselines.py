"""ICEClassifier versus the linear classifiers a user would otherwise pick.

Prints, per bundled ICE-paper dataset, the training errors and fit time of ICEClassifier (exact),
a big-M MILP on HiGHS (|w| <= 1e3 on standardized features, a common "exact" formulation that is
not: it cannot reach thin cells), LinearSVC, LogisticRegression and LDA, all in one run, then the
speed ratio MILP / ICE.

    python benchmarks/ice_vs_baselines.py [--milp-time-limit 300] [--datasets voicepath haberman]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from exactclf import ICEClassifier
from exactclf._base import merge_duplicates
from exactclf.cli import ICE_TABLE1, _baselines
from exactclf.datasets import load_dataset
from exactclf.linear._milp import bigm_milp


def milp_errors(X, y, time_limit):
    """Fit the big-M MILP on standardized features; return (errors, seconds, status)."""
    t0 = time.perf_counter()
    mean, std = X.mean(axis=0), X.std(axis=0)
    std[std == 0] = 1.0
    Z = (X - mean) / std
    U, wpos, wneg, _ = merge_duplicates(Z, y == 1, np.ones(len(y)))
    res = bigm_milp(U, wpos, wneg, weight_bound=1e3, time_limit=time_limit)
    elapsed = time.perf_counter() - t0
    errors = int(((Z @ res.coef + res.intercept > 0) != (y == 1)).sum())
    return errors, elapsed, res.status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(ICE_TABLE1))
    parser.add_argument("--milp-time-limit", type=float, default=300.0)
    parser.add_argument("--n-jobs", type=int, default=-1)
    args = parser.parse_args()

    print(f"{'dataset':<12} {'published':>9} {'method':<20} {'errors':>6} {'time [s]':>9}  note")
    ratios = {}
    for name in args.datasets:
        X, y = load_dataset(name, return_X_y=True)
        t0 = time.perf_counter()
        ice = ICEClassifier(n_jobs=args.n_jobs).fit(X, y)
        t_ice = time.perf_counter() - t0
        rows = [("ICEClassifier", int(ice.training_errors_), t_ice,
                 "proven optimal" if ice.is_optimal_ else "NOT proven")]
        m_err, t_milp, status = milp_errors(X, y, args.milp_time_limit)
        rows.append(("big-M MILP (HiGHS)", m_err, t_milp, status))
        for label, model in _baselines().items():
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X, y)
            rows.append((label, int((model.predict(X) != y).sum()),
                         time.perf_counter() - t0, ""))
        for label, err, sec, note in rows:
            print(f"{name:<12} {ICE_TABLE1.get(name, ''):>9} {label:<20} {err:>6} {sec:>9.2f}"
                  f"  {note}", flush=True)
        ratios[name] = (t_milp / t_ice, status)
    print()
    for name, (r, status) in ratios.items():
        capped = " (at least: the MILP hit its time limit)" if "limit" in status.lower() else ""
        print(f"{name}: MILP time / ICE time = {r:.1f}x{capped}")


if __name__ == "__main__":
    main()
