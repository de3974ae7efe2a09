"""Tests of the bundled datasets in :mod:`exactclf.datasets`."""

from __future__ import annotations

import doctest
import functools
import inspect

import numpy as np
import pytest
from sklearn.utils import Bunch

import exactclf.datasets as datasets
from exactclf.datasets import _base

# N x D of every bundled file, as given by the data README (file names of Table 2 give N, D).
EXPECTED_SHAPES = {
    "haberman": (306, 3),
    "caesarian": (80, 5),
    "cryotherapy": (90, 6),
    "voicepath": (704, 2),
    "deepice_haberman": (283, 3),
    "deepice_caesarian": (72, 5),
    "ai4i": (10000, 6),
    "auction_verification": (2043, 7),
    "bloodtransfer": (502, 4),
    "diabetic": (1146, 19),
    "rice_cammeo": (3810, 7),
    "skin_segmentation": (51433, 3),
    "sepsis": (975, 3),
    "steel_others": (1941, 27),
    "deepice_voicepath": (707, 2),
}
# Distinct feature vectors of the ICE Table 1 files (data README); Table 2 files are deduplicated
# except voicepath (707 rows, 704 distinct).
EXPECTED_UNIQUE = {"haberman": 283, "caesarian": 72, "cryotherapy": 89, "voicepath": 704}
EXPECTED_UNIQUE_DEEPICE = {"deepice_voicepath": 704}
# Class sizes (class 0, class 1) after mapping the negative source label to 0.
EXPECTED_COUNTS = {"haberman": (81, 225), "voicepath": (53, 651), "ai4i": (9661, 339),
                   "rice_cammeo": (1630, 2180), "deepice_voicepath": (53, 654)}

NAMES = list(EXPECTED_SHAPES)
BUNCH_FIELDS = {"data", "target", "feature_names", "target_names", "DESCR", "source", "filename"}


@functools.cache
def _bunch(name: str) -> Bunch:
    """Load each dataset once per test session (skin_segmentation has 51433 rows)."""
    return datasets.load_dataset(name)


def test_registry_lists_every_dataset_once():
    assert datasets.list_datasets() == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_public_loader_exists_and_is_documented(name):
    loader = getattr(datasets, f"load_{name}")
    assert loader.__name__ == f"load_{name}"
    assert f"load_{name}" in datasets.__all__
    assert list(inspect.signature(loader).parameters) == ["return_X_y"]
    for section in ("Parameters", "Returns", "Examples"):
        assert f"{section}\n----" in loader.__doc__


@pytest.mark.parametrize("name", NAMES)
def test_shape_labels_and_values(name):
    bunch = _bunch(name)
    X, y = bunch.data, bunch.target
    assert X.shape == EXPECTED_SHAPES[name]
    assert y.shape == (X.shape[0],)
    assert X.dtype == np.float64
    assert y.dtype.kind == "i"
    assert set(np.unique(y).tolist()) == {0, 1}
    assert np.isfinite(X).all()
    if name in EXPECTED_COUNTS:
        assert tuple(np.bincount(y)) == EXPECTED_COUNTS[name]


@pytest.mark.parametrize("name", NAMES)
def test_bunch_fields(name):
    bunch = _bunch(name)
    assert set(bunch.keys()) == BUNCH_FIELDS
    assert len(bunch.feature_names) == bunch.data.shape[1]
    assert all(isinstance(f, str) and f for f in bunch.feature_names)
    assert len(set(bunch.feature_names)) == len(bunch.feature_names)
    assert isinstance(bunch.target_names, np.ndarray)
    assert bunch.target_names.shape == (2,)
    assert bunch.filename.endswith(".csv")
    assert "github.com/XiHegrt" in bunch.source
    assert "UCI Machine Learning Repository" in bunch.DESCR
    assert "Dua, D. and Graff, C." in bunch.DESCR
    assert f"{bunch.data.shape[0]}" in bunch.DESCR


@pytest.mark.parametrize("name", NAMES)
def test_unique_feature_vectors(name):
    X = _bunch(name).data
    n_unique = len(np.unique(X, axis=0))
    assert n_unique == _base._REGISTRY[name].n_unique
    expected = EXPECTED_UNIQUE.get(name, EXPECTED_UNIQUE_DEEPICE.get(name, X.shape[0]))
    assert n_unique == expected


@pytest.mark.parametrize("name", ["haberman", "caesarian", "cryotherapy", "voicepath"])
def test_return_X_y_matches_bunch(name):
    bunch = _bunch(name)
    X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    np.testing.assert_array_equal(X, bunch.data)
    np.testing.assert_array_equal(y, bunch.target)


def test_return_X_y_matches_bunch_for_all_via_dispatcher():
    for name in NAMES:
        X, y = datasets.load_dataset(name, return_X_y=True)
        np.testing.assert_array_equal(X, _bunch(name).data)
        np.testing.assert_array_equal(y, _bunch(name).target)


def _labelled_rows(bunch: Bunch) -> set[tuple[float, ...]]:
    return {(*row, label) for row, label in zip(bunch.data.tolist(), bunch.target, strict=True)}


def test_ice_and_deepice_voicepath_hold_the_same_points():
    assert _labelled_rows(_bunch("voicepath")) == _labelled_rows(_bunch("deepice_voicepath"))


def test_loaders_return_fresh_arrays():
    first = datasets.load_caesarian()
    first.data[:] = -7.0
    assert (datasets.load_caesarian().data != -7.0).any()


@pytest.mark.parametrize("name", ["Rice-Cammeo", " HABERMAN ", "deepice-voicepath"])
def test_load_dataset_normalizes_names(name):
    key = name.strip().lower().replace("-", "_")
    np.testing.assert_array_equal(datasets.load_dataset(name).data, _bunch(key).data)


def test_load_dataset_rejects_unknown_name():
    with pytest.raises(ValueError, match="unknown dataset 'iris'"):
        datasets.load_dataset("iris")


def test_label_mapping_rejects_unexpected_labels():
    info = _base._REGISTRY["haberman"]
    with pytest.raises(ValueError, match="expected class labels -1 and \\+1"):
        _base._binary_labels(np.array([0.0, 1.0, 1.0]), info)
    y = _base._binary_labels(np.array([-1.0, 1.0, -1.0]), info)
    np.testing.assert_array_equal(y, [0, 1, 0])


def test_docstring_examples():
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = [test for test in doctest.DocTestFinder().find(_base, globs={}) if test.examples]
    assert len(tests) == len(NAMES) + 3  # loaders, list_datasets, load_dataset, published_optima
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_published_optima():
    # ICE paper, Table 1 (DESIGN.md, section 3): the only datasets with a published optimum
    optima = datasets.published_optima()
    assert optima == {"haberman": 66, "caesarian": 18, "cryotherapy": 4, "voicepath": 19}
    assert "published_optima" in datasets.__all__
    for name, errors in optima.items():
        assert f"Published exact optimum: {errors} misclassified" in _bunch(name).DESCR
    optima["haberman"] = 0  # a fresh dict: callers cannot change the registry
    assert datasets.published_optima()["haberman"] == 66
