"""asv benchmarks of ThresholdNetLasso: fit time and training objective."""

import numpy as np

from exactclf import ThresholdNetLasso


class ThresholdFit:
    """Sampled arrangement (1000 hyperplanes) on n=100, d=20 tanh-teacher data."""

    timeout = 300

    def setup(self):
        rng = np.random.default_rng(0)
        self.X = rng.standard_normal((100, 20))
        W = rng.standard_normal((20, 10)) / np.sqrt(20)
        self.y = (np.tanh(self.X @ W) @ rng.standard_normal(10) >= 0).astype(int)

    def _fit(self):
        return ThresholdNetLasso(beta=1e-3, arrangements="sample", n_arrangements=1000,
                                 random_state=0).fit(self.X, self.y)

    def time_fit(self):
        self._fit()

    def track_objective(self):
        return self._fit().objective_


class ThresholdCV:
    """ThresholdNetLassoCV on Haberman (306 x 3): 8 betas, 3 folds, 300 hyperplanes."""

    timeout = 600

    def setup(self):
        from exactclf.datasets import load_haberman

        self.X, self.y = load_haberman(return_X_y=True)

    def _fit(self):
        from exactclf import ThresholdNetLassoCV

        return ThresholdNetLassoCV(betas=8, cv=3, n_arrangements=300,
                                   random_state=0).fit(self.X, self.y)

    def time_fit(self):
        self._fit()

    def track_best_cv_accuracy(self):
        return float(self._fit().accuracy_path_.mean(axis=1).max())
