"""exactclf: scikit-learn classifiers trained to a proven or certified optimum.

Estimators
----------
ICEClassifier
    Linear classifier with the provably minimal number of training errors (0-1 loss).
"""

from .linear import ICEClassifier

__version__ = "0.1.0.dev0"

__all__ = ["ICEClassifier", "__version__"]
