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

#: scikit-learn's check of class_weight fits blobs with class_weight={0: 1000, 1: 1e-4} and
#: expects mostly class 0 on new points: a surrogate loss drifts there, but the 0-1 optimum
#: of separable blobs errs on nothing either way (the weights change no error), and
#: Deep-ICE counts errors in integers, so it refuses the weight 1e-4 with its remedy.
#: tests/test_ice.py checks class_weight against the brute force instead.
_CLASS_WEIGHT_CHECK = {"check_class_weight_classifiers": "the 0-1 optimum of separable blobs "
                       "errs on nothing whatever the class weights"}
EXPECTED_FAILED_CHECKS = {
    "ICEClassifier": _CLASS_WEIGHT_CHECK,
    "DeepICEMaxoutClassifier": {"check_class_weight_classifiers": "errors are counted in "
                                "integers: the class weight 1e-4 is refused"},
}


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
