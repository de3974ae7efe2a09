"""Neural-network classifiers whose convex last layer is fitted by Newton's method."""

from ._ngd import NGDClassifier
from ._peaks import make_peaks, peaks_labels

__all__ = ["NGDClassifier", "make_peaks", "peaks_labels"]
