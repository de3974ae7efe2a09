"""The obstruction cover bound of maxout networks: sets of samples that no network of K
half-spaces classifies all correctly, each certified by exact Gordan multipliers.

A network of ``DeepICEMaxoutClassifier`` with polarity ``p`` gives the *union* class
(``classes_[1]`` for ``p = +1``, ``classes_[0]`` for ``p = -1``; side ``p`` below) to the
union of K half-spaces ``h_k(x) = w_k.x + b_k > 0`` (``>= 0`` for ``p = -1``) and the other
class to the rest (``h_k(x) <= 0``, resp. ``< 0``, for every k).

A *relation* lists members ``[row, side, u]`` as the IIS cover's witness does
(:mod:`._iis`): ``sum u_j side_j (x_j, 1) == 0`` exactly, ``u >= 0``, not all 0. Its members of
the union's side (with ``u > 0``) cannot all lie in one half-space ``k`` while its other
members are outside every half-space: the relation, applied to ``(w_k, b_k)``, would equate a
sum with a positive (resp. non-negative) term to a sum of non-positive (resp. negative)
terms, and each side's multipliers sum to the same positive number (the last coordinate).

An *obstruction* is a list of relations. Each correctly classified union member lies in some
half-space; the obstruction holds when every assignment of its union members (their distinct
points) to K half-spaces puts all the union members of one of its relations in one
half-space. Then no network classifies all its members correctly: it errs on one of them.
That is checked here by trying every assignment (``K ** m`` of them for ``m`` points: an
obstruction of one relation with one union point is one for every K; ``K + 1`` points with a
relation for every pair of them, one for K). With K = 1 every relation is an obstruction,
whatever the polarity (any affine classifier errs on a member of an IIS), so one polarity's
evidence bounds both.

A polarity's errors are then at least the conflicting duplicates plus the least weight of
errors that meets every obstruction (a member costs as in :mod:`._iis`), re-derived by the
same set-cover ILP. *Blocks* ``[rows, v]`` add rows ``sum of the costs of the errors on the
points of rows >= v - their conflicting duplicates``: they state the exact optimum of a block
of the points, proven by an enumeration of its networks, which has no compact witness. They
are used as stated and reported as not checked. The certificate's bound must be at most the
smaller polarity's.
"""

from __future__ import annotations

import itertools
import time

import numpy as np

from ._iis import Samples

__all__ = ["check_maxout_cover", "obstruction_holds"]

#: assignments of an obstruction's union points to half-spaces tried at most (larger
#: obstructions are not accepted: the search emits K + 1 points or one)
_MAX_ASSIGNMENTS = 100_000


def obstruction_holds(unions: list[frozenset], K: int) -> bool:
    """Whether every assignment of the points of ``unions`` (the union members of each
    relation, as sets of points) to ``K`` half-spaces puts one relation's set in one.

    Examples
    --------
    A triangle whose every side is blocked: two half-spaces cannot hold three corners apart,
    three can.

    >>> sides = [frozenset({0, 1}), frozenset({1, 2}), frozenset({0, 2})]
    >>> obstruction_holds(sides, 2), obstruction_holds(sides, 3)
    (True, False)
    >>> obstruction_holds([frozenset({5})], 4)  # a union point in the hull of the others
    True
    """
    if not unions or any(not u for u in unions):
        return False
    if K == 1 or any(len(u) == 1 for u in unions):
        return True
    points = sorted(set().union(*unions))
    if K ** len(points) > _MAX_ASSIGNMENTS:
        return False
    index = {p: i for i, p in enumerate(points)}
    sets = [[index[p] for p in u] for u in unions]
    for colour in itertools.product(range(K), repeat=len(points)):
        if not any(len({colour[i] for i in t}) == 1 for t in sets):
            return False  # this assignment keeps every relation apart
    return True


def _polarity_bound(samples: Samples, entry, K: int, claim: float, rtol: float, report):
    """The bound one polarity's evidence proves (the conflicting duplicates included), or
    None when the evidence is malformed."""
    polarity = entry.get("polarity") if isinstance(entry, dict) else None
    obstructions = entry.get("obstructions") if isinstance(entry, dict) else None
    blocks = entry.get("blocks", []) if isinstance(entry, dict) else None
    if polarity not in (1, -1) or not isinstance(obstructions, list) or not isinstance(
            blocks, list):
        report.add("maxout cover witness", False,
                   "an entry is not {polarity: +-1, obstructions: [...], blocks: [...]}")
        return None
    sets, errors = [], []
    for k, relations in enumerate(obstructions):
        got = [samples.relation(r) for r in relations] if isinstance(relations, list) else []
        why = next((g for g in got if isinstance(g, str)), None)
        if why is None and not obstruction_holds(
                [frozenset(p for p, s in g if s == polarity) for g in got], K):
            why = f"its relations do not rule out every network of {K} half-spaces"
        if why is None:
            sets.append(sorted({m for g in got for m in g}))
        else:
            errors.append(f"obstruction {k}: {why}")
    report.add(f"polarity {polarity:+d}: obstructions certified by exact multipliers",
               not errors, f"{len(sets)} of {len(obstructions)}"
               + (f"; {errors[0]}" if errors else ""))
    points = []
    for b in blocks:
        rows = b[0] if isinstance(b, list) and len(b) == 2 else None
        if (not isinstance(rows, list) or not all(
                isinstance(r, int) and 0 <= r < samples.n for r in rows)
                or not isinstance(b[1], int | float)):
            report.add("maxout cover witness", False, f"block {b!r} is not [rows, bound]")
            return None
        pts = np.unique(samples.point[rows])
        # the block's bound beyond its points' conflicting duplicates; a model errs at most
        # on the heavier label of each point: a claim above that is false on its face
        low, high = samples.weight[pts].min(axis=1).sum(), samples.weight[pts].max(
            axis=1).sum()
        if float(b[1]) > float(high):
            report.add("maxout cover witness", False,
                       f"block of {len(pts)} points claims {b[1]!r} errors, more than any "
                       f"model makes there ({float(high)!r})")
            return None
        points.append((pts, float(b[1]) - float(low)))
    cover, status, n_sets = samples.cover(sets, claim - samples.base, rtol, blocks=points)
    report.add(f"polarity {polarity:+d}: cover bound re-derived", True,
               f"{samples.base!r} (conflicting duplicates) + {cover!r} (a lower bound on the "
               f"least weight of errors meeting all {n_sets} obstructions that cost"
               + (f" and the {len(points)} blocks" if points else "") + f": {status})")
    if points:
        report.not_checked.append(
            f"polarity {polarity:+d}: the optima of {len(points)} blocks of the points, each "
            "proven by an enumeration of the block's networks (no compact witness)")
    return samples.base + cover


def check_maxout_cover(model, cert, X, y, w, report, rtol) -> tuple[float, float] | None:
    """Check every obstruction of the witness exactly and re-derive each polarity's cover
    bound (see the module docstring), asked whether it reaches the certificate's bound
    within the relative ``rtol``; returns the smaller and the slack ``rtol`` of it, or
    None."""
    t0 = time.perf_counter()
    data = cert.witness.data
    K, entries = data.get("n_hyperplanes"), data.get("polarities")
    if not isinstance(K, int) or K < 1 or K != model.n_hyperplanes or not isinstance(
            entries, list):
        report.add("maxout cover witness", False,
                   "no n_hyperplanes (the model's) and list of polarities in the witness")
        return None
    samples = Samples(X, np.asarray(y).ravel() == model.classes_[1], w)
    bounds = {}
    for entry in entries:
        got = _polarity_bound(samples, entry, K, cert.bound, rtol, report)
        if got is None:
            return None
        bounds[entry["polarity"]] = min(got, bounds.get(entry["polarity"], np.inf))
    if K == 1 and bounds:  # any affine classifier: one polarity's relations bound both
        bounds = dict.fromkeys((1, -1), max(bounds.values()))
    if set(bounds) != {1, -1}:
        report.add("maxout cover witness", False,
                   f"evidence for polarities {sorted(bounds)}, not both")
        return None
    proven = min(bounds.values())
    report.add("maxout cover bound re-derived", True,
               f"the smaller polarity's, {proven!r}, in {time.perf_counter() - t0:.2f} s")
    return proven, rtol * abs(proven)
