"""Regularization path of the threshold-net Lasso: certified solutions for a grid of betas.

The arrangement dictionary does not depend on ``beta``, so a path builds it once and solves
the Lasso for each ``beta`` from the largest down, each solve starting from the previous
solution (returned at once when it is already certified at the new ``beta``; coordinate
descent continues from it; the interior-point method, which gains little from a starting
point, screens with it: it solves on a working set of columns seeded from the previous
support, grown by a KKT check over the whole dictionary). Every solution carries its
duality gap, computed by
:func:`~exactclf.threshold._solvers.duality_gap` from a dual point checked feasible against
the whole dictionary, whichever solver produced it.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions, validate_params
from sklearn.utils.validation import _check_sample_weight, check_X_y

from ._problem import LassoProblem, beta_max, build_problem
from ._solvers import SolveInfo, resolve_solver, solve_lasso

__all__ = ["beta_grid", "solve_problem", "threshold_path"]


def beta_grid(top: float, betas, eps: float) -> np.ndarray:
    """The betas of a path, largest first: ``betas`` values sorted, or ``betas`` (a count)
    values spaced evenly on a log scale from ``top`` (the smallest beta giving the zero
    network) down to ``eps * top``.

    Examples
    --------
    >>> beta_grid(10.0, 3, 1e-2)
    array([10. ,  1. ,  0.1])
    >>> beta_grid(10.0, [0.5, 2.0], 1e-2)
    array([2. , 0.5])
    """
    if isinstance(betas, Integral):
        # the zero network is optimal for every beta when the targets give no gradient
        top = max(top, np.finfo(np.float64).resolution)
        return np.geomspace(top, eps * top, betas)
    grid = np.sort(np.asarray(betas, dtype=np.float64).ravel())[::-1]
    if grid.size == 0 or not np.all(np.isfinite(grid)) or grid[-1] <= 0:
        raise ValueError(f"betas must be positive and finite, got {betas!r}.")
    return grid


def solve_problem(problem: LassoProblem, beta: float, solver: str, tol: float, max_iter: int,
                  w0: np.ndarray | None = None):
    """The Lasso of ``problem`` at ``beta`` for every output, each certified by its duality
    gap. ``solver``: a resolved solver name; ``w0`` (dictionary x outputs): a start, the
    solution at a nearby larger beta (see
    :func:`~exactclf.threshold._solvers.solve_lasso`'s working sets).

    Returns ``(W, objective, lower, n_iter, info)``: weights (dictionary x outputs), the
    objective summed over outputs, the lower bound of each output (objective minus its gap),
    and a :class:`~exactclf.threshold._solvers.SolveInfo` whose ``dual`` holds the dual
    point of each output (rows of ``D`` x outputs)."""
    D, Yg, c = problem.D, problem.Yg, problem.c
    W = np.zeros((D.shape[1], Yg.shape[1]))
    dual = np.zeros(Yg.shape)
    objective, lower, n_iter, spent = 0.0, np.zeros(Yg.shape[1]), 0, False
    for k in range(Yg.shape[1]):
        w, it, primal, gap, _, info = solve_lasso(D, Yg[:, k], beta, problem.loss, solver, c,
                                                  tol=tol, max_iter=max_iter,
                                                  w0=None if w0 is None else w0[:, k],
                                                  return_info=True)
        W[:, k], dual[:, k] = w, info.dual
        spent |= info.budget_spent
        objective += problem.const[k] + primal
        # primal - gap is the dual objective at a point checked feasible for the whole
        # dictionary: a bound that holds for every network, the returned one included
        lower[k] = problem.const[k] + primal - gap
        n_iter += it
    return W, objective, lower, n_iter, SolveInfo(dual, spent)


@validate_params(
    {
        "X": ["array-like"],
        "y": ["array-like"],
        "betas": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "eps": [Interval(Real, 0, 1, closed="neither")],
        "loss": [StrOptions({"squared", "logistic", "hinge"})],
        "sample_weight": ["array-like", None],
        "arrangements": [StrOptions({"auto", "exact", "sample"})],
        "n_arrangements": [Interval(Integral, 1, None, closed="left")],
        "solver": [StrOptions({"auto", "ipm", "lars", "skglm", "sklearn", "highs"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def threshold_path(X, y, *, betas=10, eps=1e-3, loss="squared", sample_weight=None,
                   arrangements="auto", n_arrangements=1000, solver="auto", tol=1e-6,
                   max_iter=1000, random_state=None):
    """Certified threshold-network Lasso solutions along a grid of ``beta``.

    Builds the arrangement dictionary ``D`` of ``X`` once (as :class:`ThresholdNetLasso`
    does with the same ``arrangements``, ``n_arrangements`` and ``random_state``, but never
    the closed form) and solves ``min_w L(D w, y) + beta |w|_1`` for every ``beta``, largest
    first, each solve starting from the previous solution.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Targets; in {-1, +1} for ``loss="logistic"`` or ``"hinge"``.
    betas : int or array-like, default=10
        A count: that many values spaced evenly on a log scale from ``beta_max`` (the
        smallest beta giving the zero network) down to ``eps * beta_max``. Or the values
        (sorted largest first).
    eps : float, default=1e-3
        ``beta_min / beta_max`` of a generated grid.
    loss : {"squared", "logistic", "hinge"}, default="squared"
    sample_weight : array-like of shape (n_samples,), default=None
    arrangements : {"auto", "exact", "sample"}, default="auto"
        As in :class:`ThresholdNetLasso` (``"auto"``: exact when Cover's count is at most
        ``n_arrangements``, else sampled).
    n_arrangements : int, default=1000
    solver : {"auto", "ipm", "lars", "skglm", "sklearn", "highs"}, default="auto"
        As in :class:`ThresholdNetLasso`.
    tol : float, default=1e-6
        Target duality gap of each solution relative to the zero network's loss.
    max_iter : int, default=1000
    random_state : int, RandomState instance or None, default=None
        Seeds the sampled hyperplanes.

    Returns
    -------
    betas : ndarray of shape (n_betas,)
        Largest first.
    coefs : ndarray of shape (n_patterns, n_betas) or (n_outputs, n_patterns, n_betas)
        Output weights of the dictionary's patterns along the path.
    dual_gaps : ndarray of shape (n_betas,)
        Duality gap of each solution (summed over outputs): ``objective - dual_gap`` lower
        bounds the optimum over the dictionary (over all networks when it is exact).
    patterns : ndarray of shape (n_samples_nonzero, n_patterns), dtype bool
        The dictionary on the samples of positive weight (column 0: the bias).

    Examples
    --------
    >>> import numpy as np
    >>> from exactclf.threshold import threshold_path
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0]])
    >>> y = np.array([0.0, 1.0, 1.0, 3.0, 3.0])
    >>> betas, coefs, gaps, patterns = threshold_path(X, y, betas=4, eps=1e-2)
    >>> np.round(betas, 3)
    array([8.   , 1.724, 0.371, 0.08 ])
    >>> bool(np.all(coefs[:, 0] == 0)), bool(np.all(gaps <= 1e-6 * 0.5 * y @ y))
    (True, True)
    >>> np.round(patterns.astype(float) @ coefs[:, -1], 2)   # the least penalized fit
    array([0.  , 1.  , 1.  , 2.96, 2.96])
    """
    X, y = check_X_y(X, y, dtype=np.float64, multi_output=True, y_numeric=True)
    Y = y[:, None] if y.ndim == 1 else y
    if loss != "squared" and not np.all(np.isin(Y, (-1.0, 1.0))):
        raise ValueError(f"loss={loss!r} needs targets in {{-1, +1}}.")
    sw = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
    if not np.any(sw > 0):
        raise ValueError("threshold_path: every sample weight is zero.")
    resolve_solver(solver, loss, True)  # impossible loss/solver pairs raise before any work
    problem = build_problem(X, Y, sw, loss, arrangements=arrangements,
                            n_arrangements=n_arrangements, hidden_layer_sizes=(),
                            rng=check_random_state(random_state), solver=solver,
                            name="threshold_path", allow_closed_form=False)
    grid = beta_grid(beta_max(problem), betas, eps)
    c = problem.c
    solver = resolve_solver(solver, loss, bool(np.all(c == c[0])), problem.D.shape)
    coefs = np.zeros((Y.shape[1], problem.D.shape[1], len(grid)))
    gaps = np.zeros(len(grid))
    W = None
    for j, beta in enumerate(grid):
        W, objective, lower, *_ = solve_problem(problem, beta, solver, tol, max_iter, W)
        coefs[:, :, j] = W.T
        gaps[j] = max(objective - lower.sum(), 0.0)
    patterns = problem.arr.patterns[problem.inverse]
    return grid, (coefs[0] if y.ndim == 1 else coefs), gaps, patterns
