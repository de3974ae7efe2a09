"""Speedup of one exact search with workers: joblib threads and a Dask cluster.

Fits ICEClassifier on Haberman (306 x 3) and DeepICEMaxoutClassifier (K=2, exact) on 250
Voicepath points serially, with joblib threads, and under ``joblib.parallel_config(backend=
"dask")`` on a ``LocalCluster`` of worker processes; prints fit time, speedup over serial and
whether the model equals the serial one. Point ``--scheduler`` at a real cluster's scheduler
address to measure it there.

    python benchmarks/distributed_speedup.py [--workers 1 2] [--scheduler tcp://host:8786]
"""

from __future__ import annotations

import argparse
import time

import joblib
import numpy as np

from exactclf import DeepICEMaxoutClassifier, ICEClassifier
from exactclf.datasets import load_dataset


def problems():
    X, y = load_dataset("haberman", return_X_y=True)
    yield "ICE haberman", (lambda n_jobs: ICEClassifier(device="cpu", n_jobs=n_jobs)), X, y
    X, y = load_dataset("voicepath", return_X_y=True)
    idx = np.random.default_rng(0).choice(len(y), 250, replace=False)
    yield ("Deep-ICE K=2 voicepath[250]",
           (lambda n_jobs: DeepICEMaxoutClassifier(n_hyperplanes=2, method="exact",
                                                   device="cpu", n_jobs=n_jobs)),
           X[idx], y[idx])


def timed(make, n_jobs, X, y):
    t0 = time.perf_counter()
    model = make(n_jobs).fit(X, y)
    return model, time.perf_counter() - t0


def main() -> None:
    from distributed import Client, LocalCluster

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--scheduler", help="address of an existing Dask scheduler")
    args = parser.parse_args()

    print(f"{'problem':<28} {'backend':<22} {'time [s]':>9} {'speedup':>8}  same model")
    for name, make, X, y in problems():
        timed(make, None, X[:20], y[:20])  # compile the kernels
        ref, t_ref = timed(make, None, X, y)
        runs = [("serial", ref, t_ref)]
        runs += [(f"threads x{w}", *timed(make, w, X, y)) for w in args.workers]
        for w in args.workers:
            if args.scheduler:
                client, cluster = Client(args.scheduler), None
            else:
                cluster = LocalCluster(n_workers=w, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
                client = Client(cluster)
            with joblib.parallel_config(backend="dask"):
                timed(make, w, X[:20], y[:20])  # workers import and compile once
                runs.append((f"dask x{w} processes", *timed(make, w, X, y)))
            client.close()
            if cluster is not None:
                cluster.close()
        for label, model, sec in runs:
            same = np.array_equal(model.predict(X), ref.predict(X))
            print(f"{name:<28} {label:<22} {sec:>9.2f} {t_ref / sec:>8.2f}  {same}", flush=True)

if __name__ == "__main__":
    main()
