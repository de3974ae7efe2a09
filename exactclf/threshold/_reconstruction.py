"""The network behind a Lasso solution: hidden weights that reproduce the selected patterns.

The Lasso picks columns of the arrangement dictionary; a network needs, for each first-layer
column, a hyperplane ``(a, b)`` with ``1{X a + b >= 0}`` equal to that pattern on the training
points. :class:`FirstLayer` computes these planes (``"svm"``: the hard-margin separator of the
pattern; ``"pi"``: the pseudo-inverse interpolant where it reproduces the pattern, else the
sampled plane or the separator) once per column and keeps them, so the solutions of a whole
regularization path share the work. :func:`build_network` assembles the layers that the
output weights use and checks that they reproduce every pattern.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._separator import UnrealizableLabeling, max_margin_separator

__all__ = ["FirstLayer", "Network", "build_network"]


class FirstLayer:
    """First-layer neurons of an arrangement's columns, reconstructed once per column.

    ``X``: the training points (original units); ``Z``, ``frame``: their unique points in the
    affine frame (``frame.to_original`` maps a frame plane back); ``arr``: the arrangement
    (patterns on the unique points); ``inverse``: the unique point of each training point.

    Examples
    --------
    >>> from exactclf._geometry import affine_frame
    >>> from exactclf.threshold._arrangements import exact_patterns
    >>> X = np.array([[0.0], [1.0], [2.0]])
    >>> frame = affine_frame(X)
    >>> Z = frame.transform(X)
    >>> layer = FirstLayer(X, Z, frame, exact_patterns(Z), np.arange(3), "svm")
    >>> C, c, exact = layer.neurons(np.array([1]))
    >>> (X @ C + c >= 0).ravel(), bool(exact[0])
    (array([False, False,  True]), True)
    """

    def __init__(self, X, Z, frame, arr, inverse, reconstruction):
        self.X, self.Z, self.frame, self.arr = X, Z, frame, arr
        self.inverse, self.reconstruction = inverse, reconstruction
        self._planes: dict[int, tuple[np.ndarray, float, bool]] = {}

    def neurons(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(coef (d, m), intercept (m,), exact (m,))`` of the columns ``idx``; ``exact``
        False where float64 cannot realize the pattern on the training points (the plane is
        then the separator's best attempt)."""
        for p in idx:
            if int(p) not in self._planes:
                self._planes[int(p)] = self._neuron(int(p))
        planes = [self._planes[int(p)] for p in idx]
        C = np.column_stack([a for a, _, _ in planes]) if planes else np.zeros(
            (self.X.shape[1], 0))
        return C, np.array([b for _, b, _ in planes]), np.array([e for _, _, e in planes])

    def _neuron(self, p):
        pattern = self.arr.patterns[:, p]
        plane = None if self.arr.planes is None else self.arr.planes[:, p]
        a, b, exact = self._plane(pattern, plane)
        target = pattern[self.inverse]
        if exact and not np.array_equal(self.X @ a + b >= 0, target):
            # rounding on a sampled plane (or in the original units): use the max-margin one
            a, b, exact = self._separator(pattern)
        # a plane realized in the frame can still lose a point in the original units
        return a, b, bool(exact and np.array_equal(self.X @ a + b >= 0, target))

    def _plane(self, pattern, plane):
        if pattern.all():
            return np.zeros(self.frame.mean.shape[0]), 1.0, True
        if self.reconstruction == "pi":
            Zh = np.hstack([self.Z, np.ones((len(self.Z), 1))])
            g, *_ = np.linalg.lstsq(Zh, pattern.astype(np.float64), rcond=None)
            if np.max(np.abs(Zh @ g - pattern)) < 0.25:
                return *self.frame.to_original(g[:-1], g[-1] - 0.5), True
            if plane is not None:
                return *self.frame.to_original(plane[:-1], plane[-1]), True
        return self._separator(pattern)

    def _separator(self, pattern):
        try:
            a, b = max_margin_separator(self.Z, pattern)
        except UnrealizableLabeling as exc:
            return *self.frame.to_original(*exc.plane), False
        return *self.frame.to_original(a, b), True


@dataclass
class Network:
    """Hidden layers (``coefs``, ``intercepts``), output weights ``W`` (one row per
    last-layer neuron, one column per output) and the number of first-layer neurons whose
    pattern float64 could not realize (``n_repaired``)."""

    coefs: list
    intercepts: list
    W: np.ndarray
    n_repaired: int


def build_network(first: FirstLayer, layers: list, W: np.ndarray) -> Network:
    """Keep the neurons that the output weights ``W`` (dictionary x outputs) use and their
    ancestors, reconstruct them, and check that the network reproduces every pattern on the
    training points (``RuntimeError`` otherwise, unless neurons were repaired)."""
    active = np.flatnonzero(np.any(W != 0, axis=1))
    if active.size == 0:
        active = np.array([0])
    needed = [active]
    for layer in reversed(layers):
        par = np.unique(layer.parents[needed[0]].ravel())
        needed.insert(0, par if par.size else np.array([0]))
    C1, c1, exact = first.neurons(needed[0])
    coefs, intercepts = [C1], [c1]
    H = first.X @ C1 + c1 >= 0
    target = first.arr.patterns[first.inverse][:, needed[0]]
    prev_idx = needed[0]
    for layer, idx in zip(layers, needed[1:], strict=True):
        pos = {int(p): i for i, p in enumerate(prev_idx)}
        C = np.zeros((len(prev_idx), len(idx)))
        c = np.zeros(len(idx))
        for j, q in enumerate(idx):
            if q == 0:
                c[j] = 1.0
                continue
            for par, a in zip(layer.parents[q], layer.weights[q], strict=True):
                C[pos[int(par)], j] += 2.0 * a
            c[j] = layer.bias[q] - layer.weights[q].sum()
        coefs.append(C)
        intercepts.append(c)
        H = H @ C + c >= 0
        target = layer.patterns[first.inverse][:, idx]
        prev_idx = idx
    n_repaired = int(np.count_nonzero(~exact))
    if n_repaired == 0 and not np.array_equal(H, target):
        raise RuntimeError(
            "internal error: the reconstructed network does not reproduce its arrangement "
            "patterns on the training data; please report this data"
        )
    return Network(coefs, intercepts, W[needed[-1]], n_repaired)
