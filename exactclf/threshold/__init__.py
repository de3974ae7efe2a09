"""Threshold-activation networks trained to the global optimum (convex Lasso)."""

from ._cv import ThresholdNetLassoCV, ThresholdNetLassoRegressorCV
from ._lasso import ThresholdNetLasso, ThresholdNetLassoRegressor
from ._path import threshold_path

__all__ = [
    "ThresholdNetLasso",
    "ThresholdNetLassoCV",
    "ThresholdNetLassoRegressor",
    "ThresholdNetLassoRegressorCV",
    "threshold_path",
]
