"""A start for the 0-1 MRC generation with many classes: the risk with its maximum smoothed.

The generation (:mod:`._ccg`) starts from ``mu = 0`` and a box around it; with many classes its
restricted LPs are wide (``2 K d`` columns) and each costs seconds to tens of seconds, so the
iterations it spends walking from the uniform rule to the optimum dominate a fit. Their
direction is cheap to find without an LP:

    R(mu) = -tau^T mu + lambda^T |mu| + max_i g_i(mu),
    g_i(mu) = max_{C != {}} (sum_{y in C} v_y(x_i) - 1) / |C| + 1,

is convex, and ``g_i - 1`` is the threshold ``t`` with ``sum_y (v_y - t)_+ = 1`` (for the
labels ``C`` above ``t``, ``t = (sum_C v - 1) / |C|``; every other ``C`` gives at most ``t``
since ``sum_C (v_y - t) <= 1``), whose gradient in ``v`` is uniform on ``C``. Replacing the
maximum over the samples by ``lse_gamma(g) = max g + log(sum_i exp(gamma (g_i - max g))) /
gamma`` (at most ``log(n) / gamma`` above it) leaves a function whose kinks are those of
single samples, which a quasi-Newton method with bounds handles well: ``mu = mu1 - mu2``,
``mu1, mu2 >= 0`` makes the penalty linear (L-BFGS-B). ``gamma`` doubles from stage to stage,
each stage starting where the last ended, and every stage's point is evaluated exactly
(``R`` over all samples and subsets, a certified upper bound like every iterate's); the best
one starts the generation: its box is centred there, and the rows of the samples most
violated there start its LP.

Four stages put ``R`` close to ``R*`` with many classes, far closer than the generation
from ``mu = 0`` gets in as long (``benchmarks/results/mrc_multiclass.txt``), and the first
LP, over the samples most violated there, holds all but a few of those that the optimum
needs. Nothing here is a certificate:
``lower_`` comes from the generation's dual points only.

The stages run with one BLAS thread: their products (``n x d`` by ``d x K``) and the
quasi-Newton method's own vector operations are too small to share, and handing each to a
second thread costs more than it saves (the stages can take several times longer).
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from .._zero_one._incumbent import stop_at
from ._bounds import class_scores_matrix
from ._kernels import subset_weights, thresholds_cpu
from ._training import TrainingSet

__all__ = ["smoothed_start", "SMOOTH_MIN_CLASSES"]

#: the generation starts from the smoothed risk from this many classes on (fewer: its LPs are
#: narrow and it converges in a few seconds from mu = 0)
SMOOTH_MIN_CLASSES = 8
#: the first stage's gamma is this times log(n): the log-sum-exp is then at most 1/30 above the
#: maximum, a step that the first stage's point already resolves to about 1 % of R
_FIRST_SHARPNESS = 30.0
_STAGES = 4
#: quasi-Newton iterations (and stored pairs) per stage: later stages start near their optimum
#: (twice as many double the start's time without saving LP solves; half as many leave a
#: start that costs the generation more solves)
_STAGE_ITERATIONS, _MEMORY = 150, 20
#: stages stop when one lowers the exact R by less than this many times the generation's eps1
_MIN_GAIN_EPS1 = 10.0


def _smoothed_risk(x, gamma: float, data: TrainingSet, Psi_T):
    """The smoothed risk at ``x = (mu1, mu2)`` and its gradient."""
    m = data.m
    mu = x[:m] - x[m:]
    V = np.ascontiguousarray(data.Psi @ class_scores_matrix(mu, data.K, data.d, data.B).T,
                             dtype=np.float64)
    t, size = thresholds_cpu(V)
    top = float(t.max())
    e = np.exp(gamma * (t - top))
    total = float(e.sum())
    # d lse / d V[i, y]: the sample's softmax weight, spread evenly over its subset (the labels
    # above its threshold t_i = g_i - 1)
    G = subset_weights(V, t, e / (total * size))
    # through the embedding (one-hot by default) to mu, q x d
    grad = (data.B.T @ np.asarray(Psi_T @ G).T).ravel() - data.tau
    value = float(-data.tau @ mu + data.lam @ (x[:m] + x[m:]) + top + 1.0
                  + math.log(total) / gamma)
    return value, np.concatenate([grad + data.lam, data.lam - grad])


def smoothed_start(data: TrainingSet, risk, eps1: float, deadline: float | None = None,
                   record=None, verbose: int = 0):
    """The best of the stage points of the smoothed risk (module docstring).

    Parameters
    ----------
    data : TrainingSet
    risk : callable
        ``risk(mu) -> (R, mu, nu)``, certified (:meth:`~._ccg.ZeroOneProgram.risk`).
    eps1 : float
        The generation's tolerance: stages stop when one gains less than ten times it.
    deadline : float or None
        A :func:`time.perf_counter` value; the stage running then stops there.
    record : callable or None
        Called with every stage point that improves on the best so far, as it is found (so
        that a caller interrupted by Ctrl-C keeps it).
    verbose : int

    Returns
    -------
    tuple
        ``(R, mu, nu)`` of the best stage point; ``mu = 0`` (the uniform rule) when no stage
        improved on it.

    Examples
    --------
    >>> import numpy as np
    >>> from exactclf.mrc import mrc_statistics
    >>> from exactclf.mrc._bounds import minimax_risk
    >>> rng = np.random.default_rng(0)
    >>> Psi = np.c_[np.ones(300), rng.normal(size=(300, 2))]
    >>> y = (Psi[:, 1] > 0).astype(int) + (Psi[:, 2] > 0).astype(int)
    >>> data = TrainingSet(Psi, y, 3, *mrc_statistics(Psi, y, 3, 0.3))
    >>> def risk(mu):
    ...     ev = minimax_risk(Psi, mu, data.tau, data.lam, 3)
    ...     return ev.R, mu, ev.nu
    >>> R, mu, nu = smoothed_start(data, risk, eps1=1e-4)
    >>> bool(R < risk(np.zeros(data.m))[0])  # better than the uniform rule
    True
    """
    t0 = time.perf_counter()
    m = data.m
    best = risk(np.zeros(m))
    Psi_T = data.Psi.T.tocsr() if data.sparse else np.ascontiguousarray(data.Psi.T)
    gamma = _FIRST_SHARPNESS * math.log(max(len(data.y), 2))
    x = np.zeros(2 * m)
    for stage in range(_STAGES):
        if deadline is not None and time.perf_counter() >= deadline:
            break
        with threadpool_limits(limits=1, user_api="blas"):
            res = minimize(_smoothed_risk, x, args=(gamma, data, Psi_T), jac=True,
                           method="L-BFGS-B", bounds=[(0.0, None)] * (2 * m),
                           callback=stop_at(deadline),
                           options={"maxiter": _STAGE_ITERATIONS, "maxcor": _MEMORY})
        x = res.x
        point = risk(x[:m] - x[m:])
        gain = best[0] - point[0]
        if verbose:
            print(f"[MRCCCG] smoothed start, stage {stage + 1}: gamma {gamma:.4g}  "
                  f"R(mu) {point[0]:.8f}  {res.nit} iterations  "
                  f"{time.perf_counter() - t0:.1f} s")
        if gain > 0.0:
            best = point
            if record is not None:
                record(best)
        if gain < _MIN_GAIN_EPS1 * eps1:
            break
        gamma *= 2.0
    return best
