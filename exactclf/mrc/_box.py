"""The box step of the 0-1 MRC generation (:mod:`._ccg`).

The restricted LP of the first iterations, cut by few rows, puts ``mu`` far from the optimum,
and the rows generated there are mostly deleted again. So every solve keeps ``mu`` in a box
around the best iterate so far (``mu1_j <= max(c_j, 0) + r_j``, ``mu2_j <= max(-c_j, 0) +
r_j``: column bounds, which the dual simplex re-solves warm), with ``r_j`` the radius over
feature ``j``'s largest ``|Phi_j|``, so that a step moves any score by at most the radius per
feature. The box binds where lifting a column's bound by the radius would lower the LP value
by more than the solver's tolerance at the column's reduced cost (at a zero reduced cost, on
a flat optimal face, it would not). The radius doubles after every solve at which the box
binds, the generation never ends while it binds (an LP point where no bound binds is the
restricted LP's optimum, as without the box), and after 30 doublings the box is dropped.
The certificates do not depend on it: ``upper_`` is ``R(mu)`` evaluated exactly, and the dual
bound uses the row duals only (the box's duals show up as dual infeasible features, which the
mixing repairs).
"""

from __future__ import annotations

import numpy as np

__all__ = ["Box"]

#: the first radius, in units of score (feature j moves by at most radius / max_i |Phi_j(x_i)|)
_BOX_RADIUS = 0.1
#: the radius grows by this factor after every solve at which the box binds, and after
#: _BOX_GROWTHS growths the box is dropped (radii near the float64 range would make the LP
#: meaningless)
_BOX_GROWTH = 2.0
_BOX_GROWTHS = 30
#: the box grows only after a step whose fall of R is at least this share of the LP model's,
#: or after _UNPAID_STEPS steps in a row that fell short (a box that binds keeps the dual
#: bound at 0, and with few rows per iteration the model may take long to pay)
_GROW_RATIO = 0.5
_UNPAID_STEPS = 3


class Box:
    """The box around the best iterate: ``unit[j]`` is feature ``j``'s largest ``|Phi_j|``,
    ``radius`` None once the box is dropped.

    Examples
    --------
    >>> import numpy as np
    >>> box = Box(np.array([1.0, 2.0]))
    >>> box.bounds(np.array([0, 1]))[1].tolist()  # mu1, mu2 of each feature around mu = 0
    [0.1, 0.1, 0.05, 0.05]
    """

    def __init__(self, unit: np.ndarray):
        self.unit = np.where(unit > 0.0, unit, 1.0)
        self.radius = _BOX_RADIUS
        self.growths = 0
        self.center = np.zeros(len(unit))
        self.center_R = np.inf  # R at the center: none before the first iterate
        self.unpaid = 0  # steps in a row that did not pay
        self.binds = False
        self._width = None  # the box's half-widths over the columns of the last solve

    def start_at(self, best, radius: float) -> None:
        """Centre the box at ``best`` (``(R, mu, nu)``, a point known before the first solve)
        with the radius ``radius``."""
        self.center, self.center_R = best[1], best[0]
        self.radius = radius

    def bounds(self, active: np.ndarray):
        """The LP columns of ``mu1, mu2`` of the ``active`` features and their upper bounds
        (infinite once the box is dropped)."""
        cols = np.arange(1, 1 + 2 * len(active))
        ub = np.full(2 * len(active), np.inf)
        if self.radius is not None:
            r = self.radius / self.unit[active]
            c = self.center[active]
            ub[0::2] = np.maximum(c, 0.0) + r
            ub[1::2] = np.maximum(-c, 0.0) + r
        return cols, ub

    def use(self, active: np.ndarray) -> np.ndarray:
        """The upper bounds of :meth:`bounds` for the next solve, whose solution
        :meth:`update` reads."""
        self._cols, self._ub = self.bounds(active)
        self._width = (None if self.radius is None
                       else np.repeat(self.radius / self.unit[active], 2))
        return self._ub

    def apply(self, lp, active: np.ndarray) -> None:
        """Bound the columns of ``lp`` to the box (:meth:`use`)."""
        ub = self.use(active)
        lp.set_col_bounds(self._cols, np.zeros(len(ub)), ub)

    def update(self, res, R_iterate: float, best, tol: float) -> None:
        """After the solve ``res``, whose iterate has the certified risk ``R_iterate``:
        whether the box binds, its new radius and its new center ``best`` (``(R, mu, nu)`` of
        the best iterate, this one included).

        The radius grows only where the box binds *and* the step paid: ``R`` fell by at least
        ``_GROW_RATIO`` of the fall the LP model promised (its value is a lower model of ``R``
        on the box), or after ``_UNPAID_STEPS`` steps in a row that fell short. Where ``R``
        rose instead, the rows just generated correct the model and the next solve stays in
        the same box (growing it there sent the iterates of a 20-class fit to ``R`` of 10 in
        seven ever longer solves).
        """
        # a negative reduced cost puts the column at its bound: the simplex method's exactly,
        # an interior point method's up to its iterate's distance (which need not be within
        # any fixed share of the bound); at a zero one (e.g. on a flat optimal face) lifting
        # the bound gains nothing. The gain of the next radius is the reduced cost times the
        # width it adds: a feature whose optimum lies far out has a small reduced cost per
        # unit (one constant over the training pairs, lambda_j = 0, where psi_j is small:
        # pushing a label out takes |mu_j| of 1 / psi_j), and the box still holds it
        self.binds = self._width is not None and bool(np.any(
            res.col_dual[self._cols] * np.maximum(self._width, 1.0) < -tol))
        promised = self.center_R - res.objective
        paid = not np.isfinite(self.center_R) or (self.center_R - R_iterate
                                                   >= _GROW_RATIO * promised)
        self.unpaid = 0 if paid else self.unpaid + 1
        if self.binds and (paid or self.unpaid >= _UNPAID_STEPS):
            self.unpaid = 0
            self.growths += 1
            self.radius = self.radius * _BOX_GROWTH if self.growths < _BOX_GROWTHS else None
        self.center, self.center_R = best[1], best[0]

    def __str__(self) -> str:
        return ("no box" if self.radius is None
                else f"box {self.radius:g}{' (binds)' if self.binds else ''}")
