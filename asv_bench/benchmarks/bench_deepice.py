"""asv benchmarks of DeepICEMaxoutClassifier: exact K=2 fit time, kernel throughput."""

import time
from math import comb

import numpy as np

from exactclf import DeepICEMaxoutClassifier
from exactclf._base import merge_duplicates
from exactclf.maxout._exact import bitset_kernel_args, candidate_family
from exactclf.maxout._kernels_cpu import union_search_cpu


def _disk(n, seed=0):
    """n points in 2-D, labeled by a noisy disk (two or three planes beat one)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = ((X**2).sum(axis=1) + 0.3 * rng.normal(size=n) > 1.2).astype(int)
    return X, y


class DeepICEFit:
    """Exact K=2 fit on 100 points in 2-D (both polarities), serial and 2 workers."""

    params = [1, 2]
    param_names = ["n_jobs"]
    timeout = 300

    def setup(self, n_jobs):
        self.X, self.y = _disk(100)
        DeepICEMaxoutClassifier(n_hyperplanes=2, device="cpu").fit(self.X[:20], self.y[:20])

    def time_fit_k2_100x2(self, n_jobs):
        DeepICEMaxoutClassifier(n_hyperplanes=2, method="exact", device="cpu",
                                n_jobs=n_jobs).fit(self.X, self.y)

    def track_training_errors_k2_100x2(self, n_jobs):
        return DeepICEMaxoutClassifier(n_hyperplanes=2, method="exact", device="cpu",
                                       n_jobs=n_jobs).fit(self.X, self.y).training_errors_


class DeepICEKernel:
    """Candidate K-sets per second settled by the serial bitset kernel (pruned ones
    included) on 100 points in 2-D, the outside of the disk as the union."""

    params = [2, 3]
    param_names = ["K"]
    unit = "K-sets/s"
    timeout = 120

    def setup(self, K):
        X, y = _disk(100)
        U, wpos, wneg, _ = merge_duplicates(X, y == 1, np.ones(len(y)))
        family, cover = candidate_family(U, wpos, wneg)
        self.args = bitset_kernel_args(family, cover, wpos, wneg)
        self.space = comb(len(family) + K - 1, K)
        union_search_cpu(*self.args, K, 0, 1, np.inf, np.inf)  # compile

    def track_ksets_per_second(self, K):
        t0 = time.perf_counter()
        union_search_cpu(*self.args, K, 0, len(self.args[0]), np.inf, np.inf)
        return self.space / (time.perf_counter() - t0)


class DeepICEFamily:
    """The union search's candidate family on integer features: 100 random Haberman
    points, thousands of planes through more than D points (each a recursion)."""

    timeout = 120

    def setup(self):
        from exactclf.datasets import load_haberman

        X, y = load_haberman(return_X_y=True)
        idx = np.random.default_rng(0).choice(len(X), 100, replace=False)
        self.U, wpos, wneg, _ = merge_duplicates(X[idx], y[idx] == 1, np.ones(100))
        self.want, self.other = wpos, wneg
        candidate_family(self.U[:20], self.want[:20], self.other[:20])  # compile

    def time_candidate_family_haberman_100(self):
        candidate_family(self.U, self.want, self.other)
