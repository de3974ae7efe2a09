"""
Parallel exact search: ``n_jobs`` and a Dask cluster
====================================================

The exact search of :class:`~exactclf.ICEClassifier` (and of
:class:`~exactclf.DeepICEMaxoutClassifier`) enumerates candidates indexed by rank, and
contiguous rank ranges are independent *chunks*: the unit of parallel work. ``n_jobs``
runs that many chunks at once through joblib (threads: the compiled kernels release the
GIL). Under ``joblib.parallel_config(backend="dask")`` the chunks go to the workers of a
Dask cluster instead, and ``n_jobs`` is the number of chunks in flight. Each chunk is given
the best value found by the others and ties go to the lowest rank, so **the model does not
depend on the number of workers or on the backend**.

Here the Haberman survival data (306 patients, 3 features; 3.7 million candidate
hyperplanes) is fitted serially, with ``n_jobs=2``, and on a local Dask cluster of two
workers, and the three models are compared. The cluster runs inside this process
(``processes=False``) so that the example stays light; on a real cluster the workers are
processes on other machines (``Client("tcp://scheduler-host:8786")``), each with the same
version of exactclf installed (``pip install "exactclf[dask]"``). The speed-up on the two
cores that build this gallery says little; ``python benchmarks/distributed_speedup.py``
measures it on a larger machine.
"""

# %%
# Serial and threaded fits
# ------------------------
# ``device="cpu"`` keeps the search on the CPU cores even where a GPU is usable.
import time

import joblib
import matplotlib.pyplot as plt
import numpy as np
from distributed import Client, LocalCluster, get_task_stream

from exactclf import ICEClassifier
from exactclf.datasets import load_haberman

X, y = load_haberman(return_X_y=True)

fits, seconds = {}, {}
for name, n_jobs in [("serial", None), ("n_jobs=2 (threads)", 2)]:
    start = time.perf_counter()
    fits[name] = ICEClassifier(device="cpu", n_jobs=n_jobs).fit(X, y)
    seconds[name] = time.perf_counter() - start

# %%
# On a Dask cluster
# -----------------
# A :class:`distributed.LocalCluster` of two single-threaded workers; ``get_task_stream``
# records which worker ran which chunk, and when.
with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                  dashboard_address=None) as cluster, Client(cluster) as client:
    start = time.perf_counter()
    with get_task_stream(client) as stream, joblib.parallel_config(backend="dask"):
        fits["Dask, 2 workers"] = ICEClassifier(device="cpu", n_jobs=2).fit(X, y)
    seconds["Dask, 2 workers"] = time.perf_counter() - start
    tasks = stream.data

serial = fits["serial"]
for name, clf in fits.items():
    same = np.array_equal(clf.predict(X), serial.predict(X))
    print(f"{name:>20}: {clf.training_errors_:g} errors, proven optimal: {clf.is_optimal_}, "
          f"same predictions as serial: {same}, {seconds[name]:.1f} s")
print(f"\n{len(tasks)} chunks ran on the cluster's workers")

# %%
# Where the chunks ran
# --------------------
# One row per worker, one bar per chunk (its compute time on that worker), in seconds from
# the first chunk's start.
workers = sorted({task["worker"] for task in tasks})
t0 = min(s["start"] for task in tasks for s in task["startstops"])
fig, ax = plt.subplots(figsize=(8, 2.8), layout="constrained")
for task in tasks:
    lane = workers.index(task["worker"])
    for s in task["startstops"]:
        if s["action"] == "compute":
            ax.barh(lane, s["stop"] - s["start"], left=s["start"] - t0, height=0.6,
                    color=f"C{lane}", edgecolor="white")
ax.set_yticks(range(len(workers)), [f"worker {i + 1}" for i in range(len(workers))])
ax.invert_yaxis()
ax.set(xlabel="seconds since the first chunk started", ylabel="Dask worker",
       title=f"ICEClassifier(n_jobs=2) on a 2-worker Dask cluster: {len(tasks)} chunks "
             "of the candidate space")
ax.grid(axis="x", alpha=0.3)
plt.show()
