"""The conflicting-duplicates bound: identical rows with different labels.

Every classifier (a function of ``x``) gives identical rows one label, so on each group of
identical rows it errs on at least the lighter of the group's two label weights; the sum
over groups bounds the errors of any model.
"""

from __future__ import annotations

import numpy as np

__all__ = ["conflict_sum", "check_conflicts"]


def conflict_sum(X, y, w) -> float:
    """``sum over groups of identical rows of (group weight - its heaviest label's)``.

    Examples
    --------
    >>> conflict_sum([[0.0], [0.0], [-0.0], [1.0]], [0, 1, 1, 0], [1.0, 2.0, 0.5, 4.0])
    1.0
    """
    X = np.asarray(X, dtype=np.float64) + 0.0  # -0.0 and 0.0 are one value
    _, row = np.unique(X.reshape(len(X), -1), axis=0, return_inverse=True)
    _, label = np.unique(np.asarray(y), return_inverse=True)
    per = np.zeros((row.max() + 1, label.max() + 1))
    np.add.at(per, (row.ravel(), label.ravel()), np.asarray(w, dtype=np.float64))
    return float((per.sum(axis=1) - per.max(axis=1)).sum())


def check_conflicts(model, cert, X, y, w, report) -> float:
    """Recompute the bound from the data (no witness needed beyond the data itself)."""
    proven = conflict_sum(X, y, w)
    report.add("conflicting duplicates", True, f"recomputed: {proven!r}")
    return proven
