"""Command line: ``exactclf demo``, ``exactclf reproduce ...``, ``exactclf fit ...``.

``exactclf demo`` fits the five estimators on bundled data next to the baselines a user would
otherwise pick and prints one comparison table. ``exactclf reproduce`` re-runs a seed paper's
experiment (see :mod:`exactclf._experiments`). ``exactclf fit`` fits a model to a CSV file,
saves it and prints its interpretable form.
"""

from __future__ import annotations

import argparse
import ast
import csv
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

__all__ = ["main", "demo", "describe_model", "read_csv"]

#: datasets of the ICE paper's Table 1 with the published exact optimum (training errors)
ICE_TABLE1 = {"voicepath": 19, "haberman": 66, "caesarian": 18, "cryotherapy": 4}
#: the demo's ICE datasets (Cryotherapy, ~45 s alone, is in ``exactclf reproduce ice-table1``)
DEMO_ICE = ("voicepath", "haberman", "caesarian")

MODELS = ("ice", "deepice", "threshold", "mrc", "ngd")


def _scaled(estimator):
    """``estimator`` behind a StandardScaler."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), estimator)


def linear_baselines() -> dict:
    """The linear classifiers a user would otherwise pick (standardized where it matters)."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC

    return {
        "LinearSVC": _scaled(LinearSVC(max_iter=100000)),
        "LogisticRegression": _scaled(LogisticRegression(max_iter=10000)),
        "LDA": LinearDiscriminantAnalysis(),
    }


def _mlp(hidden, max_iter=2000):
    from sklearn.neural_network import MLPClassifier

    return _scaled(MLPClassifier(hidden, max_iter=max_iter, random_state=0))


def timed_fit(model, X, y) -> float:
    """Fit ``model`` (warnings silenced) and return the seconds it took."""
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    return time.perf_counter() - t0


def _certificate(model) -> str:
    """The optimality certificate a fitted exactclf estimator reports, in words."""
    est = model[-1] if hasattr(model, "steps") else model
    if hasattr(est, "is_optimal_") and hasattr(est, "lower_bound_"):
        if est.is_optimal_:
            return "proven optimal"
        return f"not proven optimal (lower bound {est.lower_bound_:g})"
    if hasattr(est, "dual_gap_"):
        return f"duality gap {est.dual_gap_:.1e}"
    if hasattr(est, "upper_"):
        return f"worst-case error <= {est.upper_:.3f}"
    return ""


class _Table:
    def __init__(self, out):
        self.out, self.rows = out, []
        self.header = (f"{'problem':<28} {'dataset':<12} {'model':<22} {'train':>7} {'test':>7} "
                       f"{'time [s]':>8}  certificate")

    def section(self, title: str, unit: str) -> None:
        print(f"\n{title} ({unit})", file=self.out)
        print(self.header, file=self.out)
        print("-" * len(self.header), file=self.out)

    def add(self, problem, dataset, label, model, seconds, train, test=None) -> None:
        def fmt(v):
            return "" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)

        row = dict(problem=problem, dataset=dataset, model=label, train=train, test=test,
                   seconds=seconds, certificate=_certificate(model))
        self.rows.append(row)
        print(f"{problem:<28} {dataset:<12} {label:<22} {fmt(train):>7} {fmt(test):>7} "
              f"{seconds:>8.2f}  {row['certificate']}", file=self.out, flush=True)


def _errors(model, X, y) -> int:
    return int((model.predict(X) != y).sum())


def _split(X, y):
    from sklearn.model_selection import train_test_split

    return train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)


def demo(datasets: Sequence[str] = DEMO_ICE, n_jobs: int | None = -1, out=None,
         estimators: Sequence[str] = MODELS) -> list[dict]:
    """Fit each estimator and its baselines on bundled data; print and return the rows.

    Exact estimators report training errors (the quantity they minimize); the others report
    accuracy on a stratified 70/30 split.
    """
    from . import MRCCCG, DeepICEMaxoutClassifier, ICEClassifier, NGDClassifier, ThresholdNetLasso
    from .datasets import load_dataset
    from .ngd import make_peaks

    table = _Table(sys.stdout if out is None else out)
    if "ice" in estimators:
        table.section("Exact 0-1 loss linear classification", "training errors")
        for name in datasets:
            X, y = load_dataset(name, return_X_y=True)
            for label, model in {"ICEClassifier": ICEClassifier(n_jobs=n_jobs),
                                 **linear_baselines()}.items():
                sec = timed_fit(model, X, y)
                table.add("linear, 0-1 loss", name, label, model, sec, _errors(model, X, y))
    if "deepice" in estimators:
        table.section("Exact 0-1 loss maxout network, K=2 hyperplanes", "training errors")
        X, y = load_dataset("deepice_voicepath", return_X_y=True)
        for label, model in {
            "DeepICEMaxout(K=2)": DeepICEMaxoutClassifier(n_hyperplanes=2, n_jobs=n_jobs,
                                                          random_state=0),
            "MLPClassifier(2)": _mlp((2,)),
            "LinearSVC": linear_baselines()["LinearSVC"],
        }.items():
            sec = timed_fit(model, X, y)
            table.add("maxout, 0-1 loss", "voicepath", label, model, sec, _errors(model, X, y))

    def accuracy_rows(problem, dataset, X, y, models):
        Xtr, Xte, ytr, yte = _split(X, y)
        for label, model in models.items():
            sec = timed_fit(model, Xtr, ytr)
            table.add(problem, dataset, label, model, sec, model.score(Xtr, ytr),
                      model.score(Xte, yte))

    if "threshold" in estimators or "mrc" in estimators or "ngd" in estimators:
        table.section("Certified and Newton-trained models", "accuracy, 70/30 split")
    if "threshold" in estimators:
        X, y = load_dataset("bloodtransfer", return_X_y=True)
        accuracy_rows("threshold net, weight decay", "bloodtransfer", X, y, {
            "ThresholdNetLasso": _scaled(ThresholdNetLasso(
                beta=1.0, arrangements="sample", n_arrangements=300, random_state=0)),
            "MLPClassifier(50)": _mlp((50,)),
        })
    if "mrc" in estimators:
        X, y = load_dataset("rice_cammeo", return_X_y=True)
        accuracy_rows("minimax risk, 0-1 loss", "rice_cammeo", X, y, {
            "MRCCCG(fourier)": _scaled(MRCCCG(phi="fourier", random_state=0)),
            "LogisticRegression": linear_baselines()["LogisticRegression"],
        })
    if "ngd" in estimators:
        X, y = make_peaks(2000, random_state=0)
        net = dict(hidden_layer_sizes=(12, 12, 12, 6), activation="tanh", batch_size=2000,
                   max_iter=100, random_state=0)
        accuracy_rows("net, 100 full-batch steps", "peaks", X, y, {
            "NGDClassifier": NGDClassifier(**net),
            "Adam (same net)": NGDClassifier(solver="adam", learning_rate_init=1e-2, **net),
        })
    return table.rows


# -- exactclf fit --------------------------------------------------------------------------
def read_csv(path: str | Path, target: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Numeric features and the ``target`` column of a CSV file with a header row."""
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r]
    if len(rows) < 2:
        raise ValueError(f"{path}: expected a header row and at least one data row")
    header = [h.strip() for h in rows[0]]
    if target not in header:
        raise ValueError(f"{path}: no column {target!r}; columns are {', '.join(header)}")
    t = header.index(target)
    names = [h for j, h in enumerate(header) if j != t]
    labels, feats = [], []
    for i, r in enumerate(rows[1:], start=2):
        if len(r) != len(header):
            raise ValueError(f"{path}, line {i}: {len(r)} fields, the header has {len(header)}")
        labels.append(r[t].strip())
        try:
            feats.append([float(v) for j, v in enumerate(r) if j != t])
        except ValueError as exc:
            raise ValueError(f"{path}, line {i}: non-numeric feature ({exc}); encode "
                             "categorical columns as numbers first") from exc
    try:
        y = np.array([float(v) for v in labels])
        if np.all(y == np.round(y)):
            y = y.astype(np.int64)
    except ValueError:
        y = np.array(labels)
    return np.array(feats, dtype=np.float64), y, names


def _make_model(name: str, params: dict):
    from . import MRCCCG, DeepICEMaxoutClassifier, ICEClassifier, NGDClassifier, ThresholdNetLasso

    cls = {"ice": ICEClassifier, "deepice": DeepICEMaxoutClassifier,
           "threshold": ThresholdNetLasso, "mrc": MRCCCG, "ngd": NGDClassifier}[name]
    return cls(**params)


def _linear_form(w: np.ndarray, b: float, names: Sequence[str]) -> str:
    terms = [f"{c:+.6g}*{n}" for c, n in zip(w, names, strict=True) if c != 0]
    return " ".join(terms + [f"{b:+.6g}"])


def describe_model(model, names: Sequence[str]) -> str:
    """The fitted ``model`` in readable form: its rules over the feature ``names``."""
    from . import MRCCCG, DeepICEMaxoutClassifier, ICEClassifier, NGDClassifier, ThresholdNetLasso

    c = model.classes_
    lines = []
    if isinstance(model, ICEClassifier):
        lines += [f"predict {c[1]!r} if  {_linear_form(model.coef_[0], model.intercept_[0], names)}"
                  f"  > 0,  else {c[0]!r}",
                  f"training errors: {model.training_errors_:g} ({_certificate(model)})"]
    elif isinstance(model, DeepICEMaxoutClassifier):
        inside, other = (c[1], c[0]) if model.polarity_ == 1 else (c[0], c[1])
        lines.append(f"predict {inside!r} if ANY of:")
        lines += [f"    {_linear_form(h[:-1], h[-1], names)}  > 0" for h in model.hyperplanes_]
        lines += [f"else {other!r}",
                  f"training errors: {model.training_errors_:g} ({_certificate(model)})"]
    elif isinstance(model, ThresholdNetLasso):
        lines.append(f"threshold network, {model.n_neurons_} neurons (layer sizes "
                     f"{[w.shape[1] for w in model.hidden_coefs_]}); objective "
                     f"{model.objective_:.6g}, {_certificate(model)}")
        if len(model.hidden_coefs_) == 1:
            W, b = model.hidden_coefs_[0], model.hidden_intercepts_[0]
            for k in range(min(W.shape[1], 20)):
                out_w = ", ".join(f"{v:+.4g}" for v in np.atleast_2d(model.coef_)[:, k])
                lines.append(f"    [{out_w}] * 1{{ {_linear_form(W[:, k], b[k], names)} >= 0 }}")
            if W.shape[1] > 20:
                lines.append(f"    ... {W.shape[1] - 20} more")
    elif isinstance(model, MRCCCG):
        lines.append(f"minimax risk classifier over {len(c)} classes: worst-case expected 0-1 "
                     f"error <= {model.upper_:.4f} (certified), {model.n_iter_} iterations")
    elif isinstance(model, NGDClassifier):
        sizes = [model.coefs_[0].shape[0]] + [w.shape[1] for w in model.coefs_]
        lines.append(f"neural network {sizes} ({model.activation}), final training loss "
                     f"{model.loss_:.4g} after {model.n_iter_} iterations")
    return "\n".join(lines)


def _parse_params(items: Sequence[str]) -> dict:
    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--param expects KEY=VALUE, got {item!r}")
        try:
            params[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[key] = value
    return params


def fit_csv(path: str, target: str, model_name: str, params: dict, output: str | None,
            out=None) -> Path:
    """``exactclf fit``: fit, save with joblib, print the model's readable form."""
    import joblib

    out = sys.stdout if out is None else out
    X, y, names = read_csv(path, target)
    model = _make_model(model_name, params)
    sec = timed_fit(model, X, y)
    dest = Path(output) if output else Path(path).with_suffix(f".{model_name}.joblib")
    joblib.dump(model, dest)
    print(f"{type(model).__name__} fitted on {X.shape[0]} x {X.shape[1]} in {sec:.2f} s; "
          f"training accuracy {model.score(X, y):.4f}; saved to {dest}", file=out)
    print(describe_model(model, names), file=out)
    return dest


def main(argv: Sequence[str] | None = None) -> int:
    from ._experiments import EXPERIMENTS

    parser = argparse.ArgumentParser(
        prog="exactclf",
        description="Classifiers trained to a proven or certified optimum "
                    "(scikit-learn estimators).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_demo = sub.add_parser("demo", help="the five estimators vs their usual baselines on "
                                         "bundled data (about a minute)")
    p_demo.add_argument("--datasets", nargs="+", default=list(DEMO_ICE),
                        choices=list(ICE_TABLE1), help="ICE datasets (default: %(default)s)")
    p_demo.add_argument("--estimators", nargs="+", default=list(MODELS), choices=MODELS)
    p_demo.add_argument("--n-jobs", type=int, default=-1, help="workers (default: all cores)")

    p_rep = sub.add_parser("reproduce", help="re-run a seed paper's experiment")
    p_rep.add_argument("experiment", choices=list(EXPERIMENTS))
    p_rep.add_argument("--quick", action="store_true",
                       help="a smaller version (fewer datasets, folds or seeds)")

    p_fit = sub.add_parser("fit", help="fit a model to a CSV file, save it, print its rules")
    p_fit.add_argument("csv", help="CSV file with a header row; numeric features")
    p_fit.add_argument("--target", required=True, help="name of the label column")
    p_fit.add_argument("--model", required=True, choices=MODELS)
    p_fit.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                       help="estimator parameter, e.g. --param time_limit=60 (repeatable)")
    p_fit.add_argument("--output", help="where to save the model (default: CSV.MODEL.joblib)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        demo(args.datasets, args.n_jobs, estimators=args.estimators)
    elif args.command == "reproduce":
        EXPERIMENTS[args.experiment](quick=args.quick)
    else:
        try:
            fit_csv(args.csv, args.target, args.model, _parse_params(args.param), args.output)
        except (OSError, ValueError, TypeError) as exc:
            print(f"exactclf fit: error: {exc}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
