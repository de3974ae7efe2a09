"""
=============================================================
Exact two-plane maxout network versus a gradient-trained MLP
=============================================================

A two-layer maxout network with K = 2 hidden planes predicts one class where
``max(w_1 . x + b_1, w_2 . x + b_2) > 0``: a union of two half-planes against a convex
(wedge-shaped) region. :class:`~exactclf.DeepICEMaxoutClassifier` finds the network with the
fewest training errors and proves it; an :class:`~sklearn.neural_network.MLPClassifier`
with two ReLU units is trained by gradient descent on the cross-entropy. Both are fitted on
a subsample of the two-feature voice pathology data, and their decision regions are drawn.
"""

# %%
# Data: 120 points of the voice pathology data (two features).
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from exactclf import DeepICEMaxoutClassifier
from exactclf.datasets import load_voicepath

X, y = load_voicepath(return_X_y=True)
idx = np.random.default_rng(0).choice(len(X), 120, replace=False)
X, y = X[idx], y[idx]

# %%
# The exact fit (a second or so) and the MLP with the same number of hidden units.
deepice = DeepICEMaxoutClassifier(n_hyperplanes=2, method="exact").fit(X, y)
mlp = make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(2,), max_iter=5000,
                                                    random_state=0)).fit(X, y)
errors = {
    f"Deep-ICE K=2 (proven optimal: {deepice.is_optimal_})": deepice.training_errors_,
    "MLP, 2 ReLU units (Adam)": float((mlp.predict(X) != y).sum()),
}
for name, e in errors.items():
    print(f"{name}: {e:g} training errors")

# %%
# Decision regions. The Deep-ICE region of one class is the union of the two half-planes
# whose boundaries are drawn as dashed lines. Both panels share one fixed colour scale (the
# class index, with levels between the classes), so a model that predicts one class
# everywhere is shaded in that class's colour, not in whatever colour a constant field gets.
classes = np.unique(y)
colours = ["#3b6fb6", "#c0392b"]
cmap = ListedColormap(colours)
levels = [-0.5, 0.5, 1.5]
xx, yy = np.meshgrid(np.linspace(X[:, 0].min(), X[:, 0].max(), 300),
                     np.linspace(X[:, 1].min(), X[:, 1].max(), 300))
grid = np.c_[xx.ravel(), yy.ravel()]
fig, axes = plt.subplots(1, 2, figsize=(10, 4.5), sharex=True, sharey=True)
for ax, model, (name, e) in zip(axes, (deepice, mlp), errors.items(), strict=True):
    zz = np.searchsorted(classes, model.predict(grid)).reshape(xx.shape)
    ax.contourf(xx, yy, zz, levels=levels, alpha=0.25, cmap=cmap, vmin=0, vmax=1)
    ax.scatter(X[:, 0], X[:, 1], c=np.searchsorted(classes, y), cmap=cmap, vmin=0, vmax=1,
               s=14, edgecolor="k", linewidth=0.3)
    shown = np.unique(zz)
    note = f"; predicts class {classes[shown[0]]} everywhere" if len(shown) == 1 else ""
    ax.set_title(f"{name}\n{e:g} errors{note}", fontsize=10)
axes[1].legend(handles=[Patch(color=c, alpha=0.5, label=f"class {k}")
                        for c, k in zip(colours, classes, strict=True)],
               loc="upper right", fontsize=8)
for w0, w1, b in deepice.hyperplanes_:
    axes[0].contour(xx, yy, w0 * xx + w1 * yy + b, levels=[0], colors="k",
                    linestyles="--", linewidths=1)
axes[0].set_xlabel("feature 1")
axes[1].set_xlabel("feature 1")
axes[0].set_ylabel("feature 2")
fig.tight_layout()
