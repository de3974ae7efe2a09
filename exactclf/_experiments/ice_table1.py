"""ICE paper, Table 1: ``exactclf reproduce ice-table1`` (``benchmarks/ice_vs_baselines.py``)."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

import numpy as np

from .._describe import certificate

__all__ = ["gurobi_errors", "ice_table1", "milp_errors", "synthetic_instance"]

#: seeded synthetic instances (n, d, label noise) of the high-dimensional rows
SYNTHETIC = {"synth90x6": (90, 6, 0.1), "synth120x7": (120, 7, 0.1), "synth80x8": (80, 8, 0.1),
             # D = 9-12, N = 100-200 (issue 26, item 3)
             "synth150x9": (150, 9, 0.1), "synth200x10": (200, 10, 0.08),
             "synth150x10": (150, 10, 0.1), "synth150x11": (150, 11, 0.1),
             "synth100x12": (100, 12, 0.1), "synth150x12": (150, 12, 0.08),
             # more of D = 9-12 with their own seeds (the Gurobi master's measurements)
             **{f"synth{n}x{d}s{seed}": (n, d, 0.1, seed) for n, d, seed in [
                 (150, 11, 1), (150, 12, 2), (120, 10, 3), (150, 10, 4), (100, 12, 5),
                 (180, 9, 6), (150, 11, 7), (130, 12, 8)]}}


def synthetic_instance(name: str):
    """A seeded Gaussian instance of :data:`SYNTHETIC`: a random linear rule, labels flipped
    with the given probability (the seed: ``100 n + d`` unless given)."""
    n, d, noise, *seed = SYNTHETIC[name]
    rng = np.random.default_rng(seed[0] if seed else n * 100 + d)
    X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) > 0) ^ (rng.random(n) < noise)
    return X, y.astype(int)


def _standardized(X):
    mean, std = X.mean(axis=0), X.std(axis=0)
    std[std == 0] = 1.0
    return (X - mean) / std


def gurobi_errors(X, y, time_limit: float, weight_bound: float = 1e3) -> tuple[int | None, float,
                                                                               str]:
    """The same big-M model as :func:`milp_errors` on Gurobi; (errors or None, seconds,
    status). A size-limited Gurobi licence refuses large models: status says so."""
    import gurobipy as gp

    t0 = time.perf_counter()
    Z = _standardized(X)
    n, d = Z.shape
    s = np.where(y == 1, 1.0, -1.0)
    big = 1.0 + weight_bound * (np.abs(Z).sum(axis=1) + 1.0)
    try:
        with gp.Env(params={"OutputFlag": 0}) as env, gp.Model(env=env) as m:
            m.Params.TimeLimit = time_limit
            wb = m.addMVar(d + 1, lb=-weight_bound, ub=weight_bound)  # (w, b)
            z = m.addMVar(n, vtype=gp.GRB.BINARY)
            A = s[:, None] * np.hstack([Z, np.ones((n, 1))])
            m.addConstr(A @ wb + big * z >= 1.0)
            m.setObjective(z.sum(), gp.GRB.MINIMIZE)
            m.optimize()
            status = {gp.GRB.OPTIMAL: "Optimal", gp.GRB.TIME_LIMIT: "Time limit"}.get(
                m.Status, f"status {m.Status}")
            if m.SolCount == 0:
                return None, time.perf_counter() - t0, status
            coef, intercept = wb.X[:d], float(wb.X[d])
    except gp.GurobiError as exc:
        return None, time.perf_counter() - t0, f"refused ({exc})"
    errors = int(((Z @ coef + intercept > 0) != (y == 1)).sum())
    return errors, time.perf_counter() - t0, status


def milp_errors(X, y, time_limit: float) -> tuple[int, float, str]:
    """Fit the big-M MILP (|w| <= 1e3) on standardized features; (errors, seconds, status)."""
    from .._base import merge_duplicates
    from .._zero_one._milp import bigm_milp

    t0 = time.perf_counter()
    Z = _standardized(X)
    U, wpos, wneg, _ = merge_duplicates(Z, y == 1, np.ones(len(y)))
    res = bigm_milp(U, wpos, wneg, weight_bound=1e3, time_limit=time_limit)
    elapsed = time.perf_counter() - t0
    errors = int(((Z @ res.coef + res.intercept > 0) != (y == 1)).sum())
    return errors, elapsed, res.status


def ice_table1(quick: bool = False, datasets: Sequence[str] | None = None,
               milp_time_limit: float = 300.0, n_jobs: int | None = -1, out=None,
               ice_time_limit: float | None | str = "milp") -> list[dict]:
    """ICE paper, Table 1: the exact optimum of ICEClassifier on the bundled datasets next to
    a HiGHS big-M MILP, LinearSVC, LogisticRegression and LDA (errors and fit time), then the
    speed ratio MILP / ICE; Gurobi on the same big-M model when ``gurobipy`` is installed.
    ``datasets`` may name the seeded synthetic instances of :data:`SYNTHETIC`. ``quick``:
    Voicepath and Haberman, MILP limited to 60 s. ``ice_time_limit``: ICEClassifier's
    ``time_limit`` (``"milp"``: the MILP's; beyond the enumeration's range, D >= 9 here,
    ICE needs one to run the IIS cover rather than refuse)."""
    from .. import ICEClassifier
    from ..datasets import load_dataset, published_optima
    from ._common import linear_baselines, timed_fit

    out = sys.stdout if out is None else out
    published = published_optima()
    if datasets is None:
        datasets = ["voicepath", "haberman"] if quick else list(published)
    if quick:
        milp_time_limit = min(milp_time_limit, 60.0)
    print(f"{'dataset':<12} {'published':>9} {'method':<20} {'errors':>6} {'time [s]':>9}  note",
          file=out)
    rows = []
    for name in datasets:
        if name in SYNTHETIC:
            X, y = synthetic_instance(name)
        else:
            X, y = load_dataset(name, return_X_y=True)
        ice = ICEClassifier(n_jobs=n_jobs, time_limit=milp_time_limit
                            if ice_time_limit == "milp" else ice_time_limit)
        t_ice, caught = timed_fit(ice, X, y)
        found = [("ICEClassifier", int(ice.training_errors_), t_ice, certificate(ice))]
        m_err, t_milp, status = milp_errors(X, y, milp_time_limit)
        found.append(("big-M MILP (HiGHS)", m_err, t_milp, status))
        gurobi = ""
        try:
            g_err, t_g, g_status = gurobi_errors(X, y, milp_time_limit)
        except ImportError:
            pass
        else:
            # with Gurobi installed, ICEClassifier's default master is Gurobi: the user
            # without it gets the HiGHS master
            t_ih, caught_h = timed_fit(ice.set_params(mip_solver="highs"), X, y)
            caught += caught_h
            found += [("ICE (HiGHS master)", int(ice.training_errors_), t_ih, certificate(ice)),
                      ("big-M MILP (Gurobi)", g_err, t_g, g_status)]
            gurobi = (f"; Gurobi's time / ICE time = {t_g / t_ice:.2f}x, / ICE with the "
                      f"HiGHS master's time = {t_g / t_ih:.2f}x")
        for label, model in linear_baselines().items():
            sec, _ = timed_fit(model, X, y)  # a baseline's warnings do not change its errors
            found.append((label, int((model.predict(X) != y).sum()), sec, ""))
        for label, err, sec, note in found:
            rows.append(dict(dataset=name, method=label, errors=err, seconds=sec, note=note))
            shown = "-" if err is None else err
            print(f"{name:<12} {published.get(name, ''):>9} {label:<20} {shown:>6} {sec:>9.2f}"
                  f"  {note}", file=out, flush=True)
        for w in caught:
            print(f"{name}: ICEClassifier warning: {' '.join(str(w.message).split())}", file=out)
        capped = " (at least: the MILP hit its time limit)" if "limit" in status.lower() else ""
        print(f"{name}: MILP time / ICE time = {t_milp / t_ice:.1f}x{capped}{gurobi}", file=out)
    return rows

