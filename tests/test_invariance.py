"""Metamorphic tests: a change that leaves a training problem the same problem must leave its
certified answer the same, in the new units.

Each case builds a pair of problems from a seeded awkward instance (the generators of
``test_fuzz``: ties, duplicates, integer grids, collinear points, huge offsets, tiny and
huge scales, thin margins, a single point): a *base* problem and its *moved* copy, related
by one transformation. Fitting both must give

* exact 0-1 estimators (ICE, Deep-ICE): the same optimum (``training_errors_ / c`` for
  weights in units ``c``), the same ``is_optimal_``, the same ``lower_bound_ / c`` and
  ``gap_``, and models whose ``predict`` realizes the certified errors;
* ThresholdNetLasso (exact arrangement): the same optimum within the certified duality
  gaps, each fit's dual bound below the other's objective, the same ``is_optimal_``;
* MRCCCG: the same ``upper_`` and ``lower_`` (relative tolerance), only under the
  transformations that leave its LP unchanged (see ``MRC_PAIRS``);
* NGDClassifier(solver="adam"): scikit-learn's MLPClassifier iterates on the moved data.

Where the estimator reads bit-identical float64 data (float32 input against its float64
cast, a DataFrame against its array), the fitted models must be identical too.

The affine maps are exact in float64 (scales are powers of two, offsets multiples of the
feature's spread that survive the round trip, checked in rational arithmetic): the moved
data is then exactly the image of the base data, so any difference between the fits is the
library's, never rounding's.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from fractions import Fraction
from functools import partial

import numpy as np
import pandas as pd
import pytest
from _helpers import integer_collinear
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier
from test_fuzz import GENERATORS, _data, gaussian, integer_grid

from exactclf import (
    MRCCCG,
    DeepICEMaxoutClassifier,
    ICEClassifier,
    NGDClassifier,
    ThresholdNetLasso,
    ThresholdNetLassoRegressor,
)
from exactclf._geometry import THIN_POINTS
from exactclf._separator import UNREALIZABLE_MARGIN

#: test_fuzz's awkward instances, and a line that offsets keep exactly collinear
GENS = [*GENERATORS, integer_collinear]

#: relative tolerance of sums of the same weights taken in another order
RTOL = 1e-9
#: the IIS cover's bounds come from HiGHS with a relative slack of 1e-6 taken off, and it
#: claims optimality within twice that (ICEClassifier.lower_bound_'s docstring); plus rounding
IIS_RTOL = 2e-6 + RTOL


# -- pairs of problems -----------------------------------------------------------------------


@dataclass
class Pair:
    """A base problem ``(X, y, w)`` and its moved copy: fitting ``moved`` must certify what
    fitting ``base`` does, with the weights (so errors and bounds) ``units`` times larger.
    ``identical``: the estimator reads bit-identical float64 data, labels and weights, so
    the fitted model itself must be identical. ``target_units``: regression targets that
    many times larger."""

    base: tuple
    moved: tuple
    units: float = 1.0
    identical: bool = False
    target_units: float = 1.0


def _weights(X, y, w, rng, c):
    return Pair((X, y, w), (X, y, w * c), units=c)


def _permute(X, y, w, rng):
    p = rng.permutation(len(y))
    return Pair((X, y, w), (X[p], y[p], w[p]))


def _repeat_rows(X, y, w, rng):
    """Integer weights against as many copies of each row (weight 0: the row is left out),
    shuffled so that the copies are not adjacent."""
    k = w.astype(int)
    idx = rng.permutation(np.repeat(np.arange(len(y)), k))
    return Pair((X, y, w), (X[idx], y[idx], None))


def _rename_labels(X, y, w, rng):
    """Strings in reversed order: classes_[1] of the moved problem is the base's classes_[0]
    (the positive side of every model flips)."""
    names = np.array(["zulu", "alpha"])  # sorted: "alpha" (base 1) comes first
    return Pair((X, y, w), (X, names[y], w))


def _constant_column(X, y, w, rng):
    """A feature that is the same for every sample adds no model and removes none."""
    col = np.full((len(y), 1), -2.5e5)
    return Pair((X, y, w), (np.hstack([X[:, :1], col, X[:, 1:]]), y, w))


def _in_float32_range(X):
    """``X`` times a power of two (exact) that brings its largest magnitude near 1, so that
    float32 neither overflows (1e150) nor flushes everything to zero (1e-200)."""
    big = np.abs(X).max()
    return X if big == 0 else np.ldexp(X, -int(np.frexp(big)[1]))


def _float32(X, y, w, rng):
    X32 = _in_float32_range(X).astype(np.float32)
    return Pair((X32.astype(np.float64), y, w), (X32, y, w), identical=True)


def _pandas(X, y, w, rng):
    df = pd.DataFrame(X, columns=[f"feature {j}" for j in range(X.shape[1])])
    return Pair((X, y, w), (df, pd.Series(y, name="label"), w), identical=True)


def _exactly_shifted(A, B, o):
    """``B == A + o`` column-wise in rational arithmetic (no rounding anywhere)."""
    return all(Fraction(float(b)) - Fraction(float(a)) == Fraction(float(oj))
               for a_row, b_row in zip(A, B, strict=True)
               for a, b, oj in zip(a_row, b_row, o, strict=True))


def _affine(X, y, w, rng, *, exponents, offsets, signs=(-1.0, 1.0)):
    """``x_j -> s_j (x_j + o_j)`` per feature: ``s_j = sign * 2**e`` (drawn from ``signs`` and
    ``exponents``, e kept within float64's normal range), ``o_j`` a multiple (drawn from
    ``offsets``) of a power of two near the feature's spread. The base is the data rounded
    once by the offset (``(x + o) - o``), so that the moved data is its exact image."""
    d = X.shape[1]
    span = X.max(axis=0) - X.min(axis=0)
    unit = np.ldexp(1.0, np.frexp(np.where(span > 0, span, np.abs(X).max(axis=0)))[1])
    unit[unit == 0] = 1.0
    o = rng.choice(offsets, size=d) * unit
    base = (X + o) - o
    shifted = base + o
    assert _exactly_shifted(base, shifted, o), "the offset is not exact on this data"
    big = np.abs(shifted).max(axis=0)
    tiny = np.abs(np.where(shifted != 0, shifted, np.inf)).min(axis=0)
    tiny[~np.isfinite(tiny)] = 1.0
    big[big == 0] = 1.0
    # stay inside float64's range with room for the model's coefficients (1 / spread): no
    # overflow, no subnormals (the estimators refuse features whose 1 / spread overflows)
    e = np.clip(rng.choice(exponents, size=d), -900 - np.frexp(tiny)[1],
                900 - np.frexp(big)[1])
    s = np.ldexp(rng.choice(signs, size=d), e)
    moved = shifted * s
    assert np.array_equal(moved / s, shifted), "the scaling is not exact on this data"
    return Pair((base, y, w), (moved, y, w))


OFFSETS = [0.0, 1e3, -1e3, 1e9, -1e9]
AFFINE = {
    "offsets": partial(_affine, exponents=[0], offsets=OFFSETS),
    "tiny-units": partial(_affine, exponents=[-500, -300], offsets=OFFSETS),  # 3e-151, 5e-91
    "huge-units": partial(_affine, exponents=[300, 500], offsets=OFFSETS),  # 2e90, 3e150
    "mixed-units": partial(_affine, exponents=[-500, -20, 0, 40, 500], offsets=OFFSETS),
    # without offsets: the only affine maps that leave MRC's (linear) LP unchanged
    "signed-scales": partial(_affine, exponents=[-500, -20, 0, 40, 500], offsets=[0.0]),
    # positive scales: the only affine maps that leave MRC's threshold features unchanged
    "monotone": partial(_affine, exponents=[-500, 0, 500], offsets=OFFSETS, signs=[1.0]),
}
SHUFFLES = {
    "permute": _permute,
    "repeat-rows": _repeat_rows,
    "rename-labels": _rename_labels,
    "constant-column": _constant_column,
    "float32": _float32,
    "pandas": _pandas,
}
WEIGHT_UNITS = [1e-12, 1e-3, 1e12]
COUNT_UNITS = [3, 1000, 10**12]  # Deep-ICE counts errors in integers


def _transforms(names, table):
    return [pytest.param(table[k], id=k) for k in names]


# -- fitting ---------------------------------------------------------------------------------

_FITS: dict = {}


def _fit(est, X, y, w):
    """Fit a clone (memoized on the estimator's parameters and the data's bytes: base
    problems recur across transformations)."""
    key = None
    if isinstance(X, np.ndarray) and X.dtype == np.float64:
        key = (type(est).__name__, repr(sorted(est.get_params().items())), X.shape,
               X.tobytes(), np.asarray(y).tobytes(), None if w is None else w.tobytes())
        if key in _FITS:
            return _FITS[key]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = clone(est).fit(X, y, sample_weight=w)
    if key is not None:
        _FITS[key] = clf
    return clf


def _instance(gen, seed, n, d):
    X, y, w = _data(gen, seed, n, d)
    return X, y, w, np.random.default_rng([seed, 1])


def _realized(clf, X, y, w):
    wrong = np.asarray(clf.predict(X)) != np.asarray(y)
    return float(wrong.sum() if w is None else w[wrong].sum())


def _fit_pair(est, pair):
    return _fit(est, *pair.base), _fit(est, *pair.moved)


def _fitted_state(est):
    """The fitted attributes that are data (arrays, numbers, strings), not timings (the fit
    time, and the trace of where it went)."""
    plain = (np.ndarray, list, tuple, float, int, str, bool, np.generic, type(None))
    return {k: v for k, v in vars(est).items()
            if k.endswith("_") and not k.startswith("_") and isinstance(v, plain)
            and k not in ("fit_time_", "fit_trace_", "feature_names_in_")}


def _assert_same_model(b, m, pair):
    """Bit-identical float64 input: the fitted models must be identical. (Not their scores
    to the last bit: a DataFrame converts to a Fortran-ordered array, whose product with
    the coefficients rounds differently, by 1e-6 relative under an offset of 1e10.)"""
    if not pair.identical:
        return
    np.testing.assert_equal(_fitted_state(m), _fitted_state(b))
    Xb, Xm = pair.base[0], pair.moved[0]
    np.testing.assert_array_equal(m.predict(Xm), b.predict(Xb))
    if isinstance(Xm, pd.DataFrame):
        np.testing.assert_array_equal(m.feature_names_in_, Xm.columns)


# -- exact 0-1 estimators --------------------------------------------------------------------

#: the stop reasons by which a fit says that float64 cannot resolve its problem in the units
#: it was given (points thinner than 1e-5 of their spread; a margin that rounds away once
#: the features carry an offset of 1e9 spreads): its search then is a heuristic
RESOLUTION_LIMITS = (THIN_POINTS, UNREALIZABLE_MARGIN)


def _rtol(*fits):
    """A bound proven by the IIS cover holds to its solver's relative tolerance."""
    return IIS_RTOL if any(f.lower_bound_method_.startswith("IIS") for f in fits) else RTOL


def _check_exact(est, pair):
    b, m = _fit_pair(est, pair)
    c = pair.units
    rtol = _rtol(b, m)
    # the certificate is about the returned model: predict realizes the certified errors
    for clf, (X, y, w) in ((b, pair.base), (m, pair.moved)):
        assert np.isclose(_realized(clf, X, y, w), clf.training_errors_, rtol=RTOL, atol=0)
    # one problem, one optimum: a bound proven on either is at most the errors of the
    # other's model, and a model proven optimal is no worse than the other's
    assert b.lower_bound_ <= m.training_errors_ / c * (1 + RTOL)
    assert m.lower_bound_ / c <= b.training_errors_ * (1 + RTOL)
    if b.is_optimal_:
        assert b.training_errors_ <= m.training_errors_ / c * (1 + rtol)
    if m.is_optimal_:
        assert m.training_errors_ / c <= b.training_errors_ * (1 + rtol)
    # thinness is decided on the standardized points, which the transformations keep
    assert (b.stop_reason_ == THIN_POINTS) == (m.stop_reason_ == THIN_POINTS)
    if b.stop_reason_ in RESOLUTION_LIMITS or m.stop_reason_ in RESOLUTION_LIMITS:
        return  # honest heuristics on both sides: their models may differ
    assert m.is_optimal_ == b.is_optimal_
    if b.is_optimal_:
        assert np.isclose(m.training_errors_ / c, b.training_errors_, rtol=rtol, atol=0)
    assert np.isclose(m.lower_bound_ / c, b.lower_bound_, rtol=rtol, atol=0)
    assert np.isclose(m.gap_, b.gap_, rtol=rtol, atol=0)
    _assert_same_model(b, m, pair)


ICE_WEIGHTS = [pytest.param(partial(_weights, c=c), id=f"weights-x{c:g}")
               for c in WEIGHT_UNITS]
ICE_UNITS = ICE_WEIGHTS + _transforms(["offsets", "tiny-units", "huge-units", "mixed-units"],
                                      AFFINE)
ICE_TRANSFORMS = ICE_UNITS + _transforms(list(SHUFFLES), SHUFFLES)
#: offsets alone, and offsets with scales from 3e-151 to 3e150 and signs
ICE_UNITS_SHORT = ICE_WEIGHTS + _transforms(["offsets", "mixed-units"], AFFINE)


def _ice_cases():
    """(estimator, generator, seed, n, d, transform) on every kind of instance: every
    transformation for the enumeration in the plane; changes of units (where absolute
    tolerances hide) for the enumeration at D = 5; those and a new row order (the cuts come
    in another order) for the IIS cover at D = 5, whose absolute tolerances showed on some
    instances only, so its small weights get a second set; and a few for "auto" at D = 5 on 72 rows
    (about 52 distinct points: the enumeration is predicted to take more than a second, so
    the portfolio runs the IIS cover first). The full product would double the run time."""
    configs = [("auto-d2", ICEClassifier(device="cpu"), 0, 30, 2, ICE_TRANSFORMS),
               ("auto-d5", ICEClassifier(device="cpu"), 1, 20, 5, ICE_UNITS_SHORT),
               ("iis-d5", ICEClassifier(method="iis_cover", device="cpu"), 2, 20, 5,
                ICE_UNITS_SHORT + _transforms(["permute"], SHUFFLES)),
               ("iis-d5-n25", ICEClassifier(method="iis_cover", device="cpu"), 3, 25, 5,
                ICE_WEIGHTS[:2])]
    for name, est, seed, n, d, transforms in configs:
        for gen in GENS:
            for t in transforms:
                yield pytest.param(est, gen, seed, n, d, *t.values,
                                   id=f"{name}-{gen.__name__}-{t.id}")
    some = {t.id: t for t in ICE_TRANSFORMS}
    for gen in (gaussian, integer_grid):
        for t in ("weights-x1e-12", "weights-x1e+12", "mixed-units", "repeat-rows"):
            yield pytest.param(ICEClassifier(device="cpu"), gen, 1, 72, 5, *some[t].values,
                               id=f"auto-iis-first-d5-{gen.__name__}-{t}")


@pytest.mark.parametrize("est, gen, seed, n, d, transform", list(_ice_cases()))
def test_ice_certificate_is_invariant(est, gen, seed, n, d, transform):
    X, y, w, rng = _instance(gen, seed, n, d)
    _check_exact(est, transform(X, y, w, rng))


DEEPICE_TRANSFORMS = (
    [pytest.param(partial(_weights, c=c), id=f"weights-x{c}") for c in COUNT_UNITS]
    + _transforms(["offsets", "mixed-units"], AFFINE)
    + _transforms(list(SHUFFLES), SHUFFLES)
)


@pytest.mark.parametrize("transform", DEEPICE_TRANSFORMS)
@pytest.mark.parametrize("gen", GENS, ids=lambda g: g.__name__)
def test_deepice_certificate_is_invariant(gen, transform):
    X, y, w, rng = _instance(gen, 3, 14, 2)
    _check_exact(DeepICEMaxoutClassifier(n_hyperplanes=2, device="cpu"),
                 transform(X, y, w, rng))


# -- ThresholdNetLasso -----------------------------------------------------------------------


def _target_units(X, y, w, rng, c):
    return Pair((X, y, w), (X, y * c, w), target_units=c)


#: the regressor shares the classifier's code but for the targets and the loss's scale
LASSO_TRANSFORMS = {
    "classifier": ICE_TRANSFORMS,
    "regressor": ICE_UNITS_SHORT + [
        pytest.param(partial(_target_units, c=c), id=f"target-x{c:g}") for c in (1e-9, 1e9)
    ] + _transforms(["permute", "repeat-rows"], SHUFFLES),
}


def _lasso_cases():
    for kind, transforms in LASSO_TRANSFORMS.items():
        for gen in GENS:
            for t in transforms:
                yield pytest.param(kind, gen, *t.values, id=f"{kind}-{gen.__name__}-{t.id}")


@pytest.mark.parametrize("kind, gen, transform", list(_lasso_cases()))
def test_threshold_lasso_certificate_is_invariant(kind, gen, transform):
    X, y, w, rng = _instance(gen, 4, 12, 2)
    if kind == "regressor":
        y = y + rng.normal(scale=0.25, size=len(y))
    pair = transform(X, y, w, rng)
    # weights c times larger (targets t times larger) are the same Lasso, in units of c t^2,
    # only with beta c t times larger
    est = {"classifier": ThresholdNetLasso, "regressor": ThresholdNetLassoRegressor}[kind]
    beta, units = 1e-2, pair.units * pair.target_units**2
    b = _fit(est(beta=beta, arrangements="exact", tol=1e-8), *pair.base)
    m = _fit(est(beta=beta * pair.units * pair.target_units, arrangements="exact", tol=1e-8),
             *pair.moved)
    # is_optimal_: the arrangement is complete (thinness is decided on standardized points)
    # and the gap met tol
    assert m.is_optimal_ == b.is_optimal_
    if not b.is_optimal_:
        # points too thin for float64: the arrangement may miss patterns, and which ones
        # depends on rounding, so the dual bounds hold only for each fit's own dictionary
        return
    # one optimum over all networks: each dual bound is at most the other's objective (so
    # the objectives agree within the certified gaps)
    assert b.objective_ - b.dual_gap_ <= m.objective_ / units * (1 + RTOL)
    assert (m.objective_ - m.dual_gap_) / units <= b.objective_ * (1 + RTOL)
    _assert_same_model(b, m, pair)


# -- MRCCCG ----------------------------------------------------------------------------------

#: The transformations that leave MRC's LP unchanged. Not weights x c: lambda is s std/sqrt(n)
#: with n the total weight, so weights in other units are another uncertainty set (integer
#: weights as counts are "repeat-rows"; weights x 7 move R* from 0.296 to 0.280 on gaussian
#: data). Not offsets with phi="linear": x_j + o_j shears the feature into the intercept's
#: coordinate, and the box |E Phi - tau| <= lambda is not invariant under a shear, only
#: under per-coordinate scaling, signs included (offsets move R* from 0.296 to 0.499).
#: Threshold features are invariant under increasing maps (offsets, positive scales), not
#: under sign flips: 1 - indicator is again a shear with the intercept (0.155 -> 0.139).
MRC_PAIRS = (
    [pytest.param("linear", AFFINE["signed-scales"], id="linear-signed-scales")]
    + [pytest.param("threshold", AFFINE["monotone"], id="threshold-monotone")]
    + [pytest.param("linear", SHUFFLES[k], id=f"linear-{k}") for k in SHUFFLES]
)
#: generation stops when no row is violated by eps1; lower_ is within tol of the optimum
MRC_EPS = 1e-9


@pytest.mark.parametrize("phi, transform", MRC_PAIRS)
@pytest.mark.parametrize("gen", GENS, ids=lambda g: g.__name__)
def test_mrc_bounds_are_invariant(gen, phi, transform):
    X, y, w, rng = _instance(gen, 5, 30, 3)
    pair = transform(X, y, w, rng)
    est = MRCCCG(phi=phi, eps1=MRC_EPS, tol=MRC_EPS, device="cpu")
    b, m = _fit_pair(est, pair)
    assert np.isclose(m.upper_, b.upper_, rtol=1e-6, atol=0)
    assert np.isclose(m.lower_, b.lower_, rtol=1e-6, atol=0)
    # one minimax risk: each fit's lower bound is at most the other's upper
    assert m.lower_ <= b.upper_ * (1 + RTOL) and b.lower_ <= m.upper_ * (1 + RTOL)
    _assert_same_model(b, m, pair)


# -- NGDClassifier(solver="adam") is MLPClassifier -------------------------------------------

NGD_TRANSFORMS = (
    [pytest.param(partial(_weights, c=1e-6), id="weights-x1e-06")]
    + _transforms(["mixed-units"], AFFINE)
    + _transforms(list(SHUFFLES), SHUFFLES)
)


@pytest.mark.parametrize("transform", NGD_TRANSFORMS)
@pytest.mark.parametrize("gen", GENS, ids=lambda g: g.__name__)
def test_ngd_adam_reproduces_mlpclassifier(gen, transform):
    X, y, w, rng = _instance(gen, 6, 30, 2)
    pair = transform(X, y, w, rng)
    kw = dict(hidden_layer_sizes=(5,), activation="tanh", max_iter=8, batch_size=8,
              learning_rate_init=0.01, random_state=6)
    ours = _fit(NGDClassifier(solver="adam", device="cpu", **kw), *pair.moved)
    mlp = _fit(MLPClassifier(solver="adam", **kw), *pair.moved)
    # test_ngd's tolerances in float64; both train in float32 on float32 input, where the
    # two sum in different orders: a few ulps
    float32 = ours.coefs_[0].dtype == np.float32
    loss_rtol, rtol = (32 * np.finfo(np.float32).eps,) * 2 if float32 else (1e-9, 1e-7)
    assert ours.n_iter_ == mlp.n_iter_
    np.testing.assert_allclose(ours.loss_curve_, mlp.loss_curve_, rtol=loss_rtol, atol=0)
    for a, b in zip(ours.coefs_ + ours.intercepts_, mlp.coefs_ + mlp.intercepts_,
                    strict=True):  # entries near 0: relative to the layer's largest
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * np.abs(b).max())
    np.testing.assert_array_equal(ours.predict(pair.moved[0]), mlp.predict(pair.moved[0]))
    if transform is not SHUFFLES["float32"]:  # float32 input trains in float32
        _assert_same_model(_fit(ours, *pair.base), ours, pair)
