"""The joint cover bound: one cover MIP over the obstructions found and the blocks solved.

Same instance as :func:`exactclf.maxout._exact.exact_union` (one polarity: the weights of
the union's class and of the other class at each distinct point). Every network pays
``min(want_i, other_i)`` at each point, and ``c_i = |want_i - other_i|`` more where it gives
the point the class of the smaller weight (``x_i = 1``): its errors are
``sum_i min(want_i, other_i) + c.x``. Two kinds of proven facts constrain ``x``:

- an *obstruction* ``T`` (:func:`~exactclf._zero_one._local_cover.local_cover_bound`,
  :func:`~._cliques.clique_cover_bound`) is never classified all correctly:
  ``sum_{i in T} x_i >= 1``;
- a *block* ``B`` whose exact optimum is at least ``v_B`` (a block of a partition bound,
  :func:`~._bounds.partition_bound`) holds at least that many errors of every network:
  ``sum_{i in B} c_i x_i >= v_B - sum_{i in B} min(want_i, other_i)``.

The least ``c.x`` over binary ``x`` meeting both kinds of rows is at most any network's, so
the MIP's dual bound (:class:`~exactclf._zero_one._cover.CoverModel`, whose bounds are proven)
bounds the polarity's optimum from below. It is at least the obstruction cover's bound and
every partition's sum (the rows of either alone are a subset), and more where they bind
different points: a block counts errors that no obstruction found there sees, and an
obstruction between two blocks forces an error that neither block's optimum has to make.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .._certificate import BoundMethod
from .._warnings import warn
from .._zero_one._cover import CoverModel
from .._zero_one._local_cover import LocalCoverBound

__all__ = ["JointRows", "joint_cover_bound"]


@dataclass
class JointRows:
    """The rows of one polarity's joint cover, as its bounds prove them: obstructions
    (``cuts``, each once) and blocks with their bounds (``blocks``); the IISs of the
    obstructions that are not one IIS (``relations``, see
    :class:`~exactclf._zero_one._local_cover.LocalCoverBound`)."""

    cuts: dict = field(default_factory=dict)
    blocks: list = field(default_factory=list)
    relations: dict = field(default_factory=dict)

    def add(self, cuts=(), blocks=(), relations=None) -> None:
        """Obstructions and blocks (with their bounds) proven since."""
        for c in cuts:
            self.cuts.setdefault(tuple(sorted(int(i) for i in c)), c)
        self.blocks.extend(blocks)
        for key, ts in (relations or {}).items():
            self.relations.setdefault(key, ts)

    @property
    def n_rows(self) -> int:
        return len(self.cuts) + len(self.blocks)


def joint_cover_bound(
    want_w: np.ndarray,
    other_w: np.ndarray,
    cuts,
    blocks,
    *,
    time_limit: float,
) -> LocalCoverBound:
    """The cover bound over obstructions ``cuts`` and solved ``blocks`` (see the module
    docstring), its MIP solved for at most ``time_limit`` seconds.

    Parameters
    ----------
    want_w, other_w : (n,) weights of the union's class / of the other class at each point.
    cuts : iterable of arrays of point indices
        Obstructions: sets of points that no network classifies all correctly.
    blocks : iterable of (array of point indices, float)
        Sets of points with a proven lower bound on any network's errors on them.
    time_limit : float
        Seconds for the MIP.

    Returns
    -------
    LocalCoverBound
        The bound (at least the conflicting duplicates; method ``"joint cover"`` when the
        MIP raised it) with the obstructions it rests on (its blocks are not kept).

    Examples
    --------
    Five points, each one sample of the union's class; three obstructions, whose cover alone
    proves 2 (points 1 and 3), and a block of points 0, 2 and 3 where every network errs
    twice (2 alone too). Two errors in the block leave an obstruction without one:

    >>> want = np.ones(5)
    >>> cuts = [np.array([0, 1]), np.array([1, 2]), np.array([3, 4])]
    >>> blocks = [(np.array([0, 2, 3]), 2.0)]
    >>> joint_cover_bound(want, 0 * want, cuts, blocks, time_limit=5).value
    3.0
    """
    t0 = time.perf_counter()
    want_w = np.asarray(want_w, dtype=np.float64)
    other_w = np.asarray(other_w, dtype=np.float64)
    base = np.minimum(want_w, other_w)
    best = LocalCoverBound(float(base.sum()), BoundMethod.CONFLICTS)
    cuts, blocks = list(cuts), list(blocks)
    if not cuts and not blocks:
        return best
    # the model's columns are the points whose class is not a tie: x_i = 1 costs c_i there
    active = np.flatnonzero(want_w != other_w)
    position = np.full(len(want_w), -1)
    position[active] = np.arange(len(active))
    master = CoverModel(np.abs(want_w - other_w)[active])
    # an obstruction holding a tie is met at no cost there: no row
    master.add_cuts(position[c] for c in cuts if np.all(position[c] >= 0))
    subsets, values = [], []
    for b, v in blocks:
        b = np.asarray(b)
        inside = position[b]
        subsets.append(inside[inside >= 0])
        values.append(v - float(base[b].sum()))
    master.add_subset_bounds(subsets, values)
    try:
        _, bound, _ = master.solve(integer=True, time_limit=max(time_limit, 1e-3))
    except KeyboardInterrupt:
        warn("joint_cover_bound interrupted: returning the bound proven so far", UserWarning)
        best.interrupted = True
    else:
        if bound > 0:
            best = LocalCoverBound(best.value + bound, BoundMethod.JOINT_COVER,
                                   cuts=[active[t] for t in master.cuts])
    best.elapsed = time.perf_counter() - t0
    return best
