"""asv benchmarks of NGDClassifier: fit time and final training accuracy against MLPClassifier."""

import warnings

from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier

from exactclf.ngd import NGDClassifier, make_peaks

#: the peaks network (12-12-12 tanh, width-6 basis), full batch, a fixed budget of epochs
_NETWORK = dict(hidden_layer_sizes=(12, 12, 12, 6), activation="tanh", batch_size=2000,
                learning_rate_init=0.01, max_iter=20, random_state=0)


def _make(estimator):
    if estimator == "mlp":
        return MLPClassifier(solver="adam", **_NETWORK)
    return NGDClassifier(solver=estimator, device="cpu", **_NETWORK)


def _fit(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the budget is fixed on purpose
        return _make(estimator).fit(X, y)


class NGDPeaksFit:
    """20 full-batch epochs on 2000 peaks points: NGD (Newton on the last layer + Adam),
    the same network by Adam (``solver="adam"``), and MLPClassifier."""

    params = (["ngd", "adam", "mlp"],)
    param_names = ["estimator"]
    timeout = 120

    def setup(self, estimator):
        self.X, self.y = make_peaks(2000, random_state=0)

    def time_fit(self, estimator):
        _fit(estimator, self.X, self.y)

    def peakmem_fit(self, estimator):
        _fit(estimator, self.X, self.y)

    def track_train_accuracy(self, estimator):
        return _fit(estimator, self.X, self.y).score(self.X, self.y)
