"""DeepICEMaxoutClassifier's certificate: it verifies on the bundled data and on random
instances, survives JSON, and a changed label, other data or a tampered claim is rejected."""

import dataclasses
import json
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from exactclf import DeepICEMaxoutClassifier, verify
from exactclf._certificate import Certificate, StopReason, data_fingerprint
from exactclf._geometry import THIN_POINTS
from exactclf.datasets import load_deepice_caesarian, load_deepice_voicepath, load_voicepath
from exactclf.maxout import _deepice


def _fit(est, X, y, w=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y) if w is None else est.fit(X, y, sample_weight=w)


def _failed(report):
    return {c.name for c in report.checks if not c.passed}


def _assert_certified(clf, X, y, w=None):
    """The certificate verifies, its views are the old attributes, and its JSON form
    reads back equal and verifies too."""
    cert = clf.certificate_
    report = verify(clf, X, y, w)
    assert report.ok, str(report)
    assert cert.estimator == "DeepICEMaxoutClassifier"
    assert f"K={clf.n_hyperplanes} " in cert.model_class and "polarities" in cert.model_class
    assert cert.fingerprint == data_fingerprint(np.asarray(X, dtype=float), y, w)
    assert cert.n_samples == len(X) and cert.rtol == 0
    assert (clf.training_errors_, clf.lower_bound_, clf.lower_bound_method_, clf.is_optimal_,
            clf.stop_reason_, clf.gap_) == (cert.value, cert.bound, cert.bound_method,
                                            cert.is_optimal, cert.stop_reason, cert.gap)
    assert cert.is_optimal == (cert.value == cert.bound) and cert.bound <= cert.value
    assert cert.gap == (0.0 if cert.is_optimal else (cert.value - cert.bound) / cert.value)
    if cert.bound_method == "conflicting duplicates":
        assert cert.witness.kind == "conflicts"
    else:  # an enumeration proof: no witness, and the report says what is not checked
        assert cert.witness.kind == "none" and "no" in cert.witness.note
        assert bool(report.not_checked) == (cert.bound > 0)
    as_dict = json.loads(cert.to_json())
    assert Certificate.from_dict(as_dict) == cert
    assert verify(clf, X, y, w, certificate=as_dict).ok
    return cert


def _assert_tampering_rejected(clf, X, y, w=None):
    cert = clf.certificate_
    other = np.array(y, copy=True)
    first, second = np.unique(y)
    other[0] = second if y[0] == first else first
    assert "data fingerprint" in _failed(verify(clf, X, other, w))
    assert "data fingerprint" in _failed(verify(clf, X[:-1], y[:-1],
                                                None if w is None else w[:-1]))
    for claim, check in ((dict(bound=cert.value + 1), "bound <= value"),
                         (dict(value=cert.value - 1, bound=min(cert.bound, cert.value - 1)),
                          "value"),
                         (dict(is_optimal=True, bound=cert.value - 1), "optimality")):
        forged = dataclasses.replace(cert, **claim)
        assert check in _failed(verify(clf, X, y, w, certificate=forged)), claim
        assert check in _failed(verify(clf, X, y, w, certificate=forged.to_dict())), claim


BUNDLED = {
    # the exact linear problem on all of Voicepath: 19 errors (ICE paper), proven
    "voicepath-K1": (load_voicepath, slice(None), dict(n_hyperplanes=1)),
    "voicepath-K2-exact": (load_voicepath, slice(None, None, 12), dict(n_hyperplanes=2)),
    "voicepath-K2-coreset": (load_voicepath, slice(None),
                             dict(n_hyperplanes=2, method="coreset", random_state=0)),
    # beyond the exact search's range: the portfolio, stopped by its budget
    "caesarian-K2-portfolio": (load_deepice_caesarian, slice(None),
                               dict(n_hyperplanes=2, time_limit=1, random_state=0)),
}


@pytest.mark.parametrize("case", list(BUNDLED))
def test_bundled_certificates_verify(case):
    load, rows, params = BUNDLED[case]
    X, y = load(return_X_y=True)
    X, y = X[rows], y[rows]
    clf = _fit(DeepICEMaxoutClassifier(device="cpu", **params), X, y)
    cert = _assert_certified(clf, X, y)
    if case == "voicepath-K1":
        assert cert.is_optimal and cert.value == 19 and cert.bound_method == "exact"
    if case == "caesarian-K2-portfolio":
        assert clf.method_ == "portfolio" and not cert.is_optimal
        assert cert.stop_reason in (StopReason.TIME_LIMIT, StopReason.BOUNDS_STALLED)
    _assert_tampering_rejected(clf, X, y)
    # another bundled data set (Voicepath with its duplicate rows; Caesarian's model on
    # Voicepath): not the data of the proof
    other = load_deepice_voicepath if load is load_voicepath else load_voicepath
    assert _failed(verify(clf, *other(return_X_y=True))) == {"data fingerprint"}


def _with_conflicts(seed, n=24):
    """Points on a small grid (duplicates) with random labels: identical points with both
    labels, whose lighter weight every network errs on."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(n, 2)).astype(float)
    y = rng.integers(0, 2, size=n)
    return X, y, rng


def test_conflicting_duplicates_are_a_rechecked_witness():
    """An exact search stopped by its budget is bounded by the conflicting duplicates
    only: the witness is re-derived from the data, and a bound above it is rejected."""
    X, y, _ = _with_conflicts(0)
    clf = _fit(DeepICEMaxoutClassifier(n_hyperplanes=2, method="exact", max_candidates=2,
                                       device="cpu"), X, y)
    cert = _assert_certified(clf, X, y)
    assert cert.witness.kind == "conflicts" and cert.bound > 0
    assert cert.stop_reason == StopReason.MAX_CANDIDATES and not cert.is_optimal
    assert cert.value >= cert.bound + 1
    report = verify(clf, X, y)
    assert "witness proves the bound" in {c.name for c in report.checks}
    forged = dataclasses.replace(cert, bound=cert.bound + 1)  # still below the value
    assert _failed(verify(clf, X, y, certificate=forged)) == {"witness proves the bound"}
    _assert_tampering_rejected(clf, X, y)


def test_points_too_thin_fall_back_to_the_conflicts():
    """Points float64 cannot resolve: the searches' geometry is not trusted, the bound is
    the conflicting duplicates' (re-checked) and the stop reason says why."""
    rng = np.random.default_rng(1)
    u = rng.normal(size=12)
    X = np.repeat(np.c_[u, 2 * u + 1e-9 * rng.normal(size=12)], 2, axis=0)  # duplicates
    y = rng.integers(0, 2, size=24)
    clf = _fit(DeepICEMaxoutClassifier(n_hyperplanes=2, device="cpu"), X, y)
    cert = _assert_certified(clf, X, y)
    assert cert.stop_reason == THIN_POINTS and cert.witness.kind == "conflicts"


@pytest.mark.parametrize("seed", range(6))
def test_random_instances_certify(monkeypatch, seed):
    """Count weights, duplicates with both labels, K = 1..3, every method (the portfolio
    forced on for "auto"): the certificate verifies with its weights, and other weights
    are other data."""
    monkeypatch.setattr(_deepice, "_MAX_EXACT_PLANES", 0)
    monkeypatch.setattr(_deepice, "_MAX_EXACT_LINEAR", 0)
    X, y, rng = _with_conflicts(10 + seed, n=16)
    w = rng.integers(1, 4, size=len(y))
    K = 1 + seed % 3
    method = ["exact", "auto", "coreset"][seed // 2 % 3]
    clf = _fit(DeepICEMaxoutClassifier(n_hyperplanes=K, method=method, coreset_size=6,
                                       time_limit=2, random_state=seed, device="cpu"),
               X, y, w)
    cert = _assert_certified(clf, X, y, w)
    assert clf.method_ == {"auto": "portfolio"}.get(method, method)
    if method == "exact":
        assert cert.is_optimal
    heavier = w.copy()
    heavier[-1] += 1
    assert "data fingerprint" in _failed(verify(clf, X, y, heavier))
    assert "data fingerprint" in _failed(verify(clf, X, y))  # the weights are part of it
    _assert_tampering_rejected(clf, X, y, w)


def test_pipeline_certificate_is_about_the_transformed_data():
    X, y, _ = _with_conflicts(3)
    pipe = _fit(make_pipeline(StandardScaler(), DeepICEMaxoutClassifier(device="cpu")), X, y)
    assert verify(pipe, X, y).ok
    assert "data fingerprint" in _failed(verify(pipe, X, 1 - y))


def test_views_are_absent_before_fit():
    clf = DeepICEMaxoutClassifier()
    for name in ("certificate_", "training_errors_", "lower_bound_", "lower_bound_method_",
                 "is_optimal_", "gap_", "stop_reason_", "fit_time_"):
        assert not hasattr(clf, name), name
