"""The estimators of the package, in one place: what the command line, the demo and the
common tests enumerate (a new estimator added here is picked up by all of them)."""

from __future__ import annotations

__all__ = ["MODELS", "estimator_class", "public_estimators"]

#: the command line's short names (``exactclf fit --model NAME``, ``exactclf demo``) and the
#: estimator each names
MODELS: dict[str, str] = {
    "ice": "ICEClassifier",
    "deepice": "DeepICEMaxoutClassifier",
    "threshold": "ThresholdNetLasso",
    "mrc": "MRCCCG",
    "ngd": "NGDClassifier",
}


def estimator_class(name: str) -> type:
    """The estimator class of a short name of :data:`MODELS`.

    Examples
    --------
    >>> estimator_class("ice").__name__
    'ICEClassifier'
    """
    import exactclf

    return getattr(exactclf, MODELS[name])


def public_estimators() -> dict[str, type]:
    """Every public estimator class of :mod:`exactclf`, by class name.

    Examples
    --------
    >>> sorted(public_estimators())[:2]
    ['DeepICEMaxoutClassifier', 'ICEClassifier']
    """
    from sklearn.base import BaseEstimator

    import exactclf

    return {name: obj for name in exactclf.__all__
            if isinstance(obj := getattr(exactclf, name), type)
            and issubclass(obj, BaseEstimator)}
