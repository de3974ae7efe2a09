"""Command line: ``exactclf demo``.

``exactclf demo`` fits ICEClassifier and the linear classifiers a user would otherwise pick
(LinearSVC, LogisticRegression, LDA) on the bundled datasets of the ICE paper's Table 1 and
prints their training errors and fit times side by side.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Sequence

__all__ = ["main"]

#: datasets of the ICE paper's Table 1 with the published exact optimum (training errors)
ICE_TABLE1 = {"voicepath": 19, "haberman": 66, "caesarian": 18, "cryotherapy": 4}


def _baselines() -> dict:
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    return {
        "LinearSVC": make_pipeline(StandardScaler(), LinearSVC(max_iter=100000)),
        "LogisticRegression": make_pipeline(StandardScaler(), LogisticRegression(max_iter=10000)),
        "LDA": LinearDiscriminantAnalysis(),
    }


def _timed_errors(model, X, y) -> tuple[int, float]:
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    elapsed = time.perf_counter() - t0
    return int((model.predict(X) != y).sum()), elapsed


def demo(datasets: Sequence[str], n_jobs: int | None, out=None) -> list[dict]:
    """Fit ICE and the baselines on each dataset; print and return the table rows."""
    out = sys.stdout if out is None else out
    from . import ICEClassifier
    from .datasets import load_dataset

    header = (f"{'dataset':<12} {'N x D':>8} {'published':>9} {'model':<20} {'errors':>6} "
              f"{'time [s]':>9}")
    print(header, file=out)
    print("-" * len(header), file=out)
    rows = []
    for name in datasets:
        X, y = load_dataset(name, return_X_y=True)
        models = {"ICEClassifier": ICEClassifier(n_jobs=n_jobs), **_baselines()}
        for label, model in models.items():
            errors, elapsed = _timed_errors(model, X, y)
            note = ""
            if isinstance(model, ICEClassifier):
                note = "  (proven optimal)" if model.is_optimal_ else "  (not proven optimal)"
            rows.append(dict(dataset=name, model=label, errors=errors, seconds=elapsed))
            shape = f"{X.shape[0]}x{X.shape[1]}"
            print(
                f"{name:<12} {shape:>8} {ICE_TABLE1.get(name, ''):>9} {label:<20} "
                f"{errors:>6} {elapsed:>9.2f}{note}",
                file=out,
                flush=True,
            )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="exactclf",
        description="Classifiers trained to a proven optimum (scikit-learn estimators).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_demo = sub.add_parser(
        "demo",
        help="exact 0-1 loss linear classification vs LinearSVC/LogisticRegression/LDA "
        "on the bundled ICE datasets",
    )
    p_demo.add_argument(
        "--datasets", nargs="+", default=list(ICE_TABLE1), choices=list(ICE_TABLE1),
        help="datasets to run (default: all four)",
    )
    p_demo.add_argument("--n-jobs", type=int, default=-1, help="workers (default: all cores)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        demo(args.datasets, args.n_jobs)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
