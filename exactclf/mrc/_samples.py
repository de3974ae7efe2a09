"""The 0-1 MRC generation over whole samples: every label subset of a sample at once.

The subset rows (:mod:`._ccg`) need, for each sample near the optimum, the few of its
``2^K - 1`` subsets that hold the optimum, found one per iteration; with many classes a sample
needs several (up to dozens), and the generation's bound creeps up slowly. Here the
restricted LP holds all subsets of its samples through the ``K + 1`` rows per sample of
:mod:`._ipm_compact` (``sum_y (v_iy - nu + 1)_+ <= 1``), so a sample is added once: over the
smoothed start's most violated samples the first LP's value is already close to ``R*``
(benchmarks/results/mrc_multiclass.txt).

The program steps like :class:`~._ccg.ZeroOneProgram` (:func:`~._ccg.run_generation`): it
starts at the smoothed start (:meth:`SampleProgram.start_from`), every solve keeps ``mu`` in
the box around the best iterate, every iterate is certified by ``R(mu)`` over all samples and
subsets, the bound prices the LP's duals over every feature, and the samples most violated
at the in-out separation point (then at the iterate) join the LP; samples whose rows all stay
inactive are deleted. Its dual weighs each sample's rows by a label distribution ``P_i``
(mass ``a_i``), whose 0-1 value ``a_i - max_y P_iy`` is that of the nested subsets of its
layer-cake decomposition (:func:`layer_cake_rows`): the certificate's rows.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from .._backend import REFERENCE, Backend
from ._bounds import mixture_lower_bound
from ._ipm import numpy_blas_serial, warm_or_cold
from ._ipm_compact import compact_mrc_ipm
from ._lp import LPResult
from ._program import _SEPARATION_STEP, _START_RADIUS, _START_ROWS, ScoredProgram
from ._rows import Aging
from ._training import TrainingSet

__all__ = ["NotSolved", "SampleProgram", "layer_cake_rows", "whole_samples_fit"]

#: whole samples are used where ``psi`` has at most ``_MAX_D`` entries, or at most
#: ``_MAX_D_MANY`` with at least ``_MANY_SAMPLES`` samples (the LP's work has ``K d^3`` and
#: ``s K d^2`` terms, and with few samples most of them end in the LP), and where the
#: per-sample rows' matrix (the start's ``_START_ROWS n_max`` samples times the ``K d``
#: features) has at most ``_MAX_ENTRIES`` entries: there whole samples converge at least as
#: fast as the subset rows, or close far more of the gap in the same time; beyond, the subset
#: rows' LPs are the smaller (benchmarks/results/mrc_multiclass.txt)
_MAX_D, _MAX_D_MANY, _MANY_SAMPLES, _MAX_ENTRIES = 300, 1024, 5000, 2e7
#: the interior point method stops at a relative residual of about 1e-6 (its accuracy is
#: lost to rounding below that): a generation asked for a smaller ``eps1`` than this keeps
#: the subset rows, whose LPs the simplex method solves to the bit
_MIN_EPS1 = 1e-5
#: a solve that stalls (rounding) with a merit up to this is used all the same: the
#: iterates are certified by ``R`` and the bound priced exactly, an inexact LP solution costs
#: only progress; a larger one ends the program (:class:`NotSolved`)
_LOOSE = 1e-4
#: the sample program's LP is solved to this share of ``eps1`` (at least this relative
#: tolerance; ``tol`` where smaller): the generation stops at ``eps1``
_IPM_SHARE, _IPM_TOL = 1e-2, 1e-8
#: when a solve leaves samples violated by more than ``eps1``, those within this many times the
#: largest violation of being violated join the next LP too (up to ``n_max``): its solution
#: moves about that far, and they would be violated there, which saves solves
#: (benchmarks/results/mrc_multiclass.txt)
_NEAR = 1.0
#: a dual weight below this share of the largest is rounding of the interior point method:
#: set to 0 in the certificate's rows (the bound is priced exactly either way)
_DUAL_FLOOR = 1e-10


class NotSolved(RuntimeError):
    """The interior point method of :mod:`._ipm_compact` did not solve a restricted LP
    (:func:`~._ccg.mrc_ccg` then runs the subset rows' generation instead)."""


def whole_samples_fit(data: TrainingSet, n_max: int, lp_solver: str, eps1: float) -> bool:
    """Whether :class:`SampleProgram` takes this generation: one-hot features, HiGHS (a
    Gurobi user keeps Gurobi's LPs), the sizes of ``_MAX_D`` (and the others), and an
    ``eps1`` of at least :data:`_MIN_EPS1`."""
    d_fits = data.d <= _MAX_D or (data.d <= _MAX_D_MANY
                                  and data.Psi.shape[0] >= _MANY_SAMPLES)
    return (lp_solver == "highs" and np.array_equal(data.B, np.eye(data.K)) and d_fits
            and _START_ROWS * n_max * data.m <= _MAX_ENTRIES and eps1 >= _MIN_EPS1)


def layer_cake_rows(P: np.ndarray, sample: np.ndarray):
    """Per sample ``i`` (row ``P[i]``, nonnegative label weights of mass ``a_i``), the nested
    subsets ``C_k`` (its ``k`` largest weights) with the weights ``k (p_(k) - p_(k+1))``: their
    uniform distributions sum to ``P[i]`` and their 0-1 values ``1 - 1/k`` to ``a_i - max_y
    P[i, y]``. Returns ``(sample, Q, values, weights)`` of the rows with a positive weight
    (``Q`` uniform on each subset).

    Examples
    --------
    >>> import numpy as np
    >>> sample, Q, values, weights = layer_cake_rows(np.array([[0.5, 0.3, 0.0]]),
    ...                                              np.array([7]))
    >>> sample.tolist(), Q.tolist(), values.tolist(), np.round(weights, 6).tolist()
    ([7, 7], [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]], [0.0, 0.5], [0.2, 0.6])
    """
    n, K = P.shape
    order = np.argsort(-P, axis=1, kind="stable")
    p = np.take_along_axis(P, order, axis=1)
    k = np.arange(1, K + 1)
    weights = k * (p - np.c_[p[:, 1:], np.zeros(n)])
    keep = weights > 0.0
    rows, size = np.nonzero(keep)
    rank = np.argsort(order, axis=1)
    Q = (rank[rows] <= size[:, None]) / (size + 1.0)[:, None]
    return sample[rows], Q, 1.0 - 1.0 / (size + 1.0), weights[keep]


class SampleProgram(ScoredProgram):
    """The restricted LP over the samples ``self.samples`` (all their subsets) and the class
    rows, all features active, solved by :func:`~._ipm_compact.compact_mrc_ipm`; as
    :func:`~._ccg.run_generation` steps it (module docstring). Parameters as for
    :func:`~._ccg.mrc_ccg` (one-hot features: :func:`whole_samples_fit`).

    Examples
    --------
    >>> import time
    >>> import numpy as np
    >>> from exactclf.mrc import mrc_full_lp, mrc_statistics
    >>> from exactclf.mrc._ccg import run_generation
    >>> rng = np.random.default_rng(0)
    >>> Psi = np.c_[np.ones(30), rng.standard_normal((30, 2))]
    >>> y = np.arange(30) % 3
    >>> tau, lam = mrc_statistics(Psi, y, 3, 0.3)
    >>> program = SampleProgram(TrainingSet(Psi, y, 3, tau, lam), eps1=1e-8, n_max=5, tol=1e-9)
    >>> res = run_generation(program, 100, None, time.perf_counter())
    >>> full = mrc_full_lp(Psi, y, 3, tau, lam, tol=1e-9)
    >>> res.converged, bool(res.lower <= full.objective <= res.upper < full.objective + 1e-6)
    (True, True)
    """

    def __init__(self, data: TrainingSet, *, eps1: float, n_max: int, tol: float,
                 backend: Backend = REFERENCE, verbose: int = 0):
        super().__init__(data, eps1=eps1, n_max=n_max, tol=tol, backend=backend,
                         verbose=verbose)
        K, d = data.K, data.d
        tau, lam = data.tau.reshape(K, d), data.lam.reshape(K, d)
        self.c1, self.c2 = lam - tau, tau + lam
        self.samples = np.zeros(0, dtype=np.int64)
        # (a sample is inactive while all its rows have slacks above their duals)
        self.aging = Aging()
        self.in_lp = np.zeros(data.Psi.shape[0], dtype=bool)
        self.features = np.arange(data.m)
        self._warm = None  # (CompactStart, its samples, its box) of the last solve

    @property
    def n_lp_rows(self) -> int:
        return (self.data.K + 1) * len(self.samples) + self.data.K

    @property
    def lp_solver(self) -> str:
        return "highs"  # (the rule bounds of the estimator solve their LPs by HiGHS)

    @property
    def active_features(self) -> np.ndarray:
        return self.features

    def _add_samples(self, idx) -> None:
        idx = np.asarray(idx, dtype=np.int64)
        self.samples = np.r_[self.samples, idx]
        self.aging.grow(len(idx))
        self.in_lp[idx] = True
        self.n_constraints += len(idx)

    def start_from(self, point) -> None:
        """Start at ``point`` (``(R, mu, nu)``, certified): the ``_START_ROWS n_max``
        samples most violated there join the LP and the box is centred there."""
        self.ev = self._evaluate(point[1])
        self._add_samples(np.argsort(-self.ev.g, kind="stable")[:_START_ROWS * self.n_max])
        self.box.start_at(point, _START_RADIUS)
        self._step = _SEPARATION_STEP

    def _psi(self, idx):
        Psi = self.data.Psi[idx]
        return Psi.toarray() if self.data.sparse else Psi

    def solve(self, it, remaining):
        data = self.data
        K, d = data.K, data.d
        ub = self.box.use(self.features)
        tol = min(self.tol, max(_IPM_TOL, _IPM_SHARE * self.eps1))
        solve = partial(compact_mrc_ipm, self._psi(self.samples), data.centroids, self.c1,
                        self.c2, ub[0::2].reshape(K, d), ub[1::2].reshape(K, d), tol=tol)
        with numpy_blas_serial():
            res = warm_or_cold(solve, self._warm_start(ub), remaining)
        self._warm = None if res.start is None else (res.start, self.samples.copy(), ub)
        if res.time_limit_reached:
            return None
        if not res.converged and res.merit > _LOOSE:
            raise NotSolved(f"the interior point method stopped at a merit of {res.merit:.1e} "
                            f"on {len(self.samples)} samples at iteration {it}")
        x = np.empty(1 + 2 * data.m)
        x[0], x[1::2], x[2::2] = res.nu, res.x1.ravel(), res.x2.ravel()
        col_dual = np.zeros_like(x)
        col_dual[1::2], col_dual[2::2] = res.d1.ravel(), res.d2.ravel()
        # (the box reads the columns, the generation x[0] = nu)
        self.res = LPResult("Optimal", True, x, None, res.objective, res.iterations, None,
                            False, col_dual)
        self.ipm = res
        self.mu = (res.x1 - res.x2).ravel()
        self.ev = self._evaluate(self.mu)
        return self.ev.R, self.mu, self.ev.nu

    def _warm_start(self, ub):
        """The last solve's kept iterate re-indexed to the LP's samples now, where the box
        is the same (None otherwise: a cold start)."""
        if self._warm is None or not np.array_equal(self._warm[2], ub):
            return None
        start, samples, _ = self._warm
        pos = np.full(self.data.Psi.shape[0], -1)
        pos[samples] = np.arange(len(samples))
        return start.samples_for(pos[self.samples])

    def bound(self) -> float:
        """The LP's dual priced over every feature: per sample the label distribution of
        its rows' duals, value ``a_i - max_y P_iy``, and the class rows' duals; without the
        :func:`~._bounds.forbidden_labels`, on which the interior point method leaves
        rounding-level weights that would cost the whole bound (``lambda_j = 0``)."""
        data, res = self.data, self.ipm
        s = len(self.samples)
        P = np.maximum(res.y[:, :s].T, 0.0)
        cls = np.maximum(res.y[:, s], 0.0)
        P[P < _DUAL_FLOOR * max(float(P.max(initial=0.0)), float(cls.max()))] = 0.0
        if data.forbidden is not None:  # (what the interior point leaves there is rounding)
            P[data.forbidden[self.samples]] = 0.0
        sample, Q, values, alpha = layer_cake_rows(P, self.samples)
        U = np.vstack([data.centroids, self._psi(sample)])
        bound, _ = mixture_lower_bound(U, np.vstack([np.eye(data.K), Q]),
                                       np.r_[np.zeros(data.K), values], np.r_[cls, alpha],
                                       data.tau, data.lam, data.zero_tol, data.B)
        total = alpha.sum() + cls.sum()
        self.dual_rows = (sample, Q, values, alpha / total, cls / total)
        return bound

    def _most_violated(self, viol, above: float) -> np.ndarray:
        """The samples not in the LP violated by more than ``above``, most violated first."""
        viol = np.where(self.in_lp, -np.inf, viol)
        cand = np.flatnonzero(viol > above)
        return cand[np.argsort(-viol[cand], kind="stable")]

    def extend(self, it, best, lower) -> bool:
        res, ev = self.ipm, self.ev
        self.box.update(self.res, ev.R, best, self.tol)
        viol = ev.g - res.nu
        self.max_violation = float(viol.max())

        def fill(new, more):
            return np.r_[new, more[~np.isin(more, new)]][:self.n_max]

        new = np.zeros(0, dtype=np.int64)
        if self._step < 1.0:
            new = self._most_violated(self._separation(best)[1], self.eps1)
        # the rest at the iterate (the generation ends when none)
        new = fill(new, self._most_violated(viol, self.eps1))
        if len(new):  # another solve follows: the nearly violated samples join it too
            new = fill(new, self._most_violated(viol, -_NEAR * self.max_violation))
        s = len(self.samples)
        drop = self.aging.step(np.all(res.s[:, :s] > res.y[:, :s], axis=0), len(new) > 0,
                               res.objective)
        n_deleted = int(drop.sum())
        if n_deleted:
            self.in_lp[self.samples[drop]] = False
            self.samples = self.samples[~drop]
            self.aging.deleted(drop, res.objective)
        if self.verbose:
            print(
                f"[MRCCCG] iter {it:4d}  LP {res.objective:.8f}  R(mu) {ev.R:.8f}  "
                f"lower {lower:.8f}  max violation {self.max_violation:.2e}  LP "
                f"iterations {res.iterations}{' (warm)' if res.started_warm else ''}  "
                f"LP samples {len(self.samples)}  "
                f"+samples {len(new)}  -samples {n_deleted}  {self.box}  "
                f"{res.seconds:.1f} s"
            )
        if not len(new):
            return not self.box.binds
        self._add_samples(new)
        return False

