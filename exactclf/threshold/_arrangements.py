"""Hyperplane-arrangement patterns of a point set: the columns of the threshold-net Lasso.

A threshold neuron ``x -> 1{a . x + b >= 0}`` takes, on the ``n`` training points, one of
finitely many 0/1 *patterns*: the linear dichotomies of the points (for a finite point set
the sets ``{a . x + b >= 0}`` and ``{a . x + b > 0}`` range over the same family). A
two-layer threshold network is therefore a linear model on the matrix ``D`` whose columns are
these patterns, which is what makes its weight-decay training a Lasso.

Patterns are boolean matrices of shape ``(n_points, n_patterns)``. Column 0 is always the
all-ones pattern (the bias neuron); the all-zeros pattern (a neuron that never fires) is
never included; no column is repeated.

* :func:`exact_patterns`: every pattern, from the shared dichotomy enumerator
  :func:`exactclf._dichotomies.dichotomies` (degenerate-safe; cost ``~C(n, r) 2**r``);
* :func:`sample_patterns`: the patterns of Gaussian random hyperplanes in the affine frame of
  the points (standardized, rank-reduced coordinates), deduplicated, each with the plane
  that generated it;
* :func:`deep_patterns`: patterns of a deeper threshold layer whose neurons each read
  ``fan_in`` neurons of the layer below.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._combinatorics import n_combinations
from .._dichotomies import dichotomies

__all__ = [
    "cover_count",
    "exact_cost",
    "Arrangement",
    "exact_patterns",
    "sample_patterns",
    "DeepLayer",
    "deep_patterns",
    "unique_columns",
]


def cover_count(n_points: int, dim: int) -> int:
    """Number of dichotomies of ``n_points`` points in general position in dimension ``dim``
    realizable by affine classifiers (Cover's function counting theorem, the empty and the
    full set included): ``2 * sum_{k=0}^{dim} C(n_points - 1, k)``. Degenerate point sets
    have fewer; ``2**n_points`` when ``n_points <= dim + 1``.

    Examples
    --------
    >>> cover_count(3, 1), cover_count(4, 2), cover_count(3, 5)
    (6, 14, 8)
    """
    if n_points <= 0:
        return 1
    return 2 * sum(n_combinations(n_points - 1, k) for k in range(min(dim, n_points - 1) + 1))


def exact_cost(n_points: int, dim: int) -> int:
    """Work of :func:`exact_patterns` in elementary steps: ``C(n_points, dim)`` hyperplanes
    through ``dim`` points, each contributing ``2 * 2**dim`` labelings of its free points."""
    if dim == 0:
        return 1
    return n_combinations(n_points, dim) * 2 ** (dim + 1)


def unique_columns(M: np.ndarray) -> np.ndarray:
    """Indices of the first occurrence of every distinct column of the boolean matrix ``M``,
    in order of first occurrence."""
    if M.shape[1] == 0:
        return np.zeros(0, dtype=np.intp)
    packed = np.packbits(M, axis=0).T
    _, first = np.unique(packed, axis=0, return_index=True)
    return np.sort(first)


@dataclass
class Arrangement:
    """Patterns of a point set, and for sampled ones the planes that generated them.

    ``patterns``: boolean ``(n_points, P)``, column 0 all ones. ``planes``: ``(r + 1, P)``
    array of ``(a, b)`` in frame coordinates with ``patterns[:, j] == (Z @ a + b >= 0)``, or
    None (exact enumeration gives no planes: they are reconstructed afterwards).
    ``complete``: every realizable pattern is present.
    """

    patterns: np.ndarray
    planes: np.ndarray | None
    complete: bool


def _bias_first(patterns: np.ndarray) -> np.ndarray:
    """Drop empty and repeated columns, put the all-ones column first."""
    n = patterns.shape[0]
    keep = patterns.any(axis=0) & ~patterns.all(axis=0)
    rest = patterns[:, keep]
    rest = rest[:, unique_columns(rest)]
    return np.hstack([np.ones((n, 1), dtype=bool), rest])


def exact_patterns(Z: np.ndarray) -> Arrangement:
    """Every linear dichotomy of the distinct points ``Z`` as a pattern (complete).

    Examples
    --------
    >>> Z = np.array([[0.0], [1.0], [2.0]])
    >>> exact_patterns(Z).patterns.astype(int)     # 6 dichotomies less the empty one
    array([[1, 0, 0, 1, 1],
           [1, 0, 1, 0, 1],
           [1, 1, 1, 0, 0]])
    """
    if len(Z) == 1:
        return Arrangement(np.ones((1, 1), dtype=bool), None, True)
    return Arrangement(_bias_first(dichotomies(Z).T), None, True)


def sample_patterns(Z: np.ndarray, n_planes: int, rng: np.random.Generator) -> Arrangement:
    """Patterns of ``n_planes`` random hyperplanes ``(a, b) ~ N(0, I)`` in the frame of the
    points ``Z`` (which have unit RMS norm, so the planes cut through the data), deduplicated.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.standard_normal((6, 2))
    >>> arr = sample_patterns(Z, 200, rng)
    >>> bool(arr.patterns[:, 0].all()), arr.patterns.shape[1] <= 1 + 200
    (True, True)
    >>> Zh = np.hstack([Z, np.ones((6, 1))])
    >>> bool(np.array_equal(Zh @ arr.planes >= 0, arr.patterns))
    True
    """
    n, r = Z.shape
    planes = rng.standard_normal((r + 1, n_planes))
    Zh = np.hstack([Z, np.ones((n, 1))])
    pats = Zh @ planes >= 0
    keep = pats.any(axis=0) & ~pats.all(axis=0)
    pats, planes = pats[:, keep], planes[:, keep]
    first = unique_columns(pats)
    bias = np.zeros((r + 1, 1))
    bias[r] = 1.0
    return Arrangement(
        np.hstack([np.ones((n, 1), dtype=bool), pats[:, first]]),
        np.hstack([bias, planes[:, first]]),
        False,
    )


@dataclass
class DeepLayer:
    """A threshold layer on top of a layer with patterns ``H`` (n x m): neuron ``j`` fires
    iff ``(2 H[:, parents[j]] - 1) @ weights[j] + bias[j] >= 0``."""

    patterns: np.ndarray
    parents: np.ndarray
    weights: np.ndarray
    bias: np.ndarray


def deep_patterns(
    H: np.ndarray, fan_in: int, n_planes: int, rng: np.random.Generator
) -> DeepLayer:
    """Patterns of ``n_planes`` random threshold neurons that each read ``fan_in`` random
    columns of ``H`` (inputs mapped to ``+-1``), deduplicated; column 0 is the bias neuron
    (no parents, always on).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> H = rng.random((8, 5)) < 0.5
    >>> layer = deep_patterns(H, 2, 50, rng)
    >>> S = 2.0 * H - 1.0
    >>> j = 3
    >>> bool(np.array_equal(S[:, layer.parents[j]] @ layer.weights[j] + layer.bias[j] >= 0,
    ...                     layer.patterns[:, j]))
    True
    """
    n, m = H.shape
    fan_in = min(fan_in, m)
    parents = np.array([rng.choice(m, size=fan_in, replace=False) for _ in range(n_planes)],
                       dtype=np.intp).reshape(n_planes, fan_in)
    weights = rng.standard_normal((n_planes, fan_in))
    bias = rng.standard_normal(n_planes) * np.sqrt(fan_in)
    S = 2.0 * H - 1.0
    pats = np.einsum("npk,pk->np", S[:, parents], weights) + bias >= 0
    keep = pats.any(axis=0) & ~pats.all(axis=0)
    idx = np.flatnonzero(keep)
    idx = idx[unique_columns(pats[:, idx])]
    return DeepLayer(
        np.hstack([np.ones((n, 1), dtype=bool), pats[:, idx]]),
        np.vstack([np.zeros((1, fan_in), dtype=np.intp), parents[idx]]),
        np.vstack([np.zeros((1, fan_in)), weights[idx]]),
        np.concatenate([[1.0], bias[idx]]),
    )
