"""Fit MRCpy's ``MRC(loss="0-1", solver="ccg")`` inside MRCpy's own environment (run by
``benchmarks/mrc_vs_baselines.py --mrcpy-python PYTHON``; see ``benchmarks/README_mrcpy.md``).

    PYTHON _mrcpy_runner.py IN.npz OUT.npz

``IN.npz`` holds ``X``, ``y``, ``phi`` ("linear" or "fourier"), ``s``, ``n_components``,
``all_rows`` (pass ``X_=X`` so that MRCpy optimizes over every row instead of its default
5000-row subsample) and ``random_state``. ``OUT.npz`` receives the fitted solution as MRCpy
holds it -- ``mu`` (shape ``(1, d)`` for two classes: MRCpy's signed binary features, else
``(n_classes, d)``), ``nu``, ``upper`` (its reported ``upper_``), ``tau`` and ``lam`` (its
``tau_mat`` and ``lambda_mat``), ``psi`` (its feature map ``phi.transform`` on every row of
``X``), ``psi_opt`` (the rows it optimized over), ``history`` (its objective after each LP
solve, ``R_k``) -- the fit's wall-clock ``seconds`` and the process's ``cpu_seconds`` (the
``fit`` call only, imports excluded), the package versions, and ``error`` (empty unless the
fit raised). Only numpy, the standard library and MRCpy are imported: this file runs under a
Python without exactclf.
"""

import sys
import time
import traceback
from importlib.metadata import version

import numpy as np


def fit(X, y, phi, s, n_components, all_rows, random_state):
    from MRCpy import MRC

    kwargs = {"n_components": n_components} if phi == "fourier" else {}
    model = MRC(loss="0-1", phi=phi, s=s, solver="ccg", random_state=random_state, **kwargs)
    t0, c0 = time.perf_counter(), time.process_time()
    if all_rows:
        model.fit(X, y, X_=X)
    else:
        model.fit(X, y)
    seconds, cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
    return {
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "mu": np.asarray(model.mu_, dtype=np.float64),
        "nu": float(np.ravel(model.nu_)[0]),
        "upper": float(model.upper_),
        "tau": np.asarray(model.tau_mat, dtype=np.float64),
        "lam": np.asarray(model.lambda_mat, dtype=np.float64),
        "psi": np.asarray(model.phi.transform(X), dtype=np.float64),
        "psi_opt": np.asarray(model.X_transform, dtype=np.float64),
        "history": np.asarray(getattr(model, "R_k", []), dtype=np.float64),
        "one_hot": bool(getattr(model.phi, "one_hot", False)),
    }


def main(path_in: str, path_out: str) -> None:
    data = np.load(path_in, allow_pickle=False)
    try:
        versions = ", ".join(f"{name} {version(name)}" for name in
                             ("MRCpy", "scikit-learn", "numpy", "gurobipy", "torch"))
        out = fit(data["X"], data["y"], str(data["phi"]), float(data["s"]),
                  int(data["n_components"]), bool(data["all_rows"]), int(data["random_state"]))
        out["error"] = ""
    except Exception as exc:  # noqa: BLE001 - the caller reports any failure of the fit
        traceback.print_exc()
        versions, out = "", {"error": f"{type(exc).__name__}: {exc}"}
    np.savez(path_out, versions=versions, **out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
