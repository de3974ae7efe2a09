"""Every estimator in the workflows users build: Pipeline, GridSearchCV, pickle, clone."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from exactclf import (
    MRCCCG,
    DeepICEMaxoutClassifier,
    ICEClassifier,
    NGDClassifier,
    ThresholdNetLasso,
)

CASES = [
    (ICEClassifier(device="cpu"), "max_candidates", [2000, 5000]),
    (DeepICEMaxoutClassifier(n_hyperplanes=2, max_candidates=5000, device="cpu"),
     "n_hyperplanes", [1, 2]),
    (ThresholdNetLasso(n_arrangements=100, arrangements="sample", random_state=0),
     "beta", [1e-3, 1e-1]),
    (MRCCCG(device="cpu", random_state=0), "s", [0.1, 0.5]),
    (NGDClassifier(hidden_layer_sizes=(6,), max_iter=30, device="cpu", random_state=0),
     "alpha", [1e-4, 1e-2]),
]


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=60, n_features=2, n_redundant=0, n_informative=2,
                               n_clusters_per_class=1, class_sep=0.8, random_state=0)
    return X, y


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("est, param, grid", CASES, ids=lambda c: type(c).__name__)
def test_pipeline_grid_search_pickle_clone(data, est, param, grid):
    X, y = data
    pipe = make_pipeline(StandardScaler(), est)
    step = pipe.steps[-1][0]
    search = GridSearchCV(pipe, {f"{step}__{param}": grid}, cv=3).fit(X, y)
    assert search.best_params_[f"{step}__{param}"] in grid
    # cross-validated accuracy well above predicting the majority class (0.5 here; the
    # estimators score 0.72-0.85, LogisticRegression 0.85)
    majority = cross_val_score(DummyClassifier(), X, y, cv=3).mean()
    assert search.best_score_ >= majority + 0.15

    best = search.best_estimator_[-1]
    if hasattr(best, "training_errors_"):
        # ICE, Deep-ICE: a proven minimum of the 0-1 loss over models that include every linear
        # classifier makes no more training errors than logistic regression
        assert best.is_optimal_
        logistic = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)
        errors = int((search.best_estimator_.predict(X) != y).sum())
        assert errors == best.training_errors_
        assert errors <= int((logistic.predict(X) != y).sum())

    fitted = search.best_estimator_
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(restored.predict(X), fitted.predict(X))

    twin = clone(est)
    assert twin.get_params() == est.get_params()
    assert not hasattr(twin, "classes_")
