"""
Sample weights: when one class's errors cost more
=================================================

The exact 0-1 estimators minimize the *weighted* number of training errors: with
``fit(X, y, sample_weight=w)`` an error on sample ``i`` costs ``w[i]``, and the proof is
over those costs (the certificate's objective says "weighted training errors"). Weights
are how a user says that some mistakes matter more than others: a missed diagnosis versus
a false alarm, or a rare class that an unweighted rule would give up on.

On the Voicepath data (704 voice recordings, 2 features) class 0 is rare: 53 recordings
against 651. The linear rule with the fewest errors makes 19, 11 of them on class 0, a
fifth of that class. Here an error on class 0 is made to cost 5 times as much, and
:class:`~exactclf.ICEClassifier` proves the best rule for those costs. (``class_weight=
{0: 5, 1: 1}`` does the same without building the weights by hand.)
"""

# %%
# Two optimal rules, for two costs
# --------------------------------
import matplotlib.pyplot as plt
import numpy as np

from exactclf import ICEClassifier, verify
from exactclf.datasets import load_voicepath

X, y = load_voicepath(return_X_y=True)


def class_errors(clf):
    """Errors of ``clf`` on the training data, per true class."""
    wrong = clf.predict(X) != y
    return int(wrong[y == 0].sum()), int(wrong[y == 1].sum())


plain = ICEClassifier().fit(X, y)
weight = np.where(y == 0, 5.0, 1.0)
weighted = ICEClassifier().fit(X, y, sample_weight=weight)
for name, clf in [("unweighted", plain), ("class 0 errors cost 5", weighted)]:
    e0, e1 = class_errors(clf)
    print(f"{name:>22}: {e0} errors on class 0, {e1} on class 1; weighted cost "
          f"{clf.training_errors_:g}, proven optimal: {clf.is_optimal_}")

# %%
# The weighted certificate is checked with the same weights (they are part of the data
# fingerprint); with the wrong ones it fails.
print("verify with the weights:   ", verify(weighted, X, y, sample_weight=weight).ok)
print("verify without the weights:", verify(weighted, X, y).ok)

# %%
# The two decision lines
# ----------------------
# Each line is where ``coef_ . x + intercept_ = 0``; both rules predict class 1 above their
# line (their coefficient of x1 is positive). Raising the cost of class 0's errors moves the
# line into class 1's cloud: fewer class-0 recordings are misclassified, at the price of
# more class-1 ones.
fig, ax = plt.subplots(figsize=(7.5, 6.2), layout="constrained")
ax.scatter(*X[y == 1].T, s=8, color="C0", alpha=0.5, label="class 1 (651 recordings)")
ax.scatter(*X[y == 0].T, s=22, color="C3", marker="^", label="class 0 (53 recordings)")
x0 = np.linspace(X[:, 0].min(), X[:, 0].max(), 2)
for clf, style, name in [(plain, "k-", "unweighted"), (weighted, "k--", "class 0 costs 5")]:
    (w0, w1), b = clf.coef_[0], clf.intercept_[0]
    e0, e1 = class_errors(clf)
    ax.plot(x0, -(w0 * x0 + b) / w1, style, lw=2,
            label=f"optimal line, {name}: {e0} + {e1} errors (class 0 + class 1)")
ax.set(xlim=(X[:, 0].min() - 0.1, X[:, 0].max() + 0.1),
       ylim=(X[:, 1].min() - 0.05, X[:, 1].max() + 0.05),
       xlabel="feature x0 (units of the source data)",
       ylabel="feature x1 (units of the source data)",
       title="Voicepath: the linear rule with the fewest (weighted) errors")
ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), fontsize=9, ncols=2)
plt.show()

# %%
# The trade-off, weight by weight
# -------------------------------
# Each fit below is proven optimal for its costs (a fraction of a second each). As the
# cost of a class-0 error grows, the optimal rule gives up more class-1 recordings to get
# class 0 right.
costs = [1, 2, 3, 5, 8, 12]
per_class = np.array([class_errors(ICEClassifier().fit(X, y,
                                                       sample_weight=np.where(y == 0, c, 1.0)))
                      for c in costs])
print("cost of a class-0 error:", costs)
print("errors on class 0:      ", per_class[:, 0].tolist())
print("errors on class 1:      ", per_class[:, 1].tolist())

fig, ax = plt.subplots(figsize=(6.5, 4), layout="constrained")
ax.plot(costs, per_class[:, 0], "^-", color="C3", label="errors on class 0 (of 53)")
ax.plot(costs, per_class[:, 1], "o-", color="C0", label="errors on class 1 (of 651)")
ax.set(xticks=costs, ylim=(0, None), xlabel="cost of an error on class 0 (class 1: 1)",
       ylabel="training errors (count)",
       title="Errors of the optimal rule, per class, as class 0's cost grows")
ax.grid(alpha=0.3)
ax.legend()
plt.show()
