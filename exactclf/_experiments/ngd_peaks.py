"""NGDClassifier versus scikit-learn's MLPClassifier in wall time (the NGD paper's comparison).

Both train the identical network from the identical initialization (same seed, same Adam
settings; NGD fits the output layer by Newton steps instead), each by one ``fit`` call with
the estimators' defaults (shuffling on; BLAS threads as the machine gives them) but for the
network, its batch size and learning rate, and ``n_iter_no_change`` (off, so that both run
the whole budget of epochs). What a user gets is what is timed: the end of every epoch
inside ``fit`` is caught (a subclass hook on the per-epoch stopping test of each
estimator), the time since the end of the previous epoch recorded, and the validation
accuracy computed, untimed. The first epoch includes ``fit``'s input checks and
initialization. Every seed's pair of fits is repeated, the two estimators interleaved
(NGD, MLP, NGD, MLP, ...), so that a loaded machine slows both alike; the iterates are the
same in every repeat, the times are their medians.

* peaks (Haber & Ruthotto 2017): MATLAB's ``peaks`` on [-3, 3]^2, 5 equal-width level classes,
  5000 training points balanced over the classes (1000 validation points from another seed),
  mapped to [0, 1]^2; network 12-12-12 tanh and a width-6 tanh basis
  (``hidden_layer_sizes=(12, 12, 12, 6)``), full batch, learning rate 1e-2.
* ``load_digits`` (8x8 digits shipped with scikit-learn, stratified 75/25 split, standardized
  on the training part), a dense 128-10 network (ReLU), minibatches of 200, learning rate 1e-3.

Printed per seed and as medians over the seeds: wall time (and epochs) to the target
validation accuracy (peaks 0.95, digits 0.96) for both and their ratio, also as epochs times
the median epoch time (robust to load spikes on a shared machine), milliseconds per epoch
(median) and their ratio, best validation accuracy.

    python benchmarks/ngd_vs_adam.py [--seeds 3] [--repeats 3] [--peaks-iter 1000]
                                     [--digits-iter 60] [--datasets peaks digits]
                                     [--plot FILE] [--json FILE]

An earlier version timed one ``partial_fit`` call per epoch with BLAS pinned to one thread
and without shuffling on peaks: the per-call input checks of ``partial_fit``, paid by both,
diluted the ratio of the epoch costs, and the single BLAS thread hid that the Newton phase
then made many more (multithreaded) BLAS calls than an MLPClassifier epoch.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler

from ..ngd import NGDClassifier, make_peaks

SOLVERS = ("ngd", "mlp")
LEVELS = (0.9, 0.95, 0.96, 0.98)


def peaks_data(seed: int):
    X, y = make_peaks(5000, random_state=seed)
    X_val, y_val = make_peaks(1000, random_state=10_000 + seed)
    return X, y, X_val, y_val


def digits_data(seed: int):
    X, y = load_digits(return_X_y=True)
    X_tr, X_val, y_tr, y_val = train_test_split(X, y, test_size=0.25, stratify=y,
                                                random_state=seed)
    scaler = StandardScaler().fit(X_tr)
    return scaler.transform(X_tr), y_tr, scaler.transform(X_val), y_val


SETTINGS = {
    "peaks": dict(data=peaks_data, target=0.95, title="peaks, 12-12-12-6 tanh, full batch",
                  params=dict(hidden_layer_sizes=(12, 12, 12, 6), activation="tanh",
                              batch_size=5000, learning_rate_init=1e-2)),
    "digits": dict(data=digits_data, target=0.96,
                   title="load_digits standardized, 128-10 ReLU, batches of 200",
                   params=dict(hidden_layer_sizes=(128,), activation="relu", batch_size=200,
                               learning_rate_init=1e-3)),
}


class _EpochClock:
    """Per-epoch wall time inside ``fit`` and the validation accuracy after every epoch.

    :meth:`tick` runs at the end of every epoch, before the estimator's stopping test: it
    records the time since the previous tick (or since :meth:`start`), scores the model on
    the validation data and restarts the clock after the scoring, which is not timed.
    """

    def __init__(self, X_val, y_val):
        self.X_val, self.y_val = X_val, y_val
        self.seconds, self.val = [], []
        self._mark = 0.0

    def start(self):
        self._mark = time.perf_counter()

    def tick(self, est):
        self.seconds.append(time.perf_counter() - self._mark)
        self.val.append(est.score(self.X_val, self.y_val))
        self._mark = time.perf_counter()


class _ClockedNGD(NGDClassifier):
    def _batch_step(self, Xb, Yb, swb, S, coefs, intercepts, *args):
        self._live = coefs, intercepts  # the lists that fit updates; coefs_ is set at its end
        return super()._batch_step(Xb, Yb, swb, S, coefs, intercepts, *args)

    def _track_loss(self):
        self.coefs_, self.intercepts_ = list(self._live[0]), list(self._live[1])
        self.clock.tick(self)
        super()._track_loss()


class _ClockedMLP(MLPClassifier):
    def _update_no_improvement_count(self, *args, **kwargs):
        self.clock.tick(self)
        super()._update_no_improvement_count(*args, **kwargs)


ESTIMATORS = {
    "ngd": lambda **params: _ClockedNGD(solver="ngd", device="cpu", **params),
    "mlp": lambda **params: _ClockedMLP(solver="adam", **params),
}


def timed_fit(solver: str, params: dict, data, seed: int, n_iter: int) -> dict:
    """One ``fit`` of ``n_iter`` epochs: validation accuracy and seconds of every epoch."""
    X, y, X_val, y_val = data
    est = ESTIMATORS[solver](random_state=seed, max_iter=n_iter, n_iter_no_change=np.inf,
                             **params)
    est.clock = clock = _EpochClock(X_val, y_val)
    clock.start()
    est.fit(X, y)
    return {"val": clock.val, "seconds": clock.seconds}


def race(params: dict, data, seed: int, n_iter: int, repeats: int,
         solvers=SOLVERS) -> dict:
    """``repeats`` interleaved fits of each solver; per epoch the median time."""
    fits = {s: [] for s in solvers}
    for _ in range(repeats):
        for s in solvers:
            fits[s].append(timed_fit(s, params, data, seed, n_iter))
    out = {}
    for s, runs in fits.items():
        if any(r["val"] != runs[0]["val"] for r in runs):
            raise RuntimeError(f"{s}: the repeats of seed {seed} trained different models")
        out[s] = {"val": runs[0]["val"],
                  "seconds": np.median([r["seconds"] for r in runs], axis=0).tolist()}
    return out


def first_reaching(curve, target: float):
    """0-based epoch at which ``curve`` first reaches ``target`` (None if never)."""
    hits = np.flatnonzero(np.asarray(curve) >= target - 1e-12)
    return int(hits[0]) if len(hits) else None


def time_to(run: dict, target: float, robust: bool = False):
    """(epochs, seconds) to reach ``target``, or (None, None). ``robust``: the epochs times
    the median time of those epochs (insensitive to load spikes on a shared machine)."""
    i = first_reaching(run["val"], target)
    if i is None:
        return None, None
    seconds = run["seconds"][: i + 1]
    return i + 1, float((i + 1) * np.median(seconds) if robust else np.sum(seconds))


def _median(values):
    values = [v for v in values if v is not None]
    return float(np.median(values)) if values else None


def compare(name: str, seeds, n_iter: int, repeats: int) -> dict:
    setting = SETTINGS[name]
    target = setting["target"]
    print(f"\n== {setting['title']}: {len(seeds)} seeds x {repeats} repeats, {n_iter} "
          f"epochs each, target validation accuracy {target} ==")
    print("time to target: summed epoch times and ratio NGD/MLP; 'robust': epochs x median "
          "epoch time, ratio; ms per epoch: median over all epochs")
    print(f"{'seed':>4} {'NGD s':>7} {'(ep)':>5} {'MLP s':>7} {'(ep)':>5} {'ratio':>6} "
          f"{'robust':>6} {'NGD ms/ep':>9} {'MLP ms/ep':>9} {'ratio':>6} {'NGD best':>8} "
          f"{'MLP best':>8}")
    runs, rows = [], []
    for seed in seeds:
        run = race(setting["params"], setting["data"](seed), seed, n_iter, repeats)
        runs.append(run)
        (e_n, t_n), (e_m, t_m) = time_to(run["ngd"], target), time_to(run["mlp"], target)
        r_n, r_m = time_to(run["ngd"], target, True)[1], time_to(run["mlp"], target, True)[1]
        robust = r_n / r_m if r_n is not None and r_m is not None else None
        ms = {s: 1e3 * float(np.median(run[s]["seconds"])) for s in SOLVERS}
        best = {s: max(run[s]["val"]) for s in SOLVERS}
        ratio = t_n / t_m if t_n is not None and t_m is not None else None
        rows.append({"seed": seed, "ngd_s": t_n, "ngd_epochs": e_n, "mlp_s": t_m,
                     "mlp_epochs": e_m, "time_ratio": ratio, "robust_ratio": robust,
                     "ngd_ms": ms["ngd"],
                     "mlp_ms": ms["mlp"], "epoch_ratio": ms["ngd"] / ms["mlp"],
                     "ngd_best": best["ngd"], "mlp_best": best["mlp"]})

        def fmt(v, spec):
            return format(v, spec) if v is not None else "never"

        print(f"{seed:>4} {fmt(t_n, '7.3f')} {fmt(e_n, '5d')} {fmt(t_m, '7.3f')} "
              f"{fmt(e_m, '5d')} {fmt(ratio, '6.3f')} {fmt(robust, '6.3f')} "
              f"{ms['ngd']:>9.2f} {ms['mlp']:>9.2f} "
              f"{ms['ngd'] / ms['mlp']:>6.2f} {best['ngd']:>8.4f} {best['mlp']:>8.4f}",
              flush=True)
    summary = {key: _median([r[key] for r in rows]) for key in rows[0] if key != "seed"}
    print(f"median: wall time to {target}: NGD {summary['ngd_s']} s, MLPClassifier "
          f"{summary['mlp_s']} s, ratio NGD/MLP {summary['time_ratio']} (robust "
          f"{summary['robust_ratio']}); ms per epoch NGD "
          f"{summary['ngd_ms']:.2f}, MLP {summary['mlp_ms']:.2f} (ratio "
          f"{summary['epoch_ratio']:.2f}); best validation accuracy NGD "
          f"{summary['ngd_best']:.4f}, MLP {summary['mlp_best']:.4f}")
    for level in LEVELS:
        t = {s: [time_to(r[s], level) for r in runs] for s in SOLVERS}
        ratios = [a[1] / b[1] for a, b in zip(t["ngd"], t["mlp"], strict=True)
                  if a[1] is not None and b[1] is not None]
        print(f"  validation accuracy {level:.2f}: median epochs NGD "
              f"{_median([e for e, _ in t['ngd']])} (reached in "
              f"{sum(e is not None for e, _ in t['ngd'])}/{len(runs)}), MLP "
              f"{_median([e for e, _ in t['mlp']])} (reached in "
              f"{sum(e is not None for e, _ in t['mlp'])}/{len(runs)}); median wall-time "
              f"ratio NGD/MLP {_median(ratios)}")
    return {"summary": summary, "rows": rows, "runs": runs}


def plot(results: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(5.0 * len(results), 3.6),
                             squeeze=False)
    colors = {"ngd": "tab:red", "mlp": "tab:blue"}
    labels = {"ngd": "NGDClassifier", "mlp": "MLPClassifier"}
    for ax, (name, res) in zip(axes[0], results.items(), strict=True):
        for s in SOLVERS:
            for k, run in enumerate(res["runs"]):
                ax.plot(np.cumsum(run[s]["seconds"]), run[s]["val"], color=colors[s],
                        alpha=0.8, label=labels[s] if k == 0 else None)
        ax.axhline(SETTINGS[name]["target"], color="gray", linestyle=":")
        ax.set_xscale("log")
        ax.set_xlabel("training wall time (s)")
        ax.set_ylabel("validation accuracy")
        ax.set_title(name)
        ax.set_ylim(0.8, 1.0)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"\nfigure saved to {path}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3, help="number of seeds (0, 1, ...)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="timed fits per seed and estimator (median times)")
    parser.add_argument("--peaks-iter", type=int, default=1000)
    parser.add_argument("--digits-iter", type=int, default=60)
    parser.add_argument("--datasets", nargs="+", default=["peaks", "digits"],
                        choices=sorted(SETTINGS))
    parser.add_argument("--plot", default="ngd_vs_adam.png", help="figure file")
    parser.add_argument("--json", default=None, help="also save all curves to this file")
    args = parser.parse_args(argv)
    seeds = list(range(args.seeds))
    warnings.simplefilter("ignore")
    n_iter = {"peaks": args.peaks_iter, "digits": args.digits_iter}
    results = {name: compare(name, seeds, n_iter[name], args.repeats)
               for name in args.datasets}
    plot(results, args.plot)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh)
