"""Re-check a certificate, independently of the code that produced it.

:func:`verify` takes a fitted model, the data it was fitted on and, optionally, a certificate
read back from JSON (the model's own ``certificate_`` otherwise), and re-checks all that can
be re-checked: the data fingerprint, the value of the returned model, ``bound <= value``, the
optimality claim against the bound, the model class where the estimator's parameters
constrain it (``max_features``: the class named, and the model in it), and the bound's
witness where the proof has a compact one. The witness checkers (one module each, keyed by
``Witness.kind``; ``feature_subsets`` in :mod:`._profiles`) use only numpy, scipy and exact
rational arithmetic on the data: none of them imports the search, solver or LP code that
produced the certificate.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .._base import with_class_weight
from .._certificate import Certificate, Witness, data_fingerprint
from ._conflicts import check_conflicts
from ._iis import check_iis_cover
from ._lasso import check_lasso_dual
from ._maxout import check_maxout_cover
from ._mrc import check_mrc_dual
from ._profiles import check_feature_subsets, profile_of

__all__ = ["Check", "VerificationReport", "verify", "WITNESS_CHECKERS"]


@dataclass(frozen=True)
class Check:
    """One re-checked claim: its name, whether it held, and what was compared."""

    name: str
    passed: bool
    detail: str = ""


@dataclass
class VerificationReport:
    """What :func:`verify` re-checked.

    ``ok`` is True when every check passed. ``checks`` lists them; ``not_checked`` says
    what the certificate claims without evidence that can be re-checked (an enumeration
    proof), so a reader knows what rests on trust in the code.
    """

    checks: list[Check] = field(default_factory=list)
    not_checked: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.passed for c in self.checks)

    def __bool__(self) -> bool:
        """``if verify(...)``: whether every check passed (:attr:`ok`)."""
        return self.ok

    def add(self, name: str, passed: bool, detail: str = "") -> bool:
        self.checks.append(Check(name, bool(passed), detail))
        return bool(passed)

    def __str__(self) -> str:
        lines = [f"[{'ok' if c.passed else 'FAILED'}] {c.name}" + (f": {c.detail}" if c.detail
                                                                   else "")
                 for c in self.checks]
        lines += [f"[not checked] {text}" for text in self.not_checked]
        lines.append("certificate verified" if self.ok else "certificate NOT verified")
        return "\n".join(lines)


#: ``Witness.kind`` -> ``checker(model, certificate, X, y, w, report, rtol)``: appends its
#: checks to the report and returns the bound its witness proves (re-derived) and the slack
#: within which a correct certificate's bound may exceed it, or None; ``rtol`` is the
#: profile's optimality tolerance (the slack a solver-derived bound is held to)
WITNESS_CHECKERS: dict[str, Callable] = {
    "conflicts": check_conflicts,
    "feature_subsets": check_feature_subsets,
    "iis_cover": check_iis_cover,
    "lasso_dual": check_lasso_dual,
    "maxout_cover": check_maxout_cover,
    "mrc_dual": check_mrc_dual,
}


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split()) or "(no message)"
    return f"{type(err).__name__}: {text[:300]}"


def _parse(certificate) -> Certificate | str:
    """The certificate as a :class:`Certificate` with fields of the right types, or why it
    is not one."""
    try:
        cert = (Certificate.from_dict(certificate) if isinstance(certificate, dict)
                else certificate)
    except Exception as err:  # any malformed JSON object is a failed check
        return f"not a readable certificate ({_one_line(err)})"
    if not isinstance(cert, Certificate):
        return f"a {type(cert).__name__}, not a Certificate or its dict"
    for name, kind in (("estimator", str), ("objective", str), ("is_optimal", bool),
                       ("fingerprint", str)):
        if not isinstance(getattr(cert, name), kind):
            return f"field {name!r} is not a {kind.__name__}"
    for name in ("value", "bound"):
        v = getattr(cert, name)
        if not isinstance(v, int | float) or isinstance(v, bool) or math.isnan(v):
            return f"field {name!r} is not a number"
    if not math.isfinite(cert.value):
        return "field 'value' is not finite"
    if not (isinstance(cert.witness, Witness) and isinstance(cert.witness.kind, str)
            and isinstance(cert.witness.data, dict)):
        return "the witness is not {kind: text, note: text, data: object}"
    return cert


def _data(X, y, sample_weight):
    """``X`` (float64, or sparse), ``y`` and the weights as arrays, or why they are not
    training data."""
    try:
        Xa = X if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        y = np.asarray(y)
        w = (np.ones(Xa.shape[0]) if sample_weight is None
             else np.asarray(sample_weight, dtype=np.float64))
    except Exception as err:
        return f"not numeric arrays ({_one_line(err)})"
    if (Xa.ndim != 2 or y.ndim not in (1, 2) or w.shape != (Xa.shape[0],)
            or len(y) != Xa.shape[0]):
        return (f"X of shape {Xa.shape}, y of shape {y.shape} and weights of shape "
                f"{w.shape} are not (n, d), (n,) or (n, k) for a regressor, and (n,)")
    data = Xa.data if sp.issparse(Xa) else Xa
    if not (np.all(np.isfinite(data)) and np.all(np.isfinite(w)) and np.all(w >= 0)):
        return "a feature or weight is not finite, or a weight is negative"
    return Xa, y, w


def verify(model, X, y, sample_weight=None, *,
           certificate: Certificate | dict | None = None) -> VerificationReport:
    """Re-check the certificate of a fitted exactclf model on its training data.

    Everything is re-derived from the model, the data and tolerances fixed by the model's
    class (see ``doc/user_guide/certificates.rst``, "What verify trusts"): the objective the
    certificate must state, the model's value of it, the witness kinds that can prove a
    bound for that class, the bound each witness proves, and the tolerance of the
    optimality claim; the certificate's own ``rtol`` and ``gap`` are not read. A malformed
    or mismatched certificate, witness or data is a failed check with its reason, never an
    exception.

    Parameters
    ----------
    model : fitted exactclf estimator, or a Pipeline ending in one
    X : array-like of shape (n_samples, n_features)
        The training data the model was fitted on (before the pipeline's transforms).
    y : array-like of shape (n_samples,)
    sample_weight : array-like of shape (n_samples,), default=None
    certificate : Certificate or dict, default=None
        The certificate to check (e.g. read back from JSON); the model's own
        ``certificate_`` when None.

    Returns
    -------
    VerificationReport
        ``ok`` is True when every claim that can be re-checked holds.

    Examples
    --------
    >>> from exactclf import ICEClassifier, verify
    >>> X, y = [[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 0]
    >>> clf = ICEClassifier().fit(X, y)
    >>> report = verify(clf, X, y)
    >>> report.ok, clf.training_errors_
    (True, 1.0)
    >>> verify(clf, X, [0, 1, 1, 0]).ok   # other labels: not the data of the proof
    False
    >>> forged = clf.certificate_.to_dict() | {"value": 0.0}
    >>> verify(clf, X, y, certificate=forged).ok
    False
    """
    report = VerificationReport()
    try:
        _verify(report, model, X, y, sample_weight, certificate)
    except Exception as err:  # a model or witness no check foresaw: not verified
        report.add("verification", False, f"could not be completed ({_one_line(err)})")
    return report


def _verify(report, model, X, y, sample_weight, certificate) -> None:
    est = model[-1] if hasattr(model, "steps") else model
    if certificate is None:
        certificate = getattr(est, "certificate_", None)
        if certificate is None:
            report.add("certificate", False, f"{type(est).__name__} has no certificate_ "
                       "(not fitted, or not an exactclf estimator)")
            return
    cert = _parse(certificate)
    if not report.add("certificate", isinstance(cert, Certificate),
                      cert if isinstance(cert, str) else "the fields of the format"):
        return
    profile = profile_of(est)
    if not report.add("estimator", profile is not None
                      and cert.estimator == type(est).__name__,
                      f"certificate of {cert.estimator}, model {type(est).__name__}"
                      + ("" if profile else " (not an exactclf estimator)")):
        return
    if hasattr(model, "steps"):
        try:
            X = model[:-1].transform(X)
        except Exception as err:
            report.add("data", False, f"the pipeline cannot transform X ({_one_line(err)})")
            return
    data = _data(X, y, sample_weight)
    if not report.add("data", not isinstance(data, str),
                      data if isinstance(data, str) else "finite features, one label and "
                      "one non-negative weight per row"):
        return
    Xa, y, w = data
    if not report.add("data fingerprint",
                      cert.fingerprint == data_fingerprint(Xa, y, sample_weight),
                      "the SHA-256 of X, y and the weights"):
        return  # another data set: nothing else is about it

    class_weight = getattr(est, "class_weight", None)
    if class_weight is not None:  # what the fit counted: each sample's weight times its
        # class's (scikit-learn's compute_sample_weight, from the labels)
        try:
            w = with_class_weight(w, class_weight, y)
        except Exception as err:
            report.add("class weights", False, f"{class_weight!r} does not weight these "
                       f"labels ({_one_line(err)})")
            return
    expected = profile.objective(est)
    report.add("objective", cert.objective == expected,
               f"{type(est).__name__} minimizes {expected!r}; the certificate says "
               f"{cert.objective!r}")
    if profile.model_class is not None:
        models = profile.model_class(est)
        report.add("model class", cert.model_class == models,
                   f"the model's parameters make its class {models!r}; the certificate says "
                   f"{cert.model_class!r}")
    held = None if profile.constraint is None else profile.constraint(est)
    if held is not None:
        report.add("model in its class", *held)
    kind = cert.witness.kind
    if not report.add("witness kind", kind in profile.witnesses,
                      f"{kind!r}; a {type(est).__name__} bound is proven by "
                      f"{sorted(profile.witnesses)}"):
        return
    try:
        with warnings.catch_warnings():
            # a model fitted on a DataFrame predicts the same on its values; scikit-learn
            # warns that they have no feature names
            warnings.filterwarnings("ignore", message="X does not have valid feature names")
            got = profile.value(est, Xa, y, w)
    except Exception as err:
        report.add("value", False, f"cannot be re-computed from the model "
                   f"({_one_line(err)})")
        return
    report.add("value", abs(got.value - cert.value) <= got.atol,
               f"the model's objective is {got.value!r}; the certificate says "
               f"{cert.value!r}")
    report.add("bound <= value", cert.bound <= cert.value,
               f"bound {cert.bound!r}, value {cert.value!r}")
    rtol = profile.optimality_rtol(kind, w)
    if cert.is_optimal:
        if rtol is None:
            report.add("optimality", False, f"{type(est).__name__} is a local method: it "
                       "proves no optimum")
        else:
            report.add("optimality", cert.value - cert.bound <= rtol * got.scale,
                       f"value {cert.value!r} within {rtol:g} of {got.scale!r} of the bound "
                       f"{cert.bound!r}")
    elif rtol is None and cert.bound != -math.inf:
        report.add("no bound", False, f"{type(est).__name__} is a local method: it proves "
                   f"no bound, the certificate claims {cert.bound!r}")

    if kind == "none":
        if math.isfinite(cert.bound) and cert.bound > 0:
            report.not_checked.append(
                f"the bound {cert.bound!r} ({cert.bound_method}): "
                f"{cert.witness.note or 'no compact witness'}")
        return
    try:
        proven = WITNESS_CHECKERS[kind](est, cert, Xa, y, w, report, rtol or 0.0)
    except Exception as err:  # a missing or ill-typed field of the witness
        report.add("witness", False, f"{kind!r} witness malformed ({_one_line(err)})")
        return
    if proven is None:
        report.add("witness", False, f"the {kind!r} witness proves no bound on this model")
        return
    bound, slack = proven
    report.add("witness proves the bound", cert.bound <= bound + slack,
               f"the witness proves {bound!r} (to within {slack:.3g}); the certificate "
               f"claims {cert.bound!r}")
