"""Ctrl-C at every moment of every fit (the policy of :mod:`exactclf._fit_guard`).

Each fit is first run once with counters on a few of its internal functions; then once per
function and call number ``k`` (the first, middle and last call; the first only where later
calls depend on the clock), with a real interrupt
(``_thread.interrupt_main``: the SIGINT handler runs, in the main thread) raised at the
``k``-th call. After each, either the fit returned the best model so far, with a warning and
a certificate that holds for it, or the ``KeyboardInterrupt`` propagated and the estimator is
unfitted (or, for a fit that continues an earlier model, still holds that model).
"""

from __future__ import annotations

import _thread
import threading
import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

import exactclf._dichotomies as _dichotomies
import exactclf._zero_one._iis as _iis
import exactclf._zero_one._min01 as _min01
import exactclf._zero_one._portfolio as _portfolio
import exactclf.linear._ice as _ice
import exactclf.maxout._deepice as _deepice
import exactclf.maxout._exact as _exact
import exactclf.maxout._portfolio as _maxout_portfolio
import exactclf.mrc._ccg as _ccg
import exactclf.mrc._estimator as _mrc
import exactclf.mrc._program as _mrc_program
import exactclf.ngd._ngd as _ngd
import exactclf.threshold._lasso as _lasso
from exactclf import (
    MRCCCG,
    DeepICEMaxoutClassifier,
    ICEClassifier,
    NGDClassifier,
    ThresholdNetLasso,
    ThresholdNetLassoRegressor,
)
from exactclf._fit_guard import guarded_fit, off_main
from exactclf._geometry import COPLANAR_RTOL, batch_leaf_sides, homogeneous


def _wrap(owner, name, k, calls):
    """A wrapper of ``owner.name`` that counts its calls in ``calls[name]`` and, at call
    ``k`` (None: never), interrupts the main thread as Ctrl-C would."""
    original = getattr(owner, name)

    def wrapped(*args, **kwargs):
        calls[name] = calls.get(name, 0) + 1
        if calls[name] == k:
            _thread.interrupt_main()
        return original(*args, **kwargs)

    return wrapped


def _outcome(est, X, y):
    """Fit ``est``; check what it left and return ``"returned"`` or ``"raised"``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            est.fit(X, y)
        except KeyboardInterrupt:
            with pytest.raises(NotFittedError):
                check_is_fitted(est)
            with pytest.raises(NotFittedError):
                est.predict(X)
            return "raised"
    assert any("interrupt" in str(w.message).lower() for w in caught), \
        [str(w.message) for w in caught]
    pred = est.predict(X)
    assert pred.shape == (len(X),)
    # a proof may complete before the interrupt stops its search (the IIS cover's bound
    # met the incumbent): the model is then optimal, and says so
    if hasattr(est, "stop_reason_") and not getattr(est, "is_optimal_", False):
        assert est.stop_reason_ == "interrupted"
    if hasattr(est, "training_errors_"):  # the certificate holds for the returned model
        assert est.training_errors_ == np.count_nonzero(pred != y)
        assert est.lower_bound_ <= est.training_errors_
        assert est.is_optimal_ == (est.training_errors_ <= est.lower_bound_)
    if hasattr(est, "converged_"):  # the generation, or the final dual LP, was cut short
        assert not est.certificate_.is_optimal and est.lower_ <= est.upper_
    return "returned"


def _sweep(monkeypatch, make, X, y, targets, every=True):
    """Interrupt ``make()``'s fit at the first, middle and last call of each target
    ``(owner, name)`` (``every=False``: the first only, for a fit whose later calls depend
    on the clock); returns the outcomes by target."""
    calls: dict = {}
    with monkeypatch.context() as m:
        for owner, name in targets:
            m.setattr(owner, name, _wrap(owner, name, None, calls))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            make().fit(X, y)
    outcomes = {}
    for owner, name in targets:
        n = calls.get(name, 0)
        assert n > 0, f"{name} is never called"
        for k in sorted({1, (n + 1) // 2, n}) if every else [1]:
            fired: dict = {}
            with monkeypatch.context() as m:
                m.setattr(owner, name, _wrap(owner, name, k, fired))
                out = _outcome(make(), X, y)
            assert fired[name] >= k  # the interrupt happened
            outcomes.setdefault(name, []).append(out)
    return outcomes


def _grid(n, dim, side=6, seed=0):
    """Points on a small integer grid (duplicates and collinear triples: degenerate
    planes), labels from a noisy disc."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, side, size=(n, dim)).astype(float)
    c = (side - 1) / 2
    y = ((X - c) ** 2).sum(axis=1) + rng.normal(size=n) > c * c * dim / 2
    return X, y.astype(int)


def test_ice(monkeypatch):
    X, y = _grid(50, 2)
    out = _sweep(monkeypatch, lambda: ICEClassifier(method="exact", n_jobs=1, device="cpu"),
                 X, y,
                 [(_ice, "validate_binary"), (_portfolio, "incumbent_candidates"),
                  (_min01, "ice_scan_cpu"), (_min01, "leaf_sides"),
                  (_ice, "max_margin_separator")])
    assert out["ice_scan_cpu"] == ["returned"] * len(out["ice_scan_cpu"])
    assert out["validate_binary"] == ["raised"]


def test_ice_iis_cover(monkeypatch):
    X, y = _grid(40, 3, seed=1)
    out = _sweep(monkeypatch, lambda: ICEClassifier(method="iis_cover"), X, y,
                 [(_iis, "peel"), (_iis.CoverModel, "solve")])
    assert "returned" in out["peel"]


def test_deepice_exact(monkeypatch):
    """The exact search of both polarities after the heuristic's seeds (more than two
    blocks of points): Ctrl-C while either family is prepared keeps the seeds' networks."""
    X, y = _grid(30, 2, side=10)
    out = _sweep(monkeypatch,
                 lambda: DeepICEMaxoutClassifier(n_hyperplanes=2, method="exact",
                                                 coreset_size=10, time_limit=60, n_jobs=1,
                                                 device="cpu", random_state=0),
                 X, y,
                 [(_deepice, "validate_binary"), (_maxout_portfolio, "coreset_union"),
                  (_exact, "candidate_family"), (_dichotomies, "batch_leaf_sides"),
                  (_exact, "bitset_kernel_args"), (_exact, "union_search_steps"),
                  (_maxout_portfolio, "realize_union")])
    assert out["validate_binary"] == ["raised"]
    for name in ("candidate_family", "batch_leaf_sides", "bitset_kernel_args",
                 "union_search_steps"):
        assert set(out[name]) == {"returned"}, name


def test_deepice_portfolio(monkeypatch):
    """method="auto" beyond the exact search's range: every phase of the portfolio (on
    points whose optimum the heuristic's pass sums cannot prove, so that growing its
    network runs whatever the clock)."""
    X, y = _grid(120, 2, side=10, seed=2)
    out = _sweep(monkeypatch,
                 lambda: DeepICEMaxoutClassifier(n_hyperplanes=4, time_limit=1, n_jobs=1,
                                                 device="cpu", random_state=0),
                 X, y,
                 [(_maxout_portfolio, "solve_portfolio"), (_maxout_portfolio, "coreset_union"),
                  (_maxout_portfolio, "refine"), (_maxout_portfolio, "realize_union")],
                 every=False)
    assert out["solve_portfolio"] == ["raised"]  # no network yet
    assert out["refine"] == ["returned"]  # the heuristic's network


def test_mrc(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = np.digitize(X[:, 0] + 0.5 * rng.normal(size=80), [-0.5, 0.5])
    out = _sweep(monkeypatch, lambda: MRCCCG(phi="linear", n_max=5), X, y,
                 [(_mrc, "fit_feature_map"), (_ccg, "make_lp"), (_mrc_program, "minimax_risk"),
                  (_ccg, "dual_lower_bound"), (_mrc, "dual_point")])
    assert out["fit_feature_map"] == ["raised"]
    assert "returned" in out["dual_lower_bound"]
    assert out["dual_point"] == ["returned"]  # the model stands, with a weaker lower_


def test_ngd(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)

    def make():
        return NGDClassifier((4,), max_iter=5, batch_size=40, random_state=0, device="cpu")

    out = _sweep(monkeypatch, make, X, y,
                 [(_ngd, "validate_data"), (_ngd, "glorot_uniform_init"),
                  (_ngd, "newton_output_layer"), (NGDClassifier, "_track_loss")])
    assert out["validate_data"] == ["raised"]
    assert set(out["newton_output_layer"]) == {"returned"}


def test_ngd_continued_fit_keeps_its_model(monkeypatch):
    """Ctrl-C before a warm-started fit or a partial_fit trains: the earlier model stays."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    for est, refit in [
        (NGDClassifier((3,), max_iter=3, warm_start=True, random_state=0),
         lambda e: e.fit(X, y)),
        (NGDClassifier((3,), random_state=0), lambda e: e.partial_fit(X, y)),
    ]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
        before = est.predict_proba(X)
        with monkeypatch.context() as m:
            m.setattr(_ngd, "validate_data", _wrap(_ngd, "validate_data", 1, {}))
            with pytest.raises(KeyboardInterrupt):
                refit(est)
        np.testing.assert_array_equal(est.predict_proba(X), before)


@pytest.mark.parametrize("make", [ThresholdNetLasso, ThresholdNetLassoRegressor])
def test_threshold(monkeypatch, make):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = (X[:, 0] > 0).astype(int)
    out = _sweep(monkeypatch, lambda: make(beta=0.1, arrangements="sample",
                                           n_arrangements=20, random_state=0),
                 X, y,
                 [(_lasso, "build_problem"), (_lasso, "solve_problem"),
                  (_lasso, "build_network")])
    # no search of its own stops for Ctrl-C: every interrupt leaves an unfitted estimator
    assert {o for outs in out.values() for o in outs} == {"raised"}


def test_interrupt_in_a_kernel_is_a_keyboard_interrupt():
    """Ctrl-C while a Numba kernel with an int8 result runs for the main thread: called on
    the main thread it would fail with a SystemError (the interrupt landing in the boxing of
    its result); through off_main it is a plain KeyboardInterrupt, whenever it comes."""
    Z = np.random.default_rng(0).normal(size=(300, 2))
    Xh = homogeneous(Z)
    nrm = np.linalg.norm(Xh, axis=1)
    combos = np.array([[i, j] for i in range(300) for j in range(i + 1, 300)])[:20000]
    off_main(batch_leaf_sides, Xh, nrm, combos, COPLANAR_RTOL, False)  # compiled before the timer
    for delay in (0.0, 0.01, 0.03):
        timer = threading.Timer(delay, _thread.interrupt_main)
        with pytest.raises(KeyboardInterrupt):
            timer.start()  # in the block: the interrupt may come at once
            while True:
                off_main(batch_leaf_sides, Xh, nrm, combos, COPLANAR_RTOL, False)
        timer.join()


def test_kernels_with_int8_results_never_run_on_the_main_thread(monkeypatch):
    """The kernels whose results Ctrl-C would turn into a SystemError on the main thread
    run off it in the fits (n_jobs=1: everything else runs on the main thread)."""
    threads = []

    def record(owner, name):
        original = getattr(owner, name)

        def wrapped(*args):
            threads.append(threading.current_thread() is threading.main_thread())
            return original(*args)

        monkeypatch.setattr(owner, name, wrapped)

    record(_dichotomies, "batch_leaf_sides")
    record(_min01, "leaf_sides")
    X, y = _grid(50, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ICEClassifier(method="exact", n_jobs=1, device="cpu").fit(X, y)
        DeepICEMaxoutClassifier(method="exact", n_jobs=1, device="cpu").fit(X, y)
    assert threads and not any(threads)


def test_guard_reports_a_kernel_interrupt_as_keyboard_interrupt():
    """A SystemError caused by an interrupt (a kernel called on the main thread) reaches
    the caller as KeyboardInterrupt, the estimator unfitted; other errors pass unchanged."""
    def failing(cause):
        def fit(self, X, y):
            self.classes_ = np.unique(y)
            raise SystemError("CPUDispatcher(kernel) returned a result with an exception "
                              "set") from cause
        return type("Failing", (ICEClassifier,), {"fit": guarded_fit(fit)})()

    est = failing(KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt) as info:
        est.fit([[0.0], [1.0]], [0, 1])
    assert isinstance(info.value.__cause__, SystemError)
    assert not hasattr(est, "classes_")
    est = failing(ValueError())
    with pytest.raises(SystemError):
        est.fit([[0.0], [1.0]], [0, 1])
    assert not hasattr(est, "classes_")
