"""scikit-learn conformance of every estimator (cheap, deterministic instances)."""

import pytest
from sklearn.utils.estimator_checks import check_param_validation, parametrize_with_checks

from exactclf import (
    MRCCCG,
    DeepICEMaxoutClassifier,
    ICEClassifier,
    NGDClassifier,
    ThresholdNetLasso,
    ThresholdNetLassoCV,
    ThresholdNetLassoRegressor,
    ThresholdNetLassoRegressorCV,
)
from exactclf._registry import MODELS, public_estimators

# Exact searches must be bounded on the checks' data (up to 300 x 10): a candidate budget.
INSTANCES = [
    ICEClassifier(max_candidates=20000, device="cpu"),
    DeepICEMaxoutClassifier(max_candidates=2000, device="cpu"),
    ThresholdNetLasso(n_arrangements=50, arrangements="sample", random_state=0),
    ThresholdNetLassoRegressor(n_arrangements=50, arrangements="sample", random_state=0),
    ThresholdNetLassoCV(betas=3, cv=3, n_arrangements=50, arrangements="sample", random_state=0),
    ThresholdNetLassoRegressorCV(betas=3, cv=3, n_arrangements=50, arrangements="sample",
                                 random_state=0),
    MRCCCG(device="cpu", random_state=0),
    NGDClassifier(hidden_layer_sizes=(8,), max_iter=20, device="cpu", random_state=0),
]

EXPECTED_FAILED_CHECKS = {}


def _expected_failed_checks(estimator):
    return EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {})


@parametrize_with_checks(INSTANCES, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def test_every_public_estimator_is_checked():
    """A new estimator in the registry gets the common checks (a cheap instance here)."""
    assert {type(e).__name__ for e in INSTANCES} == set(public_estimators())
    assert {MODELS[k] for k in MODELS} <= set(public_estimators())


@pytest.mark.parametrize("estimator", INSTANCES, ids=lambda e: type(e).__name__)
def test_param_validation(estimator):
    check_param_validation(type(estimator).__name__, estimator)
