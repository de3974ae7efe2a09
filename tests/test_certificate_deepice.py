"""DeepICEMaxoutClassifier's certificate: it verifies on the bundled data and on random
instances, survives JSON, and a changed label, other data or a tampered claim is rejected."""

import dataclasses
import json
import warnings

import numpy as np
import pytest
from _helpers import pair_cover_fit
from sklearn.exceptions import ConvergenceWarning
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from exactclf import DeepICEMaxoutClassifier, verify
from exactclf._certificate import Certificate, StopReason, Witness, data_fingerprint
from exactclf._geometry import THIN_POINTS
from exactclf.datasets import load_deepice_caesarian, load_deepice_voicepath, load_voicepath
from exactclf.maxout import _deepice
from exactclf.maxout._witness import cover_witness


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
    elif cert.witness.kind == "maxout_cover":  # obstructions, re-checked; blocks are not
        assert cert.bound_method != "exact"
        assert any(e["obstructions"] for e in cert.witness.data["polarities"])
        assert "witness proves the bound" in {c.name for c in report.checks}
        blocks = any(e["blocks"] for e in cert.witness.data["polarities"])
        assert bool(report.not_checked) == blocks
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


# -- the obstruction cover's witness ----------------------------------------------------------

#: a triangle of class 1 with the midpoints of its sides in class 0 (integers: the midpoints
#: are exact): each side's corners are blocked by its midpoint, and each midpoint lies in the
#: hull of two corners
TRIANGLE = np.array([[0.0, 0], [4, 0], [0, 4], [2, 0], [2, 2], [0, 2]])
TRIANGLE_Y = np.array([1, 1, 1, 0, 0, 0])
#: (corner, corner, their midpoint): corner_a + corner_b - 2 * midpoint == 0
SIDES = [(0, 1, 3), (1, 2, 4), (0, 2, 5)]


def _triangle_witness(K, pairs=SIDES, blocks=()):
    """Polarity +1: the three corners pairwise blocked (one obstruction of three relations);
    polarity -1: each midpoint in the hull of two corners (one relation each)."""
    relation = [[[a, 1, 1], [b, 1, 1], [m, -1, 2]] for a, b, m in pairs]
    return {"n_hyperplanes": K, "polarities": [
        {"polarity": 1, "obstructions": [relation], "blocks": list(blocks)},
        {"polarity": -1, "obstructions": [[r] for r in relation], "blocks": []}]}


def _with_witness(clf, data, bound):
    cert = clf.certificate_
    return dataclasses.replace(cert, bound=bound, is_optimal=cert.value <= bound,
                               bound_method="pair obstruction cover",
                               witness=Witness("maxout_cover", "forged for the test", data))


@pytest.mark.parametrize("K", [1, 2, 3])
def test_obstruction_witness_is_checked_for_its_number_of_half_spaces(K):
    """Two half-spaces cannot hold three pairwise blocked corners apart, three can: the same
    obstruction proves one error for K <= 2 and is refused for K = 3 (the midpoints' hulls
    prove it for every K on the other polarity, but the smaller polarity's bound counts)."""
    clf = _fit(DeepICEMaxoutClassifier(n_hyperplanes=K, device="cpu"), TRIANGLE, TRIANGLE_Y)
    assert clf.training_errors_ == {1: 2, 2: 1, 3: 0}[K]  # the exact searches' optima
    if K == 3:
        report = verify(clf, TRIANGLE, TRIANGLE_Y,
                        certificate=_with_witness(clf, _triangle_witness(3), 0.0))
        assert "polarity +1: obstructions certified by exact multipliers" in _failed(report)
        return
    report = verify(clf, TRIANGLE, TRIANGLE_Y,
                    certificate=_with_witness(clf, _triangle_witness(K), 1.0))
    assert report.ok, str(report)
    assert "witness proves the bound" in {c.name for c in report.checks}
    assert not report.not_checked
    as_dict = _with_witness(clf, _triangle_witness(K), 1.0).to_dict()
    assert verify(clf, TRIANGLE, TRIANGLE_Y, certificate=json.loads(json.dumps(as_dict))).ok


def test_obstruction_witness_rejects_what_it_does_not_prove():
    clf = _fit(DeepICEMaxoutClassifier(n_hyperplanes=2, device="cpu"), TRIANGLE, TRIANGLE_Y)

    def failed(data, bound=1.0):
        return _failed(verify(clf, TRIANGLE, TRIANGLE_Y,
                              certificate=_with_witness(clf, data, bound)))

    # two blocked pairs of three corners: two half-spaces hold them apart
    assert "polarity +1: obstructions certified by exact multipliers" in failed(
        _triangle_witness(2, pairs=SIDES[:2]))
    wrong = _triangle_witness(2)
    wrong["polarities"][0]["obstructions"][0][0][2][2] = 3  # not a midpoint any more
    assert "polarity +1: obstructions certified by exact multipliers" in failed(wrong)
    relabeled = _triangle_witness(2)
    relabeled["polarities"][1]["obstructions"][0][0][2][1] = 1  # a sample of class 0
    assert "polarity -1: obstructions certified by exact multipliers" in failed(relabeled)
    one_side = _triangle_witness(2)
    del one_side["polarities"][1]
    assert "maxout cover witness" in failed(one_side)
    assert "maxout cover witness" in failed(_triangle_witness(1))  # not the model's K
    # a block claims what it claims: used as stated, and reported as not checked
    report = verify(clf, TRIANGLE, TRIANGLE_Y, certificate=_with_witness(
        clf, _triangle_witness(2, blocks=[[[0, 1, 3], 1.0]]), 1.0))
    assert report.ok and len(report.not_checked) == 1
    assert failed(_triangle_witness(2), bound=1.0) == set()
    # three points, one sample each: no model errs four times there
    assert "maxout cover witness" in failed(_triangle_witness(2, blocks=[[[0, 1, 3], 4.0]]))


def test_cover_witness_of_the_searches_verifies():
    """The obstructions that the covers of a fit find (single IISs and pairwise blocked
    cliques, the same objects in another order of discovery), written by the estimator's
    witness and re-checked on the samples in their own units."""
    clf, X, y, data, results, singles = pair_cover_fit()
    assert all(results[p].lower >= singles[p] > 0 for p in (1, -1))
    bound = min(r.lower for r in results.values())
    evidence = cover_witness(data, clf.classes_, results, 2, bound)
    assert evidence is not None
    assert any(len(o) == 3 for e in evidence["polarities"] for o in e["obstructions"])
    report = verify(clf, X, y, certificate=_with_witness(clf, evidence, bound))
    assert report.ok and bound <= clf.training_errors_, str(report)
    assert "witness proves the bound" in _failed(verify(
        clf, X, y, certificate=_with_witness(clf, evidence, bound + 1)))
    # a bound above what a polarity's covers proved: no witness
    top = max(r.lower for r in results.values())
    assert cover_witness(data, clf.classes_, results, 2, top + 1) is None


@pytest.mark.parametrize("seed", range(6))
def test_portfolio_certificates_verify_with_whatever_witness(monkeypatch, seed):
    """Overlapping classes on a 12 x 12 grid (duplicates, count weights), K = 1..3, the
    portfolio forced on and stopped by its budget: whichever bounds its clock gives (exact,
    partitions, covers; with a 'maxout_cover' witness when covers prove both polarities),
    the certificate verifies and its bound is at most the exact search's optimum."""
    monkeypatch.setattr(_deepice, "_MAX_EXACT_PLANES", 0)
    monkeypatch.setattr(_deepice, "_MAX_EXACT_LINEAR", 0)
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(50, 80))
    X = rng.integers(0, 12, size=(n, 2)).astype(float)
    y = (X[:, 0] + X[:, 1] + rng.normal(scale=3.0, size=n) > 11).astype(int)
    w = rng.integers(1, 4, size=n)
    K = 1 + seed % 3
    clf = _fit(DeepICEMaxoutClassifier(n_hyperplanes=K, time_limit=1.5, random_state=seed,
                                       device="cpu"), X, y, w)
    cert = _assert_certified(clf, X, y, w)
    exact = _fit(DeepICEMaxoutClassifier(n_hyperplanes=K, method="exact", device="cpu"),
                 X, y, w)
    assert exact.is_optimal_ and cert.bound <= exact.training_errors_ <= cert.value


def test_ctrl_c_while_writing_the_witness_keeps_the_model(monkeypatch):
    """The searches are over when the witness is written: Ctrl-C there costs the witness,
    not the model or its (still proven) bound."""

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(_deepice, "cover_witness", interrupted)
    with pytest.warns(UserWarning, match="interrupted while writing the witness"):
        clf = DeepICEMaxoutClassifier(n_hyperplanes=2, device="cpu", time_limit=5,
                                      random_state=0).fit(TRIANGLE, TRIANGLE_Y)
    assert clf.certificate_.witness.kind == "none" and clf.training_errors_ == 1
    assert verify(clf, TRIANGLE, TRIANGLE_Y).ok
