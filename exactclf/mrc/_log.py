"""Constraint generation for the minimax risk classifier with the log loss.

With the log loss the rule of parameters ``mu`` is the softmax ``h(y|x) = exp(v_y(x)) /
sum_c exp(v_c(x))`` of the scores ``v_y(x) = Phi(x, y)^T mu``, whose loss is
``LSE(v(x)) - v_y(x)`` (``LSE`` the log-sum-exp over the labels). For every distribution ``p``
of the uncertainty set supported on the training inputs,

    E_p[-log h(y|x)] = E_p LSE(v(x)) - E_p[Phi]^T mu <= R(mu)
    R(mu) = -tau^T mu + lambda^T |mu| + nu(mu),   nu(mu) = max_i LSE(v(x_i)),

so ``R(mu)``, evaluated over all samples, certifies the returned rule, and the MRC minimizes
it: a convex program. In epigraph form, ``min -tau^T mu + lambda^T |mu| + nu`` subject to
``LSE(v(x_i)) <= nu`` for every sample, i.e. ``sum_y t_iy <= 1`` with
``exp(v_y(x_i) - nu) <= t_iy`` (exponential cones). Constraint generation keeps the samples
whose constraint was ever the most violated, solves that restricted program with Clarabel
(interior point; no warm start), and adds the ``n_max`` samples with ``LSE(v(x_i)) - nu`` above
``eps1``. It starts with one linear row per class, ``nu >= v_c(mean psi of class c)``
(implied, since ``LSE(v) >= v_c`` and a mean is at most a maximum), which keeps every
restricted program bounded.

Lower bound: ``LSE(v) >= q^T v + H(q)`` for every distribution ``q`` over the labels (``H``
the entropy), so for weights ``a_i`` and distributions ``q_i`` on the samples of the
restricted program, ``R(mu) >= sum_i a_i H(q_i) + sum_j (z_j mu_j + lambda_j |mu_j|)``; the
restricted program's cone duals give ``a`` and ``q``, and
:func:`~._bounds.mixture_lower_bound` makes the bound hold for every ``mu`` (all features
priced, the empirical distribution mixed in). Every iterate is certified both ways.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog
from scipy.special import logsumexp, softmax

from ._bounds import class_scores_matrix, mixture_lower_bound
from ._ccg import CCGResult, run_generation
from ._rows import row_coefficients, stack_rows
from ._training import TrainingSet

__all__ = ["log_risk", "mrc_log_ccg", "LogProgram"]


def log_risk(Psi, mu, tau, lam, n_classes: int, embedding=None):
    """Certified ``R(mu)`` of the log loss and the ``LSE`` of every sample; returns
    ``(R, nu, lse, V)``.

    Examples
    --------
    >>> import numpy as np
    >>> R, nu, _, _ = log_risk(np.ones((3, 1)), np.zeros(2), np.full(2, 0.5), np.zeros(2), 2)
    >>> round(R, 6) == round(nu, 6) == round(float(np.log(2)), 6)  # the uniform rule
    True
    """
    V = np.asarray(Psi @ class_scores_matrix(mu, n_classes, Psi.shape[1], embedding).T)
    lse = logsumexp(V, axis=1)
    nu = float(lse.max())
    return float(-tau @ mu + lam @ np.abs(mu) + nu), nu, lse, V


def _solve_restricted(F_class, F_rows, K, tau, lam, tol, time_limit):
    """The restricted program over the class rows ``F_class`` (K x m) and the sample rows
    ``F_rows`` (one CSR row per (sample, label), ``K`` consecutive rows per sample)."""
    import clarabel

    m = len(tau)
    n_rows = F_rows.shape[0]
    s = n_rows // K
    n_var = 2 * m + 1 + n_rows
    nu = 2 * m
    # Clarabel: A x + slack = b, slack in the cones; x = (mu1, mu2, nu, t)
    blocks, b = [], []
    blocks.append(sp.hstack([-sp.identity(2 * m), sp.csr_matrix((2 * m, 1 + n_rows))]))
    b.append(np.zeros(2 * m))
    Fc = sp.csr_matrix(F_class)
    blocks.append(sp.hstack([Fc, -Fc, -np.ones((K, 1)), sp.csr_matrix((K, n_rows))]))
    b.append(np.zeros(K))
    sums = sp.kron(sp.identity(s), np.ones((1, K)))
    blocks.append(sp.hstack([sp.csr_matrix((s, 2 * m + 1)), sums]))
    b.append(np.ones(s))
    # exponential cones (v_iy - nu, 1, t_iy), three rows each
    first = sp.hstack([-F_rows, F_rows, np.ones((n_rows, 1)), sp.csr_matrix((n_rows, n_rows))])
    second = sp.csr_matrix((n_rows, n_var))
    third = sp.hstack([sp.csr_matrix((n_rows, 2 * m + 1)), -sp.identity(n_rows)])
    cone_rows = sp.vstack([first, second, third]).tocsr()
    order = np.arange(3 * n_rows).reshape(3, n_rows).T.ravel()  # interleave per cone
    blocks.append(cone_rows[order])
    b.append(np.tile([0.0, 1.0, 0.0], n_rows))
    A = sp.vstack(blocks).tocsc()
    q = np.r_[-(tau - lam), tau + lam, 1.0, np.zeros(n_rows)]
    cones = [clarabel.NonnegativeConeT(2 * m + K + s)]
    cones += [clarabel.ExponentialConeT()] * n_rows
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = tol
    # shorter interior-point steps: with collinear features the default 0.99 stalls
    # ("InsufficientProgress") far from the optimum
    settings.max_step_fraction = 0.9
    # the KKT systems are small and sparse: QDLDL factors them about 3x faster than the
    # default choice here
    settings.direct_solve_method = "qdldl"
    if time_limit is not None:
        settings.time_limit = max(float(time_limit), 1e-3)
    sol = clarabel.DefaultSolver(sp.csc_matrix((n_var, n_var)), q, A, np.concatenate(b), cones,
                                 settings).solve()
    status = str(sol.status)
    x, z = np.asarray(sol.x), np.asarray(sol.z)
    mu = x[:m] - x[m:2 * m]
    alpha_class = z[2 * m:2 * m + K]
    p = -z[2 * m + K + s::3]  # the duals of v_iy - nu: weights on Phi(x_i, y)
    return status, mu, x[nu], alpha_class, p.reshape(s, K)


def _vertex_weights(U, Q, values, tau, lam, embedding):
    """Weights ``a >= 0`` summing to 1 that maximize ``sum_r a_r values[r]`` subject to
    ``|sum_r a_r (Q[r] B) (x) U[r] - tau| <= lambda`` (HiGHS' simplex), or None."""
    r = len(values)
    E = Q if embedding is None else Q @ embedding
    d = U.shape[1]
    G = np.empty((len(tau), r))  # column r: (Q[r] B) (x) U[r]
    Ud = U.toarray() if sp.issparse(U) else np.asarray(U)
    for k in range(E.shape[1]):
        G[k * d:(k + 1) * d] = (Ud * E[:, k:k + 1]).T
    res = linprog(-values, A_ub=np.vstack([G, -G]), b_ub=np.r_[tau + lam, lam - tau],
                  A_eq=np.ones((1, r)), b_eq=[1.0], bounds=(0, None), method="highs-ds")
    return res.x if res.status == 0 else None


class LogProgram:
    """The restricted log-loss program (module docstring), as
    :func:`~._ccg.run_generation` steps it: the class rows and the samples whose constraint
    was among the ``n_max`` most violated, every feature. Parameters as for
    :func:`mrc_log_ccg`."""

    lp_solver = "clarabel"
    dual_rows = None  # the final dual point starts from the rows most violated at mu alone

    def __init__(self, data: TrainingSet, *, eps1: float, n_max: int, tol: float,
                 verbose: int = 0):
        self.data = data
        self.eps1, self.n_max, self.tol, self.verbose = eps1, n_max, tol, verbose
        self.active_features = np.arange(data.m)  # no column generation
        self.eye = np.eye(data.K, dtype=bool)
        self.F_class = row_coefficients(data.centroids, self.eye, self.active_features, data.d,
                                        data.B).toarray()
        self.in_program = np.zeros(data.Psi.shape[0], dtype=bool)
        self.samples = np.zeros(0, dtype=np.int64)
        self.F_rows = sp.csr_matrix((0, data.m))
        self.max_violation = np.inf

    @property
    def n_constraints(self) -> int:
        return self.data.K + len(self.samples)

    n_lp_rows = n_constraints

    def risk(self, mu):
        data = self.data
        R, nu, _, _ = log_risk(data.Psi, mu, data.tau, data.lam, data.K, data.B)
        return R, mu, nu

    def segment(self, mu0, mu1):
        """``t -> R(mu0 + t (mu1 - mu0))`` (:func:`~._ccg.best_on_segment`)."""
        return lambda t: self.risk(mu0 + t * (mu1 - mu0))[0]

    def solve(self, it, remaining):
        data = self.data
        status, mu, self.nu_p, self.alpha_class, self.P = _solve_restricted(
            self.F_class, self.F_rows, data.K, data.tau, data.lam, self.tol, remaining)
        if status == "MaxTime":
            return None
        # any finite iterate is certified (R(mu) exactly, the bound from its duals); an
        # inaccurate one ("InsufficientProgress", "AlmostSolved") only adds weaker cuts
        if not (np.all(np.isfinite(mu)) and np.isfinite(self.nu_p)):
            raise RuntimeError(
                f"the restricted log-loss MRC program was not solved by Clarabel (status: "
                f"{status}) at iteration {it}"
            )
        self.R, self.nu, self.lse, self.V = log_risk(data.Psi, mu, data.tau, data.lam, data.K,
                                                     data.B)
        return self.R, mu, self.nu

    def bound(self) -> float:
        """The bound of the last solve: class rows (``q = e_c``, value 0) and sample rows
        (``q_i``, entropy)."""
        data, K, samples = self.data, self.data.K, self.samples
        # (the forbidden labels' cone duals are rounding: a dual point weighing them proves 0)
        forbidden = (np.zeros((len(samples), K), dtype=bool) if data.forbidden is None
                     else data.forbidden[samples])
        P = np.where(forbidden, 0.0, self.P)
        a_s = P.sum(axis=1)
        Q = P / np.where(a_s > 0, a_s, 1.0)[:, None]
        Q[a_s <= 0] = 1.0 / K
        ent = -np.sum(np.where(Q > 0, Q * np.log(np.where(Q > 0, Q, 1.0)), 0.0), axis=1)
        U = stack_rows(data.centroids, data.Psi[samples]) if len(samples) else data.centroids
        Q_all = np.vstack([self.eye.astype(float), Q])
        values = np.r_[np.zeros(K), ent]
        bound, _ = mixture_lower_bound(U, Q_all, values, np.r_[self.alpha_class, a_s], data.tau,
                                       data.lam, data.zero_tol, data.B)
        if len(samples):
            # interior-point duals meet |z| <= lambda only to the solver's tolerance, which the
            # bound pays for in full where lambda is tiny: re-weight the rows by a simplex
            # vertex (exact feasibility) with the softmax of the iterate as q
            Q_soft = np.vstack([self.eye.astype(float),
                                softmax(np.where(forbidden, -np.inf, self.V[samples]), axis=1)])
            values_soft = np.r_[np.zeros(K), -np.sum(
                Q_soft[K:] * np.log(np.maximum(Q_soft[K:], 1e-300)), axis=1)]
            alpha = _vertex_weights(U, Q_soft, values_soft, data.tau, data.lam, data.B)
            if alpha is not None:
                bound = max(bound, mixture_lower_bound(U, Q_soft, values_soft, alpha, data.tau,
                                                       data.lam, data.zero_tol, data.B)[0])
        return bound

    def extend(self, it, best, lower) -> bool:
        data = self.data
        viol = self.lse - self.nu_p
        self.max_violation = float(viol.max())
        cand = np.flatnonzero((viol > self.eps1) & ~self.in_program)
        cand = cand[np.argsort(-viol[cand], kind="stable")][:self.n_max]
        if self.verbose:
            print(f"[MRCCCG log] iter {it:4d}  program {self.nu_p - self.nu + self.R:.8f}  "
                  f"R(mu) {self.R:.8f}  lower {lower:.8f}  max violation "
                  f"{self.max_violation:.2e}  samples {len(self.samples)}  +samples {len(cand)}")
        if len(cand) == 0:
            return True
        self.in_program[cand] = True
        self.samples = np.r_[self.samples, cand]
        masks = np.tile(self.eye, (len(cand), 1))
        F_new = row_coefficients(data.Psi[np.repeat(cand, data.K)], masks,
                                 self.active_features, data.d, data.B)
        self.F_rows = sp.vstack([self.F_rows, F_new], format="csr")
        return False


def mrc_log_ccg(Psi, y, n_classes: int, tau, lam, *, sample_weight=None, embedding=None,
                eps1: float = 1e-4, n_max: int = 400, max_iter: int = 500, tol: float = 1e-8,
                time_limit: float | None = None, verbose: int = 0) -> CCGResult:
    """Minimize the log-loss ``R(mu)`` by constraint generation over all ``n`` samples.

    Parameters and result as for :func:`~exactclf.mrc._ccg.mrc_ccg` (all features are in
    the program: no column generation); ``tol`` is Clarabel's feasibility and gap tolerance.

    Examples
    --------
    >>> import numpy as np
    >>> from exactclf.mrc import mrc_statistics
    >>> Psi = np.c_[np.ones(6), [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]]
    >>> y = np.array([0, 0, 1, 0, 1, 1])
    >>> tau, lam = mrc_statistics(Psi, y, 2, 0.3)
    >>> res = mrc_log_ccg(Psi, y, 2, tau, lam, eps1=1e-7)
    >>> res.converged, bool(res.lower <= res.upper <= res.lower + 1e-6)
    (True, True)
    """
    t_start = time.perf_counter()
    data = TrainingSet(Psi, y, n_classes, tau, lam, sample_weight, embedding)
    program = LogProgram(data, eps1=eps1, n_max=n_max, tol=tol, verbose=verbose)
    return run_generation(program, max_iter, time_limit, t_start)
