"""The conflicting-duplicates bound: identical rows with different labels.

Every classifier (a function of ``x``) gives identical rows one label, so on each group of
identical rows it errs on at least the lighter of the group's two label weights; the sum
over groups bounds the errors of any model.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ._tolerances import ENUMERATION_RTOL

__all__ = ["conflict_sum", "check_conflicts"]


def conflict_sum(X, y, w) -> float:
    """``sum over groups of identical rows of (group weight - its heaviest label's)``, summed
    exactly and rounded once.

    The lighter labels' weights are added, never subtracted from the group's total: with
    weights 7e-7 and 7e6 at one point the difference would cancel to rounding noise. Each
    label's weight at a point is ``math.fsum`` of its samples', the heaviest picked from
    those, and the rest added as exact fractions.

    Examples
    --------
    >>> conflict_sum([[0.0], [0.0], [-0.0], [1.0]], [0, 1, 1, 0], [1.0, 2.0, 0.5, 4.0])
    1.0
    >>> conflict_sum([[0.0], [0.0]], [0, 1], [7e-7, 6.7e6]) == 7e-7
    True
    """
    X = np.asarray(X, dtype=np.float64) + 0.0  # -0.0 and 0.0 are one value
    w = np.asarray(w, dtype=np.float64).ravel()
    if len(X) == 0:
        return 0.0
    _, row = np.unique(X.reshape(len(X), -1), axis=0, return_inverse=True)
    _, label = np.unique(np.asarray(y), return_inverse=True)
    row, label = row.ravel(), label.ravel()
    n_labels = np.zeros(row.max() + 1, dtype=np.int64)
    cells = np.unique(np.c_[row, label][w > 0], axis=0)
    np.add.at(n_labels, cells[:, 0], 1)
    mixed = np.flatnonzero(n_labels > 1)
    if len(mixed) == 0:
        return 0.0
    total = Fraction(0)
    inside = np.isin(row, mixed)
    order = np.lexsort((label[inside], row[inside]))
    r, lab, ww = row[inside][order], label[inside][order], w[inside][order]
    starts = np.flatnonzero(np.r_[True, (r[1:] != r[:-1]) | (lab[1:] != lab[:-1])])
    ends = np.r_[starts[1:], len(r)]
    sums = [math.fsum(ww[a:b].tolist()) for a, b in zip(starts, ends, strict=True)]
    groups = r[starts]
    for g in np.unique(groups):
        at = [sums[i] for i in np.flatnonzero(groups == g)]
        at.remove(max(at))
        total += sum(map(Fraction, at), Fraction(0))
    return float(total)


def check_conflicts(model, cert, X, y, w, report, rtol) -> tuple[float, float]:
    """Recompute the bound from the data (no witness needed beyond the data itself), and
    the rounding of the fit's own sum of the same weights (``rtol`` unused)."""
    proven = conflict_sum(X, y, w)
    report.add("conflicting duplicates", True, f"recomputed: {proven!r}")
    return proven, ENUMERATION_RTOL * proven
