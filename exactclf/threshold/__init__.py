"""Threshold-activation networks trained to the global optimum (convex Lasso)."""

from ._lasso import ThresholdNetLasso, ThresholdNetLassoRegressor

__all__ = ["ThresholdNetLasso", "ThresholdNetLassoRegressor"]
