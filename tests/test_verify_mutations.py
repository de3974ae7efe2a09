"""``exactclf.verify`` against forged certificates: genuine certificates of every estimator
and witness kind, mutated field by field, witness by witness and in their data.

Each mutation knows whether it leaves every claim true (then ``verify`` must accept it, or,
for a bound that rests on no compact witness, accept it and say the bound is not checked)
or makes one false (then ``verify`` must reject it). ``verify`` must never raise. The
genuine certificates include weights spanning 1e-12..1e12 and features at scales 1e-300
and 1e300.
"""

from __future__ import annotations

import copy
import math
import warnings
from collections import Counter

import numpy as np
import pytest
from _helpers import pair_cover_fit, random_instance, weighted_samples
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.class_weight import compute_sample_weight

from exactclf import (
    MRCCCG,
    DeepICEMaxoutClassifier,
    ICEClassifier,
    NGDClassifier,
    ThresholdNetLasso,
    verify,
)
from exactclf._certificate import Certificate, Witness, data_fingerprint
from exactclf.maxout._witness import cover_witness

ACCEPT, REJECT, UNCHECKED = "accept", "reject", "accept, bound not checked"
KINDS = ("none", "conflicts", "iis_cover", "maxout_cover", "mrc_dual", "lasso_dual")
#: the witness kinds that can prove a bound of each estimator
ADMISSIBLE = {
    "ICEClassifier": {"none", "conflicts", "iis_cover"},
    "DeepICEMaxoutClassifier": {"none", "conflicts", "maxout_cover"},
    "MRCCCG": {"none", "mrc_dual"},
    "ThresholdNetLasso": {"none", "lasso_dual"},
    "NGDClassifier": {"none"},
}


def _fit(model, X, y, w=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, y, sample_weight=w)


def _conflicts(X, y, w) -> float:
    """The conflicting duplicates' weight, by a loop over the distinct rows (an oracle
    independent of the verifier's)."""
    total = 0.0
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    X = np.asarray(X, dtype=float) + 0.0
    for row in {tuple(r) for r in X.tolist()}:
        at = np.all(X == row, axis=1)
        per = [w[at & (y == c)].sum() for c in np.unique(y)]
        total += sum(per) - max(per)
    return total


def _ice_cases():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(24, 2))
    y = (X[:, 0] + 0.7 * rng.normal(size=24) > 0).astype(int)
    yield "ICE enumeration", ICEClassifier(method="exact", device="cpu"), X, y, None
    yield ("ICE enumeration, features x 1e300", ICEClassifier(method="exact", device="cpu"),
           X * 1e300, y, None)
    Xc = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]] * 3)
    yc = np.array([0, 1, 1, 0, 1] * 3)
    yield "ICE conflicts", ICEClassifier(method="milp"), Xc, yc, None
    for name, seed, scale, spread in (("ICE IIS cover", 3, 1.0, 0),
                                      ("ICE IIS cover, weights 1e-12..1e12", 5, 1.0, 12),
                                      ("ICE IIS cover, features x 1e-300", 3, 1e-300, 0)):
        r = np.random.default_rng(seed)
        Z, wpos, wneg = random_instance(r, "gaussian", 22, 5)
        Xs, ys, ws = weighted_samples(Z, wpos, wneg)
        if spread:
            ws = ws * 10.0 ** r.uniform(-spread, spread, len(ws))
        yield name, ICEClassifier(method="iis_cover", device="cpu"), Xs * scale, ys, ws
    yield ("ICE IIS cover, class_weight balanced",
           ICEClassifier(method="iis_cover", device="cpu", class_weight="balanced"),
           Xs, ys, ws)
    X4 = rng.normal(size=(30, 4))
    y4 = (X4[:, 0] - X4[:, 2] + 0.6 * rng.normal(size=30) > 0).astype(int)
    yield "ICE max_features=1", ICEClassifier(max_features=1, device="cpu"), X4, y4, None
    yield ("ICE max_features=2, weights", ICEClassifier(max_features=2, device="cpu"), X4,
           y4, rng.integers(1, 4, 30).astype(float))


def _deepice_cover_case():
    """A genuine obstruction-cover witness: the covers of a fit's own searches, written by
    the estimator's witness code (a fit's clock decides whether it returns one)."""
    clf, X, y, data, results, _ = pair_cover_fit()
    bound = min(r.lower for r in results.values())
    evidence = cover_witness(data, clf.classes_, results, 2, bound)
    c = clf.certificate_
    clf.certificate_ = Certificate(
        c.estimator, c.model_class, c.objective, c.value, bound, "pair obstruction cover",
        is_optimal=c.value <= bound, stop_reason=c.stop_reason, fit_time=c.fit_time,
        fingerprint=c.fingerprint, n_samples=c.n_samples,
        witness=Witness("maxout_cover", "the covers of the fit's searches", evidence))
    return "DeepICE obstruction cover", clf, X, y, None


def _cases():
    yield from _ice_cases()
    rng = np.random.default_rng(1)
    X = rng.normal(size=(14, 2))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    y[:3] = 1 - y[:3]  # noise: no network of two half-spaces is perfect
    yield ("DeepICE enumeration, count weights",
           DeepICEMaxoutClassifier(n_hyperplanes=2, method="exact", device="cpu"), X, y,
           rng.integers(1, 4, 14))
    X3 = rng.normal(size=(40, 3))
    y3 = np.digitize(X3[:, 0] + 0.5 * rng.normal(size=40), [-0.4, 0.4])
    yield "MRC 0-1, three classes", MRCCCG(), X3, y3, None
    yield "MRC, features x 1e155", MRCCCG(), X3 * 1e155, y3, None
    yield "MRC, features x 1e-160", MRCCCG(), X3 * 1e-160, y3, None
    yield ("MRC, weights 1e-12..1e12", MRCCCG(), X3, y3,
           10.0 ** rng.uniform(-12, 12, 40))
    Xl = rng.standard_normal((12, 2))
    yl = (Xl[:, 0] * Xl[:, 1] > 0).astype(int)
    yield ("Lasso dual, exact arrangements",
           ThresholdNetLasso(arrangements="exact", beta=0.05), Xl, yl, None)
    yield ("NGD", NGDClassifier(hidden_layer_sizes=(4,), max_iter=5, random_state=0),
           X3, y3, None)


def _genuine():
    out = []
    for name, model, X, y, w in _cases():
        out.append((name, _fit(model, X, y, w), X, y, w))
    out.append(_deepice_cover_case())
    return out


@pytest.fixture(scope="module")
def genuine():
    cases = _genuine()
    for name, clf, X, y, w in cases:  # every one verifies as fitted
        report = verify(clf, X, y, w)
        assert report.ok, f"{name}:\n{report}"
    return cases


def _base_name(clf) -> str:
    return next(c.__name__ for c in type(clf).__mro__ if c.__name__ in ADMISSIBLE)


def _with(d, **fields):
    d = copy.deepcopy(d)
    d.update(fields)
    return d


def _refingerprint(d, X, y, w):
    return _with(d, fingerprint=data_fingerprint(X, y, w))


def _mutations(clf, X, y, w):
    """(name, certificate dict, X, y, w, expected) for one genuine fit."""
    cert = clf.certificate_
    d = cert.to_dict()
    v, b = cert.value, cert.bound
    kind = cert.witness.kind
    proves = _base_name(clf) != "NGDClassifier"
    # a bound that a witness must prove is rejected when forged; one without is not
    # checkable: then the report must say so
    forged_bound = REJECT if kind != "none" else UNCHECKED
    ww = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    # what the fit counted: the sample weights times the class weights
    cw = getattr(clf, "class_weight", None)
    counted = ww if cw is None else ww * compute_sample_weight(cw, y)

    yield "value lowered", _with(d, value=v - max(abs(v), 1.0) * 0.25), X, y, w, REJECT
    yield "value raised", _with(d, value=v + max(abs(v), 1.0) * 0.25), X, y, w, REJECT
    yield "bound above the value", _with(d, bound=v + max(abs(v), 1.0)), X, y, w, REJECT
    if proves and v > b + 1e-4 * max(abs(v), 1.0):  # beyond every class's tolerance
        yield ("bound raised to the value, optimal", _with(d, bound=v, is_optimal=True),
               X, y, w, forged_bound)
    if not cert.is_optimal:
        yield "claimed optimal", _with(d, is_optimal=True), X, y, w, REJECT
        yield ("claimed optimal within rtol 1", _with(d, is_optimal=True, rtol=1.0), X, y, w,
               REJECT)
    else:
        yield "optimality not claimed", _with(d, is_optimal=False), X, y, w, ACCEPT
        if proves and math.isfinite(b):
            lower = b - 0.5 * max(abs(v), 1.0)
            yield ("bound lowered, still optimal", _with(d, bound=lower), X, y, w, REJECT)
            yield ("bound lowered, not optimal", _with(d, bound=lower, is_optimal=False),
                   X, y, w, ACCEPT)
    yield "rtol changed", _with(d, rtol=0.5), X, y, w, ACCEPT
    yield "gap changed", _with(d, gap=0.0), X, y, w, ACCEPT
    yield "fit time changed", _with(d, fit_time=1e9), X, y, w, ACCEPT
    yield "objective renamed", _with(d, objective="something else"), X, y, w, REJECT
    yield "estimator renamed", _with(d, estimator="ICEClassifierX"), X, y, w, REJECT
    yield "format changed", _with(d, format="exactclf-certificate/0"), X, y, w, REJECT
    yield "format dropped", {k: x for k, x in d.items() if k != "format"}, X, y, w, REJECT
    yield "value not a number", _with(d, value="abc"), X, y, w, REJECT
    yield "value NaN", _with(d, value="nan"), X, y, w, REJECT
    yield "bound a list", _with(d, bound=[b]), X, y, w, REJECT
    yield "is_optimal a string", _with(d, is_optimal="yes"), X, y, w, REJECT
    yield "fingerprint a number", _with(d, fingerprint=123), X, y, w, REJECT
    yield "stop reason unknown", _with(d, stop_reason="bogus"), X, y, w, REJECT
    yield "extra field", _with(d, extra=1), X, y, w, REJECT
    yield "witness null", _with(d, witness=None), X, y, w, REJECT
    yield "witness data a list", _with(d, witness={**d["witness"], "data": []}), X, y, w, REJECT
    for other in (*KINDS, "bogus"):
        if other == kind:
            continue
        forged = _with(d, witness={"kind": other, "note": "", "data": d["witness"]["data"]})
        if other not in ADMISSIBLE[_base_name(clf)]:
            expected = REJECT
        elif other == "none":
            # a 0-1 optimality claim is then held to an exact proof's tolerance
            tight = _base_name(clf) in ("ICEClassifier", "DeepICEMaxoutClassifier")
            expected = (REJECT if tight and cert.is_optimal and v - b > 1e-9 * abs(v) else
                        UNCHECKED if proves and b > 0 else ACCEPT)
        elif other == "conflicts":
            expected = ACCEPT if b <= _conflicts(X, y, counted) * (1 + 1e-12) else REJECT
        else:
            expected = REJECT  # another kind's evidence does not fit its checker
        yield f"witness relabelled {other}", forged, X, y, w, expected
    for key in d["witness"]["data"]:
        data = {k: x for k, x in d["witness"]["data"].items() if k != key}
        # the patterns of a dictionary of every pattern are enumerated by the checker
        needed = not (key == "patterns" and d["witness"]["data"].get("dictionary") == "all")
        yield (f"witness without {key!r}", _with(d, witness={**d["witness"], "data": data}),
               X, y, w, REJECT if needed else ACCEPT)
        data = {**d["witness"]["data"], key: "x"}
        yield (f"witness {key!r} not a number", _with(d, witness={**d["witness"],
                                                                  "data": data}),
               X, y, w, REJECT)
    yield from _witness_mutations(d, X, y, w, cert, counted)

    # the data: another data set than the proof's, or one with its own fingerprint
    y2 = y.copy()
    y2[0] = np.unique(y)[0] if y[0] != np.unique(y)[0] else np.unique(y)[1]
    yield "a label flipped", d, X, y2, w, REJECT
    yield "weights doubled", d, X, y, 2 * ww, REJECT
    X2 = np.array(X, dtype=float, copy=True)
    X2[0, 0] = X2[0, 0] * 3.0 + 1.0
    yield "a feature changed", d, X2, y, w, REJECT
    if _base_name(clf) in ("ICEClassifier", "DeepICEMaxoutClassifier"):
        # the errors move by the flipped sample's weight: the value is false
        yield ("a label flipped, fingerprint forged", _refingerprint(d, X, y2, w), X, y2, w,
               REJECT)
    if v > 0:  # every objective moves (NGD's penalty is not per unit of weight)
        yield ("weights doubled, fingerprint forged", _refingerprint(d, X, y, 2 * ww), X, y,
               2 * ww, REJECT)


def _witness_mutations(d, X, y, w, cert, counted):
    kind, data = cert.witness.kind, cert.witness.data

    def forged(**fields):
        return _with(d, witness={**d["witness"], "data": {**copy.deepcopy(data), **fields}})

    if kind == "iis_cover" and data["iis"]:
        iis = copy.deepcopy(data["iis"])
        iis[0][0][2] += 1
        yield "an IIS multiplier changed", forged(iis=iis), X, y, w, REJECT
        yield ("no IIS", forged(iis=[]), X, y, w,
               ACCEPT if cert.bound <= _conflicts(X, y, counted) else REJECT)
    elif kind == "maxout_cover":
        yield ("another number of half-spaces", forged(n_hyperplanes=3), X, y, w, REJECT)
        yield ("one polarity", forged(polarities=data["polarities"][:1]), X, y, w, REJECT)
    elif kind == "mrc_dual":
        yield ("dual weights scaled", forged(alpha=[2 * a for a in data["alpha"]],
                                             class_alpha=[2 * a for a in data["class_alpha"]]),
               X, y, w, ACCEPT)
        yield ("a dual weight negative", forged(alpha=[-1.0] + data["alpha"][1:]), X, y, w,
               REJECT)
        yield "primal point changed", forged(mu=[m + 1.0 for m in data["mu"]]), X, y, w, REJECT
    elif kind == "lasso_dual":
        yield ("dual point halved", forged(theta=(0.5 * np.asarray(data["theta"])).tolist()),
               X, y, w, REJECT)
        yield "another beta", forged(beta=2 * data["beta"]), X, y, w, REJECT


def _outcome(report) -> str:
    if not report.ok:
        return REJECT
    return UNCHECKED if report.not_checked else ACCEPT


def test_verify_rejects_every_forgery_and_accepts_every_truth(genuine):
    counts, wrong = Counter(), []
    for name, clf, X, y, w in genuine:
        for what, d, Xm, ym, wm, expected in _mutations(clf, X, y, w):
            counts["tried"] += 1
            try:
                report = verify(clf, Xm, ym, wm, certificate=d)
            except Exception as err:  # noqa: BLE001 - the test counts every escape
                counts["crashes"] += 1
                wrong.append(f"{name} / {what}: raised {type(err).__name__}: {err}")
                continue
            got = _outcome(report)
            counts["rejected" if got == REJECT else "accepted"] += 1
            # a true claim resting on a witness may be accepted with other bounds noted
            # as unchecked (a Deep-ICE block's enumeration), and vice versa
            if (got == REJECT) != (expected == REJECT) or (
                    expected == UNCHECKED and got != UNCHECKED):
                wrong.append(f"{name} / {what}: expected {expected}, got {got}\n{report}")
    print(f"\nverify mutations: {dict(counts)}")
    assert not wrong, "\n\n".join(wrong[:10]) + f"\n\n({len(wrong)} wrong)"
    assert counts["crashes"] == 0 and counts["tried"] > 300


def test_verify_never_raises_on_garbage(genuine):
    name, clf, X, y, w = genuine[0]
    for certificate in ({}, {"format": "exactclf-certificate/1"}, [1, 2],
                        "not a certificate", 3.0):
        assert not verify(clf, X, y, certificate=certificate).ok
    for Xb, yb in ((X[:, :1], y), (X, y[:-1]), (np.full_like(X, np.nan), y),
                   ("abc", y), (X[None], y)):
        assert not verify(clf, Xb, yb, w).ok
    assert not verify(clf, X, y, -np.ones(len(y))).ok
    assert not verify(object(), X, y).ok
