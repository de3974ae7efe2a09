"""One exact search spread over a Dask cluster returns the serial run's model.

Needs the ``dask`` extra (installed by the ``dev`` extra): the chunks of the rank space are
submitted to the workers of a ``LocalCluster`` of separate processes through joblib's Dask
backend, exactly as they would be to a remote cluster.
"""

import joblib
import numpy as np
import pytest

from exactclf import DeepICEMaxoutClassifier, ICEClassifier
from exactclf.datasets import load_dataset

distributed = pytest.importorskip("distributed", reason="needs the dask extra")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as c:
            yield c


def _on_cluster(client, estimator, X, y):
    """Fit under joblib's Dask backend; return the model and the keys the workers ran."""
    with distributed.get_task_stream(client) as stream:
        with joblib.parallel_config(backend="dask"):
            estimator.fit(X, y)
    return estimator, stream.data


@pytest.mark.parametrize(
    "make, n",
    [
        pytest.param(lambda **kw: ICEClassifier(device="cpu", **kw), None, id="ICE"),
        pytest.param(lambda **kw: DeepICEMaxoutClassifier(n_hyperplanes=2, method="exact",
                                                          device="cpu", **kw), 20,
                     id="DeepICE", marks=pytest.mark.slow),  # 23 s; CI runs the slow tests
    ],
)
def test_dask_cluster_gives_the_serial_model(client, make, n):
    X, y = load_dataset("voicepath", return_X_y=True)
    if n is not None:
        idx = np.random.default_rng(0).choice(len(y), n, replace=False)
        X, y = X[idx], y[idx]
    serial = make().fit(X, y)
    dist, tasks = _on_cluster(client, make(n_jobs=2), X, y)
    assert len(tasks) >= 2, "the search was not spread over the cluster's workers"
    assert dist.training_errors_ == serial.training_errors_
    assert dist.is_optimal_ and serial.is_optimal_
    np.testing.assert_array_equal(dist.predict(X), serial.predict(X))
