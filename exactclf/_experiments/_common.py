"""What the experiments and the demo share: the baselines a user would otherwise pick, and a
timed fit that keeps the warnings the fit raised."""

from __future__ import annotations

import time
import warnings


def scaled(estimator):
    """``estimator`` behind a StandardScaler."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), estimator)


def linear_baselines() -> dict:
    """The linear classifiers a user would otherwise pick (standardized where it matters)."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC

    return {
        "LinearSVC": scaled(LinearSVC(max_iter=100000)),
        "LogisticRegression": scaled(LogisticRegression(max_iter=10000)),
        "LDA": LinearDiscriminantAnalysis(),
    }


def mlp(hidden: tuple[int, ...], max_iter: int = 2000):
    """scikit-learn's MLPClassifier (Adam) with these hidden layers, standardized inputs."""
    from sklearn.neural_network import MLPClassifier

    return scaled(MLPClassifier(hidden, max_iter=max_iter, random_state=0))


def timed_fit(model, X, y) -> tuple[float, list[warnings.WarningMessage]]:
    """Fit ``model``; the seconds it took and the warnings it raised (each kept once), which
    the caller reports: a budget that stopped a search is said by a warning."""
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    seconds = time.perf_counter() - t0
    unique = {(w.category, str(w.message)): w for w in caught}
    return seconds, list(unique.values())
