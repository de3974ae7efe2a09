"""exactclf: scikit-learn classifiers trained to a proven or certified optimum.

Estimators
----------
ICEClassifier
    Linear classifier with the provably minimal number of training errors (0-1 loss).
DeepICEMaxoutClassifier
    Two-layer maxout network with the provably minimal number of training errors.
"""

from .linear import ICEClassifier
from .maxout import DeepICEMaxoutClassifier

__version__ = "0.1.0.dev0"

__all__ = ["DeepICEMaxoutClassifier", "ICEClassifier", "__version__"]
