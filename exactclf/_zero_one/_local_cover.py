"""Lower bounds from infeasible subsystems found in small neighbourhoods (local covers).

Same instance as :class:`~exactclf._zero_one._iis.IISProblem`: unique points with weights
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
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial import cKDTree
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from .._certificate import BoundMethod
from .._warnings import warn
from ._bounds import LowerBound
from ._cover import CoverModel
from ._iis import IISOracle, IISProblem

__all__ = ["LocalCoverBound", "local_cover_bound"]

#: neighbours per anchor in the first pass; anchors that found no IIS are tried again with
#: :data:`_GROWTH` times as many while the budget lasts
_FIRST_K = 40
_GROWTH = 3
#: at most this many IISs per anchor and pass (each next one without a point of the last)
_PER_ANCHOR = 8
#: shares of the budget: the IISs around the anchors, then (until the second share) rounds
#: of cutting planes on the cover's LP relaxation; its MIP gets the rest
_ANCHOR_SHARE, _ROUNDS_SHARE = 0.3, 0.75
#: a cutting-plane round's search stops after this share of the rounds' time left
_ROUND_SHARE = 0.25
#: the cover's MIP is not started with less time than this
_MIN_MIP_SECONDS = 1.0
#: anchors drawn at random when a round finds no violated IIS near the plane's misfits
_MORE_ANCHORS = 200
#: the rounds stop after this many in a row that did not raise the bound
_STALLED_ROUNDS = 2


@dataclass
class LocalCoverBound(LowerBound):
    """A :class:`~exactclf._zero_one._bounds.LowerBound` with the IISs it rests on (``cuts``:
    arrays of indices of the points, each point labeled by its heavier weight); a cut that
    is not one IIS but a union of IISs that together rule out every network (an obstruction
    of :mod:`exactclf.maxout._cliques`) has them in ``relations``, under the sorted tuple
    of its indices."""

    cuts: list[np.ndarray] = field(default_factory=list)
    relations: dict = field(default_factory=dict)


def _anchor_iiss(oracle: IISOracle, nb: np.ndarray, rng: np.random.Generator) -> list:
    """Up to :data:`_PER_ANCHOR` verified IISs among the points ``nb`` (the anchor first),
    each next one without a point of the last (indices into the active points)."""
    keep = np.ones(len(nb), dtype=bool)
    cuts = []
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
        others = t[t != 0]
        if len(others) == 0:
            break
        keep[rng.choice(others)] = False
    return cuts


def _local_cuts(prob: IISProblem, anchors: np.ndarray, hull_only: bool, deadline: float,
                rng: np.random.Generator, allowed: np.ndarray | None = None) -> list[np.ndarray]:
    """Verified IISs (indices into the active points) around each anchor (active indices):
    first among its :data:`_FIRST_K` nearest candidates, then among more for the anchors that
    found none; only among the points ``allowed`` (a mask of the active points) if given.

    The candidates are the points of the anchor's other class (an IIS of them and the anchor
    puts the anchor in their convex hull: an obstruction), and unless ``hull_only`` the
    nearest points of both classes too (IISs of any shape)."""
    Zf = prob.Zf[prob.active]
    sign = np.where(prob.pref_all[prob.active], 1.0, -1.0)
    Zx = prob.Z[prob.active]
    ok = np.ones(len(Zf), dtype=bool) if allowed is None else allowed
    # neighbour pools: by the anchor's class, the other class; and all points
    pools = {s: np.flatnonzero(ok & (sign == -s)) for s in (1.0, -1.0)}
    if not hull_only:
        pools[0.0] = np.flatnonzero(ok)
    trees = {key: cKDTree(Zf[pool]) for key, pool in pools.items() if len(pool)}
    cuts: list[np.ndarray] = []
    k = _FIRST_K
    todo = np.asarray(anchors)
    largest = max((len(pool) for pool in pools.values()), default=0)
    while len(todo) and time.perf_counter() < deadline:
        missed = []
        for a in todo:
            if time.perf_counter() >= deadline:
                return cuts
            found = 0
            for key in ((sign[a],) if hull_only else (sign[a], 0.0)):
                if key not in trees:
                    continue
                pool = pools[key]
                _, near = trees[key].query(Zf[a], k=min(len(pool), k))
                near = pool[np.atleast_1d(near)]
                nb = np.r_[a, near[near != a]]
                new = _anchor_iiss(IISOracle(Zf[nb], sign[nb], Zx[nb]), nb, rng)
                cuts.extend(new)
                found += len(new)
            if not found:
                missed.append(a)
        if k >= largest:
            break
        todo, k = np.asarray(missed), k * _GROWTH
    return cuts


def _misfits(prob: IISProblem, allowed: np.ndarray) -> np.ndarray:
    """The points of ``allowed`` (active indices) on the wrong side of a soft-margin plane
    fitted to them, the costlier first."""
    idx = np.flatnonzero(allowed)
    sign = np.where(prob.pref_all[prob.active[idx]], 1, -1)
    if len(np.unique(sign)) < 2:
        return idx[:0]
    Zf = prob.Zf[prob.active[idx]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = LinearSVC(C=10.0).fit(Zf, sign, sample_weight=prob.cost[idx] /
                                      prob.cost[idx].mean())
    wrong = idx[model.decision_function(Zf) * sign <= 0]
    return wrong[np.argsort(-prob.cost[wrong], kind="stable")]


class _LocalCover:
    """The state of :func:`local_cover_bound`: the cover problem over the IISs found so far
    and the best bound proven from it, kept after every solve so that Ctrl-C returns it."""

    def __init__(self, prob: IISProblem, anchors: np.ndarray | None, hull_only: bool,
                 best: LocalCoverBound, rng: np.random.Generator):
        self.prob, self.hull_only, self.best, self.rng = prob, hull_only, best, rng
        # the anchors, in active indices: the given ones first, then the others shuffled
        first = (np.zeros(len(prob.Z), dtype=bool) if anchors is None
                 else np.asarray(anchors, dtype=bool))[prob.active]
        order = np.r_[rng.permutation(np.flatnonzero(first)),
                      rng.permutation(np.flatnonzero(~first))].astype(np.intp)
        self.union = prob.pref_all[prob.active]
        self.order = order[self.union[order]] if hull_only else order
        self.kind = "obstruction" if hull_only else "local IIS"
        self.master = CoverModel(prob.cost)

    def solve(self, integer: bool, name: str, seconds: float):
        """Solve the cover's LP relaxation or MIP within ``seconds``; keep its bound when it
        beats the best one. Returns the LP's point (None if it has none)."""
        x, bound, _ = self.master.solve(integer=integer, time_limit=max(seconds, 1e-3))
        if self.prob.base + bound > self.best.value:
            # the IISs the bound rests on, kept with it (Ctrl-C may come before the end)
            self.best = LocalCoverBound(self.prob.base + bound, f"{self.kind} cover {name}",
                                        cuts=[self.prob.active[t] for t in self.master.cuts])
        return x

    def cutting_planes(self, rounds_end: float) -> None:
        """Rounds of cutting planes on the cover's LP relaxation until ``rounds_end``, until
        the bound stops rising (:data:`_STALLED_ROUNDS`), or until a round finds no violated
        IIS.

        An IIS (at most r + 2 points) among the points whose LP value is below 1 / (r + 3) is
        violated by the LP's point; such IISs are sought around the points of that set.
        """
        eps = 1.0 / (self.prob.Zf.shape[1] + 3)
        stalled, last = 0, self.best.value
        while (left := rounds_end - time.perf_counter()) > 0:
            x = self.solve(False, "LP", left)
            # new IISs keep coming (random objectives) long after the bound stops rising
            if self.best.value > last:
                stalled, last = 0, self.best.value
            else:
                stalled += 1
            if x is None or stalled > _STALLED_ROUNDS:
                break
            if not self._add_round_cuts(x < eps, left):
                break

    def _add_round_cuts(self, allowed: np.ndarray, left: float) -> bool:
        """One round's IISs among the points ``allowed``: around those that a plane fitted to
        them gets wrong (the union's class there, for obstructions), else around random
        anchors among all the points; whether any new one was added."""
        anchors = (self.rng.permutation(np.flatnonzero(allowed & self.union)) if self.hull_only
                   else _misfits(self.prob, allowed))
        new = _local_cuts(self.prob, anchors, self.hull_only,
                          time.perf_counter() + _ROUND_SHARE * left, self.rng, allowed)
        if self.master.add_cuts(new):
            return True
        # none violated near the plane's misfits: IISs around other points
        more = self.rng.choice(self.order, size=min(len(self.order), _MORE_ANCHORS),
                               replace=False)
        new = _local_cuts(self.prob, more, self.hull_only,
                          time.perf_counter() + _ROUND_SHARE * left, self.rng)
        return self.master.add_cuts(new) > 0


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
        Seconds in all: 30 % for the IISs around the anchors, 45 % for cutting planes on
        the cover's LP relaxation, the rest for its MIP.
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
    best = LocalCoverBound(prob.base, BoundMethod.CONFLICTS)
    if len(prob.active) == 0 or prob.Zf.shape[1] == 0:
        return best
    cover = _LocalCover(prob, anchors, hull_only, best, rng)
    try:
        cover.master.add_cuts(_local_cuts(prob, cover.order, hull_only,
                                          t0 + _ANCHOR_SHARE * time_limit, rng))
        if not cover.master.cuts:
            return cover.best
        cover.cutting_planes(t0 + _ROUNDS_SHARE * time_limit)
        left = t0 + time_limit - time.perf_counter()
        if left >= _MIN_MIP_SECONDS:
            # HiGHS may overrun a MIP's time limit (twice over seen here): half of it, and
            # no longer than the search took (the MIP gains a few errors over the LP: a
            # long budget is not worth waiting for when the search has converged)
            cover.solve(True, "MIP", min(left / 2,
                                         max(_MIN_MIP_SECONDS, time.perf_counter() - t0)))
    except KeyboardInterrupt:
        warn("local_cover_bound interrupted: returning the bound proven so far", UserWarning)
        cover.best.interrupted = True
    cover.best.elapsed = time.perf_counter() - t0
    return cover.best
