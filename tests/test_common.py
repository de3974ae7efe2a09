"""scikit-learn conformance of every estimator (cheap, deterministic instances)."""

import pytest
from sklearn.utils.estimator_checks import check_param_validation, parametrize_with_checks

from exactclf import DeepICEMaxoutClassifier, ICEClassifier

# Exact searches must be bounded on the checks' data (up to 300 x 10): a candidate budget.
INSTANCES = [
    ICEClassifier(max_candidates=20000, device="cpu"),
    DeepICEMaxoutClassifier(max_candidates=20000, device="cpu"),
]

EXPECTED_FAILED_CHECKS = {}


def _expected_failed_checks(estimator):
    return EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {})


@parametrize_with_checks(INSTANCES, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator", INSTANCES, ids=lambda e: type(e).__name__)
def test_param_validation(estimator):
    check_param_validation(type(estimator).__name__, estimator)
