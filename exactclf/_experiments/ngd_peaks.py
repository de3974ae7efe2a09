"""NGDClassifier (Newton on the last layer + Adam on the hidden layers) versus plain Adam.

Both solvers train the identical network from the identical initialization (same seed); one
iteration is one ``partial_fit`` call, i.e. one epoch of exactly the updates ``fit`` makes (for
NGD on a full batch: one Adam step on the hidden layers and one Newton phase on the output
layer). The model is evaluated after every iteration; evaluation time is not counted in the
time per iteration.

* peaks (Haber & Ruthotto 2017): MATLAB's ``peaks`` on [-3, 3]^2, 5 equal-width level classes,
  5000 training points balanced over the classes (1000 validation points from another seed),
  mapped to [0, 1]^2; network 12-12-12 tanh and a width-6 tanh basis
  (``hidden_layer_sizes=(12, 12, 12, 6)``), full batch.
* ``load_digits`` (8x8 digits shipped with scikit-learn, pixels / 16, stratified 75/25 split),
  a dense 128-10 network (ReLU), minibatches of 200.

Printed: per seed, Adam's best validation accuracy and the iteration it first reached it, the
iteration NGD first reached that accuracy, their ratio; medians over the seeds; the wall time
per iteration of each solver (in the partial_fit loop, and in a plain 50-epoch ``fit``). A figure
with the accuracy curves is saved.

    python benchmarks/ngd_vs_adam.py [--seeds 16] [--peaks-iter 1000] [--digits-iter 100]
                                     [--lr 0.01] [--plot benchmarks/results/ngd_vs_adam.png]
                                     [--datasets peaks digits] [--json curves.json]

The stored results were made by
``python benchmarks/ngd_vs_adam.py | tee benchmarks/results/ngd_vs_adam.txt``.

``benchmarks/ngd_vs_adam.py`` runs this with BLAS limited to one thread (set before NumPy
is imported): the matrices are tiny, and threading only adds overhead on them.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from ..ngd import NGDClassifier, make_peaks

SOLVERS = ("ngd", "adam")


def run_curve(est: NGDClassifier, data, n_iter: int) -> dict:
    """Train ``est`` for ``n_iter`` partial_fit calls; accuracy after each, time per call."""
    X, y, X_val, y_val = data
    classes = np.unique(y)
    train, val, loss, seconds = [], [], [], 0.0
    for _ in range(n_iter):
        t0 = time.perf_counter()
        est.partial_fit(X, y, classes=classes)
        seconds += time.perf_counter() - t0
        train.append(est.score(X, y))
        val.append(est.score(X_val, y_val))
        loss.append(est.loss_)
    return {"train": train, "val": val, "loss": loss, "sec_per_iter": seconds / n_iter}


def first_reaching(curve, target: float):
    """1-based iteration at which ``curve`` first reaches ``target`` (None if never)."""
    hits = np.flatnonzero(np.asarray(curve) >= target - 1e-12)
    return int(hits[0]) + 1 if len(hits) else None


def thresholds_table(runs: dict, levels=(0.8, 0.9, 0.95, 0.98)) -> dict:
    """Median (over seeds) iterations to first reach fixed validation accuracies."""
    out = {}
    for level in levels:
        row = {}
        for s in SOLVERS:
            its = [first_reaching(r["val"], level) for r in runs[s]]
            hit = [i for i in its if i is not None]
            row[s] = (float(np.median(hit)) if hit else None, f"{len(hit)}/{len(its)}")
        out[level] = row
        print(f"validation accuracy {level:.2f}: NGD median {row['ngd'][0]} iterations "
              f"(reached in {row['ngd'][1]} seeds), Adam median {row['adam'][0]} "
              f"(reached in {row['adam'][1]})")
    return out


def horizon_table(runs: dict, n_iter: int) -> dict:
    """The headline ratio depends on how long Adam runs: recompute it for shorter budgets.

    For a budget of ``h`` iterations, Adam's target is its best validation accuracy within
    the first ``h`` iterations; NGD's iterations to reach it are read off its whole curve.
    """
    out = {}
    for h in sorted({100, 300, n_iter} & set(range(1, n_iter + 1))):
        ratios = []
        for r_ngd, r_adam in zip(runs["ngd"], runs["adam"], strict=True):
            target = max(r_adam["val"][:h])
            it_ngd = first_reaching(r_ngd["val"], target)
            ratios.append(None if it_ngd is None
                          else it_ngd / first_reaching(r_adam["val"][:h], target))
        hit = [q for q in ratios if q is not None]
        out[h] = {"ratio_median": float(np.median(hit)) if hit else None,
                  "reached": f"{len(hit)}/{len(ratios)}"}
        print(f"Adam budget {h:>5} iterations: median NGD/Adam iterations to Adam's best "
              f"validation accuracy {out[h]['ratio_median']:.3f} (NGD reached it in "
              f"{out[h]['reached']} seeds)" if hit else
              f"Adam budget {h:>5} iterations: NGD never reached Adam's best")
    return out


def compare(name: str, make_data, make_est, seeds, n_iter: int) -> dict:
    print(f"\n== {name}: {len(seeds)} seeds, {n_iter} iterations each ==")
    print(f"{'seed':>4} {'Adam best val':>13} {'at iter':>7} {'NGD reaches at':>14} "
          f"{'ratio':>6} {'NGD best val':>12} {'NGD train':>9} {'Adam train':>10}")
    runs = {s: [] for s in SOLVERS}
    rows = []
    for seed in seeds:
        data = make_data(seed)
        res = {s: run_curve(make_est(s, seed), data, n_iter) for s in SOLVERS}
        for s in SOLVERS:
            runs[s].append(res[s])
        target = max(res["adam"]["val"])
        it_adam = first_reaching(res["adam"]["val"], target)
        it_ngd = first_reaching(res["ngd"]["val"], target)
        ratio = it_ngd / it_adam if it_ngd is not None else None
        rows.append((seed, target, it_adam, it_ngd, ratio))
        print(f"{seed:>4} {target:>13.4f} {it_adam:>7} {it_ngd if it_ngd else 'never':>14} "
              f"{ratio if ratio is not None else float('nan'):>6.3f} "
              f"{max(res['ngd']['val']):>12.4f} {res['ngd']['train'][-1]:>9.4f} "
              f"{res['adam']['train'][-1]:>10.4f}", flush=True)
    reached = [r for r in rows if r[3] is not None]
    summary = {
        "seeds": list(seeds),
        "n_iter": n_iter,
        "adam_best_val_median": float(np.median([r[1] for r in rows])),
        "adam_iters_median": float(np.median([r[2] for r in rows])),
        "ngd_reached": f"{len(reached)}/{len(rows)}",
        "ngd_iters_median": float(np.median([r[3] for r in reached])) if reached else None,
        "ratio_median": float(np.median([r[4] for r in reached])) if reached else None,
        "ngd_best_val_median": float(np.median([max(r["val"]) for r in runs["ngd"]])),
        "sec_per_iter": {s: float(np.median([r["sec_per_iter"] for r in runs[s]]))
                         for s in SOLVERS},
    }
    summary["iters_to_val"] = thresholds_table(runs)
    summary["by_budget"] = horizon_table(runs, n_iter)
    # cost per epoch as fit() runs it (no evaluation)
    X, y = make_data(seeds[0])[:2]
    summary["fit_sec_per_iter"] = {}
    for s in SOLVERS:
        est = make_est(s, seeds[0]).set_params(max_iter=50, tol=0.0, n_iter_no_change=np.inf)
        t0 = time.perf_counter()
        est.fit(X, y)
        summary["fit_sec_per_iter"][s] = (time.perf_counter() - t0) / est.n_iter_
    t = summary["sec_per_iter"]
    # wall time to Adam's best validation accuracy: iterations x median time per iteration
    summary["time_ratio_median"] = (summary["ratio_median"] * t["ngd"] / t["adam"]
                                    if reached else None)
    print("median over seeds: Adam's best validation accuracy "
          f"{summary['adam_best_val_median']:.4f} first reached at iteration "
          f"{summary['adam_iters_median']:g} by Adam and "
          f"{summary['ngd_iters_median']} by NGD (reached in {summary['ngd_reached']} seeds); "
          f"median ratio NGD/Adam iterations {summary['ratio_median']}")
    print(f"wall time per iteration (median over seeds): NGD {1e3 * t['ngd']:.2f} ms, "
          f"Adam {1e3 * t['adam']:.2f} ms (ratio {t['ngd'] / t['adam']:.2f}); in fit() "
          f"(50 epochs, seed {seeds[0]}): NGD {1e3 * summary['fit_sec_per_iter']['ngd']:.2f} ms, "
          f"Adam {1e3 * summary['fit_sec_per_iter']['adam']:.2f} ms; "
          f"NGD's best validation accuracy (median) {summary['ngd_best_val_median']:.4f}")
    if reached:
        print("wall time to Adam's best validation accuracy, NGD/Adam (median iteration ratio x "
              f"time-per-iteration ratio): {summary['time_ratio_median']:.2f}")
    return {"summary": summary, "runs": runs}


def peaks_data(seed: int):
    X, y = make_peaks(5000, random_state=seed)
    X_val, y_val = make_peaks(1000, random_state=10_000 + seed)
    return X, y, X_val, y_val


def digits_data(seed: int):
    X, y = load_digits(return_X_y=True)
    X_tr, X_val, y_tr, y_val = train_test_split(X / 16.0, y, test_size=0.25, stratify=y,
                                                random_state=seed)
    return X_tr, y_tr, X_val, y_val


def plot(results: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(name, key) for name in results for key in ("train", "val")]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.4), squeeze=False)
    colors = {"ngd": "tab:red", "adam": "tab:blue"}
    for ax, (name, key) in zip(axes[0], panels, strict=True):
        lowest = 1.0
        for s in SOLVERS:
            curves = np.array([r[key] for r in results[name]["runs"][s]])
            lowest = min(lowest, curves.min())
            it = np.arange(1, curves.shape[1] + 1)
            ax.plot(it, np.median(curves, axis=0), color=colors[s],
                    label=f"{s.upper()} (median)")
            ax.fill_between(it, curves.min(axis=0), curves.max(axis=0), color=colors[s],
                            alpha=0.2, linewidth=0)
        ax.set_xscale("log")
        ax.set_xlabel("iteration (epoch)")
        ax.set_ylabel(f"{'training' if key == 'train' else 'validation'} accuracy")
        ax.set_title(f"{name}: {'training' if key == 'train' else 'validation'}")
        ax.set_ylim(np.floor(10 * lowest) / 10, 1.0)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"\nfigure saved to {path}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=16, help="number of seeds (0, 1, ...)")
    parser.add_argument("--peaks-iter", type=int, default=1000)
    parser.add_argument("--digits-iter", type=int, default=100)
    parser.add_argument("--lr", type=float, default=0.01, help="Adam step (both solvers)")
    parser.add_argument("--newton-steps", type=int, default=5)
    parser.add_argument("--cg-iter", type=int, default=3)
    parser.add_argument("--alpha", type=float, default=1e-4, help="L2 penalty (both solvers)")
    parser.add_argument("--datasets", nargs="+", default=["peaks", "digits"],
                        choices=["peaks", "digits"])
    parser.add_argument("--plot", default="ngd_vs_adam.png", help="figure file")
    parser.add_argument("--json", default=None, help="also save all curves to this file")
    parser.add_argument("--from-json", default=None,
                        help="no training: re-tabulate and re-plot the curves of a --json file")
    args = parser.parse_args(argv)
    if args.from_json:
        with open(args.from_json) as fh:
            results = json.load(fh)
        for name, res in results.items():
            print(f"\n== {name}: curves from {args.from_json} ==")
            thresholds_table(res["runs"])
            horizon_table(res["runs"], res["summary"]["n_iter"])
        plot(results, args.plot)
        return
    seeds = list(range(args.seeds))
    warnings.simplefilter("ignore")

    def peaks_est(solver, seed):
        return NGDClassifier((12, 12, 12, 6), activation="tanh", solver=solver,
                             batch_size=5000, learning_rate_init=args.lr, shuffle=False,
                             newton_steps=args.newton_steps, cg_iter=args.cg_iter,
                             alpha=args.alpha, random_state=seed, device="cpu")

    def digits_est(solver, seed):
        return NGDClassifier((128,), activation="relu", solver=solver, batch_size=200,
                             learning_rate_init=args.lr, newton_steps=args.newton_steps,
                             cg_iter=args.cg_iter, alpha=args.alpha, random_state=seed,
                             device="cpu")

    print(f"NGD: newton_steps={args.newton_steps}, cg_iter={args.cg_iter}; "
          f"learning_rate_init={args.lr}, alpha={args.alpha:g} for both solvers")
    results = {}
    if "peaks" in args.datasets:
        results["peaks"] = compare("peaks, 12-12-12-6 tanh, full batch", peaks_data, peaks_est,
                                   seeds, args.peaks_iter)
    if "digits" in args.datasets:
        results["digits"] = compare("load_digits, 128-10 ReLU, batches of 200", digits_data,
                                    digits_est, seeds, args.digits_iter)
    plot(results, args.plot)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh)

