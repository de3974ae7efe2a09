"""
Tuning certified estimators by cross-validation
===============================================

The certified estimators are ordinary scikit-learn estimators: they go into a
:class:`~sklearn.pipeline.Pipeline` and :class:`~sklearn.model_selection.GridSearchCV` like any
other. Here cross-validation picks the regularization of two of them on the Blood transfusion
data: the uncertainty-set size ``s`` of the minimax risk classifier
:class:`~exactclf.MRCCCG` (larger ``s``: a more conservative worst-case bound) and the weight
decay ``beta`` of the threshold network :class:`~exactclf.ThresholdNetLasso` (larger ``beta``:
fewer neurons).
"""

# %%
import matplotlib.pyplot as plt
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from exactclf import MRCCCG, ThresholdNetLasso
from exactclf.datasets import load_bloodtransfer

X, y = load_bloodtransfer(return_X_y=True)
cv = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)

searches = {
    "MRCCCG": GridSearchCV(
        make_pipeline(StandardScaler(), MRCCCG(random_state=0)),
        {"mrcccg__s": [0.01, 0.1, 0.3, 1.0, 3.0]}, cv=cv),
    "ThresholdNetLasso": GridSearchCV(
        make_pipeline(StandardScaler(),
                      ThresholdNetLasso(arrangements="sample", n_arrangements=200,
                                        random_state=0)),
        {"thresholdnetlasso__beta": [1e-3, 1e-2, 1e-1, 1.0]}, cv=cv),
}
for name, search in searches.items():
    search.fit(X, y)
    print(f"{name}: best {search.best_params_}, CV accuracy {search.best_score_:.3f}")

# %%
# The worst-case bound of the chosen MRC is a certificate: no distribution consistent with
# the training moments gives it a higher expected 0-1 error.
mrc = searches["MRCCCG"].best_estimator_[-1]
print(f"worst-case error bound R* = {mrc.upper_:.3f}; "
      f"training error {1 - searches['MRCCCG'].best_estimator_.score(X, y):.3f}")

# %%
# Cross-validated accuracy along each grid
# ----------------------------------------
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
for ax, (name, search) in zip(axes, searches.items(), strict=True):
    (param, values), = search.param_grid.items()
    mean, sd = search.cv_results_["mean_test_score"], search.cv_results_["std_test_score"]
    ax.errorbar(values, mean, yerr=sd, marker="o", capsize=3)
    ax.set_xscale("log")
    ax.set_xlabel(param.split("__")[1])
    ax.set_ylabel("CV accuracy")
    ax.set_title(name)
    ax.axvline(search.best_params_[param], color="grey", linestyle=":")
fig.tight_layout()
plt.show()
