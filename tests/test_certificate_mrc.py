"""MRCCCG's certificate: ``upper_ = R(mu_)`` and the dual bound ``lower_`` re-derived by
:func:`exactclf.verify` from the data and the ``"mrc_dual"`` witness, and tampering rejected."""

import copy
import json
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.preprocessing import PolynomialFeatures

from exactclf import verify
from exactclf._certificate import Certificate, StopReason, relative_gap
from exactclf._verification._tolerances import MRC_RTOL
from exactclf.datasets import load_haberman
from exactclf.mrc import MRCCCG, mrc_statistics
from exactclf.mrc._bounds import dual_point, forbidden_labels, pinned_features
from exactclf.mrc._ccg import mrc_ccg


def _data(n, K, seed=0):
    return make_classification(n, 4, n_informative=3, n_redundant=0, n_classes=K,
                               n_clusters_per_class=1, random_state=seed)


def _fit(X, y, w=None, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a stopped fit still has a certificate
        return MRCCCG(**kw).fit(X, y, sample_weight=w)


def _tampered(cert, **data):
    """The certificate with witness data replaced (``data``) or its fields (``_fields``)."""
    fields = data.pop("_fields", {})
    d = copy.deepcopy(cert.to_dict())
    d["witness"]["data"].update(data)
    d.update(fields)
    return d


def _lambda_zero_data(seed):
    """A feature that is 0 on class 0: its ``lambda`` there is 0, so the dual point must meet
    ``z = 0`` on it (no mixing helps)."""
    X, y = _data(90, 3, seed)
    X[y == 0, 0] = 0.0
    return X, y


def _sparse_data(seed):
    X, y = _data(90, 3, seed)
    return sp.csr_matrix(np.where(np.abs(X) > 1.0, X, 0.0)), y


HABERMAN = load_haberman(return_X_y=True)
CASES = [
    ("K=2", *_data(80, 2), None, {}),
    ("K=3", *_data(90, 3, 1), None, {}),
    ("K=5", *_data(100, 5, 2), None, {}),
    ("haberman", *HABERMAN, None, {}),
    ("weights", *_data(90, 3, 3), np.random.default_rng(0).integers(0, 4, 90).astype(float),
     {}),
    ("fourier", *_data(60, 2, 4), None, dict(phi="fourier", n_components=20, random_state=0)),
    ("relu", *_data(60, 3, 5), None, dict(phi="relu", n_components=20, random_state=0)),
    ("threshold", *HABERMAN, None, dict(phi="threshold", n_components=30)),
    ("compact", *_data(80, 2, 6), None, dict(one_hot=False)),
    ("column generation", *_data(90, 3, 7), None, dict(m_max=4)),
    ("stopped", *_data(90, 3, 8), None, dict(max_iter=2)),
    ("transformer", *_data(60, 3, 14), None, dict(phi=PolynomialFeatures(2))),
    ("lambda 0", *_lambda_zero_data(15), None, {}),
    ("sparse", *_sparse_data(16), None, {}),
    ("log", *_data(60, 3, 9), None, dict(loss="log")),
    ("log lambda 0", *_lambda_zero_data(17), None, dict(loss="log")),
    ("log weights", *_data(60, 2, 10), np.arange(60) % 3 + 0.5, dict(loss="log")),
]


@pytest.mark.parametrize("name, X, y, w, kw", CASES, ids=[c[0] for c in CASES])
def test_certificate_verifies_and_round_trips(name, X, y, w, kw):
    clf = _fit(X, y, w, **kw)
    cert = clf.certificate_
    report = verify(clf, X, y, w)
    assert report.ok, str(report)
    assert {"value", "dual point", "witness proves the bound"} <= {
        c.name for c in report.checks}
    assert cert.witness.kind == "mrc_dual"
    assert clf.upper_ == cert.value and clf.lower_ == cert.bound and clf.gap_ == cert.gap
    assert clf.stop_reason_ == cert.stop_reason
    assert cert.is_optimal == (name != "stopped")
    assert 0.0 <= clf.lower_ <= clf.upper_
    back = Certificate.from_dict(json.loads(cert.to_json()))
    assert back == cert
    assert verify(clf, X, y, w, certificate=json.loads(cert.to_json())).ok


def _failed(report):
    return {c.name for c in report.checks if not c.passed}


@pytest.mark.parametrize("kw", [{}, dict(loss="log")], ids=["0-1", "log"])
def test_tampering_is_rejected(kw):
    X, y = _data(90, 3, 11)
    clf = _fit(X, y, **kw)
    cert = clf.certificate_
    data = cert.witness.data
    # another label, another data set
    y2 = y.copy()
    y2[0] = (y2[0] + 1) % 3
    assert not verify(clf, X, y2).ok
    X2, y3 = _data(90, 3, 12)
    assert not verify(clf, X2, y3).ok
    # a dual point moved: the weight of one row to another row
    alpha = np.array(data["alpha"])
    alpha[np.argmax(alpha)] *= 0.5
    assert "witness proves the bound" in _failed(verify(clf, X, y, certificate=_tampered(
        cert, alpha=alpha.tolist())))
    # a claimed bound above what the dual point proves
    assert "witness proves the bound" in _failed(verify(clf, X, y, certificate=_tampered(
        cert, _fields={"bound": cert.bound + 1e-3})))
    # a claimed bound below what the dual point proves is conservative: it verifies
    assert verify(clf, X, y, certificate=_tampered(
        cert, _fields={"bound": cert.bound - 1e-6 * abs(cert.bound)})).ok
    # a claimed upper_ below R(mu)
    assert "value" in _failed(verify(clf, X, y, certificate=_tampered(
        cert, _fields={"value": cert.value - 1e-6})))
    # a perturbed mu: in the witness only, or in the model too
    mu = np.array(data["mu"])
    mu[np.argmax(np.abs(mu))] *= 1.01
    assert "primal point" in _failed(verify(clf, X, y, certificate=_tampered(
        cert, mu=mu.tolist())))
    clf.mu_ = mu
    assert "value" in _failed(verify(clf, X, y, certificate=_tampered(
        cert, mu=mu.tolist())))


def test_rows_of_samples_outside_the_program_are_rejected():
    """A row of a weight-0 sample (not in the MRC program), a bad label set or a label
    distribution with a negative entry is no row."""
    X, y = _data(60, 3, 13)
    w = np.ones(60)
    w[:5] = 0.0
    clf = _fit(X, y, w)
    cert = clf.certificate_
    sample = list(cert.witness.data["sample"])
    assert min(sample) >= 5
    sample[0] = 0
    assert "dual rows" in _failed(verify(clf, X, y, w, certificate=_tampered(
        cert, sample=sample)))
    labels = [list(c) for c in cert.witness.data["labels"]]
    labels[0] = labels[0] + labels[0]  # a repeated label
    assert "dual rows" in _failed(verify(clf, X, y, w, certificate=_tampered(
        cert, labels=labels)))
    log = _fit(X, y, w, loss="log")
    q = [list(row) for row in log.certificate_.witness.data["q"]]
    q[0][0] = -0.5  # not a distribution
    assert "dual rows" in _failed(verify(log, X, y, w, certificate=_tampered(
        log.certificate_, q=q)))


def test_gap_is_relative():
    X, y = _data(90, 3, 8)
    clf = _fit(X, y, max_iter=2)
    assert not clf.certificate_.is_optimal and not clf.converged_
    assert clf.gap_ == pytest.approx((clf.upper_ - clf.lower_) / clf.upper_)


def test_a_final_dual_lp_cut_short_leaves_the_generations_bound(monkeypatch):
    """The final dual LP gets a share of the generation's time (on 400 Fourier features it
    took 192 s after 8 s); cut short, its point may prove little: the generation's own
    bound stands in, without a witness, and verify says the bound was not re-checked."""
    import exactclf.mrc._estimator as estimator

    real = estimator.dual_point

    def cut(*args, **kwargs):
        return real(*args, **kwargs)._replace(bound=0.0)

    monkeypatch.setattr(estimator, "dual_point", cut)
    X, y = make_classification(300, n_features=5, random_state=0)
    clf = _fit(X, y)
    cert = clf.certificate_
    assert cert.witness.kind == "none" and 0.0 < clf.lower_ <= clf.upper_
    report = verify(clf, X, y)
    assert report.ok and report.not_checked, str(report)


def _pinned_data(seed, n, K, p=6):
    """Pixel-like data: small nonnegative integers, a column of zeros, and per class two
    features that are 0 on all its samples but not on the others' (a pixel never inked in
    one digit's images). Those features of that class are constant over the training pairs
    (``lambda_j = 0``), and a dual point proves a bound only with ``z_j = 0`` exactly."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    X = rng.integers(0, 4, (n, p)).astype(float)
    X[:, 0] = 0.0
    for k in range(K):
        X[y == k, 1 + k % (p - 1)] = 0.0
        X[y == k, 1 + (3 * k + 1) % (p - 1)] = 0.0
    return X, y


@pytest.mark.parametrize("K, loss", [(8, "0-1"), (3, "0-1"), (3, "log")])
def test_features_constant_on_a_class_leave_an_optimum_proven(K, loss):
    """An interior point method leaves rounding-level dual weights on the labels that a
    feature constant over the training pairs rules out (label k where pixel l is inked,
    never inked in class k), and with lambda_j = 0 no mixing repairs them: such a dual point
    proves 0 (the digits). The dual points leave those labels out (every feasible dual point
    weighs none of them: the pixels are nonnegative), so the generation's bounds and the
    certificate's prove R* (8 classes: the whole-sample generation's interior point method;
    log loss: Clarabel's; 3 classes: the simplex method's duals)."""
    X, y = _pinned_data(0, 20 * K, K)
    assert pinned_features(np.c_[np.ones(len(X)), X], y, K).sum() >= 2 * K  # 0 column, + 1 a class
    clf = MRCCCG(loss=loss).fit(X, y)
    cert = clf.certificate_
    assert clf.converged_ and cert.is_optimal and clf.stop_reason_ is None
    assert relative_gap(cert.value, cert.bound) <= MRC_RTOL and cert.rtol == MRC_RTOL
    assert relative_gap(clf.upper_, max(clf.lower_history_)) <= MRC_RTOL
    assert verify(clf, X, y).ok


def test_a_seed_with_rounding_on_forbidden_labels_still_proves_its_bound():
    """A dual point with a weight of 1e-9 on a label that a constant feature rules out proves
    0 as it stands; with no time for the dual LP, the certificate's point is the seed
    without that row."""
    X, y = _pinned_data(1, 160, 8)
    Psi = np.c_[np.ones(len(X)), X] / np.r_[1.0, np.maximum(X.max(axis=0), 1.0)]
    tau, lam = mrc_statistics(Psi, y, 8, 0.3)
    res = mrc_ccg(Psi, y, 8, tau, lam)
    assert relative_gap(res.upper, res.lower) <= MRC_RTOL
    forbidden = forbidden_labels(Psi, y, 8, tau)
    assert not forbidden[np.arange(len(y)), y].any()  # a sample's own label never is
    i, k = np.argwhere(forbidden)[0]
    sample, Q, values, alpha, class_alpha = res.dual_rows
    row = np.zeros(8)
    row[[y[i], k]] = 0.5
    seed = (np.r_[sample, i], np.vstack([Q, row]), np.r_[values, 0.5],
            np.r_[alpha, 1e-9], class_alpha)
    V = Psi @ res.mu.reshape(8, -1).T
    point = dual_point(Psi, y, 8, tau, lam, V, tol=1e-5, zero_tol=1e-12, seed=seed,
                       upper=res.upper, deadline=0.0)
    assert relative_gap(res.upper, point.bound) <= MRC_RTOL


def test_mixed_signs_are_not_forbidden():
    """A feature 0 on class 0 that takes both signs elsewhere: a dual point may weigh its
    labels where they cancel, so none is left out."""
    Psi = np.c_[np.ones(4), [0.0, 0.0, 1.0, -1.0]]
    y = np.array([0, 0, 1, 1])
    assert pinned_features(Psi, y, 2).tolist() == [False, True, False, False]
    assert forbidden_labels(Psi, y, 2, np.array([0.5, 0.0, 0.5, 0.0])) is None
    assert forbidden_labels(abs(Psi), y, 2, np.array([0.5, 0.0, 0.5, 0.5])).tolist() == [
        [False, False], [False, False], [True, False], [True, False]]


@pytest.mark.parametrize("eps1", [0.1, 1e-2, 1e-4])
@pytest.mark.parametrize("data", ["K=2", "K=5", "wine"])
def test_optimal_means_a_gap_within_mrc_rtol_whatever_eps1(data, eps1):
    """is_optimal claims the relative gap within MRC_RTOL whatever eps1 (a solver parameter
    changes how close the fit gets, not what optimal means); a converged fit with a larger
    gap says so, with a stop reason and a warning that names eps1."""
    from sklearn.datasets import load_wine

    X, y = {"K=2": _data(80, 2), "K=5": _data(100, 5, 2),
            "wine": load_wine(return_X_y=True)}[data]
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        clf = MRCCCG(eps1=eps1).fit(X, y)
    cert = clf.certificate_
    gap = relative_gap(cert.value, cert.bound)
    assert clf.converged_ and cert.rtol == MRC_RTOL
    assert cert.is_optimal == (gap <= MRC_RTOL)
    if cert.is_optimal:
        assert clf.stop_reason_ is None and clf.gap_ == 0.0
    else:
        assert clf.stop_reason_ == StopReason.OPEN_GAP and clf.gap_ == gap
        assert any("MRC_RTOL" in str(w.message) and "eps1" in str(w.message)
                   for w in record)
    if eps1 == 0.1:  # far from R* on all three
        assert gap > MRC_RTOL and not cert.is_optimal
    assert verify(clf, X, y).ok
