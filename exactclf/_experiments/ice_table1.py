"""ICE paper, Table 1: ``exactclf reproduce ice-table1`` (``benchmarks/ice_vs_baselines.py``)."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

import numpy as np

from .._describe import certificate

__all__ = ["ice_table1", "milp_errors"]


def milp_errors(X, y, time_limit: float) -> tuple[int, float, str]:
    """Fit the big-M MILP (|w| <= 1e3) on standardized features; (errors, seconds, status)."""
    from .._base import merge_duplicates
    from ..linear._milp import bigm_milp

    t0 = time.perf_counter()
    mean, std = X.mean(axis=0), X.std(axis=0)
    std[std == 0] = 1.0
    Z = (X - mean) / std
    U, wpos, wneg, _ = merge_duplicates(Z, y == 1, np.ones(len(y)))
    res = bigm_milp(U, wpos, wneg, weight_bound=1e3, time_limit=time_limit)
    elapsed = time.perf_counter() - t0
    errors = int(((Z @ res.coef + res.intercept > 0) != (y == 1)).sum())
    return errors, elapsed, res.status


def ice_table1(quick: bool = False, datasets: Sequence[str] | None = None,
               milp_time_limit: float = 300.0, n_jobs: int | None = -1, out=None) -> list[dict]:
    """ICE paper, Table 1: the exact optimum of ICEClassifier on the bundled datasets next to
    a HiGHS big-M MILP, LinearSVC, LogisticRegression and LDA (errors and fit time), then the
    speed ratio MILP / ICE. ``quick``: Voicepath and Haberman, MILP limited to 60 s."""
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
        X, y = load_dataset(name, return_X_y=True)
        ice = ICEClassifier(n_jobs=n_jobs)
        t_ice, caught = timed_fit(ice, X, y)
        found = [("ICEClassifier", int(ice.training_errors_), t_ice, certificate(ice))]
        m_err, t_milp, status = milp_errors(X, y, milp_time_limit)
        found.append(("big-M MILP (HiGHS)", m_err, t_milp, status))
        for label, model in linear_baselines().items():
            sec, _ = timed_fit(model, X, y)  # a baseline's warnings do not change its errors
            found.append((label, int((model.predict(X) != y).sum()), sec, ""))
        for label, err, sec, note in found:
            rows.append(dict(dataset=name, method=label, errors=err, seconds=sec, note=note))
            print(f"{name:<12} {published.get(name, ''):>9} {label:<20} {err:>6} {sec:>9.2f}"
                  f"  {note}", file=out, flush=True)
        for w in caught:
            print(f"{name}: ICEClassifier warning: {' '.join(str(w.message).split())}", file=out)
        capped = " (at least: the MILP hit its time limit)" if "limit" in status.lower() else ""
        print(f"{name}: MILP time / ICE time = {t_milp / t_ice:.1f}x{capped}", file=out)
    return rows

