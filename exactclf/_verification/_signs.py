"""The sign constraints a model asks of its coefficients (``monotonic_cst``), as the
checks read them: from the model's parameters, never from its certificate."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import _check_monotonic_cst

__all__ = ["monotone_signs"]


def monotone_signs(model) -> np.ndarray | None:
    """The signs ``model.monotonic_cst`` asks of ``coef_`` (scikit-learn's encoding: an
    array of -1, 0, 1 per feature, or a dict by feature name); None without any.

    Examples
    --------
    >>> from exactclf import ICEClassifier
    >>> model = ICEClassifier(monotonic_cst=[1, 0, -1])
    >>> model.n_features_in_ = 3
    >>> monotone_signs(model).tolist()
    [1, 0, -1]
    """
    cst = getattr(model, "monotonic_cst", None)
    if cst is None:
        return None
    signs = _check_monotonic_cst(model, cst)
    return signs if np.any(signs) else None
