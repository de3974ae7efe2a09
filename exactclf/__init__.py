"""exactclf: scikit-learn classifiers trained to a proven or certified optimum.

Estimators
----------
ICEClassifier
    Linear classifier with the provably minimal number of training errors (0-1 loss).
DeepICEMaxoutClassifier
    Two-layer maxout network with the provably minimal number of training errors.
ThresholdNetLasso, ThresholdNetLassoRegressor
    Threshold-activation networks trained to the global optimum of their convex (Lasso) form.
ThresholdNetLassoCV, ThresholdNetLassoRegressorCV
    The same with beta chosen by cross-validation along a certified regularization path.
MRCCCG
    0-1 minimax risk classifier with a certified worst-case error bound.
NGDClassifier
    Neural network whose convex last layer is fitted by Newton's method at every step.

Every estimator's fitted ``certificate_`` says what its fit proves; :func:`verify` re-checks
it on the training data, independently of the code that produced it.
"""

from ._certificate import Certificate, StopReason
from ._verification import verify
from .linear import ICEClassifier
from .maxout import DeepICEMaxoutClassifier
from .mrc import MRCCCG
from .ngd import NGDClassifier
from .threshold import (
    ThresholdNetLasso,
    ThresholdNetLassoCV,
    ThresholdNetLassoRegressor,
    ThresholdNetLassoRegressorCV,
)

__version__ = "0.1.0.dev0"

__all__ = [
    "Certificate",
    "StopReason",
    "MRCCCG",
    "DeepICEMaxoutClassifier",
    "ICEClassifier",
    "NGDClassifier",
    "ThresholdNetLasso",
    "ThresholdNetLassoCV",
    "ThresholdNetLassoRegressor",
    "ThresholdNetLassoRegressorCV",
    "__version__",
    "verify",
]
