"""Re-check a certificate, independently of the code that produced it.

:func:`verify` takes a fitted model, the data it was fitted on and, optionally, a certificate
read back from JSON (the model's own ``certificate_`` otherwise), and re-checks all that can
be re-checked: the data fingerprint, the value of the returned model, ``bound <= value``, the
optimality claim against the bound, and the bound's witness where the proof has a compact
one. The witness checkers (one module each, keyed by ``Witness.kind``) use only numpy, scipy
and exact rational arithmetic on the data: none of them imports the search, solver or LP
code that produced the certificate.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .._certificate import Certificate, data_fingerprint
from ._conflicts import check_conflicts
from ._iis import check_iis_cover
from ._lasso import check_lasso_dual
from ._maxout import check_maxout_cover
from ._mrc import check_mrc_dual

__all__ = ["Check", "VerificationReport", "verify", "WITNESS_CHECKERS"]

#: the value of a 0-1 certificate is a sum of weights, re-summed here in another order
_SUM_RTOL = 1e-12


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


def _zero_one_value(model, X, y, w) -> float:
    """The weighted training errors of ``model``, from ``predict``."""
    return float(np.sum(w[np.asarray(model.predict(X)) != np.asarray(y)]))


#: ``Witness.kind`` -> ``checker(model, certificate, X, y, w, report)``: appends its checks
#: to the report and returns the bound its witness proves (re-derived), or None
WITNESS_CHECKERS: dict[str, Callable] = {
    "conflicts": check_conflicts,
    "iis_cover": check_iis_cover,
    "lasso_dual": check_lasso_dual,
    "maxout_cover": check_maxout_cover,
    "mrc_dual": check_mrc_dual,
}


def verify(model, X, y, sample_weight=None, *,
           certificate: Certificate | dict | None = None) -> VerificationReport:
    """Re-check the certificate of a fitted exactclf model on its training data.

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
    """
    report = VerificationReport()
    est = model[-1] if hasattr(model, "steps") else model
    if hasattr(model, "steps"):
        X = model[:-1].transform(X)
    if certificate is None:
        certificate = getattr(est, "certificate_", None)
        if certificate is None:
            report.add("certificate", False, f"{type(est).__name__} has no certificate_ "
                       "(not fitted, or not an exactclf estimator)")
            return report
    elif isinstance(certificate, dict):
        certificate = Certificate.from_dict(certificate)
    cert = certificate
    Xa = X if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    w = (np.ones(Xa.shape[0]) if sample_weight is None
         else np.asarray(sample_weight, dtype=np.float64))
    report.add("estimator", cert.estimator == type(est).__name__,
               f"certificate of {cert.estimator}, model {type(est).__name__}")
    report.add("data fingerprint", cert.fingerprint == data_fingerprint(Xa, y, sample_weight),
               "the SHA-256 of X, y and the weights")
    if not report.ok:  # another data set or model: nothing else is about them
        return report

    if cert.objective == "weighted training errors":
        value = _zero_one_value(est, X, y, w)
        report.add("value", math.isclose(value, cert.value, rel_tol=_SUM_RTOL, abs_tol=0.0),
                   f"the model makes {value!r} weighted errors; the certificate says "
                   f"{cert.value!r}")

    report.add("bound <= value", cert.bound <= cert.value,
               f"bound {cert.bound!r}, value {cert.value!r}")
    if cert.is_optimal:
        report.add("optimality", cert.value - cert.bound <= cert.rtol * abs(cert.value),
                   f"value {cert.value!r} within a relative {cert.rtol:g} of the bound "
                   f"{cert.bound!r}")

    kind = cert.witness.kind
    if kind == "none":
        if math.isfinite(cert.bound) and cert.bound > 0:
            report.not_checked.append(
                f"the bound {cert.bound!r} ({cert.bound_method}): "
                f"{cert.witness.note or 'no compact witness'}")
        return report
    checker = WITNESS_CHECKERS.get(kind)
    if checker is None:
        report.add("witness", False, f"unknown witness kind {kind!r}")
        return report
    proven = checker(est, cert, X, y, w, report)
    if proven is not None:
        report.add("witness proves the bound",
                   cert.bound <= proven + cert.rtol * abs(proven),
                   f"the witness proves {proven!r}; the certificate claims {cert.bound!r}")
    return report
