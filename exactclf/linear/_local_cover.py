"""Lower bounds from infeasible subsystems found in small neighbourhoods (local covers).

Same instance as :class:`~exactclf.linear._iis.IISProblem`: unique points with weights
``wpos`` / ``wneg``; each active point has a preferred label and costs ``c_i`` more when it
is given up. The Benders loop of :mod:`._iis` finds irreducible infeasible subsystems (IISs)
with one LP over *all* points per IIS, which on thousands of points takes most of a budget
before the first bound. But an IIS has at most ``D + 2`` points and being infeasible is a
property of those points alone: it can be found among the ``k`` nearest neighbours of a point
the incumbent gets wrong, with an LP of ``k`` columns. Each one is verified exactly, as every
IIS of :mod:`._iis` is, so the cover problem over the IISs found is a relaxation of the
minimum weight cover of all of them and its (LP or MIP) bound a proven lower bound.

Two families are sought:

- ``hull_only=False`` (the linear problem): any IIS among the neighbours of the anchor;
- ``hull_only=True`` (unions of K half-spaces, any K): the anchor, of the preferred-positive
  class, together with points of the other class only. Gordan's multipliers then write the
  anchor as a convex combination of the others: if they all lie in the convex region where
  the network predicts the other class, so does the anchor. Such an *obstruction* forces one
  error on every network whose other-class region is convex, whatever the number of
  half-spaces.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial import cKDTree

from .._warnings import warn
from ._bounds import LowerBound
from ._iis import CoverModel, IISOracle, IISProblem

__all__ = ["LocalCoverBound", "local_cover_bound"]

#: neighbours per anchor in the first pass; anchors that found no IIS are tried again with
#: :data:`_GROWTH` times as many while the budget lasts
_FIRST_K = 40
_GROWTH = 3
#: at most this many IISs per anchor and pass (each next one without a point of the last)
_PER_ANCHOR = 8
#: share of the budget for finding IISs; the cover's LP and MIP get the rest
_SEARCH_SHARE = 0.6


@dataclass
class LocalCoverBound(LowerBound):
    """A :class:`~exactclf.linear._bounds.LowerBound` with the IISs it rests on (``cuts``:
    arrays of indices of the points, each point labeled by its heavier weight)."""

    cuts: list[np.ndarray] = field(default_factory=list)


def _local_cuts(prob: IISProblem, anchors: np.ndarray, hull_only: bool, deadline: float,
                rng: np.random.Generator) -> list[np.ndarray]:
    """Verified IISs (indices into the active points) around each anchor (active indices):
    first among its :data:`_FIRST_K` nearest candidates, then among more for the anchors that
    found none."""
    Zf = prob.Zf[prob.active]
    sign = np.where(prob.pref_all[prob.active], 1.0, -1.0)
    Zx = prob.Z[prob.active]
    # the neighbours an anchor may be combined with: all points, or the other class
    pool = np.flatnonzero(sign < 0) if hull_only else np.arange(len(Zf))
    if len(pool) == 0 or len(anchors) == 0:
        return []
    tree = cKDTree(Zf[pool])
    cuts: list[np.ndarray] = []
    k = _FIRST_K
    todo = np.asarray(anchors)
    while len(todo) and time.perf_counter() < deadline:
        missed = []
        for a in todo:
            if time.perf_counter() >= deadline:
                return cuts
            _, near = tree.query(Zf[a], k=min(len(pool), k))
            near = pool[np.atleast_1d(near)]
            nb = np.r_[a, near[near != a]]
            oracle = IISOracle(Zf[nb], sign[nb], Zx[nb])
            keep = np.ones(len(nb), dtype=bool)
            found = 0
            for _ in range(_PER_ANCHOR):
                objective = rng.uniform(0.5, 1.5, len(nb))
                objective[0] = 0.0  # IISs through the anchor first
                try:
                    t = oracle.find_iis(keep, objective)
                except FloatingPointError:  # undecidable in float64: no cut from here
                    break
                if t is None:
                    break
                cuts.append(nb[t])
                found += 1
                # the next IIS avoids one of this one's other points
                others = t[t != 0]
                if len(others) == 0:
                    break
                keep[rng.choice(others)] = False
            if not found:
                missed.append(a)
        if k >= len(pool):
            break
        todo, k = np.asarray(missed), k * _GROWTH
    return cuts


def local_cover_bound(
    Z: np.ndarray,
    wpos: np.ndarray,
    wneg: np.ndarray,
    *,
    anchors: np.ndarray | None = None,
    hull_only: bool = False,
    time_limit: float = 10.0,
    random_state: int | np.random.Generator | None = 0,
) -> LocalCoverBound:
    """The cover bound over IISs found around ``anchors`` (see the module docstring).

    Parameters
    ----------
    Z : (n, d) array of distinct points.
    wpos, wneg : (n,) weights of the positive / negative samples at each point (for
        ``hull_only``: of the class whose region may be a union of half-spaces, and of the
        class whose region is convex).
    anchors : (n,) bool array, optional
        Points to search around, first (e.g. the errors of an incumbent); the other points
        follow in random order while the search's share of the budget lasts. With
        ``hull_only``, only points preferring the positive label anchor obstructions.
    hull_only : bool
        Only obstructions (one positive point in the convex hull of negative ones), valid for
        every union of half-spaces; otherwise any IIS (valid for affine classifiers).
    time_limit : float
        Seconds in all: 60 % for the search, the rest for the cover's LP relaxation and
        then its MIP.
    random_state : int, Generator or None
        Seeds the LP objectives that pick among the IISs.

    Returns
    -------
    LocalCoverBound
        The bound (at least the conflicting duplicates) and the IISs it rests on.

    Examples
    --------
    >>> Z = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    >>> wpos = np.array([1.0, 0, 1, 0, 1, 0])
    >>> lb = local_cover_bound(Z, wpos, 1 - wpos)
    >>> lb.value, len(lb.cuts) > 0
    (2.0, True)
    """
    t0 = time.perf_counter()
    rng = np.random.default_rng(random_state)
    wpos = np.asarray(wpos, dtype=np.float64)
    wneg = np.asarray(wneg, dtype=np.float64)
    prob = IISProblem(np.asarray(Z, dtype=np.float64), wpos, wneg)
    best = LocalCoverBound(prob.base, "conflicting duplicates")
    if len(prob.active) == 0 or prob.Zf.shape[1] == 0:
        return best
    # the anchors, in active indices: the given ones first, then the others shuffled
    first = (np.zeros(len(Z), dtype=bool) if anchors is None
             else np.asarray(anchors, dtype=bool))[prob.active]
    order = np.r_[rng.permutation(np.flatnonzero(first)),
                  rng.permutation(np.flatnonzero(~first))]
    if hull_only:
        order = order[prob.pref_all[prob.active][order]]
    try:
        cuts = _local_cuts(prob, order.astype(np.intp), hull_only,
                           t0 + _SEARCH_SHARE * time_limit, rng)
        if not cuts:
            return best
        master = CoverModel(prob.cost)
        master.add_cuts(cuts)
        for integer, name in ((False, "LP"), (True, "MIP")):
            left = t0 + time_limit - time.perf_counter()
            if left <= 0:
                break
            _, bound, _ = master.solve(integer=integer, time_limit=left)
            if prob.base + bound > best.value:
                kind = "obstruction" if hull_only else "local IIS"
                best = LocalCoverBound(prob.base + bound, f"{kind} cover {name}")
        best.cuts = [prob.active[t] for t in master.cuts]
    except KeyboardInterrupt:
        warn("local_cover_bound interrupted: returning the bound proven so far", UserWarning)
        best.interrupted = True
    best.elapsed = time.perf_counter() - t0
    return best
