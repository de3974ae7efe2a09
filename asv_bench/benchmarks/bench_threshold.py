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
