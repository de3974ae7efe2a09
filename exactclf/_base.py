"""Plumbing shared by the exact binary classifiers: validation, duplicates, prediction."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from ._certificate import certificate_view
from ._geometry import AffineFrame, affine_frame

__all__ = [
    "BinaryData",
    "errors_agree",
    "validate_binary",
    "check_count_weights",
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


def check_count_weights(weights, who: str) -> None:
    """Refuse weights that an exact count of errors cannot hold.

    An exact search that counts errors in integers (bitsets with ``int64`` totals) needs
    integer weights, and the totals it compares exact: every partial sum of integer weights
    is exact in ``float64`` (and far from ``int64``'s overflow) while the total stays below
    ``2**53``; beyond it the counts round or wrap, and a minimum could not be certified.

    Parameters
    ----------
    weights : array-like of shape (n_samples,)
        Non-negative finite sample weights.
    who : str
        What counts them, for the message.

    Raises
    ------
    ValueError
        If a weight is not an integer or the weights total ``2**53`` or more.

    Examples
    --------
    >>> check_count_weights([1, 2, 3], "the search")
    >>> check_count_weights([2.0**52, 2.0**52], "the search")
    Traceback (most recent call last):
    ...
    ValueError: the search counts errors exactly in integers: the sample weights must ...
    """
    w = np.asarray(weights, dtype=np.float64)
    if np.any(w % 1):
        raise ValueError(
            f"{who} needs integer sample weights (counts), times the class weights where "
            "class_weight is set: it counts errors exactly in integers. Give class_weight "
            "as a dict of integers (e.g. {0: n_1, 1: n_0}, proportional to 'balanced')."
        )
    # rounding is monotone and 2**53 is a float64, so the float64 sum reaches 2**53
    # exactly when the true total does: the test is exact although the sum may not be
    total = float(w.sum())
    if total >= 2.0**53:
        raise ValueError(
            f"{who} counts errors exactly in integers: the sample weights must total less "
            f"than 2**53 ({2.0**53:.1e}); they total {total:.1e}. Divide them by a common "
            "factor (their scale does not change the optimal model)."
        )


def rule_errors(data: BinaryData, positive: np.ndarray, coef: np.ndarray,
                intercept: float) -> float:
    """The weighted training errors of the rule ``X @ coef + intercept > 0`` (the decision of
    the linear classifiers' ``predict``) on the validated ``data`` whose positive samples are
    ``positive``, summed exactly rounded."""
    wrong = (data.X @ coef + intercept > 0) != positive
    return math.fsum(data.sample_weight[wrong].tolist())


def errors_agree(data: BinaryData, a: float, b: float) -> bool:
    """Whether two weighted error sums of ``data`` agree: they differ by rounding, relative
    to the total weight (an absolute tolerance would accept any value when the weights are
    small)."""
    return bool(np.isclose(a, b, rtol=1e-12, atol=1e-12 * float(data.sample_weight.sum())))


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


def with_class_weight(sample_weight: np.ndarray, class_weight, y) -> np.ndarray:
    """The sample weights times each sample's class weight (scikit-learn's semantics, as
    :func:`sklearn.utils.class_weight.compute_sample_weight` gives them; unchanged when
    ``class_weight`` is None).

    Examples
    --------
    >>> with_class_weight(np.array([1.0, 2.0, 1.0]), {1: 3}, np.array([0, 1, 1])).tolist()
    [1.0, 6.0, 3.0]
    """
    if class_weight is None:
        return sample_weight
    return sample_weight * compute_sample_weight(class_weight, y)


def validate_binary(estimator, X, y, sample_weight) -> BinaryData:
    """Validate ``fit`` inputs of a binary classifier; set ``classes_`` and
    ``n_features_in_``; merge duplicate rows (zero-weight samples dropped). The weights are
    the sample weights times the estimator's ``class_weight``, where it has one."""
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
    sw = with_class_weight(_check_sample_weight(sample_weight, X, ensure_non_negative=True),
                           getattr(estimator, "class_weight", None), y)
    keep = sw > 0
    U, wpos, wneg, _ = merge_duplicates(X[keep], y_idx[keep] == 1, sw[keep])
    frame = affine_frame(U)
    return BinaryData(X, y, sw, U, wpos, wneg, frame, frame.transform(U))


class BinaryClassifierMixin(ClassifierMixin):
    """``predict`` from a ``decision_function`` that is positive for ``classes_[1]``, the
    check that the fitted model realizes the errors its search reported, and the fitted
    attributes of a 0-1 certificate, views of ``certificate_``."""

    training_errors_ = certificate_view(
        "value", "Weighted training errors of the fitted model (realized by ``predict``).")
    is_optimal_ = certificate_view(
        "is_optimal", "Whether ``training_errors_`` is proven minimal.")
    lower_bound_ = certificate_view("bound", "A proven lower bound on the minimum.")
    lower_bound_method_ = certificate_view("bound_method", "How ``lower_bound_`` was proven.")
    gap_ = certificate_view(
        "gap", "``(training_errors_ - lower_bound_) / training_errors_``; 0 when optimal.")
    stop_reason_ = certificate_view("stop_reason", "Why the search stopped early, or None.")
    fit_time_ = certificate_view("fit_time", "Seconds spent in ``fit``.")

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

    def _training_errors(self, data: BinaryData) -> float:
        """The weighted training errors of the fitted model, as ``predict`` makes them."""
        with warnings.catch_warnings():
            # data.X is the validated array of a fit on a DataFrame: its names are the
            # model's own, so scikit-learn's check of missing names does not apply
            warnings.filterwarnings("ignore", message="X does not have valid feature names",
                                    category=UserWarning)
            predicted = self.predict(data.X)
        return float(data.sample_weight[predicted != data.y].sum())

    def _realized_errors(self, data: BinaryData, expected: float,
                         in_frame: float | None = None) -> float:
        """The weighted training errors of the fitted model, checked against the search's
        ``expected``; on points too thin for the frame (not certified anyway) the model's
        arithmetic in the original units may differ from the frame's, and its own errors
        are the answer. So are they where the same model, evaluated in the frame, makes
        ``in_frame`` errors equal to ``expected``: float64 cannot hold the model in the
        original units (a huge offset against a tiny spread), and the caller, seeing the
        difference, does not certify it."""
        realized = self._training_errors(data)
        if data.frame.certifiable and not errors_agree(data, realized, expected) and (
                in_frame is None or not errors_agree(data, in_frame, expected)):
            raise RuntimeError(
                f"internal error: the fitted {type(self).__name__} makes {realized} training "
                f"errors, its search found {expected}; please report this data"
            )
        return realized
