"""MRCCCG is anytime: the returned model is the best certified point found so far, which the
search on the segment between the best point and each new LP iterate improves even while the
iterates themselves get worse (many classes: the early restricted LPs overshoot)."""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from test_mrc import _exact_R

from exactclf.mrc import MRCCCG, _ccg
from exactclf.mrc._ccg import best_on_segment


class _Program:
    """``R(mu) = |mu - 0.3| + 1`` in one dimension; ``segment`` may lie (``bias``)."""

    def __init__(self, bias=0.0):
        self.bias = bias
        self.calls = 0

    def risk(self, mu):
        return float(abs(mu[0] - 0.3) + 1.0), mu, 0.0

    def segment(self, mu0, mu1):
        def R_at(t):
            self.calls += 1
            return self.risk(mu0 + t * (mu1 - mu0))[0] - self.bias
        return R_at


def test_best_on_segment_improves_on_both_ends():
    program = _Program()
    best = program.risk(np.array([-1.0]))
    R, mu, _ = best_on_segment(program, best, np.array([3.0]))  # R(3) = 3.7 > R(-1) = 2.3
    assert R < best[0] and R < 3.7
    assert R == program.risk(mu)[0]  # the value returned is the certified one
    assert abs(mu[0] - 0.3) <= 0.5  # t = 1/4 -> mu = 0; t = 1/8 would be worse


def test_best_on_segment_keeps_best_without_descent():
    program = _Program()
    best = program.risk(np.array([0.3]))  # the minimum itself
    assert best_on_segment(program, best, np.array([2.0])) is best
    assert program.calls == 1  # the shortest step gains nothing: by convexity, none does


def test_best_on_segment_rechecks_what_the_segment_claims():
    # a segment evaluation that reports values below the true R must not lower upper_
    program = _Program(bias=10.0)
    best = program.risk(np.array([0.3]))
    assert best_on_segment(program, best, np.array([2.0])) is best


def _many_classes():
    X, y = make_classification(n_samples=1000, n_features=10, n_informative=5, n_classes=8,
                               random_state=0)
    return StandardScaler().fit_transform(X), y


@pytest.fixture
def iterate_risks(monkeypatch):
    """Records ``R(mu)`` of every LP iterate of the 0-1 generation."""
    risks = []
    real_solve = _ccg.ZeroOneProgram.solve

    def solve(self, it, remaining):
        iterate = real_solve(self, it, remaining)
        if iterate is not None:
            risks.append(iterate[0])
        return iterate

    monkeypatch.setattr(_ccg.ZeroOneProgram, "solve", solve)
    return risks


@pytest.mark.parametrize("max_iter", [3, 6])
def test_stopped_fit_returns_a_point_better_than_every_iterate(iterate_risks, max_iter,
                                                               monkeypatch):
    """Eight classes from ``mu = 0`` (the smoothed start switched off): the LP iterates 2 and
    3 are worse than the uniform rule (iterate 1), which a stopped fit used to return; the
    segment search finds better points and the returned model is certified at its own
    ``mu_``."""
    monkeypatch.setattr(_ccg, "SMOOTH_MIN_CLASSES", 10**9)
    X, y = _many_classes()
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        clf = MRCCCG(max_iter=max_iter).fit(X, y)
    assert clf.R_history_ == iterate_risks and len(iterate_risks) == max_iter
    assert iterate_risks[1] > iterate_risks[0] == pytest.approx(1 - 1 / 8)  # overshoot
    assert clf.upper_ < min(iterate_risks) - 1e-3
    # upper_ falls with time: the best certified value after each iteration
    assert len(clf.upper_history_) == max_iter
    assert np.all(np.diff(clf.upper_history_) <= 0.0)
    assert clf.upper_ == clf.upper_history_[-1]
    assert np.all(np.asarray(clf.upper_history_) <= np.minimum.accumulate(iterate_risks))
    R, nu = _exact_R(clf, X, y)
    assert clf.upper_ == pytest.approx(R, rel=1e-12)
    assert clf.nu_ == pytest.approx(nu, rel=1e-12)
    # it predicts like the certified model: its randomized rule's training error is within
    # upper_, and its decisions beat the uniform rule that used to be returned
    proba = clf.predict_proba(X)
    assert 1.0 - proba[np.arange(len(y)), y].mean() <= clf.upper_ + 1e-12
    assert (clf.predict(X) == y).mean() > 2.0 / 8


def test_converged_fit_is_unchanged_by_the_segment_search(iterate_risks):
    """At convergence the returned point is within eps1 of R* whichever point it is."""
    X, y = _many_classes()
    clf = MRCCCG(eps1=1e-7, tol=1e-9).fit(X, y)
    assert clf.converged_
    assert clf.upper_ <= min(iterate_risks)
    assert clf.upper_ - clf.lower_ <= 1e-6 * clf.upper_
    assert np.all(np.diff(clf.upper_history_) <= 0.0)
