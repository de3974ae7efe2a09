"""``exactclf reproduce deepice-table2``: DeepICEMaxoutClassifier versus LinearSVC and an
MLP of the same architecture.

First the certificates on the full data of each dataset and K (one fit with the defaults and
``--cert-time-limit`` seconds): training errors, proven lower bound, gap ``(errors - bound)
/ max(errors, 1)``, how the bound was proven, K-tuples evaluated over the searched space
(the pruning rate of the exact searches), fit time, and whether the optimum is proven. Then
5-fold cross-validation on the bundled Deep-ICE Table 2 datasets, K in {1, 2, 3} hidden
hyperplanes: train / test accuracy mean (sd) and fit time of Deep-ICE, LinearSVC, and
scikit-learn's MLPClassifier with K ReLU units trained by gradient descent (Adam). Deep-ICE
runs with a per-fit ``--time-limit`` (its exact search where ``method="auto"`` allows it,
else the portfolio: the coreset heuristic, partition bounds, the exact search where its
sampled cost fits; blocks of ``--coreset-size`` points, fewer in 5-D so a block solve stays
short); a fit is marked ``*`` in the last column when its optimality is proven on every
fold. Then the exact kernel's throughput (K-tuples per second) and a check of the
expectation "Deep-ICE training accuracy >= the MLP's".

    python benchmarks/deepice_vs_baselines.py [--datasets haberman ...] [--k 1 2 3] [--no-cv]

``--full`` runs the paper's Table 2 protocol instead (:mod:`exactclf._experiments.table2`;
all eleven datasets, 80/20 splits; ``--full --help`` lists its options).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from math import comb

import numpy as np
from sklearn.model_selection import StratifiedKFold
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from .. import DeepICEMaxoutClassifier
from .._base import merge_duplicates
from ..datasets import load_dataset
from ..maxout._exact import bitset_kernel_args, candidate_family
from ..maxout._kernels_cpu import union_search_cpu

DATASETS = {
    "haberman": "deepice_haberman",
    "caesarian": "deepice_caesarian",
    "bloodtransfer": "bloodtransfer",
    "sepsis": "sepsis",
    "voicepath": "deepice_voicepath",
}


def models(K: int, seed: int, n_features: int, args) -> dict:
    block = args.coreset_size if n_features < 5 else min(args.coreset_size, 14)
    return {
        "Deep-ICE": DeepICEMaxoutClassifier(n_hyperplanes=K, random_state=seed,
                                            time_limit=args.time_limit, coreset_size=block,
                                            n_jobs=-1),
        "LinearSVC": make_pipeline(StandardScaler(), LinearSVC(max_iter=100000)),
        f"MLP ReLU({K})": make_pipeline(
            StandardScaler(), MLPClassifier(hidden_layer_sizes=(K,), max_iter=2000,
                                            random_state=seed)),
    }


def cross_validate(name: str, K: int, args, folds: int = 5) -> dict:
    X, y = load_dataset(name, return_X_y=True)
    scores: dict = {}
    for fold, (tr, te) in enumerate(StratifiedKFold(folds, shuffle=True, random_state=0)
                                    .split(X, y)):
        for label, model in models(K, fold, X.shape[1], args).items():
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model.fit(X[tr], y[tr])
            elapsed = time.perf_counter() - t0
            s = scores.setdefault(label, {"train": [], "test": [], "time": [], "proven": []})
            s["train"].append((model.predict(X[tr]) == y[tr]).mean())
            s["test"].append((model.predict(X[te]) == y[te]).mean())
            s["time"].append(elapsed)
            s["proven"].append(getattr(model, "is_optimal_", False))
            if hasattr(model, "method_"):
                s["method"] = model.method_
    return scores


def certificates(names: list[str], ks: list[int], time_limit: float) -> None:
    """One fit per dataset and K on the full data, defaults but ``time_limit``: the
    certificates it reports."""
    print(f"Certificates on the full data (defaults, n_jobs=-1, time_limit={time_limit:g} s); "
          "gap = (errors - bound) / max(errors, 1)")
    print(f"{'dataset':<14} {'n':>5} {'K':>2} {'errors':>7} {'bound':>6} {'gap':>7} "
          f"{'bound by':<10} {'method':<10} {'evaluated/space':>16} {'fit [s]':>8} proven")
    for name in names:
        X, y = load_dataset(DATASETS[name], return_X_y=True)
        for K in ks:
            clf = DeepICEMaxoutClassifier(n_hyperplanes=K, time_limit=time_limit, n_jobs=-1,
                                          random_state=0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                clf.fit(X, y)
            space = (f"{clf.n_candidates_ / clf.n_tuples_:.2e}" if clf.n_tuples_ else "-")
            print(f"{name:<14} {len(X):>5} {K:>2} {clf.training_errors_:>7g} "
                  f"{clf.lower_bound_:>6g} {100 * clf.gap_:>6.1f}% "
                  f"{clf.lower_bound_method_:<10} {clf.method_:<10} {space:>16} "
                  f"{clf.fit_time_:>8.1f} {'yes' if clf.is_optimal_ else 'no'}", flush=True)


def throughput() -> None:
    """The bitset kernel alone on random 2-D data (a noisy disk, its outside as the union),
    one polarity, serial: K-sets settled per second (the size of the space of K-sets,
    pruned ones included, over the kernel's time) and K-sets evaluated per second."""
    rng = np.random.default_rng(0)
    for K, n in ((2, 100), (3, 40), (3, 100)):
        X = rng.normal(size=(n, 2))
        y = (X**2).sum(axis=1) + 0.3 * rng.normal(size=n) > 1.2
        U, wpos, wneg, _ = merge_duplicates(X, y, np.ones(n))
        family, cover = candidate_family(U, wpos, wneg)
        args = bitset_kernel_args(family, cover, wpos, wneg)
        union_search_cpu(*args, K, 0, 1, np.inf, np.inf)  # compile
        t0 = time.perf_counter()
        value, _, n_eval = union_search_cpu(*args, K, 0, len(family), np.inf, np.inf)
        elapsed = time.perf_counter() - t0
        space = comb(len(family) + K - 1, K)
        print(f"kernel K={K}, {n} points in 2-D: {value:g} errors, {len(family)} candidate "
              f"subsets, {space:.3g} K-sets in {elapsed:.2f} s: {space / elapsed:.3g} K-sets/s "
              f"settled, {n_eval / elapsed:.3g} K-sets/s evaluated after pruning", flush=True)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--full" in argv:
        # the full protocol has options of its own (all eleven datasets, not DATASETS), so
        # the rest of the command line is its, not this parser's
        from .table2 import main as table2

        table2([a for a in argv if a != "--full"])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    parser.add_argument("--k", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument("--time-limit", type=float, default=12.0,
                        help="seconds per Deep-ICE fit (default 12)")
    parser.add_argument("--coreset-size", type=int, default=20)
    parser.add_argument("--cert-time-limit", type=float, default=60.0,
                        help="seconds of each full-data fit of the certificate table "
                             "(default 60)")
    parser.add_argument("--no-cv", action="store_true",
                        help="only the certificate table and the kernel's throughput")
    # listed for --help only: main hands a command line with --full to table2 unparsed
    parser.add_argument("--full", action="store_true",
                        help="the paper's Table 2 protocol instead: all eleven datasets, "
                             "80/20 splits, 300 s per fit (options: --full --help)")
    args = parser.parse_args(argv)
    certificates(args.datasets, args.k, args.cert_time_limit)
    if args.no_cv:
        throughput()
        return
    print(f"5-fold CV; Deep-ICE time limit {args.time_limit:g} s per fit, coreset blocks of "
          f"{args.coreset_size} points (at most 14 in 5-D); '*': proven optimal on every fold")
    print(f"{'dataset':<14} {'K':>2} {'model':<16} {'train acc':>15} {'test acc':>15} "
          f"{'fit [s]':>8}")
    shortfalls = []
    for name in args.datasets:
        for K in args.k:
            scores = cross_validate(DATASETS[name], K, args)
            for label, s in scores.items():
                tr, te = np.array(s["train"]), np.array(s["test"])
                tag = f" ({s['method']}{'*' if all(s['proven']) else ''})" if "method" in s else ""
                print(f"{name:<14} {K:>2} {label:<16} {tr.mean():.3f} ({tr.std():.3f}) "
                      f"{te.mean():.3f} ({te.std():.3f}) {np.mean(s['time']):>8.2f}{tag}",
                      flush=True)
            deep, mlp = np.array(scores["Deep-ICE"]["train"]), np.array(
                scores[f"MLP ReLU({K})"]["train"])
            if np.any(deep < mlp):
                shortfalls.append(f"{name} K={K}: folds {np.flatnonzero(deep < mlp).tolist()} "
                                  f"(Deep-ICE {deep.mean():.3f} vs MLP {mlp.mean():.3f})")
    throughput()
    print("Deep-ICE training accuracy >= MLP's on every fold:",
          "yes" if not shortfalls else "no; " + "; ".join(shortfalls))

