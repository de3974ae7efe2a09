"""What both restricted programs of the 0-1 MRC generation share (:mod:`._ccg`,
:mod:`._samples`): certified evaluations of ``R``, the segment search's cheap ``t -> R``, the
box, and the in-out separation point after a smoothed start."""

from __future__ import annotations

import numpy as np

from .._backend import REFERENCE, Backend
from ._bounds import minimax_risk, risk_from_scores, scores
from ._box import Box
from ._training import TrainingSet

__all__ = ["ScoredProgram"]

#: a start point (:meth:`~._ccg.ZeroOneProgram.start_from`) brings the rows of this many times
#: ``n_max`` samples, and a box of this radius (the default first radius, 0.1, is for mu = 0,
#: far from the optimum; from the start a box that binds spoils the row duals, hence the
#: bound, so the start's box is wide)
_START_ROWS, _START_RADIUS = 5, 1.0
#: share of ``time_limit`` that the smoothed start may take
_START_SHARE = 0.25
#: after a start, rows are sought at the point this far from the best iterate towards the
#: LP's (in-out separation): from a start close to the optimum the LP's iterates land far
#: off, and the rows most violated there are not those that hold the optimum; rows sought
#: nearer the best iterate close the gap faster (benchmarks/results/mrc_multiclass.txt)
_SEPARATION_STEP = 0.3


class ScoredProgram:
    """The parts of a restricted program of :func:`~._ccg.run_generation` that do not depend
    on how its LP holds the rows: ``risk`` (certified), ``segment``, the :class:`~._box.Box`
    and :meth:`_separation`. A subclass sets ``res`` (with ``x[0] = nu``), ``ev`` and ``mu``
    at each solve."""

    def __init__(self, data: TrainingSet, *, eps1: float, n_max: int, tol: float,
                 backend: Backend = REFERENCE, verbose: int = 0):
        self.data = data
        self.eps1, self.n_max, self.tol = eps1, n_max, tol
        self.backend, self.verbose = backend, verbose
        # scores on the device: a sparse Psi stays on the CPU (the product is dense and small)
        self.Psi_dev = data.Psi if data.sparse else backend.xp.asarray(data.Psi)
        self.box = Box(np.kron(np.abs(data.B).max(axis=0), data.col_top))
        self.n_constraints = data.K
        self.max_violation = np.inf
        self.dual_rows = None
        self._step = 1.0  # rows at the iterate itself (see _SEPARATION_STEP)
        self._anchors: list = []  # (mu, its scores) of the last best points (_scores_at)

    def _evaluate(self, mu):
        data = self.data
        return minimax_risk(self.Psi_dev, mu, data.tau, data.lam, data.K, self.backend, data.B)

    def risk(self, mu):
        ev = self._evaluate(mu)
        return ev.R, mu, ev.nu

    def segment(self, mu0, mu1):
        """``t -> R(mu0 + t (mu1 - mu0))`` from the scores at both ends (scores are linear in
        ``mu``), ``mu1`` the last iterate: one product with ``Psi`` for all ``t``."""
        data, backend = self.data, self.backend
        V0 = self._scores_at(mu0)
        dV, dmu = self.ev.V - V0, mu1 - mu0
        return lambda t: risk_from_scores(V0 + t * dV, mu0 + t * dmu, data.tau, data.lam,
                                          backend).R

    def _scores_at(self, mu):
        """The scores at ``mu``, a best point: the best point and the best iterate (the
        segments' and the separation's anchors) change seldom, so the scores of the last
        two are kept."""
        for mu_k, V in self._anchors:
            if np.array_equal(mu_k, mu):
                return V
        V = scores(self.Psi_dev, mu, self.data.K, self.backend, self.data.B)
        self._anchors = [(mu, V), *self._anchors[:1]]
        return V

    def _separation(self, best):
        """At ``(mu, nu) = best + s (iterate - best)``, ``s = self._step``: the evaluation
        and every sample's violation. A row's violation is affine along the segment and at
        most 0 at ``best`` (a certified point: ``nu`` is its largest violation), so one
        violated there by ``v`` is violated by at least ``v / s`` at the iterate, a cut of
        the LP's optimum."""
        data, s = self.data, self._step
        mu_b, nu_b = best[1], best[2]
        V_b = self._scores_at(mu_b)
        at = risk_from_scores(V_b + s * (self.ev.V - V_b), mu_b + s * (self.mu - mu_b),
                              data.tau, data.lam, self.backend)
        return at, at.g - (nu_b + s * (self.res.x[0] - nu_b))
