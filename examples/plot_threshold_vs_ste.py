"""
Threshold networks: convex optimum versus straight-through training
===================================================================

A two-layer threshold network trained with weight decay is a Lasso over hyperplane-
arrangement patterns, so :class:`~exactclf.ThresholdNetLasso` reaches the global optimum of
the training objective ``1/2 |f(X) - y|^2 + beta |w|_1``. Gradient training has to replace
the threshold's zero derivative by a proxy (the straight-through estimator, STE, and its
ReLU / leaky-ReLU / clipped-ReLU variants). Here we follow their training objective epoch by
epoch and compare it with the convex optimum (a horizontal line).
"""

# %%
# Data: Gaussian inputs, labels from a random two-layer tanh teacher.

import matplotlib.pyplot as plt
import numpy as np

from exactclf import ThresholdNetLasso

rng = np.random.default_rng(0)
n, d, beta = 100, 20, 1e-3
X = rng.standard_normal((n, d))
W1 = rng.standard_normal((d, 10)) / np.sqrt(d)
y = np.where(np.tanh(X @ W1) @ rng.standard_normal(10) >= 0, 1.0, -1.0)

# %%
# The convex program over 2000 sampled arrangement patterns; ``dual_gap_`` certifies it.
clf = ThresholdNetLasso(beta=beta, n_arrangements=2000, random_state=0).fit(X, y)
print(f"objective {clf.objective_:.4g}, duality gap {clf.dual_gap_:.1e}, "
      f"{clf.n_neurons_} neurons")

# %%
# STE training (numpy, full-batch Adam) of networks of the same width, recording the
# objective per epoch.
from exactclf.threshold._ste import PROXIES, ste_objective, train_ste  # noqa: E402

fig, ax = plt.subplots(figsize=(7, 4))
for proxy in PROXIES:
    curve = []
    params = None
    for epochs in range(25, 501, 25):
        params, _ = train_ste(X, y, clf.n_neurons_, beta, proxy, epochs=epochs, seed=0)
        curve.append(ste_objective(X, y, params, beta))
    ax.plot(range(25, 501, 25), curve, label=proxy)
ax.axhline(clf.objective_, color="k", ls="--", label="ThresholdNetLasso (global optimum)")
ax.set_yscale("log")
ax.set_xlabel("epoch")
ax.set_ylabel("training objective")
ax.legend()
fig.tight_layout()
plt.show()
