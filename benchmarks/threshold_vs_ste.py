"""ThresholdNetLasso (convex, global optimum) versus straight-through-estimator training.

Two-layer threshold networks, squared loss on labels in {-1, +1}, weight decay beta = 1e-3.
Datasets: the synthetic setup of the convex-threshold-network paper (Gaussian X, labels from
a random two-layer tanh teacher), (n, d) in {(20, 100), (50, 50), (100, 20)} with 1000 test
points, and Haberman (UCI, 70/30 stratified split). For each: the training objective
``1/2 |f(X) - y|^2 + beta * sum_j |w_j|`` (for the STE networks with the best rescaling of
their amplitudes), train / test accuracy and fit time of ThresholdNetLasso and of STE with
identity, ReLU, leaky-ReLU and clipped-ReLU backward proxies (same width as the convex
network, 5 initializations each, full-batch Adam), side by side.

    python benchmarks/threshold_vs_ste.py [--epochs 3000] [--n-arrangements 5000] [--seeds 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.model_selection import train_test_split

from exactclf.datasets import load_haberman
from exactclf.threshold import ThresholdNetLasso
from exactclf.threshold._ste import PROXIES, train_ste

BETA = 1e-3


def teacher_data(n, d, n_test=1000, width=10, seed=0):
    rng = np.random.default_rng(seed)
    W1 = rng.standard_normal((d, width)) / np.sqrt(d)
    w2 = rng.standard_normal(width)
    X = rng.standard_normal((n + n_test, d))
    y = np.where(np.tanh(X @ W1) @ w2 >= 0, 1, -1)
    return X[:n], y[:n], X[n:], y[n:]


def haberman():
    X, y = load_haberman(return_X_y=True)
    y = 2 * y - 1
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
    return (Xtr - mu) / sd, ytr, (Xte - mu) / sd, yte


def run(name, Xtr, ytr, Xte, yte, args):
    t0 = time.perf_counter()
    clf = ThresholdNetLasso(beta=BETA, n_arrangements=args.n_arrangements, random_state=0,
                            max_iter=args.max_iter).fit(Xtr, ytr)
    t_cvx = time.perf_counter() - t0
    rows = [(
        "ThresholdNetLasso", clf.objective_, clf.objective_,
        np.mean(clf.predict(Xtr) == ytr), np.mean(clf.predict(Xte) == yte), t_cvx,
        f"{clf.arrangements_}, {clf.n_patterns_} patterns, gap {clf.dual_gap_:.1e}",
    )]
    width = max(clf.n_neurons_, 1)
    below_all = True
    for proxy in PROXIES:
        objs, tr, te, ts = [], [], [], []
        for seed in range(args.seeds):
            t0 = time.perf_counter()
            (U, b, s, w), obj = train_ste(Xtr, ytr.astype(float), width, BETA, proxy,
                                          epochs=args.epochs, lr=args.lr, seed=seed)
            ts.append(time.perf_counter() - t0)
            objs.append(obj)
            tr.append(np.mean(np.where((Xtr @ U + b >= 0) @ (s * w) > 0, 1, -1) == ytr))
            te.append(np.mean(np.where((Xte @ U + b >= 0) @ (s * w) > 0, 1, -1) == yte))
        below_all &= clf.objective_ <= min(objs) * (1 + 1e-9)
        at_opt = sum(o <= clf.objective_ * (1 + 1e-6) for o in objs)
        rows.append((proxy, min(objs), max(objs), np.mean(tr), np.mean(te), np.mean(ts),
                     f"{args.seeds} seeds, width {width}, {at_opt} reach the convex optimum"))
    print(f"\n{name}: n_train={len(ytr)}, d={Xtr.shape[1]}, beta={BETA:g}")
    print(f"{'method':18s} {'objective min':>14s} {'objective max':>14s} {'train acc':>9s} "
          f"{'test acc':>8s} {'fit s':>7s}  notes")
    for r in rows:
        print(f"{r[0]:18s} {r[1]:14.6g} {r[2]:14.6g} {r[3]:9.3f} {r[4]:8.3f} {r[5]:7.2f}  "
              f"{r[6]}")
    print(f"convex objective <= every STE run: {below_all}")
    return below_all


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=3000)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--n-arrangements", type=int, default=5000)
    parser.add_argument("--max-iter", type=int, default=5000)
    args = parser.parse_args()
    results = []
    for n, d in [(20, 100), (50, 50), (100, 20)]:
        results.append(run(f"synthetic tanh teacher (n={n}, d={d})",
                           *teacher_data(n, d), args))
    results.append(run("haberman (UCI)", *haberman(), args))
    print(f"\nconvex objective <= every STE run on all datasets: {all(results)}")


if __name__ == "__main__":
    main()
