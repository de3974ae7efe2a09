"""
Choosing the weight decay of a threshold network by cross-validation
====================================================================

:class:`~exactclf.ThresholdNetLassoCV` fits, on every fold, the certified threshold networks
of a whole grid of ``beta`` (one arrangement dictionary per fold, one regularization path on
it) and keeps the ``beta`` of best mean held-out accuracy; the final network is then fitted
on all the data at that ``beta``, with its duality-gap certificate. Here on the Haberman
survival data (306 patients, 3 features), where predicting the majority class already gets
74% right. At the largest ``beta`` the network is zero (its output 0 predicts
``classes_[0]``, the minority class here); a few neurons reach the majority rate; small
``beta`` gives hundreds of neurons that fit the training folds and lose held-out accuracy.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import StratifiedKFold

from exactclf import ThresholdNetLassoCV
from exactclf.datasets import load_haberman

X, y = load_haberman(return_X_y=True)
clf = ThresholdNetLassoCV(betas=10, cv=StratifiedKFold(5, shuffle=True, random_state=0),
                          n_arrangements=300, random_state=0).fit(X, y)
print(f"beta_ = {clf.beta_:.3g}: {clf.n_neurons_} neurons, duality gap {clf.dual_gap_:.1e}")
print("largest duality gap of a fold's network along the path: "
      f"{clf.dual_gap_path_.max():.1e}")

# %%
# Held-out accuracy (each fold and their mean) and network size along the path. The
# accuracy axis spans 0 to 1 and the neuron axis 1 to the dictionary size, so the curves are
# drawn to scale; the dotted line is the majority-class rate.
majority = np.max(np.bincount(np.unique(y, return_inverse=True)[1])) / len(y)
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
ax1.semilogx(clf.betas_, clf.accuracy_path_, color="0.75", lw=1)
ax1.semilogx(clf.betas_, clf.accuracy_path_.mean(axis=1), "o-", color="C0", label="mean")
ax1.axhline(majority, ls=":", color="k", label="majority class")
ax1.axvline(clf.beta_, ls="--", color="C3", label=r"chosen $\beta$")
ax1.set(xlabel=r"$\beta$", ylabel="held-out accuracy", ylim=(0, 1),
        title="accuracy (grey: each fold)")
ax1.legend(loc="lower right")
ax2.loglog(clf.betas_, clf.n_neurons_path_, color="0.75", lw=1)
ax2.loglog(clf.betas_, clf.n_neurons_path_.mean(axis=1), "o-", color="C1")
ax2.axvline(clf.beta_, ls="--", color="C3")
ax2.set(xlabel=r"$\beta$", ylabel="neurons", ylim=(1, clf.n_patterns_),
        title="network size (grey: each fold)")
plt.show()
