"""asv benchmarks of ICEClassifier: fit time, peak memory, errors, kernel throughput."""

import time

import numpy as np

from exactclf import ICEClassifier
from exactclf._backend import CPU
from exactclf._base import merge_duplicates
from exactclf._geometry import COPLANAR_RTOL, affine_frame, homogeneous
from exactclf._zero_one._kernels_cpu import ice_scan_cpu
from exactclf._zero_one._min01 import _Problem
from exactclf.datasets import load_dataset


class ICEFit:
    """Exact fit on the bundled datasets of the ICE paper (serial and 2 workers)."""

    params = (["voicepath", "haberman"], [1, 2])
    param_names = ["dataset", "n_jobs"]
    timeout = 300

    def setup(self, dataset, n_jobs):
        self.X, self.y = load_dataset(dataset, return_X_y=True)
        ICEClassifier(device="cpu").fit(self.X[::10], self.y[::10])  # compile the kernels

    def time_fit(self, dataset, n_jobs):
        ICEClassifier(device="cpu", n_jobs=n_jobs).fit(self.X, self.y)

    def peakmem_fit(self, dataset, n_jobs):
        ICEClassifier(device="cpu", n_jobs=n_jobs).fit(self.X, self.y)

    def track_training_errors(self, dataset, n_jobs):
        return ICEClassifier(device="cpu", n_jobs=n_jobs).fit(self.X, self.y).training_errors_


class ICEKernel:
    """Candidate hyperplanes per second of the CPU kernel on Cryotherapy (D = 6) with the
    optimal incumbent: the proof phase that dominates exact fits in higher dimension."""

    unit = "candidates/s"
    timeout = 120

    def setup(self):
        X, y = load_dataset("cryotherapy", return_X_y=True)
        U, wpos, wneg, _ = merge_duplicates(X, y == 1, np.ones(len(y)))
        self.prob = _Problem(homogeneous(affine_frame(U).transform(U)), wpos, wneg, CPU)
        self.buf = np.empty((4096, 4))
        self._scan(0, 1000)

    def _scan(self, r0, r1):
        p = self.prob
        ice_scan_cpu(p.Xh, p.nrm, p.wpos, p.wneg, r0, r1, 4.0, np.inf, COPLANAR_RTOL, self.buf)

    def track_candidates_per_second(self):
        n = 5 * 10**6
        t0 = time.perf_counter()
        self._scan(10**8, 10**8 + n)
        return n / (time.perf_counter() - t0)


class ICEHighDim:
    """Exact fits at D = 11, 12 (the IIS cover with its master on HiGHS or Gurobi, and the
    MILP turn), on the seeded instances of ``benchmarks/ice_vs_baselines.py``."""

    params = (["synth150x11", "synth100x12"], ["highs", "gurobi"])
    param_names = ["instance", "mip_solver"]
    timeout = 300

    def setup(self, instance, mip_solver):
        from exactclf._experiments.ice_table1 import synthetic_instance

        self.X, self.y = synthetic_instance(instance)

    def time_fit(self, instance, mip_solver):
        ICEClassifier(time_limit=120, mip_solver=mip_solver).fit(self.X, self.y)

    def track_training_errors(self, instance, mip_solver):
        return ICEClassifier(time_limit=120, mip_solver=mip_solver).fit(
            self.X, self.y).training_errors_


class ICEBeyondExactRange:
    """A budget fit far beyond the exact range (6000 noisy points; in 3-D 2.4e10 candidates):
    the proven gap after 20 s and the errors reached. In 3-D the bound is the random-block
    partition bound; in 6-D the local IIS cover, and the incumbent comes from the local
    search's large neighbourhoods."""

    timeout = 300
    params = [3, 6]
    param_names = ["n_features"]

    def setup(self, n_features):
        rng = np.random.default_rng(0)
        self.X = rng.normal(size=(6000, n_features))
        self.y = self.X[:, 0] + 0.5 * self.X[:, 1] + rng.normal(size=6000) > 0

    def track_gap(self, n_features):
        return ICEClassifier(time_limit=20).fit(self.X, self.y).gap_

    def track_training_errors(self, n_features):
        return ICEClassifier(time_limit=20).fit(self.X, self.y).training_errors_


class ICEConstrained:
    """Proven fits under the constraints users ask for: monotone signs (those of a
    LogisticRegression on haberman: survival never rising with age or nodes) and at most
    two features (rotational sweeps), next to the unconstrained fit of ``ICEFit``."""

    params = (["monotone", "max_features=2"],)
    param_names = ["constraint"]
    timeout = 300

    def setup(self, constraint):
        self.X, self.y = load_dataset("haberman", return_X_y=True)
        self.params = ({"monotonic_cst": [-1, 0, -1]} if constraint == "monotone"
                       else {"max_features": 2})
        ICEClassifier(device="cpu", **self.params).fit(self.X[::10], self.y[::10])

    def time_fit(self, constraint):
        ICEClassifier(device="cpu", **self.params).fit(self.X, self.y)

    def track_training_errors(self, constraint):
        return ICEClassifier(device="cpu", **self.params).fit(self.X, self.y).training_errors_
