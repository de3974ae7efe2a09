"""
Time budgets, progress output and what a stopped fit returns
============================================================

An exact search can take from milliseconds to days, so the exact estimators are *anytime*:
``time_limit`` (seconds of wall clock for the whole fit) stops the search and ``fit``
returns the best model found so far, with a proof of how far from the optimum it can be at
most. Nothing is raised: the fit warns with a
:class:`~sklearn.exceptions.ConvergenceWarning` and its attributes say what is proven.
``verbose=1`` prints what the fit is doing while it runs.

Here :class:`~exactclf.ICEClassifier` (the linear classifier with the fewest training
errors) is fitted to the Haberman survival data (306 patients, 3 features), whose complete
search takes a few seconds on two cores: short budgets stop it before the proof. The
budgets are kept tiny so that the gallery builds quickly; on real problems a user gives
minutes or hours. Where a budget stops the search depends on the machine's speed and
load, so the numbers below change from run to run; each is still proven.
"""

# %%
# A one-second fit with progress output
# --------------------------------------
# ``verbose=1`` prints to **stderr**: the size of the search, a progress line of the
# enumeration (candidates searched, rate, best errors so far) and one line per stage as it
# ends (the rows of ``fit_trace_``). The budget stops the search before the proof, so the
# fit warns; the warning is expected here and caught, and its text printed.
import warnings

import matplotlib.pyplot as plt
from sklearn.exceptions import ConvergenceWarning

from exactclf import ICEClassifier
from exactclf.datasets import load_haberman

X, y = load_haberman(return_X_y=True)
clf = ICEClassifier(time_limit=1, verbose=1)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", ConvergenceWarning)
    clf.fit(X, y)
for w in caught:
    print(f"{w.category.__name__}: {w.message}")

# %%
# What the stopped fit returns
# ----------------------------
# A fitted classifier (``predict`` on the training data makes exactly
# ``training_errors_`` errors), ``is_optimal_ = False``, why it stopped, and a proven
# ``lower_bound_``: no linear classifier makes fewer errors. ``gap_`` is
# ``(training_errors_ - lower_bound_) / training_errors_``. Even a weak bound is a proof,
# and :func:`exactclf.verify` re-checks it.
print(f"training_errors_    = {clf.training_errors_:g}")
print(f"is_optimal_         = {clf.is_optimal_}")
print(f"stop_reason_        = {clf.stop_reason_}")
print(f"lower_bound_        = {clf.lower_bound_:g} ({clf.lower_bound_method_})")
print(f"gap_                = {clf.gap_:.1%}")
print(f"fit_time_           = {clf.fit_time_:.2f} s")
print(f"errors of predict   = {(clf.predict(X) != y).sum()}")

# %%
# The gap against the budget
# --------------------------
# The same fit with budgets of 0.5, 1, 2 and 4 seconds. A larger budget generally proves a
# higher bound (the schedule of stages depends on the budget, so two budgets can prove the
# same bound, and a larger one is not guaranteed to prove more);
# once the bound meets the errors, the fit stops by itself, proven optimal
# (``is_optimal_ = True``, gap 0), before its budget is spent. On a slower machine the
# proof may need more than 4 s.
budgets = [0.5, 1, 2, 4]
fits = []
for budget in budgets:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a stopped fit: expected
        fits.append(ICEClassifier(time_limit=budget).fit(X, y))
print(f"{'time_limit':>10} {'fit time':>9} {'errors':>7} {'bound':>6} {'gap':>6}  optimal")
for budget, fit in zip(budgets, fits, strict=True):
    print(f"{budget:9g}s {fit.fit_time_:8.2f}s {fit.training_errors_:7g} "
          f"{fit.lower_bound_:6g} {fit.gap_:6.1%}  {fit.is_optimal_}")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
ax1.plot(budgets, [f.training_errors_ for f in fits], "o-", color="C3",
         label="training errors of the returned model")
ax1.plot(budgets, [f.lower_bound_ for f in fits], "s-", color="C0",
         label="proven lower bound")
ax1.set(ylim=(0, 1.15 * max(f.training_errors_ for f in fits)),
        ylabel=f"training errors (of {len(X)} points)",
        title="What each budget returns and proves")
ax1.legend(loc="best")
ax2.bar(range(len(budgets)), [100 * f.gap_ for f in fits],
        color=["C2" if f.is_optimal_ else "C1" for f in fits])
for i, f in enumerate(fits):
    ax2.annotate("proven optimal" if f.is_optimal_ else f"{f.gap_:.0%}",
                 (i, 100 * f.gap_), ha="center", va="bottom", xytext=(0, 2),
                 textcoords="offset points")
ax2.set_xticks(range(len(budgets)), [f"{b:g}" for b in budgets])
ax2.set(ylim=(0, 105), ylabel="gap (% of the training errors)",
        title="Relative gap to the proven bound")
ax1.set_xscale("log", base=2)
ax1.set_xticks(budgets, [f"{b:g}" for b in budgets])
for ax in (ax1, ax2):
    ax.set_xlabel("time_limit (s)" + (", log scale" if ax is ax1 else ""))
    ax.grid(alpha=0.3)
plt.show()

# %%
# Reading the trace
# -----------------
# ``fit_trace_`` says where each budget went: one row per stage, with its start and
# duration (seconds since the start of ``fit``), the incumbent and the bound after it, and
# why it stopped (see also :ref:`sphx_glr_auto_examples_plot_fit_trace.py`). Here, the
# trace of the 2-second fit:
for row in fits[2].fit_trace_:
    print(f"[{row.start:5.2f} s + {row.seconds:5.2f} s] {row.stage}: incumbent "
          f"{row.incumbent:g}, bound {row.bound:g} ({row.stop})")

# %%
# Ctrl-C (or "interrupt the kernel" in Jupyter) stops a search the same way a budget does:
# the fit returns the best model found so far with ``stop_reason_ == "interrupted"`` and a
# certificate that holds for it.
