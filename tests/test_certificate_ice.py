"""ICEClassifier's certificate: its witnesses re-check, round-trip as JSON, and tampering with
the data, the IISs or the claim is caught."""

import copy
import warnings
from dataclasses import replace

import numpy as np
import pytest
from _helpers import assert_verifies, brute_force_min01, random_instance, weighted_samples
from sklearn.exceptions import ConvergenceWarning

from exactclf import ICEClassifier
from exactclf._geometry import THIN_POINTS, affine_frame
from exactclf._verification import verify
from exactclf._verification._iis import cover_minimum
from exactclf._zero_one._iis import IISCoverSolver, farkas_multipliers, iis_witness
from exactclf.datasets import load_caesarian, load_cryotherapy


def _with_witness(cert, iis):
    return replace(cert, witness=replace(cert.witness, data={"iis": iis}))


def _failed(report):
    return [c.name for c in report.checks if not c.passed]


@pytest.fixture(scope="module", params=[(load_cryotherapy, "highs"), (load_caesarian, "highs"),
                                        (load_caesarian, "gurobi")],
                ids=["cryotherapy-highs", "caesarian-highs", "caesarian-gurobi"])
def fitted(request):
    """A proof by the IIS cover, its master on either solver (the witness is the same kind:
    the verifier re-solves the cover itself)."""
    load, mip_solver = request.param
    X, y = load(return_X_y=True)
    return ICEClassifier(method="iis_cover", device="cpu", mip_solver=mip_solver).fit(X, y), X, y


def test_bundled_iis_cover_certificates_verify(fitted):
    clf, X, y = fitted
    cert = clf.certificate_
    assert cert.witness.kind == "iis_cover" and cert.is_optimal
    assert "left out" not in cert.witness.note
    assert cert.model_class == "affine classifiers (sign(w.x + b))"
    report = assert_verifies(clf, X, y)
    assert not report.not_checked
    assert "witness proves the bound" in [c.name for c in report.checks]
    # the views
    assert clf.training_errors_ == cert.value and clf.lower_bound_ == cert.bound
    assert clf.is_optimal_ and clf.gap_ == 0 and clf.stop_reason_ is None
    assert clf.lower_bound_method_ == "IIS cover" and clf.fit_time_ == cert.fit_time


def test_changed_label_and_other_data_are_rejected(fitted):
    clf, X, y = fitted
    y2 = y.copy()
    y2[0] = 1 - y2[0]
    assert _failed(verify(clf, X, y2)) == ["data fingerprint"]
    Xo, yo = (load_caesarian if X.shape[1] == 6 else load_cryotherapy)(return_X_y=True)
    assert "data fingerprint" in _failed(verify(clf, Xo, yo))
    assert not verify(clf, X, y, np.full(len(y), 2.0)).ok


def test_perturbed_multiplier_fails_the_exact_check(fitted):
    clf, X, y = fitted
    cert = clf.certificate_
    iis = copy.deepcopy(cert.witness.data["iis"])
    iis[0][0][2] += 1
    report = verify(clf, X, y, certificate=_with_witness(cert, iis))
    assert "IISs certified by exact Farkas multipliers" in _failed(report)
    for member, why in [([iis[1][0][0], -iis[1][0][1], iis[1][0][2]], "label"),
                        ([iis[1][0][0], iis[1][0][1], -1], "negative"),
                        ([len(y), 1, 1], "not a sample"), ([0, 1, 1.5], "integers")]:
        bad = copy.deepcopy(cert.witness.data["iis"])
        bad[1][0] = member
        report = verify(clf, X, y, certificate=_with_witness(cert, bad))
        assert not report.ok and why in str(report)


def test_claim_beyond_what_the_witness_proves_is_rejected(fitted):
    """A worse model whose certificate claims it optimal: every check but the witness's
    passes."""
    clf, X, y = fitted
    worse = copy.deepcopy(clf)
    worse.intercept_ = worse.intercept_ + 1e3 * np.abs(worse.coef_).sum()  # all positive
    value = float(np.sum(worse.predict(X) != y))
    assert value > clf.training_errors_
    worse.certificate_ = replace(clf.certificate_, value=value, bound=value)
    assert _failed(verify(worse, X, y)) == ["witness proves the bound"]


def test_removed_iis_leaves_the_bound_unproven():
    X = np.arange(6.0).reshape(-1, 1)
    y = np.array([1, 0, 1, 0, 1, 0])
    clf = ICEClassifier(method="iis_cover").fit(X, y)
    cert = clf.certificate_
    assert cert.value == cert.bound == 2 and cert.witness.kind == "iis_cover"
    iis = cert.witness.data["iis"]
    outcomes = [_failed(verify(clf, X, y, certificate=_with_witness(cert, iis[:k] + iis[k + 1:])))
                for k in range(len(iis))]
    assert ["witness proves the bound"] in outcomes
    assert all(o in ([], ["witness proves the bound"]) for o in outcomes)
    assert _failed(verify(clf, X, y, certificate=_with_witness(cert, []))) == [
        "witness proves the bound"]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", ["gaussian", "grid", "flat"])
def test_random_iis_cover_certificates_verify(kind, seed):
    """d = 5-6, with conflicting duplicates, and real-valued weights on odd seeds."""
    rng = np.random.default_rng(seed)
    d, n = int(rng.integers(5, 7)), int(rng.integers(15, 30))
    Z, wpos, wneg = random_instance(rng, kind, n, d)
    if seed % 2:
        wpos, wneg = wpos * rng.uniform(0.5, 2.0, len(Z)), wneg * np.pi
    X, y, w = weighted_samples(Z, wpos, wneg)
    clf = ICEClassifier(method="iis_cover", device="cpu").fit(X, y, sample_weight=w)
    assert clf.certificate_.witness.kind == "iis_cover" and clf.is_optimal_
    assert_verifies(clf, X, y, w)
    if seed % 2:  # another weight of one sample: another data set
        assert not verify(clf, X, y, w * np.r_[1.5, np.ones(len(w) - 1)]).ok


def test_signed_zeros_and_zero_weights():
    """-0.0 and 0.0 are one point to the witness and to its checker; zero-weight samples
    are no part of the proof."""
    rng = np.random.default_rng(4)
    X = rng.integers(-1, 2, size=(40, 5)).astype(float)
    X[::3] *= -1.0  # some -0.0
    y = (X @ rng.normal(size=5) + rng.normal(size=40) > 0).astype(int)
    w = rng.uniform(0.5, 2.0, 40)
    w[::7] = 0.0
    clf = ICEClassifier(method="iis_cover", device="cpu").fit(X, y, sample_weight=w)
    assert clf.certificate_.witness.kind == "iis_cover"
    assert_verifies(clf, X, y, w)


def test_enumeration_proof_is_not_checked_but_verifies():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = (X[:, 0] + rng.normal(size=30) > 0).astype(int)
    clf = ICEClassifier(method="exact", device="cpu").fit(X, y)
    cert = clf.certificate_
    assert cert.bound_method == "exhaustive search" and cert.witness.kind == "none"
    assert cert.rtol == 0 and "enumeration" in cert.witness.note
    report = assert_verifies(clf, X, y)
    assert report.not_checked and "enumeration" in report.not_checked[0]
    y[0] = 1 - y[0]
    assert not verify(clf, X, y).ok


def test_conflicting_duplicates_witness():
    X = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]] * 3)
    y = np.array([0, 1, 1, 0, 1] * 3)
    clf = ICEClassifier(method="milp").fit(X, y)
    cert = clf.certificate_
    # the MILP's model meets the conflicting duplicates: proven optimal by them alone
    assert cert.witness.kind == "conflicts" and cert.bound == 3 == cert.value
    assert_verifies(clf, X, y)
    assert "witness proves the bound" in _failed(
        verify(clf, X, y, certificate=replace(cert, bound=3.5)))


def test_stopped_fits_verify(monkeypatch):
    """The bound of a stopped IIS cover (its Benders master after one round) and the quick
    bound of a stopped enumeration."""
    X, y = load_caesarian(return_X_y=True)
    one_round = IISCoverSolver._round
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        b = ICEClassifier(method="exact", max_candidates=100, upper_bound="surrogate").fit(X, y)
        monkeypatch.setattr(IISCoverSolver, "_round",
                            lambda self, *args: one_round(self, *args) or "master failed")
        a = ICEClassifier(method="iis_cover").fit(X, y)
    cert = a.certificate_
    assert cert.bound_method == "IIS cover (Benders master)" and not cert.is_optimal
    assert cert.witness.kind == "iis_cover" and cert.stop_reason == "master failed"
    assert cert.bound > 4  # more than the conflicting duplicates
    assert not assert_verifies(a, X, y).not_checked
    assert b.certificate_.witness.kind == "none" and not b.is_optimal_
    assert assert_verifies(b, X, y).not_checked


def test_farkas_multipliers_and_left_out_iis():
    G = np.array([[0.0, 1.0], [-1.0, -1.0], [2.0, 1.0]])
    assert farkas_multipliers(G) == [1, 2, 1]
    assert farkas_multipliers(G * [[1.0], [-1.0], [1.0]]) is None
    # collinear only up to rounding: infeasible to a tolerance, not exactly
    P = np.array([[0.1, 0.7], [0.2, 0.5], [0.3, 0.3]])
    sign = np.array([1, -1, 1])
    assert iis_witness(P, sign > 0, P, sign, [np.arange(3)]) == ([], [0])
    # exactly collinear: multipliers in lowest terms
    P = np.array([[0.0, 0.0], [0.25, 0.25], [1.0, 1.0]])
    assert iis_witness(P, sign > 0, P, sign, [np.arange(3)]) == (
        [[[0, 1, 3], [1, -1, 4], [2, 1, 1]]], [])


@pytest.mark.parametrize("kind", ["gaussian", "grid", "collinear"])
@pytest.mark.parametrize("seed", range(4))
def test_multipliers_found_by_the_search_are_the_witness(seed, kind):
    """The cover verifies its IISs on the samples' coordinates first and keeps those
    multipliers; the witness built from them equals the one found again from scratch, in
    awkward units too (offset 1e6, scale 1e-3; for collinear points an exact power-of-two
    change, which keeps them collinear), and the IISs it leaves out are the same."""
    rng = np.random.default_rng(seed)
    Z, wpos, wneg = random_instance(rng, kind, 40, 3)
    U = Z * 2.0**-10 + 2.0**20 if kind == "collinear" else Z * 1e-3 + 1e6
    solver = IISCoverSolver(Z, wpos, wneg, samples=U)
    res = solver.run(30.0)
    assert res.complete
    cuts, known = solver.cut_sets(), solver.farkas()
    assert bool(known) == bool(cuts) and set(known) <= {tuple(t.tolist()) for t in cuts}
    X, y, _ = weighted_samples(U, wpos, wneg)
    positive = y == 1
    sign = np.where(wpos > wneg, 1, -1)
    assert (iis_witness(X, positive, U, sign, cuts, known=known)
            == iis_witness(X, positive, U, sign, cuts))


def test_cover_minimum():
    assert cover_minimum([], np.array([]))[0] == 0
    sets = [[0, 1], [1, 2], [0, 2]]
    assert cover_minimum(sets, np.array([1.0, 1.0, 1.0]))[0] == 2
    bound, _ = cover_minimum(sets, np.array([0.3, 0.3, 0.3]))
    assert 0.6 * (1 - 1e-8) <= bound <= 0.6


@pytest.mark.parametrize("scale", [1.0, 3.0, 1e9, 2.0**40, 2.0**60])
def test_cover_minimum_of_integer_costs_in_any_unit(scale):
    """Integer costs in large units (weights x1e9) are read in the unit of their common
    divisor: the bound and the answer to a target scale with them, exactly below 2**53
    (rounded up as integers), within the relative tolerance above it."""
    rng = np.random.default_rng(0)
    sets = [sorted(rng.choice(12, size=3, replace=False).tolist()) for _ in range(30)]
    cost = rng.integers(1, 4, size=12).astype(float)
    exact = cover_minimum(sets, cost)[0]
    for target in (None, exact, exact + 1):
        bound, _ = cover_minimum(sets, cost * scale, 2e-6,
                                 target=None if target is None else target * scale)
        if scale < 2.0**53:
            assert bound == exact * scale
        else:
            assert exact * scale * (1 - 2e-6) <= bound <= exact * scale


def test_views_are_absent_before_fit():
    clf = ICEClassifier()
    for name in ("certificate_", "is_optimal_", "lower_bound_", "gap_", "stop_reason_",
                 "training_errors_"):
        assert not hasattr(clf, name)


@pytest.mark.parametrize("seed", [0, 2, 5, 6])
def test_thin_points_keep_a_bound_witnessed_on_the_samples(seed):
    """Points float64 cannot resolve (a direction 1e-7 of the others' spread): the fit is
    not certified optimal by its geometry, but IISs with exact multipliers on the samples
    hold whatever the frame, so their bound stays (it fell to the conflicting duplicates',
    0 on steel plates). It verifies, and never exceeds the brute-force optimum."""
    rng = np.random.default_rng(seed)
    u, v = rng.normal(size=(2, 12))
    X = np.c_[u, u + 1e-7 * v, rng.normal(size=12)]
    y = (X[:, 2] + rng.normal(size=12) > 0).astype(int)
    wpos, wneg = (y == 1).astype(float), (y == 0).astype(float)
    best = brute_force_min01(X, wpos, wneg)
    assert best >= 1  # the seeds make errors unavoidable
    assert not affine_frame(X).certifiable
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = ICEClassifier(method="iis_cover", device="cpu").fit(X, y)
    cert = clf.certificate_
    assert cert.stop_reason == THIN_POINTS  # the searches' own proofs are not trusted
    assert cert.witness.kind == "iis_cover" and "left out" not in cert.witness.note
    assert clf.lower_bound_ >= 1
    report = assert_verifies(clf, X, y)
    assert not report.not_checked
    assert clf.lower_bound_ <= best + 1e-12
    assert clf.is_optimal_ == (clf.training_errors_ <= clf.lower_bound_)
    # the same certificate in other weight units and row order
    p = rng.permutation(len(X))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        other = ICEClassifier(method="iis_cover", device="cpu").fit(
            X[p], y[p], sample_weight=np.full(len(X), 1e-9))
    assert other.lower_bound_ == pytest.approx(1e-9 * clf.lower_bound_, rel=1e-9)
    assert other.is_optimal_ == clf.is_optimal_ and other.stop_reason_ == clf.stop_reason_
    assert_verifies(other, X[p], y[p], np.full(len(X), 1e-9))


@pytest.mark.parametrize("dropped", [3, 200])
def test_a_bound_claims_only_what_its_witnessed_iiss_prove(monkeypatch, dropped):
    """IISs proven in the points' frame but without exact multipliers on the samples (forced
    here: the first ones found are declared so) are left out of the witness; the certificate
    then claims the bound the others prove, which verifies, and optimality only if that
    bound still meets the value."""
    from exactclf.linear import _ice

    X, y = load_caesarian(return_X_y=True)
    full = ICEClassifier(method="iis_cover", device="cpu").fit(X, y)
    real = _ice.iis_witness

    def drop_first(*args, **kwargs):
        iis, left_out = real(*args, **kwargs)
        return iis[dropped:], sorted(set(left_out) | set(range(dropped)))

    monkeypatch.setattr(_ice, "iis_witness", drop_first)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = ICEClassifier(method="iis_cover", device="cpu").fit(X, y)
    cert = clf.certificate_
    assert f"{dropped} IISs of the cover are left out" in cert.witness.note
    assert len(cert.witness.data["iis"]) == len(full.certificate_.witness.data["iis"]) - dropped
    assert clf.lower_bound_ <= full.lower_bound_
    assert_verifies(clf, X, y)
    assert clf.is_optimal_ == (clf.training_errors_ <= clf.lower_bound_)
    if dropped == 200:  # of 329: the others prove 15 of the 18 errors, not optimality
        assert not clf.is_optimal_ and clf.stop_reason_ == "numerical"
        assert 0 < clf.lower_bound_ < full.lower_bound_
