"""Obstruction covers that use K: K + 1 points of the union's class, pairwise blocked.

Same instance as :func:`exactclf.maxout._exact.exact_union` (one polarity: the weights of
the union's class and of the other class at each distinct point). Two points ``u, v`` that
prefer the union are *blocked* by points ``W`` that prefer the other class when the segment
``[u, v]`` meets the convex hull of ``W``: then ``{u, v}`` against ``W`` is an irreducible
infeasible subsystem (IIS) of the linear problem (Gordan's multipliers write a convex
combination of ``u`` and ``v`` as one of ``W``), found and verified exactly as every IIS of
:mod:`exactclf._zero_one._iis`. A network that classifies ``u``, ``v`` and ``W`` correctly puts
``u`` and ``v`` in different half-spaces: a half-space holding both holds the segment, so a
point of the hull of ``W``, so a point of ``W``, which the network then puts in the union. So
K + 1 union points that are pairwise blocked (by ``W_uv`` for each pair), together with every
``W_uv``, are never all classified correctly by K half-spaces: an *obstruction* of networks
of K half-spaces, of which the K-free one of
:func:`~exactclf._zero_one._local_cover.local_cover_bound` (one point in the hull of ``W``) is
the case ``u = v``.

Every network errs on at least one point of each obstruction, so the minimum-weight cover of
any family of them bounds the optimum from below (:class:`~exactclf._zero_one._cover.CoverModel`,
whose bounds are proven). The family grows by cutting planes: the cover's MIP over the
obstructions so far, then obstructions among the points its solution keeps, on a sample of
the union's points (all pairs among them), until none is found or the budget ends.
"""

from __future__ import annotations

import time
from itertools import combinations

import numpy as np

from .._certificate import BoundMethod
from .._warnings import warn
from .._zero_one._cover import CoverModel
from .._zero_one._iis import IISProblem
from .._zero_one._local_cover import LocalCoverBound

__all__ = ["clique_cover_bound"]

#: points of the other class nearest to a segment (or a point) among which an IIS is sought
_NEAREST = 40
#: union points per round whose pairs are tested (all pairs among them)
_SAMPLE = 40
#: at most this many obstructions added per round
_MAX_CUTS = 2000
#: the cover's MIP of one round gets at most this share of the time left
_MIP_SHARE = 0.3
#: rounds stop after this many in a row that did not raise the bound
_STALLED_ROUNDS = 3


def _nearest(Zf, pool, a, b, k):
    """The ``k`` points of ``pool`` (indices into ``Zf``) nearest to the segment ``[a, b]``
    (a point when ``a == b``)."""
    if len(pool) <= k:
        return pool
    p, q = Zf[a], Zf[b]
    d = q - p
    t = np.clip((Zf[pool] - p) @ d / max(float(d @ d), 1e-300), 0.0, 1.0)
    dist = ((Zf[pool] - p - t[:, None] * d) ** 2).sum(axis=1)
    return pool[np.argpartition(dist, k - 1)[:k]]


def _blocking(prob, a, b, pool, rng):
    """A verified IIS among ``a``, ``b`` (union points, active indices) and the points of
    ``pool`` nearest to their segment, with ``a`` and ``b`` in it first; None if there is
    none or floating point cannot decide."""
    keep = np.zeros(len(prob.active), dtype=bool)
    keep[_nearest(prob.Zf[prob.active], pool, a, b, _NEAREST)] = True
    keep[[a, b]] = True
    objective = rng.uniform(0.5, 1.5, len(keep))
    objective[[a, b]] = 0.0
    try:
        return prob.oracle.find_iis(keep, objective)
    except FloatingPointError:
        return None


def _cliques(adjacent: dict, size: int, limit: int) -> list[tuple]:
    """Up to ``limit`` cliques of ``size`` vertices of the graph ``adjacent`` (vertex ->
    set of neighbours), each once (vertices in increasing order)."""
    out: list[tuple] = []

    def grow(clique, candidates):
        if len(out) >= limit:
            return
        if len(clique) == size:
            out.append(tuple(clique))
            return
        for v in sorted(candidates):
            grow(clique + [v], {w for w in candidates & adjacent[v] if w > v})

    grow([], set(adjacent))
    return out


def _round_cuts(prob, keep, K, rng, deadline, relations: dict) -> list[np.ndarray]:
    """Obstructions among the active points ``keep``: each sampled union point in the hull
    of other points alone, and the (K + 1)-cliques of the pairs of sampled union points that
    are blocked (indices into the active points; a clique's IISs, one per pair, go to
    ``relations`` in the points' indices, under the sorted tuple of its points)."""
    union = prob.pref_all[prob.active]
    pool = np.flatnonzero(keep & ~union)
    mine = np.flatnonzero(keep & union)
    sample = rng.permutation(mine)[:_SAMPLE]
    cuts: list[np.ndarray] = []
    free = []  # sampled points in no hull of the other class's points near them
    for u in sample:
        if time.perf_counter() >= deadline:
            return cuts
        t = _blocking(prob, u, u, pool, rng)
        if t is None:
            free.append(u)
        else:
            cuts.append(t)
    adjacent: dict = {u: set() for u in free}
    witness: dict = {}
    for u, v in combinations(sorted(free), 2):
        if time.perf_counter() >= deadline:
            break
        t = _blocking(prob, u, v, pool, rng)
        if t is None:
            continue
        if u in t and v in t:
            adjacent[u].add(v)
            adjacent[v].add(u)
            witness[u, v] = t
        else:  # one of them in the hull of the other class's points: K-free
            cuts.append(t)
    for clique in _cliques(adjacent, K + 1, _MAX_CUTS):
        pairs = [witness[u, v] for u, v in combinations(clique, 2)]
        cuts.append(np.unique(np.concatenate(pairs)))
        # kept in the points' indices, as the bounds returned name them
        relations.setdefault(tuple(sorted(prob.active[cuts[-1]].tolist())),
                             [prob.active[t] for t in pairs])
    return cuts


def clique_cover_bound(
    Z: np.ndarray,
    want_w: np.ndarray,
    other_w: np.ndarray,
    K: int,
    *,
    time_limit: float,
    cuts=(),
    random_state: int | np.random.Generator | None = 0,
) -> LocalCoverBound:
    """The cover bound over obstructions of networks of ``K`` half-spaces (see the module
    docstring), found within ``time_limit`` seconds.

    Parameters
    ----------
    Z : (n, d) array of distinct points (in a well-conditioned frame).
    want_w, other_w : (n,) weights of the union's class / of the other class at each point.
    K : int
        Half-spaces of the networks bounded.
    time_limit : float
        Seconds in all.
    cuts : iterable of arrays of indices into ``Z``, optional
        Obstructions already known (e.g. the K-free ones of
        :func:`~exactclf._zero_one._local_cover.local_cover_bound`), each a set of points no
        network of K half-spaces classifies all correctly.
    random_state : int, Generator or None
        Seeds the samples of union points and the LP objectives.

    Returns
    -------
    LocalCoverBound
        The bound (at least the conflicting duplicates; method ``"pair obstruction
        cover"`` when the cover raised it), with the obstructions it rests on (indices into
        ``Z``).

    Examples
    --------
    A triangle of the union's class with the midpoints of its sides in the other class:
    no point is in the hull of the others, but every side is blocked by its midpoint.

    >>> Z = np.array([[2.0, 0], [-1, 1.7], [-1, -1.7], [0.5, 0.85], [0.5, -0.85], [-1, 0]])
    >>> want = np.array([1.0, 1, 1, 0, 0, 0])
    >>> [clique_cover_bound(Z, want, 1 - want, K, time_limit=10).value for K in (2, 3)]
    [1.0, 0.0]
    """
    t0 = time.perf_counter()
    deadline = t0 + time_limit
    rng = np.random.default_rng(random_state)
    prob = IISProblem(np.asarray(Z, dtype=np.float64), np.asarray(want_w, dtype=np.float64),
                      np.asarray(other_w, dtype=np.float64))
    best = LocalCoverBound(prob.base, BoundMethod.CONFLICTS)
    if len(prob.active) == 0 or prob.Zf.shape[1] == 0:
        return best
    position = np.full(len(Z), -1)
    position[prob.active] = np.arange(len(prob.active))
    master = CoverModel(prob.cost)
    master.add_cuts([position[c] for c in cuts if np.all(position[c] >= 0)])
    keep = np.ones(len(prob.active), dtype=bool)
    stalled = 0
    relations: dict = {}  # a clique's IISs (points' indices), by its sorted points
    try:
        while time.perf_counter() < deadline and stalled < _STALLED_ROUNDS:
            if not master.add_cuts(_round_cuts(prob, keep, K, rng, deadline, relations)):
                stalled += 1
                continue
            left = deadline - time.perf_counter()
            x, bound, _ = master.solve(integer=True, time_limit=_MIP_SHARE * left)
            if prob.base + bound > best.value:
                best = LocalCoverBound(prob.base + bound, BoundMethod.PAIR_COVER,
                                       cuts=[prob.active[t] for t in master.cuts],
                                       relations=dict(relations))
                stalled = 0
            else:
                stalled += 1
            if x is not None:
                keep = x < 0.5
    except KeyboardInterrupt:
        warn("clique_cover_bound interrupted: returning the bound proven so far",
             UserWarning)
        best.interrupted = True
    best.elapsed = time.perf_counter() - t0
    return best
