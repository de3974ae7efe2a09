"""
=======================================================================
Constraint generation for the 0-1 MRC: the worst-case bound converging
=======================================================================

The 0-1 minimax risk classifier (MRC) is the solution of a linear program with one constraint
per training sample and nonempty label subset: ``n (2^K - 1)`` rows, 70000 for the 10000
samples and 3 classes used here. :class:`~exactclf.mrc.MRCCCG` never writes that LP down. It
solves a small LP, finds for *every* sample the most violated label subset, adds the worst of
those constraints, re-solves warm, and repeats until no constraint is violated by more than
``eps1``.

Every iterate ``mu`` comes with a certificate: its worst-case error ``R(mu)``, evaluated
exactly over all samples and all subsets, is an upper bound on the minimax risk ``R*``; the
value of the restricted LP is a lower bound. This example plots both per iteration against
``R*`` computed by solving the full LP directly with HiGHS.
"""

# %%
# Data, the MRC and the full LP
# -----------------------------
# ``make_classification`` with 10 standardized features and 3 classes; linear features
# ``psi(x) = (1, x)``. ``eps1=1e-8`` lets the generation run until the bounds meet.
import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler

from exactclf.mrc import MRCCCG, mrc_full_lp, mrc_statistics

X, y = make_classification(n_samples=10000, n_features=10, n_informative=6, n_classes=3,
                           random_state=0)
X = StandardScaler().fit_transform(X)

t0 = time.perf_counter()
clf = MRCCCG(eps1=1e-8, n_max=200).fit(X, y)
t_ccg = time.perf_counter() - t0
print(f"MRCCCG:  R* = {clf.upper_:.8f} (lower bound {clf.lower_:.8f}), {clf.n_iter_} LP "
      f"solves, {clf.n_constraints_} constraints, {t_ccg:.2f} s")

# the full LP in the same features (psi(x) = (1, x)); R* does not depend on how the features
# are scaled, so the LP sees them scaled to [-1, 1] for better conditioning
Psi = np.c_[np.ones(len(X)), X]
Psi /= np.abs(Psi).max(axis=0)
tau, lam = mrc_statistics(Psi, y, 3, clf.s)
full = mrc_full_lp(Psi, y, 3, tau, lam)
print(f"full LP: R* = {full.objective:.8f}, {full.n_rows} rows, {full.seconds:.2f} s")

# %%
# The bounds per iteration
# ------------------------
# ``R_history_`` holds the certified ``R(mu)`` of every iterate: it is not monotone (the LP
# solution jumps around, as in any cutting-plane method). The estimator returns a point at
# least as good as its running minimum (``upper_history_``: the best point on the segments
# between the iterates, R being convex). ``lower_history_`` holds the certified dual lower
# bound of every iterate (the restricted LP's dual, repaired to be feasible for the full
# problem), which rises to ``R*`` as constraints and features are added. On the right, the
# distance of both to ``R*`` on a log scale.
it = np.arange(1, clf.n_iter_ + 1)
upper = np.array(clf.R_history_)
lower = np.array(clf.lower_history_)
best = np.minimum.accumulate(upper)

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
ax1.plot(it, upper, "o-", ms=3, color="tab:red", alpha=0.5, label="R(mu) of the iterate")
ax1.plot(it, best, "-", color="tab:red", label="best certified R(mu) (upper_)")
ax1.plot(it, lower, "s-", ms=3, color="tab:blue", label="certified dual bound (lower_history_)")
ax1.axhline(full.objective, color="k", ls="--", lw=1, label="full LP optimum R*")
ax1.set_xlabel("iteration (LP solves)")
ax1.set_ylabel("worst-case 0-1 error")
ax1.set_ylim(lower.min() - 0.02, min(upper.max(), 1.0) + 0.02)
ax1.legend(loc="center right", fontsize=8)
ax1.set_title("Bounds on the minimax risk R*")

floor = 1e-12  # the log axis cannot show an exact zero
ax2.semilogy(it, np.maximum(best - full.objective, floor), "-", color="tab:red",
             label="upper_ - R*")
ax2.semilogy(it, np.maximum(full.objective - lower, floor), "-", color="tab:blue",
             label="R* - lower bound")
ax2.axhline(1e-4, color="gray", ls=":", lw=1, label="default eps1 = 1e-4")
ax2.set_xlabel("iteration (LP solves)")
ax2.set_ylabel("distance to R*")
ax2.legend(fontsize=8)
ax2.set_title("Convergence (log scale)")
fig.tight_layout()
plt.show()

# %%
# Reading the result
# ------------------
# The two bounds meet: constraint generation returns the optimum of the full LP while adding
# only a small fraction of its rows. The certificate does not rely on the full LP: at any
# iteration ``[lower bound, R(mu)]`` brackets ``R*``, and ``R(mu)`` bounds the expected
# training error of the returned randomized rule ``predict_proba``.
proba = clf.predict_proba(X)
expected_error = 1.0 - proba[np.arange(len(y)), y].mean()
print(f"|R*(MRCCCG) - R*(full LP)| = {abs(clf.upper_ - full.objective):.1e}")
print(f"rows used: {clf.n_constraints_} of {full.n_rows} "
      f"({100 * clf.n_constraints_ / full.n_rows:.1f} %)")
print(f"expected training error of predict_proba {expected_error:.4f} <= upper_ "
      f"{clf.upper_:.4f}")
