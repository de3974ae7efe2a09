"""
Where did the budget go? Reading ``fit_trace_``
===============================================

An exact fit is a sequence of *stages*: heuristics that find good models (the
*incumbent*: the fewest training errors found so far) and bounding stages that prove how
few errors any model can make (the *bound*). When the budget ends before the two meet, the
fit returns its incumbent, the proven bound and the gap between them.
:class:`~exactclf.ICEClassifier` and :class:`~exactclf.DeepICEMaxoutClassifier` record one
row per stage run in ``fit_trace_`` (a list of :class:`~exactclf._trace.TraceRow`): the
stage's name, when it started and how long it ran (seconds since the start of ``fit``), the
incumbent and the bound after it, and why it stopped. ``verbose=1`` prints the same rows
while the fit runs.

Here a two-plane maxout network (K = 2) is fitted to the Blood transfusion data (502
distinct donors, 4 features), one of the sets of the Deep-ICE paper's Table 2, with a 15 s
budget so that the gallery builds quickly; a user would give it minutes. Fifteen seconds
do not prove the optimum: the trace shows what each stage bought. The paper's protocol
gives each fit 300 s (``time_limit=300``); every stage then gets a larger share, the
bounding stages raise the bound further and the gap is smaller. Where a fit stops depends
on the machine's speed and load, so the numbers below change from run to run (each run's
bound is still proven).
"""

# %%
# The fit
# -------
# The budget stops the search, so the fit warns (a
# :class:`~sklearn.exceptions.ConvergenceWarning`) that optimality is not proven. That is
# expected here: the warning is caught and its text printed.
import math
import warnings

import matplotlib.pyplot as plt
from sklearn.exceptions import ConvergenceWarning

from exactclf import DeepICEMaxoutClassifier
from exactclf.datasets import load_bloodtransfer

X, y = load_bloodtransfer(return_X_y=True)
clf = DeepICEMaxoutClassifier(n_hyperplanes=2, time_limit=15, random_state=0)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", ConvergenceWarning)
    clf.fit(X, y)
for w in caught:
    print(f"{w.category.__name__}: {w.message}")
print(f"\n{clf.training_errors_:g} training errors, proven lower bound {clf.lower_bound_:g} "
      f"(gap {clf.gap_:.1%}), stopped by {clf.stop_reason_}, {clf.fit_time_:.1f} s")

# %%
# The trace as a table
# --------------------
# Each row is a :class:`~typing.NamedTuple` (``row._asdict()`` gives a dict, which is what
# ``pandas.DataFrame(row._asdict() for row in clf.fit_trace_)`` would take). An incumbent of
# ``inf`` means that no network exists yet. A row of (about) 0 s is a stage that ran no
# work: the schedule reached it, but the budget left it nothing, or there was nothing left
# for it to do.
print(f"{'stage':<28} {'start':>8} {'seconds':>8} {'incumbent':>10} {'bound':>7}  stop")
for row in clf.fit_trace_:
    print(f"{row.stage:<28} {row.start:8.2f} {row.seconds:8.2f} {row.incumbent:10g} "
          f"{row.bound:7g}  {row.stop}")
print("\nas a dict:", clf.fit_trace_[-1]._asdict())

# %%
# The incumbent and the bound against time
# ----------------------------------------
# Top: when each stage ran, one line per stage (a stage can run more than once; a dot
# marks a run of under 0.05 s). Bottom: the incumbent (errors of the best network found)
# and the proven lower bound after each stage, as steps; the optimum lies in the shaded
# band between them. Points where the incumbent is still ``inf`` are left out. The trace
# has one point per stage run, at its end: a long stage shows as a flat line and a jump.
rows = clf.fit_trace_
names = list(dict.fromkeys(row.stage for row in rows))  # in order of first run
end = max(row.start + row.seconds for row in rows)

fig, (ax_gantt, ax) = plt.subplots(
    2, 1, figsize=(9, 6.5), sharex=True, layout="constrained",
    gridspec_kw={"height_ratios": [1, 1.3]})
for row in rows:
    lane = names.index(row.stage)
    color = f"C{lane % 10}"
    if row.seconds >= 0.05:
        ax_gantt.barh(lane, row.seconds, left=row.start, height=0.6, color=color)
        ax.axvspan(row.start, row.start + row.seconds, color=color, alpha=0.12, lw=0)
    else:
        ax_gantt.plot(row.start, lane, "o", ms=4, color=color)
ax_gantt.set_yticks(range(len(names)), names)
ax_gantt.set_ylabel("stage")
ax_gantt.invert_yaxis()
ax_gantt.set_title(f"Deep-ICE, K = 2, 15 s budget, Blood transfusion ({len(X)} x "
                   f"{X.shape[1]}): when each stage ran")
ax_gantt.grid(axis="x", alpha=0.3)

times = [0.0] + [row.start + row.seconds for row in rows]
bounds = [0.0] + [row.bound for row in rows]
incumbents = [math.inf] + [row.incumbent for row in rows]
have = [i for i, v in enumerate(incumbents) if math.isfinite(v)]  # a network exists
ax.step([times[i] for i in have], [incumbents[i] for i in have], where="post", color="C3",
        lw=2, label="incumbent (errors of the best network found)")
ax.step(times, bounds, where="post", color="C0", lw=2, label="proven lower bound")
ax.fill_between([times[i] for i in have], [bounds[i] for i in have],
                [incumbents[i] for i in have], step="post", color="0.6", alpha=0.3,
                label="where the optimum can lie")
ax.set(xlim=(0, end), ylim=(0, None), xlabel="seconds since the start of fit",
       ylabel=f"training errors (of {len(X)} points)",
       title=f"final: {clf.training_errors_:g} errors, bound {clf.lower_bound_:g}, "
             f"gap {clf.gap_:.0%}")
ax.legend(loc="center left")
ax.grid(alpha=0.3)
plt.show()

# %%
# Where the budget went, stage by stage
# -------------------------------------
# Summing the rows per stage answers the question directly: the seconds each stage took,
# their share of the fit, and what they bought (by how much they raised the bound, and
# lowered the incumbent once a first network existed). A stage with 0 s was reached by the
# schedule but skipped. With ``time_limit=300`` each stage gets twenty times the share, and
# ``python benchmarks/deepice_vs_baselines.py`` measures what that buys on this data set.
spent = dict.fromkeys(names, 0.0)
raised = dict.fromkeys(names, 0.0)
lowered = dict.fromkeys(names, 0.0)
incumbent, bound = math.inf, 0.0
for row in rows:
    spent[row.stage] += row.seconds
    raised[row.stage] += row.bound - bound
    if math.isfinite(incumbent):
        lowered[row.stage] += incumbent - row.incumbent
    incumbent, bound = row.incumbent, row.bound
print(f"{'stage':<28} {'seconds':>8} {'share':>6} {'bound +':>8} {'incumbent -':>12}")
for name in names:
    print(f"{name:<28} {spent[name]:8.2f} {spent[name] / end:6.1%} {raised[name]:8g} "
          f"{lowered[name]:12g}")
