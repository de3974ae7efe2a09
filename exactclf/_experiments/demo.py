"""``exactclf demo``: the five estimators next to the baselines a user would otherwise pick,
on bundled data, in one table with each model's certificate."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .._describe import MRC_UPPER_MEANING, certificate
from .._registry import MODELS
from ._common import linear_baselines, mlp, scaled, timed_fit

__all__ = ["DEMO_ICE", "demo"]

#: the demo's ICE datasets (Cryotherapy, ~45 s alone, is in ``exactclf reproduce ice-table1``)
DEMO_ICE = ("voicepath", "haberman", "caesarian")


class _Table:
    def __init__(self, out):
        self.out, self.rows, self.notes = out, [], []
        self.header = (f"{'problem':<28} {'dataset':<12} {'model':<22} {'train':>7} {'test':>7} "
                       f"{'time [s]':>8}  certificate")

    def section(self, title: str, unit: str) -> None:
        print(f"\n{title} ({unit})", file=self.out)
        print(self.header, file=self.out)
        print("-" * len(self.header), file=self.out)

    def add(self, problem, dataset, label, model, fitted, train, test=None) -> None:
        def fmt(v):
            return "" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)

        seconds, caught = fitted
        row = dict(problem=problem, dataset=dataset, model=label, train=train, test=test,
                   seconds=seconds, certificate=certificate(model),
                   warnings=[f"{w.category.__name__}: {w.message}" for w in caught])
        self.rows.append(row)
        print(f"{problem:<28} {dataset:<12} {label:<22} {fmt(train):>7} {fmt(test):>7} "
              f"{seconds:>8.2f}  {row['certificate']}", file=self.out, flush=True)
        for text in row["warnings"]:
            print(f"    warning: {' '.join(text.split())}", file=self.out, flush=True)


def _errors(model, X, y) -> int:
    return int((model.predict(X) != y).sum())


def _split(X, y):
    from sklearn.model_selection import train_test_split

    return train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)


def demo(datasets: Sequence[str] = DEMO_ICE, n_jobs: int | None = -1, out=None,
         estimators: Sequence[str] = tuple(MODELS)) -> list[dict]:
    """Fit each estimator and its baselines on bundled data; print and return the rows.

    Exact estimators report training errors (the quantity they minimize); the others report
    accuracy on a stratified 70/30 split. Every warning a fit raised is printed under its row.
    """
    from .. import MRCCCG, DeepICEMaxoutClassifier, ICEClassifier, NGDClassifier, ThresholdNetLasso
    from ..datasets import load_dataset
    from ..ngd import make_peaks

    out = sys.stdout if out is None else out
    table = _Table(out)
    if "ice" in estimators:
        table.section("Exact 0-1 loss linear classification", "training errors")
        for name in datasets:
            X, y = load_dataset(name, return_X_y=True)
            for label, model in {"ICEClassifier": ICEClassifier(n_jobs=n_jobs),
                                 **linear_baselines()}.items():
                fitted = timed_fit(model, X, y)
                table.add("linear, 0-1 loss", name, label, model, fitted, _errors(model, X, y))
    if "deepice" in estimators:
        table.section("Exact 0-1 loss maxout network, K=2 hyperplanes", "training errors")
        X, y = load_dataset("deepice_voicepath", return_X_y=True)
        for label, model in {
            "DeepICEMaxout(K=2)": DeepICEMaxoutClassifier(n_hyperplanes=2, n_jobs=n_jobs,
                                                          random_state=0),
            "MLPClassifier(2)": mlp((2,)),
            "LinearSVC": linear_baselines()["LinearSVC"],
        }.items():
            fitted = timed_fit(model, X, y)
            table.add("maxout, 0-1 loss", "voicepath", label, model, fitted,
                      _errors(model, X, y))

    def accuracy_rows(problem, dataset, X, y, models):
        Xtr, Xte, ytr, yte = _split(X, y)
        for label, model in models.items():
            fitted = timed_fit(model, Xtr, ytr)
            table.add(problem, dataset, label, model, fitted, model.score(Xtr, ytr),
                      model.score(Xte, yte))

    if "threshold" in estimators or "mrc" in estimators or "ngd" in estimators:
        table.section("Certified and Newton-trained models", "accuracy, 70/30 split")
    if "threshold" in estimators:
        X, y = load_dataset("bloodtransfer", return_X_y=True)
        accuracy_rows("threshold net, weight decay", "bloodtransfer", X, y, {
            "ThresholdNetLasso": scaled(ThresholdNetLasso(
                beta=1.0, arrangements="sample", n_arrangements=300, random_state=0)),
            "MLPClassifier(50)": mlp((50,)),
        })
    if "mrc" in estimators:
        X, y = load_dataset("rice_cammeo", return_X_y=True)
        accuracy_rows("minimax risk, 0-1 loss", "rice_cammeo", X, y, {
            "MRCCCG(fourier)": scaled(MRCCCG(phi="fourier", random_state=0)),
            "LogisticRegression": linear_baselines()["LogisticRegression"],
        })
    if "ngd" in estimators:
        X, y = make_peaks(2000, random_state=0)
        net = dict(hidden_layer_sizes=(12, 12, 12, 6), activation="tanh",
                   batch_size=len(_split(X, y)[0]), max_iter=100, random_state=0)
        accuracy_rows("net, 100 full-batch steps", "peaks", X, y, {
            "NGDClassifier": NGDClassifier(**net),
            "Adam (same net)": NGDClassifier(solver="adam", learning_rate_init=1e-2, **net),
        })
    if "mrc" in estimators:
        print(f"\nMRCCCG's worst-case risk: its {MRC_UPPER_MEANING}.", file=out)
    return table.rows
