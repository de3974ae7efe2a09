"""
The exact 0-1 loss linear classifier versus SVM and logistic regression
=======================================================================

On the Voicepath data (704 voice recordings, 2 acoustic features), the linear classifier
with the fewest training errors makes 19 errors. LinearSVC and logistic regression minimize
convex surrogates of the 0-1 loss and settle on visibly different lines with 24 and 25
errors. :class:`~exactclf.ICEClassifier` finds the optimum and proves it.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from exactclf import ICEClassifier
from exactclf.datasets import load_voicepath

X, y = load_voicepath(return_X_y=True)
models = {
    "ICEClassifier (exact)": ICEClassifier(),
    "LinearSVC": make_pipeline(StandardScaler(), LinearSVC()),
    "LogisticRegression": make_pipeline(StandardScaler(), LogisticRegression()),
}
for model in models.values():
    model.fit(X, y)
ice = models["ICEClassifier (exact)"]
print(f"ICE: {ice.training_errors_:g} errors, proven optimal: {ice.is_optimal_}")

# %%
# Decision boundaries
# -------------------
# Each panel shades the region a model labels positive; circled points are its training
# errors.
xx, yy = np.meshgrid(np.linspace(X[:, 0].min(), X[:, 0].max(), 300),
                     np.linspace(X[:, 1].min(), X[:, 1].max(), 300))
grid = np.c_[xx.ravel(), yy.ravel()]
fig, axes = plt.subplots(1, 3, figsize=(13, 4.2), sharey=True)
for ax, (name, model) in zip(axes, models.items(), strict=True):
    ax.contourf(xx, yy, model.predict(grid).reshape(xx.shape), alpha=0.25, cmap="coolwarm")
    ax.scatter(X[:, 0], X[:, 1], c=y, s=8, cmap="coolwarm", edgecolor="none")
    wrong = model.predict(X) != y
    ax.scatter(X[wrong, 0], X[wrong, 1], s=40, facecolor="none", edgecolor="k", linewidth=0.8)
    ax.set_title(f"{name}: {wrong.sum()} errors")
    ax.set_xlabel("feature 1")
axes[0].set_ylabel("feature 2")
fig.tight_layout()
plt.show()
