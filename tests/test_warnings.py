"""Every warning a fit reports points at the user's line: the call of ``fit``, or of the
``Pipeline.fit`` that holds the estimator (:func:`exactclf._warnings.warn` skips the frames
of exactclf and of scikit-learn). A hard-coded ``stacklevel`` pointed into the package as
soon as a call layer was added or removed."""

from __future__ import annotations

import _thread
import inspect
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

import exactclf._zero_one._min01 as _min01
import exactclf.linear._ice as _ice
import exactclf.maxout._portfolio as _maxout_portfolio
import exactclf.mrc._estimator as _mrc
from exactclf import (
    MRCCCG,
    DeepICEMaxoutClassifier,
    ICEClassifier,
    NGDClassifier,
    ThresholdNetLasso,
)
from exactclf._warnings import warn
from exactclf.datasets import load_haberman

HERE = Path(__file__).resolve()


def _xor(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, (X[:, 0] * X[:, 1] > 0).astype(int)


def _grid(n, side, seed):
    """Points on a small integer grid, labels from a noisy disc (as in test_interrupt)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, side, size=(n, 2)).astype(float)
    c = (side - 1) / 2
    return X, (((X - c) ** 2).sum(axis=1) + rng.normal(size=n) > c * c).astype(int)


def _interrupt_at_first_call(monkeypatch, owner, name):
    """Ctrl-C (in the main thread, as SIGINT would) on the first call of ``owner.name``."""
    original, calls = getattr(owner, name), []

    def wrapped(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            _thread.interrupt_main()
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapped)


def _haberman():
    return load_haberman(return_X_y=True)


def _mrc_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    return X, np.digitize(X[:, 0] + 0.5 * rng.normal(size=80), [-0.5, 0.5])


def _ice_beyond_reach(monkeypatch):
    # a search far too large for method="auto" without time_limit: a (short) IIS cover path
    monkeypatch.setattr(_ice, "_MILP_SECONDS", 0.2)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 8))
    return ICEClassifier(method="auto"), X, (X[:, 0] + rng.normal(size=400) > 0).astype(int)


def _ice_interrupted(monkeypatch):
    _interrupt_at_first_call(monkeypatch, _min01, "ice_scan_cpu")
    return ICEClassifier(method="exact", n_jobs=1, device="cpu"), *_grid(50, 6, 0)


def _deepice_interrupted(monkeypatch):
    _interrupt_at_first_call(monkeypatch, _maxout_portfolio, "refine")
    est = DeepICEMaxoutClassifier(n_hyperplanes=4, time_limit=1, n_jobs=1, device="cpu",
                                  random_state=0)
    # the heuristic's pass sums cannot prove these points' optimum: refine always runs
    return est, *_grid(120, 10, 2)


def _mrc_interrupted(monkeypatch):
    _interrupt_at_first_call(monkeypatch, _mrc, "dual_point")
    return MRCCCG(phi="linear", n_max=5), *_mrc_data()


def _ngd_interrupted(monkeypatch):
    _interrupt_at_first_call(monkeypatch, NGDClassifier, "_track_loss")
    return (NGDClassifier((4,), max_iter=5, batch_size=40, random_state=0, device="cpu"),
            *_xor(120, 3, 0))


#: name -> (make(monkeypatch) -> (estimator, X, y), the warning category the fit reports)
CASES = {
    "ice_max_candidates": (
        lambda mp: (ICEClassifier(device="cpu", max_candidates=10, upper_bound="surrogate"),
                    *_haberman()), ConvergenceWarning),
    "ice_beyond_reach_without_time_limit": (_ice_beyond_reach, ConvergenceWarning),
    "ice_interrupted": (_ice_interrupted, RuntimeWarning),
    "deepice_max_candidates": (
        lambda mp: (DeepICEMaxoutClassifier(max_candidates=50, device="cpu"), *_xor(30, 3, 2)),
        ConvergenceWarning),
    "deepice_interrupted": (_deepice_interrupted, RuntimeWarning),
    "mrc_max_iter": (lambda mp: (MRCCCG(max_iter=1, n_max=5), *_mrc_data()),
                     ConvergenceWarning),
    "mrc_interrupted": (_mrc_interrupted, RuntimeWarning),
    "ngd_max_iter": (lambda mp: (NGDClassifier((5,), max_iter=1, random_state=0),
                                 *_xor(60, 3, 1)), ConvergenceWarning),
    "ngd_batch_size_clipped": (
        lambda mp: (NGDClassifier((5,), max_iter=3, batch_size=1000, n_iter_no_change=100,
                                  random_state=0), *_xor(60, 3, 1)), UserWarning),
    "ngd_interrupted": (_ngd_interrupted, UserWarning),
    "threshold_sampled_small_budget": (
        lambda mp: (ThresholdNetLasso(beta=1e-3, solver="sklearn", max_iter=2,
                                      n_arrangements=200, random_state=0), *_xor(40, 5, 9)),
        ConvergenceWarning),
}


@pytest.mark.parametrize("in_pipeline", [False, True], ids=["bare", "pipeline"])
@pytest.mark.parametrize("case", list(CASES))
def test_fit_warnings_point_at_the_users_fit_line(monkeypatch, case, in_pipeline):
    make, category = CASES[case]
    est, X, y = make(monkeypatch)
    if in_pipeline:  # sklearn's frames lie between this line and the estimator's fit
        est = make_pipeline(FunctionTransformer(), est)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit_line = inspect.currentframe().f_lineno + 1
        est.fit(X, y)
    ours = [w for w in caught if issubclass(w.category, category)]
    assert ours, [str(w.message) for w in caught]
    for w in ours:
        assert (Path(w.filename).resolve(), w.lineno) == (HERE, fit_line), str(w.message)


def test_warn_skips_only_the_packages_frames(monkeypatch):
    """A call from outside the package is its own line; one through a function of the
    package (here, one made to look like it) is attributed to its caller outside."""
    with pytest.warns(RuntimeWarning) as direct:
        line = inspect.currentframe().f_lineno + 1
        warn("direct", RuntimeWarning)
    assert (Path(direct[0].filename).resolve(), direct[0].lineno) == (HERE, line)

    namespace = {"__name__": "exactclf.fake_module", "warn": warn}
    exec(compile("def inner():\n    warn('inner', UserWarning)\n", "fake.py", "exec"),
         namespace)
    with pytest.warns(UserWarning) as through:
        line = inspect.currentframe().f_lineno + 1
        namespace["inner"]()
    assert (Path(through[0].filename).resolve(), through[0].lineno) == (HERE, line)


def test_a_fit_on_a_dataframe_warns_nothing():
    """Fitting on a DataFrame: the fit's own check of its training errors runs on the
    validated array, which must not raise scikit-learn's missing-feature-names warning."""
    import warnings

    import pandas as pd

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, 2)), columns=["a", "b"])
    y = (X["a"] + 0.5 * rng.normal(size=40) > 0).astype(int)
    for est in (ICEClassifier(), DeepICEMaxoutClassifier(n_hyperplanes=2),
                ICEClassifier(max_features=1)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            est.fit(X, y)
        assert est.feature_names_in_.tolist() == ["a", "b"]
