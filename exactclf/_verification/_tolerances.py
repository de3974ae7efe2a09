"""The tolerances of an optimality claim: one per kind of proof, fixed here.

``is_optimal`` claims ``value - bound <= rtol * scale``. The estimators set it with these
tolerances and :func:`exactclf.verify` checks it with them, never with a tolerance read from
the certificate (a certificate's ``rtol`` records the one applied, for a reader). A solver
parameter (``eps1``, ``tol``) changes how close a fit gets, not what "optimal" means: a fit
that stops farther away reports its gap instead.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "COVER_RTOL",
    "ENUMERATION_RTOL",
    "LASSO_RTOL",
    "MRC_RTOL",
    "integral_weights",
    "zero_one_rtol",
]

#: a bound proven by enumeration, or re-derived from the data (conflicting duplicates), is
#: exact: only the rounding of two float64 sums of the same weights in another order
#: separates it from the value (relative ``n * eps`` at most; 1e-9 holds for any n below
#: 1e6 with room)
ENUMERATION_RTOL = 1e-9
#: a bound read from HiGHS's (or Gurobi's) MIP dual bound: its absolute tolerances, in the
#: unit the costs are scaled to, are about 1e-6 of the costs (see ``_zero_one/_cover.py``)
COVER_RTOL = 2e-6
#: a minimax risk classifier's dual point against ``R(mu)``: the generation's default
#: ``eps1 = 1e-4`` (row violations) leaves a relative gap of about 1e-3 at most
MRC_RTOL = 1e-3
#: a threshold network's duality gap, relative to the zero network's loss (the scale of
#: the objective that does not depend on the fit); the default ``tol`` is 1e-6
LASSO_RTOL = 1e-4


def integral_weights(w) -> bool:
    """Whether every weight is an integer and their total is below ``2**53``: then every
    sum of them is exact in float64, and so is an optimality claim (tolerance 0).

    Examples
    --------
    >>> integral_weights([1.0, 3.0]), integral_weights([0.5, 1.0]), integral_weights([2.0**53])
    (True, False, False)
    """
    w = np.asarray(w, dtype=np.float64)
    return bool(np.all(np.isfinite(w)) and np.all(w == np.round(w))
                and float(np.abs(w).sum()) < 2.0**53)


def zero_one_rtol(witness_kind: str, w) -> float:
    """The tolerance of a 0-1 (weighted training errors) optimality claim: 0 for integer
    weights, else by the kind of proof behind the bound.

    Examples
    --------
    >>> zero_one_rtol("iis_cover", [1, 2]), zero_one_rtol("iis_cover", [0.5, 1.0])
    (0.0, 2e-06)
    """
    if integral_weights(w):
        return 0.0
    # a feature-subset proof may rest on a subset's IIS cover: the cover's tolerance
    covers = ("iis_cover", "maxout_cover", "feature_subsets")
    return COVER_RTOL if witness_kind in covers else ENUMERATION_RTOL
