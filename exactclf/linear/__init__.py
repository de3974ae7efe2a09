"""Exact linear classifiers."""

from ._ice import ICEClassifier

__all__ = ["ICEClassifier"]
