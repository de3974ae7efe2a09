"""DeepICEMaxoutClassifier versus LinearSVC and an MLP of the same architecture.

5-fold cross-validation on the bundled Deep-ICE Table 2 datasets, K in {1, 2, 3} hidden
hyperplanes: train / test accuracy mean (sd) and fit time of Deep-ICE (exact where its size
allows, else the coreset heuristic), LinearSVC, and scikit-learn's MLPClassifier with K ReLU
units trained by gradient descent (Adam). Then the exact kernel's throughput (K-tuples per
second) on 100 points in 2-D.

    python benchmarks/deepice_vs_baselines.py [--datasets haberman caesarian ...] [--k 1 2 3]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.model_selection import StratifiedKFold
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from exactclf import DeepICEMaxoutClassifier
from exactclf._base import merge_duplicates
from exactclf.datasets import load_dataset
from exactclf.maxout._exact import exact_union

DATASETS = {
    "haberman": "deepice_haberman",
    "caesarian": "deepice_caesarian",
    "bloodtransfer": "bloodtransfer",
    "sepsis": "sepsis",
    "voicepath": "deepice_voicepath",
}


def models(K: int, seed: int) -> dict:
    return {
        f"Deep-ICE K={K}": DeepICEMaxoutClassifier(n_hyperplanes=K, random_state=seed,
                                                   time_limit=120, n_jobs=-1),
        "LinearSVC": make_pipeline(StandardScaler(), LinearSVC(max_iter=100000)),
        f"MLP ReLU({K})": make_pipeline(
            StandardScaler(), MLPClassifier(hidden_layer_sizes=(K,), max_iter=2000,
                                            random_state=seed)),
    }


def cross_validate(name: str, K: int, folds: int = 5) -> dict:
    X, y = load_dataset(name, return_X_y=True)
    scores: dict = {}
    for fold, (tr, te) in enumerate(StratifiedKFold(folds, shuffle=True, random_state=0)
                                    .split(X, y)):
        for label, model in models(K, fold).items():
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X[tr], y[tr])
            elapsed = time.perf_counter() - t0
            s = scores.setdefault(label, {"train": [], "test": [], "time": []})
            s["train"].append((model.predict(X[tr]) == y[tr]).mean())
            s["test"].append((model.predict(X[te]) == y[te]).mean())
            s["time"].append(elapsed)
    return scores


def throughput() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 2))
    y = (X**2).sum(axis=1) + 0.3 * rng.normal(size=100) > 1.2
    U, wpos, wneg, _ = merge_duplicates(X, y, np.ones(100))
    for K in (2, 3):
        t0 = time.perf_counter()
        res = exact_union(U, wpos, wneg, K, n_jobs=-1)
        elapsed = time.perf_counter() - t0
        print(f"exact K={K}, 100 points in 2-D, one polarity: {res.value:g} errors, "
              f"{res.n_evaluated:.3g} K-tuples in {elapsed:.2f} s "
              f"({res.n_evaluated / elapsed:.3g} K-tuples/s after pruning)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    parser.add_argument("--k", nargs="+", type=int, default=[1, 2, 3])
    args = parser.parse_args()
    print(f"{'dataset':<14} {'model':<16} {'train acc':>15} {'test acc':>15} {'fit [s]':>8}")
    for name in args.datasets:
        for K in args.k:
            for label, s in cross_validate(DATASETS[name], K).items():
                tr, te = np.array(s["train"]), np.array(s["test"])
                print(f"{name:<14} {label:<16} {tr.mean():.3f} ({tr.std():.3f}) "
                      f"{te.mean():.3f} ({te.std():.3f}) {np.mean(s['time']):>8.2f}",
                      flush=True)
    throughput()


if __name__ == "__main__":
    main()
