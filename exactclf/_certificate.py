"""The certificate: what a fitted estimator proves about the model it returns.

Every estimator exposes one :class:`Certificate` as ``certificate_``; its other certificate
attributes (``is_optimal_``, ``lower_bound_``, ``gap_``, ``upper_``, ``lower_``, ...) are
views of it. A certificate states the value of the returned model (weighted training errors,
regularized loss, worst-case risk), a proven lower bound on the optimum of the training
problem and how it was proven, one gap (relative, invariant to the units of the weights),
whether the model is proven optimal, why the search stopped, the model class the proof
covers, and a fingerprint of the data it was proven on. Where the proof has a compact
witness (the IIS cover's infeasible subsystems, an LP or Lasso dual point) the certificate
carries it, so that :func:`exactclf.verify` can re-check the proof without the code that
produced it; an enumeration proof has no compact witness, and the certificate says so.

The format of ``to_dict`` (a JSON object) is documented in the user guide
(``doc/user_guide/certificates.rst``); ``format`` names its version.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = [
    "BoundMethod",
    "TextEnum",
    "CERTIFICATE_FORMAT",
    "LASSO_OBJECTIVES",
    "MRC_OBJECTIVES",
    "NGD_OBJECTIVE",
    "ZERO_ONE_OBJECTIVE",
    "class_weighted",
    "Certificate",
    "StopReason",
    "Witness",
    "certificate_view",
    "data_fingerprint",
    "relative_gap",
]

#: the version of the JSON format written by :meth:`Certificate.to_dict`
CERTIFICATE_FORMAT = "exactclf-certificate/1"

# What ``Certificate.objective`` says ``value`` measures, by estimator: the one wording each
# estimator writes and :func:`exactclf.verify` holds a certificate to (it re-computes that
# objective from the model, whatever the certificate says)
#: ICEClassifier and DeepICEMaxoutClassifier
ZERO_ONE_OBJECTIVE = "weighted training errors"
#: MRCCCG, by ``loss``
MRC_OBJECTIVES = {"0-1": "worst-case 0-1 risk", "log": "worst-case log loss"}
#: the threshold networks, by ``loss``
LASSO_OBJECTIVES = {
    loss: f"{loss} loss + weight decay: sum_i s_i {term} + beta * |coef_|_1, summed over the "
          "outputs (s: the sample weights; f: the network's output; y: the target, +-1 per "
          "class for a classifier)"
    for loss, term in (("squared", "(f(x_i) - y_i)^2 / 2"),
                       ("logistic", "log(1 + exp(-y_i f(x_i)))"),
                       ("hinge", "max(0, 1 - y_i f(x_i))"))
}


def class_weighted(objective: str, class_weight) -> str:
    """``objective`` as it reads when each sample's weight is multiplied by its class's
    ``class_weight`` (scikit-learn's semantics: a dict by class, or ``"balanced"``).

    Examples
    --------
    >>> class_weighted(ZERO_ONE_OBJECTIVE, {0: 1, 1: 5})
    'weighted training errors, each sample weight times class_weight={0: 1, 1: 5} of its class'
    >>> class_weighted(ZERO_ONE_OBJECTIVE, None)
    'weighted training errors'
    """
    if class_weight is None:
        return objective
    return f"{objective}, each sample weight times class_weight={class_weight!r} of its class"


#: NGDClassifier
NGD_OBJECTIVE = ("(training cross-entropy + alpha / 2 * sum of the squared weights) / total "
                 "sample weight, on the data passed to fit")


class TextEnum(str, Enum):
    """An enum whose members are their texts: each compares equal to, and prints as, its
    value (the base of the names of stop reasons, bound methods and schedule stages)."""

    def __str__(self) -> str:
        return self.value


class BoundMethod(TextEnum):
    """How the ICE and Deep-ICE searches prove a lower bound: the start of
    ``lower_bound_method_`` (a bound's text may add details, such as a partition's blocks).

    A ``str``: each compares equal to that text. :meth:`of` reads it back.

    Examples
    --------
    >>> BoundMethod.of("partition (3/32 blocks of ~60 points solved)")
    <BoundMethod.PARTITION: 'partition'>
    >>> BoundMethod.of("IIS cover LP relaxation"), BoundMethod.CONFLICTS == "conflicting duplicates"
    (<BoundMethod.IIS_LP: 'IIS cover LP relaxation'>, True)
    """

    CONFLICTS = "conflicting duplicates"
    EXHAUSTIVE = "exhaustive search"
    IIS_COVER = "IIS cover"
    IIS_MASTER = "IIS cover (Benders master)"
    IIS_LP = "IIS cover LP relaxation"
    IIS_MIP = "IIS cover MIP"
    IIS_PACKING = "IIS packing"
    LOCAL_COVER = "local IIS cover"
    PARTITION = "partition"
    # the maxout networks
    EXACT = "exact"
    LINEAR = "linear"
    OBSTRUCTION_COVER = "obstruction cover"
    PAIR_COVER = "pair obstruction cover"
    JOINT_COVER = "joint cover"

    @classmethod
    def of(cls, text: str) -> BoundMethod:
        """The method whose name is the longest start of ``text``."""
        starts = [m for m in cls if text.startswith(m.value)]
        if not starts:
            raise ValueError(f"not a bound method: {text!r}")
        return max(starts, key=lambda m: len(m.value))


class StopReason(TextEnum):
    """Why a search stopped before its proof completed (None on a certificate: it did not).

    A ``str``: each compares equal to the text the ``stop_reason_`` attributes always had.

    Examples
    --------
    >>> StopReason.TIME_LIMIT == "time_limit", StopReason("interrupted").name
    (True, 'INTERRUPTED')
    """

    INTERRUPTED = "interrupted"
    TIME_LIMIT = "time_limit"
    MAX_CANDIDATES = "max_candidates"
    MAX_ITER = "max_iter"
    BOUNDS_STALLED = "bounds stalled"
    NUMERICAL = "numerical"
    OPEN_GAP = "converged with a gap above the optimality tolerance"
    MASTER_FAILED = "master failed"
    THIN_POINTS = ("points too thin to resolve in float64: the thinnest direction of the "
                   "standardized points spans less than 1e-05 of the widest (as does a "
                   "feature that is an affine combination of others up to rounding)")
    UNREALIZABLE_MARGIN = "margin below float64 resolution"
    NEAR_TIES = ("points within rounding of a hyperplane through others, not exactly on it "
                 "(a decimal grid in binary): float64 cannot enumerate the dichotomies that "
                 "split them")
    SAMPLED_PATTERNS = "sampled arrangement patterns"
    NO_PROOF = "no proof: a local method"


def relative_gap(value: float, bound: float) -> float:
    """The one gap of the package: ``(value - bound) / |value|``, 0 when ``value`` is 0 (or
    the bound meets it), ``inf`` without a finite bound.

    Invariant to the units of the weights (both scale alike); never negative.

    Examples
    --------
    >>> relative_gap(8.0, 6.0), relative_gap(8.0 * 2**-40, 6.0 * 2**-40), relative_gap(0.0, 0.0)
    (0.25, 0.25, 0.0)
    """
    if value <= bound:
        return 0.0
    if not math.isfinite(bound):
        return math.inf
    return float((value - bound) / abs(value))


def data_fingerprint(X, y, sample_weight=None) -> str:
    """A SHA-256 of the training data as the estimator saw it: ``X`` in float64 (C order,
    with its shape; a sparse ``X`` by its stored entries in CSR order), the labels as text
    and the weights in float64 (ones when None). ``-0.0`` counts as ``0.0``.

    The labels enter as text so that ``[0, 1]`` and ``["0", "1"]`` name the same data; a
    changed value, row, label or weight changes the fingerprint.

    Examples
    --------
    >>> a = data_fingerprint([[0.0, 1.0], [2.0, 3.0]], [0, 1])
    >>> a == data_fingerprint([[0, 1], [2, 3]], ["0", "1"], [1, 1])
    True
    >>> a == data_fingerprint([[0.0, 1.0], [2.0, 3.0]], [1, 0])
    False
    """
    h = hashlib.sha256()
    if sp.issparse(X):  # its stored entries, canonically ordered (never densified)
        X = sp.csr_matrix(X, dtype=np.float64)
        X.sum_duplicates()
        X.eliminate_zeros()
        h.update(repr(("csr", X.shape)).encode())
        for part in (X.indptr.astype("<i8"), X.indices.astype("<i8"), X.data + 0.0):
            h.update(part.astype(part.dtype.newbyteorder("<")).tobytes())
    else:
        X = np.asarray(X, dtype=np.float64)
        X = np.ascontiguousarray(X.reshape(-1, 1) if X.ndim == 1 else X) + 0.0
        h.update(repr(X.shape).encode())
        h.update(X.astype("<f8").tobytes())
    y = np.asarray(y).ravel()
    w = (np.ones(len(y)) if sample_weight is None
         else np.ascontiguousarray(np.asarray(sample_weight, dtype=np.float64).ravel()))
    h.update("\x1f".join(map(str, y.tolist())).encode())
    h.update(w.astype("<f8").tobytes())
    return h.hexdigest()


@dataclass(frozen=True)
class Witness:
    """The compact evidence of a bound that a third party can re-check.

    ``kind`` names the checker (``"none"`` for a proof without a compact witness, such as
    an enumeration, with ``note`` saying why); ``data`` holds its JSON-able content.
    """

    kind: str = "none"
    note: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Certificate:
    """What the fit proves about the returned model.

    Parameters
    ----------
    estimator : str
        The estimator's class name.
    model_class : str
        The models the proof ranges over ("affine classifiers", "maxout networks of K=3
        half-spaces, both polarities", ...).
    objective : str
        What ``value`` and ``bound`` measure (minimized).
    value : float
        The objective of the returned model, re-checked on that model.
    bound : float
        A proven lower bound on the minimum of ``objective`` over ``model_class``
        (``-inf`` without one).
    bound_method : str
        How ``bound`` was proven.
    is_optimal : bool
        Whether the proof completed: ``value`` is then the minimum (within ``rtol``).
    stop_reason : StopReason or None
        Why the search stopped early (None when it did not).
    fit_time : float
        Seconds the fit took.
    fingerprint : str
        :func:`data_fingerprint` of the training data.
    n_samples : int
        Rows of the training data.
    rtol : float
        The relative tolerance within which ``is_optimal`` holds (0: exact).
    witness : Witness
        The compact evidence of ``bound``, or a ``"none"`` witness saying why there is none.

    Examples
    --------
    >>> c = Certificate("ICEClassifier", "affine classifiers", "weighted training errors",
    ...                 value=4.0, bound=3.0, bound_method="IIS cover", is_optimal=False,
    ...                 stop_reason=StopReason.TIME_LIMIT, fit_time=1.5, fingerprint="ab",
    ...                 n_samples=10)
    >>> c.gap
    0.25
    >>> Certificate.from_dict(c.to_dict()) == c
    True
    """

    estimator: str
    model_class: str
    objective: str
    value: float
    bound: float
    bound_method: str
    is_optimal: bool
    stop_reason: StopReason | None
    fit_time: float
    fingerprint: str
    n_samples: int
    rtol: float = 0.0
    witness: Witness = field(default_factory=Witness)

    def __post_init__(self):
        # a BoundMethod (a str) is kept as its text: the attribute is documented as str
        object.__setattr__(self, "bound_method", str(self.bound_method))

    @property
    def gap(self) -> float:
        """``(value - bound) / |value|`` (:func:`relative_gap`); 0 when optimal."""
        return 0.0 if self.is_optimal else relative_gap(self.value, self.bound)

    def to_dict(self) -> dict[str, Any]:
        """The certificate as a JSON-able dict (non-finite bounds as ``"-inf"``/``"inf"``)."""
        out = asdict(self)
        out["stop_reason"] = None if self.stop_reason is None else self.stop_reason.value
        for key in ("value", "bound"):
            if not math.isfinite(out[key]):
                out[key] = repr(float(out[key]))
        return {"format": CERTIFICATE_FORMAT, **out, "gap": _json_float(self.gap)}

    def to_json(self, **kwargs) -> str:
        """``json.dumps(self.to_dict(), **kwargs)``."""
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Certificate:
        """The certificate written by :meth:`to_dict` (``gap`` is recomputed, not read)."""
        if d.get("format") != CERTIFICATE_FORMAT:
            raise ValueError(f"not an {CERTIFICATE_FORMAT} certificate: format "
                             f"{d.get('format')!r}")
        fields = {k: v for k, v in d.items() if k not in ("format", "gap")}
        fields["value"], fields["bound"] = float(fields["value"]), float(fields["bound"])
        reason = fields["stop_reason"]
        fields["stop_reason"] = None if reason is None else StopReason(reason)
        fields["witness"] = Witness(**fields["witness"])
        return cls(**fields)


def certificate_view(name: str, doc: str) -> property:
    """A read-only fitted attribute that is ``certificate_.<name>`` (absent, like any
    fitted attribute, before ``fit``: ``hasattr`` is then False)."""
    return property(lambda self: getattr(self.certificate_, name), doc=doc)


def _json_float(x: float) -> float | str:
    return x if math.isfinite(x) else repr(float(x))
