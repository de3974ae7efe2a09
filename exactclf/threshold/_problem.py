"""The Lasso that a threshold network's training is: its dictionary and its weighted rows.

:func:`build_problem` turns validated training data into a :class:`LassoProblem`: the unique
points in their affine frame, the arrangement dictionary (exact or sampled, deeper layers on
top), and the rows of the Lasso after merging the samples that the network cannot tell apart.
A fit, a regularization path and every fold of a cross-validation share this step: the
dictionary does not depend on ``beta``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._geometry import affine_frame
from ._arrangements import cover_count, deep_patterns, exact_cost, exact_patterns, sample_patterns
from ._losses import LOSSES
from ._reconstruction import FirstLayer

__all__ = ["LassoProblem", "build_problem", "beta_max"]

#: exact enumeration is refused above this much work (hyperplanes x labelings of their
#: points; measured about 1.5e5 per second, so about a minute)
_MAX_EXACT_COST = 10**7
#: ... or above this many patterns times points (the dense design matrix)
_MAX_EXACT_ENTRIES = 5 * 10**7


@dataclass
class LassoProblem:
    """``min_w sum_g c_g L(D_g w, Yg_g) + beta |w|_1 + const`` per output column.

    ``X, Y, sw``: the training data (samples of positive weight); ``keep``: which samples of
    the data as given these are; ``Z, frame, inverse``: its
    unique points in the affine frame and each sample's unique point; ``mode``:
    ``"closed_form"`` (complete arrangement, squared loss: no dictionary is built),
    ``"exact"`` or ``"sample"``; ``arr, layers``: the first-layer arrangement and the deeper
    layers; ``D``: the dictionary on the merged rows (float 0/1), ``Yg, c, const``: their
    targets, weights and the loss constant split off by merging, ``groups``: each sample's
    row of ``D``; ``n_patterns_total``: Cover's count of the unique points; ``fingerprint``:
    the data's :func:`~exactclf._certificate.data_fingerprint` (set by the estimator).
    """

    X: np.ndarray
    Y: np.ndarray
    sw: np.ndarray
    loss: str
    keep: np.ndarray
    Z: np.ndarray
    frame: object
    inverse: np.ndarray
    n_patterns_total: int
    mode: str
    arr: object = None
    layers: tuple = ()
    D: np.ndarray | None = None
    Yg: np.ndarray | None = None
    c: np.ndarray | None = None
    const: np.ndarray | None = None
    groups: np.ndarray | None = None
    fingerprint: str = ""

    def first_layer(self, reconstruction: str) -> FirstLayer:
        """The first-layer neurons of this dictionary (reconstructed on demand, cached)."""
        return FirstLayer(self.X, self.Z, self.frame, self.arr, self.inverse, reconstruction)

    def sample_dual(self, dual: np.ndarray) -> np.ndarray:
        """A dual point of the merged rows (rows of ``D`` x outputs; the closed form: samples
        x outputs) as one of the unmerged problem, one row per sample of the data as given
        (0 where the weight is 0). Same ``D^T theta`` (the samples of a row share their
        patterns) and, with the constant split off by merging, the same dual objective: a
        row's dual share goes to its samples by weight; the squared loss adds each sample's
        deviation from the row's mean target, which sums to 0 over the row."""
        out = np.zeros((len(self.keep), dual.shape[1]))
        if self.groups is None:
            out[self.keep] = dual
            return out
        g = self.groups
        share = dual[g] / self.c[g, None]
        if self.loss == "squared":
            share = share + self.Y - self.Yg[g]
        out[self.keep] = self.sw[:, None] * share
        return out

    def sample_patterns(self) -> np.ndarray:
        """The dictionary on the samples of positive weight (boolean samples x patterns)."""
        return self.D[self.groups] != 0


def _choose_mode(arrangements, n_arrangements, n_u, r, count, name):
    cost = exact_cost(n_u, r)
    feasible = cost <= _MAX_EXACT_COST and count * n_u <= _MAX_EXACT_ENTRIES
    if arrangements == "exact":
        if not feasible:
            raise ValueError(
                f"{name}(arrangements='exact'): {n_u} unique points in "
                f"affine dimension {r} have up to {count:.3g} arrangement patterns "
                f"(Cover's count), enumerated in about {cost:.3g} steps: far too many. "
                "Use arrangements='sample' (n_arrangements random hyperplanes), or "
                "reduce the number of features or samples."
            )
        return "exact"
    if arrangements == "auto" and feasible and count <= n_arrangements:
        return "exact"
    return "sample"


def build_problem(X, Y, sw, loss, *, arrangements, n_arrangements, hidden_layer_sizes, rng,
                  solver, name, allow_closed_form=True) -> LassoProblem:
    """The Lasso of the training data ``X`` (n x d), targets ``Y`` (n x K), weights ``sw``.

    The closed form is used (no dictionary is built) when ``solver`` is ``"auto"`` or
    ``"closed_form"``, the loss squared, the weights equal, the network one hidden layer,
    the points distinct and affinely independent, and no sample of patterns was asked for;
    ``solver="closed_form"`` raises when the data does not allow it. ``rng``: a
    ``RandomState`` for sampled patterns. ``name``: the caller, for error messages.
    ``allow_closed_form=False``: always build the dictionary.
    """
    keep = sw > 0
    X, Y, sw = X[keep], Y[keep], sw[keep]
    U, inverse = np.unique(X, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    frame = affine_frame(U)
    Z = frame.transform(U)
    n_u, r = Z.shape
    count = cover_count(n_u, r)
    problem = LassoProblem(X, Y, sw, loss, keep, Z, frame, inverse, count, "closed_form")
    closed_ok = (n_u == r + 1 and n_u == len(X) and bool(np.all(sw == sw[0]))
                 and loss == "squared" and not hidden_layer_sizes
                 and solver in ("auto", "closed_form"))
    if solver == "closed_form" and not closed_ok:
        raise ValueError(
            "solver='closed_form' needs a complete arrangement (distinct, affinely "
            f"independent points: here {n_u} unique points of affine dimension {r}), "
            "loss='squared', equal sample weights and no hidden_layer_sizes; use "
            "solver='auto'."
        )
    if closed_ok and arrangements != "sample" and allow_closed_form:
        return problem
    problem.mode = _choose_mode(arrangements, n_arrangements, n_u, r, count, name)
    problem.arr = exact_patterns(Z) if problem.mode == "exact" else sample_patterns(
        Z, n_arrangements, rng)
    dictionary = problem.arr.patterns
    layers = []
    for fan_in in hidden_layer_sizes:
        layer = deep_patterns(dictionary, fan_in, n_arrangements, rng)
        layers.append(layer)
        dictionary = layer.patterns
    problem.layers = tuple(layers)
    # merge samples that the network cannot tell apart into one weighted row: same point
    # (squared loss: targets averaged, a constant split off) or same point and targets
    # (other losses); repeated samples and integer weights give one problem
    if loss == "squared":
        g_inv = inverse
        c = np.bincount(g_inv, weights=sw)
        Yg = np.column_stack([np.bincount(g_inv, weights=sw * Y[:, k]) for k in
                              range(Y.shape[1])]) / c[:, None]
        # per output: the squared loss of the samples around their group's mean
        const = 0.5 * (np.sum(sw[:, None] * Y**2, axis=0) - np.sum(c[:, None] * Yg**2, axis=0))
        point = np.unique(inverse)
    else:
        keys = np.column_stack([inverse, Y])
        _, first, g_inv = np.unique(keys, axis=0, return_index=True, return_inverse=True)
        g_inv = g_inv.ravel()
        c = np.bincount(g_inv, weights=sw)
        Yg, point, const = Y[first], inverse[first], np.zeros(Y.shape[1])
    problem.D = dictionary[point].astype(np.float64)
    problem.Yg, problem.c, problem.const, problem.groups = Yg, c, const, g_inv
    return problem


def beta_max(problem: LassoProblem) -> float:
    """The smallest ``beta`` at which the zero network is optimal for every output: the
    largest ``|D^T g|`` over columns, ``g`` the loss's negative gradient at ``f = 0``
    (squared and hinge: ``s y``; logistic: ``s y / 2``). On a complete arrangement (closed
    form) the largest ``|sum_{i in S} s_i y_i|`` over subsets ``S``.

    Examples
    --------
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> Y = np.array([[1.0], [1.0], [-1.0], [1.0]])
    >>> problem = build_problem(X, Y, np.ones(4), "squared", arrangements="exact",
    ...                         n_arrangements=100, hidden_layer_sizes=(), rng=None,
    ...                         solver="ipm", name="example")
    >>> float(beta_max(problem))         # the pattern {0, 1} (or {0, 1, 3}, ...) sums to 2
    2.0
    """
    if problem.mode == "closed_form":
        G = problem.sw[:, None] * problem.Y
        return float(max(max(G[:, k][G[:, k] > 0].sum(), -G[:, k][G[:, k] < 0].sum())
                         for k in range(G.shape[1])))
    loss = LOSSES[problem.loss]
    zero = np.zeros(len(problem.c))
    G = np.column_stack([-loss.gradient(zero, problem.Yg[:, k], problem.c)
                         for k in range(problem.Yg.shape[1])])
    return float(np.abs(problem.D.T @ G).max())
