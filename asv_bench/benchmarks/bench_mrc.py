"""asv benchmarks of MRCCCG: fit time, peak memory and the certified minimax risk R*."""

from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler

from exactclf.datasets import load_dataset
from exactclf.mrc import MRCCCG


class MRCFit:
    """Constraint generation on a 5000 x 20 binary ``make_classification`` problem (linear
    features, default ``eps1``), on the CPU."""

    timeout = 300

    def setup(self):
        X, y = make_classification(n_samples=5000, n_features=20, n_informative=10,
                                   n_classes=2, random_state=0)
        self.X, self.y = StandardScaler().fit_transform(X), y
        MRCCCG(device="cpu").fit(self.X[:200], self.y[:200])  # compile the kernel

    def time_fit(self):
        MRCCCG(device="cpu").fit(self.X, self.y)

    def peakmem_fit(self):
        MRCCCG(device="cpu").fit(self.X, self.y)

    def track_upper(self):
        return MRCCCG(device="cpu").fit(self.X, self.y).upper_


class MRCFourierFit:
    """Dense random features: 400 Fourier features on the bundled ai4i data (10000 x 6,
    standardized), where every LP row is dense and the warm simplex re-solves dominate."""

    timeout = 300

    def setup(self):
        X, y = load_dataset("ai4i", return_X_y=True)
        self.X, self.y = StandardScaler().fit_transform(X), y
        MRCCCG(device="cpu").fit(*make_classification(100, random_state=0))  # compile

    def time_fit(self):
        MRCCCG(phi="fourier", n_components=400, random_state=0, device="cpu").fit(self.X, self.y)


class MRCSparseWeightedFit:
    """Sparse 0/1 features (10000 x 100, 5% nonzeros, 3 classes) with integer sample weights:
    the constraint rows stay sparse."""

    timeout = 300

    def setup(self):
        import numpy as np
        import scipy.sparse as sp

        rng = np.random.default_rng(0)
        y = rng.integers(0, 3, 10000)
        dense = rng.random((10000, 100)) < 0.04 + 0.02 * (np.arange(100) % 3 == y[:, None])
        self.X, self.y = sp.csr_matrix(dense.astype(float)), y
        self.w = rng.integers(1, 4, 10000)
        MRCCCG(device="cpu").fit(self.X[:300], self.y[:300])  # compile

    def time_fit(self):
        MRCCCG(device="cpu").fit(self.X, self.y, sample_weight=self.w)

    def track_upper(self):
        return MRCCCG(device="cpu").fit(self.X, self.y, sample_weight=self.w).upper_


class MRCRuleBounds:
    """``get_lower_bound`` of the randomized rule on 5000 x 20 ``make_classification``."""

    timeout = 300

    def setup(self):
        X, y = make_classification(n_samples=5000, n_features=20, n_informative=10,
                                   n_classes=3, random_state=0)
        self.clf = MRCCCG(device="cpu").fit(StandardScaler().fit_transform(X), y)

    def time_get_lower_bound(self):
        self.clf.get_lower_bound()

    def track_lower_bound(self):
        return self.clf.get_lower_bound()


class MRCManyClassesStopped:
    """Ten classes (2000 x 12 ``make_classification``) stopped after 6 LP solves: ``upper_``
    of the returned model, the best certified point (0.9 = 1 - 1/K, the uniform rule, when
    every iterate from ``mu = 0`` was worse than it; then a point on the segments between
    iterates; since the smoothed start, that start or a later iterate). Deterministic:
    ``max_iter``, not a time limit."""

    timeout = 300

    def setup(self):
        X, y = make_classification(n_samples=2000, n_features=12, n_informative=6,
                                   n_classes=10, random_state=0)
        self.X, self.y = StandardScaler().fit_transform(X), y
        MRCCCG(device="cpu").fit(self.X[:200], self.y[:200])  # compile the kernel

    def track_upper_stopped(self):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the ConvergenceWarning of max_iter
            return MRCCCG(max_iter=6, device="cpu").fit(self.X, self.y).upper_


class MRCManyClassesFit:
    """Twenty classes (4000 x 32 ``make_classification``), defaults: the generation over whole
    samples (exactclf/mrc/_samples.py) from the smoothed start, to ``eps1``."""

    timeout = 300

    def setup(self):
        X, y = make_classification(n_samples=4000, n_features=32, n_informative=16,
                                   n_classes=20, random_state=0)
        self.X, self.y = StandardScaler().fit_transform(X), y
        MRCCCG(device="cpu").fit(self.X[:400], self.y[:400])  # compile the kernel

    def time_fit(self):
        MRCCCG(device="cpu").fit(self.X, self.y)

    def track_gap(self):
        clf = MRCCCG(device="cpu").fit(self.X, self.y)
        return clf.upper_ - clf.lower_
