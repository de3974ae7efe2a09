"""The output losses of the threshold-net Lasso, one object each.

A loss ``L(f) = sum_i s_i l(f_i, y_i)`` (weights ``s``) provides what the solvers and the
certificates need: its value, its gradient in ``f``, the domain of its conjugate (the
feasible dual points: ``theta`` is a dual point when ``-theta`` is in the domain of
``L^*``), and the conjugate term of the Fenchel dual ``-L^*(-theta)``:

* squared, ``s/2 (f - y)^2``: ``-L^*(-theta) = theta . y - theta^2 / (2 s)``, any ``theta``;
* logistic, ``s log(1 + exp(-y f))``: with ``q = theta y / s`` in ``[0, 1]``,
  ``-L^*(-theta) = sum s H(q)``, ``H`` the binary entropy (natural log);
* hinge, ``s max(0, 1 - y f)``: with ``q`` in ``[0, 1]``, ``-L^*(-theta) = sum s q``.

The negative gradient at any ``f`` lies in the conjugate's domain, which is what makes it the
default dual candidate.
"""

from __future__ import annotations

import numpy as np

__all__ = ["LOSSES", "Squared", "Logistic", "Hinge"]

#: a dual point of the logistic or hinge loss must have ``theta_i y_i / s_i`` in ``[0, 1]``;
#: values outside by at most this much are rounding (of ``theta`` computed as ``s y q``) and
#: are projected onto the interval; anything further is an error
_DOMAIN_ATOL = 1e-12


class Squared:
    """``s/2 (f - y)^2``.

    Examples
    --------
    >>> loss, y, s = Squared(), np.array([1.0, -1.0]), np.ones(2)
    >>> loss.value(np.zeros(2), y, s), loss.dual_value(loss.to_domain(y, y, s), y, s)
    (array([0.5, 0.5]), 1.0)
    """

    name = "squared"

    def value(self, f, y, s):
        return 0.5 * s * (f - y) ** 2

    def gradient(self, f, y, s):
        return s * (f - y)

    def to_domain(self, theta, y, s):
        """``theta`` itself: the conjugate is finite everywhere."""
        return theta

    def dual_value(self, theta, y, s) -> float:
        return float(np.sum(theta * y - theta**2 / (2.0 * s)))


class _BoxLoss:
    """A loss whose conjugate's domain is the box ``0 <= theta_i y_i <= s_i``."""

    def to_domain(self, theta, y, s):
        """``theta`` projected onto the box after checking it lies there up to rounding;
        ``ValueError`` when it is further out (not a dual point: it bounds nothing)."""
        q = theta * y / s
        if np.any(q < -_DOMAIN_ATOL) or np.any(q > 1.0 + _DOMAIN_ATOL):
            raise ValueError(
                f"dual point outside the domain of the {self.name} loss's conjugate (theta_i "
                f"y_i / s_i in [{q.min():.3g}, {q.max():.3g}], must lie in [0, 1]): not a "
                "dual point, so it bounds nothing"
            )
        return y * s * np.clip(q, 0.0, 1.0)


class Logistic(_BoxLoss):
    """``s log(1 + exp(-y f))``, ``y`` in {-1, +1}.

    Examples
    --------
    >>> loss, y, s = Logistic(), np.array([1.0, -1.0]), np.ones(2)
    >>> theta = -loss.gradient(np.zeros(2), y, s)        # q = 1/2: the entropy's maximum
    >>> bool(np.isclose(loss.dual_value(theta, y, s), loss.value(np.zeros(2), y, s).sum()))
    True
    """

    name = "logistic"

    def value(self, f, y, s):
        return s * np.logaddexp(0.0, -y * f)

    def gradient(self, f, y, s):
        return -s * y * 0.5 * (1.0 - np.tanh(0.5 * y * f))  # -s y sigmoid(-y f)

    def dual_value(self, theta, y, s) -> float:
        q = np.clip(theta * y / s, 0.0, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            h = -(q * np.log(q) + (1 - q) * np.log1p(-q))
        return float(np.sum(s * np.where((q <= 0) | (q >= 1), 0.0, h)))


class Hinge(_BoxLoss):
    """``s max(0, 1 - y f)``, ``y`` in {-1, +1}; a subgradient where ``y f = 1``.

    Examples
    --------
    >>> loss, y, s = Hinge(), np.array([1.0, -1.0]), np.ones(2)
    >>> loss.value(np.array([2.0, 0.0]), y, s), loss.gradient(np.array([2.0, 0.0]), y, s)
    (array([0., 1.]), array([-0.,  1.]))
    """

    name = "hinge"

    def value(self, f, y, s):
        return s * np.maximum(0.0, 1.0 - y * f)

    def gradient(self, f, y, s):
        return -y * s * (y * f < 1.0)

    def dual_value(self, theta, y, s) -> float:
        return float(np.sum(np.clip(theta * y, 0.0, s)))


LOSSES = {loss.name: loss for loss in (Squared(), Logistic(), Hinge())}
