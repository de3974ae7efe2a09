"""Plumbing shared by the exact binary classifiers: validation, duplicates, prediction."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from ._geometry import AffineFrame, affine_frame

__all__ = [
    "BinaryData",
    "validate_binary",
    "merge_duplicates",
    "reset_fitted",
    "BinaryClassifierMixin",
]


def reset_fitted(estimator) -> None:
    """Forget every fitted attribute (public ``name_`` and private ``_name_``).

    Called first in ``fit``: a refit that fails must leave an unfitted estimator, never the
    previous model's weights next to the new data's ``classes_``.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> est = LogisticRegression().fit([[0.0], [1.0]], [0, 1])
    >>> reset_fitted(est)
    >>> hasattr(est, "coef_"), hasattr(est, "classes_")
    (False, False)
    """
    for name in [k for k in vars(estimator) if k.endswith("_") and not k.startswith("__")]:
        delattr(estimator, name)


def merge_duplicates(
    X: np.ndarray, y_pos: np.ndarray, sample_weight: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Merge identical rows into one point with per-label weights.

    Returns ``(U, wpos, wneg, inverse)`` with ``U[inverse] == X``.
    """
    U, inverse = np.unique(X, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    wpos = np.bincount(inverse, weights=sample_weight * y_pos, minlength=len(U))
    wneg = np.bincount(inverse, weights=sample_weight * ~y_pos, minlength=len(U))
    return U, wpos, wneg, inverse


@dataclass
class BinaryData:
    """Validated training data: samples, their weights, and the merged unique points
    (``U`` in the original features, ``Z`` in a well-conditioned frame)."""

    X: np.ndarray
    y: np.ndarray
    sample_weight: np.ndarray
    U: np.ndarray
    wpos: np.ndarray
    wneg: np.ndarray
    frame: AffineFrame
    Z: np.ndarray


def validate_binary(estimator, X, y, sample_weight) -> BinaryData:
    """Validate ``fit`` inputs of a binary classifier; set ``classes_`` and
    ``n_features_in_``; merge duplicate rows (zero-weight samples dropped)."""
    name = type(estimator).__name__
    X, y = validate_data(estimator, X, y, dtype=np.float64)
    check_classification_targets(y)
    classes, y_idx = np.unique(y, return_inverse=True)
    if len(classes) == 1:
        raise ValueError(
            f"{name} needs samples of 2 classes; the data has only 1 class: {classes[0]}."
        )
    if len(classes) > 2:
        raise ValueError(
            "Only binary classification is supported. The type of the target is "
            f"{type_of_target(y)} ({len(classes)} classes); use "
            f"sklearn.multiclass.OneVsRestClassifier({name}())."
        )
    # set only once the data is accepted: a refused refit must leave no classes_ behind
    estimator.classes_ = classes
    sw = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
    keep = sw > 0
    U, wpos, wneg, _ = merge_duplicates(X[keep], y_idx[keep] == 1, sw[keep])
    frame = affine_frame(U)
    return BinaryData(X, y, sw, U, wpos, wneg, frame, frame.transform(U))


class BinaryClassifierMixin(ClassifierMixin):
    """``predict`` from a ``decision_function`` that is positive for ``classes_[1]``, and
    the check that the fitted model realizes the errors its search reported."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def predict(self, X):
        """Predicted class: ``classes_[1]`` where ``decision_function > 0``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    def _realized_errors(self, data: BinaryData, expected: float) -> float:
        """The weighted training errors of the fitted model, checked against the search's
        ``expected``; on points too thin for the frame (not certified anyway) the model's
        arithmetic in the original units may differ from the frame's, and its own errors
        are the answer."""
        realized = float(data.sample_weight[self.predict(data.X) != data.y].sum())
        if data.frame.certifiable and not np.isclose(realized, expected, rtol=1e-12,
                                                     atol=1e-9):
            raise RuntimeError(
                f"internal error: the fitted {type(self).__name__} makes {realized} training "
                f"errors, its search found {expected}; please report this data"
            )
        return realized
