"""Dense feed-forward classifier networks in array-generic code.

Everything here takes the array namespace ``xp`` (NumPy on the CPU, CuPy on a GPU) and only
uses functions both provide, so one implementation serves both devices; run with NumPy it is
also the reference the GPU path is tested against. No scikit-learn objects appear here.

Notation. A network with hidden layers ``1..L`` maps ``X`` to the basis
``Phi = A_L = f(A_{L-1} @ W_L + b_L)`` (``A_0 = X``, ``f`` the activation) and then to the
logits ``Z = Phi @ W + b`` of the output layer. Two classes use one logit (logistic output,
``P(class 1) = sigmoid(z)``), more classes one logit per class (softmax output). With sample
weights ``s_i`` and ``S = sum(s_i)`` the objective of a batch is

    F = (1/S) * sum_i s_i * CE(y_i, Z_i) + alpha / (2 S) * sum_l ||W_l||_F^2,

the L2 term on every weight matrix (not on the intercepts) scaled by ``1/S`` as in
scikit-learn's MLPClassifier. For fixed hidden weights ``F`` is a convex function of the output
layer ``(W, b)`` (strictly convex in ``W`` when ``alpha > 0``): :func:`newton_output_layer`
minimizes it by inexact Newton steps (truncated conjugate gradients on Hessian-vector
products, subsampled on large batches; Armijo backtracking; optionally a proximal term).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = [
    "ACTIVATIONS",
    "AdamState",
    "NewtonResult",
    "glorot_uniform_init",
    "forward_hidden",
    "output_logits",
    "cross_entropy",
    "probabilities",
    "log_probabilities",
    "objective",
    "logit_gradient",
    "network_loss",
    "output_gradient",
    "output_hvp",
    "conjugate_gradient",
    "newton_output_layer",
    "identifies_output_layer",
    "backprop",
    "adam_update",
]

ACTIVATIONS = ("identity", "logistic", "tanh", "relu")


# -- activations ----------------------------------------------------------------------------
def _activate(Z, activation: str, xp):
    """Apply the hidden activation to pre-activations ``Z`` (a new array)."""
    if activation == "identity":
        return Z
    if activation == "tanh":
        return xp.tanh(Z)
    if activation == "relu":
        return xp.maximum(Z, 0.0)
    if activation == "logistic":
        return _sigmoid(Z, xp)
    raise ValueError(f"unknown activation {activation!r}")


def _activation_derivative(A, activation: str, xp):
    """Derivative of the activation expressed through its output ``A = f(Z)``."""
    if activation == "identity":
        return xp.ones_like(A)
    if activation == "tanh":
        return 1.0 - A * A
    if activation == "relu":
        return (A > 0).astype(A.dtype)
    if activation == "logistic":
        return A * (1.0 - A)
    raise ValueError(f"unknown activation {activation!r}")


def _sigmoid(Z, xp):
    """``1 / (1 + exp(-Z))`` without overflow: with ``e = exp(-|Z|)`` it is ``1 / (1 + e)``
    for ``Z >= 0`` and ``e / (1 + e)`` otherwise (full relative precision in both tails)."""
    E = xp.exp(-xp.abs(Z))
    return xp.where(Z >= 0, 1.0, E) / (1.0 + E)


def _softplus(Z, xp):
    """``log(1 + exp(Z))`` without overflow, as ``max(Z, 0) + log1p(exp(-|Z|))``.

    Equal to ``logaddexp(0, Z)``, which NumPy evaluates several times more slowly.
    """
    return xp.maximum(Z, 0.0) + xp.log1p(xp.exp(-xp.abs(Z)))


# -- reductions over the short axis of tall arrays --------------------------------------------
# NumPy's ``sum``/``max`` along an axis of a tall, narrow array (n_samples x a few outputs)
# run an inner loop per row or column and are an order of magnitude slower than a BLAS
# matrix-vector product or a few elementwise ``maximum`` calls over the columns; the logits
# of the loss and of prediction are of that shape (the Newton phase, which reduces them many
# times, keeps them transposed instead: see the note above :class:`_OutputLayer`).
_NARROW = 16  # up to this many columns, the row maximum is taken column by column


def _mm(A, B, xp):
    """``A @ B``: on a device through ``xp.matmul``, which a namespace may route to kernels
    a CUDA graph can capture (:mod:`exactclf.ngd._device`); NumPy and SciPy sparse operands
    through the operator."""
    if xp is np or sp.issparse(A) or sp.issparse(B):
        return A @ B
    return xp.matmul(A, B)


def _row_sum(A, xp):
    """Sums of the rows of a 2-D array (shape ``(n,)``)."""
    return _mm(A, xp.ones(A.shape[1], dtype=A.dtype), xp)


def _column_sum(A, xp):
    """Sums of the columns of a 2-D array (shape ``(k,)``)."""
    return _mm(xp.ones(A.shape[0], dtype=A.dtype), A, xp)


def _row_max(A, xp):
    """Maxima of the rows of a 2-D array (shape ``(n,)``)."""
    if A.shape[1] > _NARROW:
        return A.max(axis=1)
    m = A[:, 0]
    for k in range(1, A.shape[1]):
        m = xp.maximum(m, A[:, k])
    return m


# -- initialization -------------------------------------------------------------------------
def glorot_uniform_init(layer_units, activation: str, random_state: np.random.RandomState):
    """Glorot-uniform weights and intercepts, drawn exactly as scikit-learn's MLP draws them.

    For each layer in turn, the weight matrix ``(fan_in, fan_out)`` and then the intercept
    vector ``(fan_out,)`` are drawn from ``U(-r, r)`` with ``r = sqrt(c / (fan_in + fan_out))``,
    ``c = 2`` for the logistic activation and ``c = 6`` otherwise. Using the same
    ``RandomState`` stream reproduces MLPClassifier's initial network.

    Parameters
    ----------
    layer_units : sequence of int
        ``[n_features, *hidden_layer_sizes, n_outputs]``.
    activation : str
        Hidden activation (selects ``c``).
    random_state : numpy.random.RandomState

    Returns
    -------
    coefs, intercepts : list of ndarray
        NumPy arrays (float64).

    Examples
    --------
    >>> import numpy as np
    >>> coefs, intercepts = glorot_uniform_init([2, 3, 1], "tanh", np.random.RandomState(0))
    >>> [c.shape for c in coefs], [b.shape for b in intercepts]
    ([(2, 3), (3, 1)], [(3,), (1,)])
    >>> bool(np.abs(coefs[0]).max() <= np.sqrt(6 / 5))
    True
    """
    factor = 2.0 if activation == "logistic" else 6.0
    coefs, intercepts = [], []
    for fan_in, fan_out in zip(layer_units[:-1], layer_units[1:], strict=True):
        bound = np.sqrt(factor / (fan_in + fan_out))
        coefs.append(random_state.uniform(-bound, bound, (fan_in, fan_out)))
        intercepts.append(random_state.uniform(-bound, bound, fan_out))
    return coefs, intercepts


# -- forward --------------------------------------------------------------------------------
def forward_hidden(X, coefs, intercepts, activation: str, xp):
    """Activations ``[X, A_1, ..., A_L]`` of the input and of every hidden layer.

    ``coefs``/``intercepts`` hold all layers including the output layer, which is not applied.
    ``X`` may be a SciPy sparse matrix when ``xp`` is NumPy (only ``X @ W`` is used on it).
    """
    acts = [X]
    for W, b in zip(coefs[:-1], intercepts[:-1], strict=True):
        acts.append(_activate(_mm(acts[-1], W, xp) + b, activation, xp))
    return acts


def output_logits(Phi, W, b, xp=np):
    """Logits ``Phi @ W + b`` of the output layer, shape ``(n_samples, n_outputs)``."""
    return _mm(Phi, W, xp) + b


def _log_normalizer(Z, xp):
    """Row-wise log-sum-exp of the class scores, stable for any magnitude.

    One output column means the logistic model with implicit scores ``(0, z)``.
    """
    if Z.shape[1] == 1:
        return _softplus(Z[:, 0], xp)
    m = _row_max(Z, xp)
    return m + xp.log(_row_sum(xp.exp(Z - m[:, None]), xp))


def cross_entropy(Z, Y, xp):
    """Per-sample cross-entropy ``-log P(y_i | z_i)`` computed from the logits.

    Parameters
    ----------
    Z : array of shape (n_samples, n_outputs)
        Logits; one column = logistic output, more = softmax output.
    Y : array of shape (n_samples, n_outputs)
        Targets: 0/1 column for the logistic output, one-hot rows for softmax.
    xp : module
        Array namespace.

    Returns
    -------
    array of shape (n_samples,)
        Finite for every finite ``Z`` (no ``log(0)``).

    Examples
    --------
    >>> import numpy as np
    >>> Z = np.array([[1000.0, 0.0], [0.0, 1000.0]])
    >>> cross_entropy(Z, np.eye(2), np).tolist()
    [0.0, 0.0]
    >>> cross_entropy(np.array([[-800.0]]), np.array([[1.0]]), np).tolist()
    [800.0]
    """
    return _log_normalizer(Z, xp) - _row_sum(Y * Z, xp)


def probabilities(Z, xp):
    """Class probabilities from logits: ``sigmoid`` for one column, softmax otherwise.

    For one column the result has that one column ``P(class 1)``.
    """
    if Z.shape[1] == 1:
        return _sigmoid(Z, xp)
    E = xp.exp(Z - _row_max(Z, xp)[:, None])
    return E / _row_sum(E, xp)[:, None]


def log_probabilities(Z, xp):
    """Log class probabilities of *all* classes, shape ``(n_samples, n_classes)``.

    One logit column gives the two columns ``(log(1 - p), log p)``.
    """
    if Z.shape[1] == 1:
        return xp.concatenate([-_softplus(Z, xp), -_softplus(-Z, xp)], axis=1)
    return Z - _log_normalizer(Z, xp)[:, None]


# -- objective of the output layer ------------------------------------------------------------
def _weighted_sum(values, sw):
    return values.sum() if sw is None else (sw * values).sum()


def objective(Phi, Y, sw, S: float, W, b, alpha: float, xp, penalty_rest: float = 0.0) -> float:
    """Batch objective ``F`` as a function of the output layer.

    ``sw`` is the per-sample weight array or None (all ones), ``S`` the weight total and
    ``penalty_rest`` the sum of squared entries of the *other* weight matrices (a constant
    while only the output layer changes).
    """
    loss = _weighted_sum(cross_entropy(output_logits(Phi, W, b, xp), Y, xp), sw)
    reg = 0.5 * alpha * (float((W * W).sum()) + penalty_rest)
    return (float(loss) + reg) / S


def logit_gradient(Z, Y, sw, xp):
    """Gradient of ``sum_i s_i CE_i`` with respect to the logits: ``s_i (p_i - y_i)``."""
    D = probabilities(Z, xp) - Y
    return D if sw is None else D * sw[:, None]


def network_loss(Z, Y, sw, S: float, coefs, alpha: float, xp, on_device: bool = False):
    """Batch objective ``F`` of the whole network from its logits ``Z``: a float, or
    (``on_device``) a 0-d array, nothing read back."""
    if on_device:
        reg = 0.5 * alpha * sum((W * W).sum() for W in coefs)
        return (_weighted_sum(cross_entropy(Z, Y, xp), sw) + reg) / S
    loss = float(_weighted_sum(cross_entropy(Z, Y, xp), sw))
    reg = 0.5 * alpha * sum(float((W * W).sum()) for W in coefs)
    return (loss + reg) / S


# The Newton phase works on the augmented basis ``U = [Phi, 1]`` and the stacked output layer
# ``T = [W; b]`` (shape ``(m + 1, k)``), so that the logits are the single product ``U @ T`` and
# every derivative is one or two products with ``U``; the penalty is ``T^T diag(reg) T / 2``
# with ``reg = (alpha, ..., alpha, 0)``. It minimizes ``S * F`` (sums over the batch, not
# means): the same minimizer and Newton steps, without divisions by ``S``.
#
# Its per-sample arrays (logits, probabilities, their directions) are kept transposed, class
# by sample (``k x n``, C order): the reductions over the classes are then elementwise
# operations along contiguous rows and per-sample vectors broadcast without a copy, where the
# ``n x k`` layout needs a BLAS matrix-vector or dot product per reduction (which OpenBLAS
# runs multithreaded from about 10^4 entries: on a busy machine those thread hand-offs cost
# more than the arithmetic) or NumPy's slow reductions along a short axis.
#: the Hessian-vector products of a large batch use every ``stride``-th sample, at least this
#: many samples and this many per output-layer parameter: the gradient, the line search and so
#: the step's acceptance stay exact, the curvature estimate from a subsample costs a fraction
HESSIAN_MIN_SAMPLES = 1024
HESSIAN_SAMPLES_PER_PARAM = 16


class _OutputLayer:
    """The batch objective of the output layer for one fixed basis (see the note above).

    ``Ut`` is ``U`` transposed (``(m + 1) x n``); the logits ``Zt = T^T Ut`` and the
    probabilities ``Pt`` are ``k x n``.
    """

    def __init__(self, Phi, Y, sw, alpha: float, xp, stride: int = 1):
        self.xp = xp
        n, m = Phi.shape
        dtype = Phi.dtype
        if sp.issparse(Phi):  # no hidden layer on sparse input (only with NumPy)
            self.Ut = sp.vstack([Phi.T, np.ones((1, n), dtype=dtype)], format="csr")
        else:
            self.Ut = xp.concatenate([Phi.T, xp.ones((1, n), dtype=dtype)], axis=0)
        self.s = sw
        # U^T (s * Y): the target's part of the gradient and of <SY, Z> = <U^T SY, T>, which
        # is all the line search needs of the targets
        self.UtSY = None if Y is None else _mm(self.Ut, Y if sw is None else Y * sw[:, None],
                                               xp)
        # filled on the device (no host-to-device copy: the step can be a CUDA graph)
        self.reg = xp.full((m + 1, 1), alpha, dtype=dtype)
        self.reg[-1] = 0.0
        # the Hessian from every ``stride``-th sample, scaled to the weight of the batch
        self.cols = slice(None, None, stride)
        if stride == 1:
            self.Ut_h = self.Ut
        else:  # contiguous once, not copied by every product
            self.Ut_h = (self.Ut[:, self.cols] if sp.issparse(self.Ut)
                         else xp.ascontiguousarray(self.Ut[:, self.cols]))
        if stride == 1:
            self.scale = None
        elif sw is None:
            self.scale = n / self.Ut_h.shape[1]
        else:  # an array on the device: nothing read back
            self.scale = sw.sum() / sw[self.cols].sum()

    def stack(self, W, b):
        return self.xp.concatenate([W, b[None, :]], axis=0)

    def logits(self, T):
        """``(U @ T)^T``, shape ``k x n``."""
        return _mm(T.T, self.Ut, self.xp)

    def normalizer(self, Zt):
        """``sum_i s_i lse(z_i)`` and what the probabilities are computed from.

        ``Zt`` may carry leading axes (the trials of the line search on a device): the
        classes are axis ``-2``, the samples axis ``-1``, and the sums have the leading shape.
        """
        xp = self.xp
        if Zt.shape[-2] == 1:
            E = xp.exp(-xp.abs(Zt))
            lse = (xp.maximum(Zt, 0.0) + xp.log1p(E))[..., 0, :]
        else:
            mx = Zt.max(axis=-2)
            E = xp.exp(Zt - mx[..., None, :])
            total = E.sum(axis=-2)
            lse, E = mx + xp.log(total), (E, total)
        if self.s is None:
            return lse.sum(axis=-1), E
        return (xp.vdot(self.s, lse) if lse.ndim == 1 else _mm(lse, self.s, xp)), E

    def probabilities(self, Zt, parts):
        if Zt.shape[0] == 1:
            return self.xp.where(Zt >= 0, 1.0, parts) / (1.0 + parts)
        E, total = parts
        return E / total

    def gradient(self, T, Pt):
        SP = Pt if self.s is None else Pt * self.s
        return _mm(self.Ut, SP.T, self.xp) - self.UtSY + self.reg * T

    def curvature(self, Pt):
        """The probabilities of the Hessian's samples and their weights in it:
        ``s p (1 - p)`` (logistic) or ``s p`` (softmax), times the subsampling scale."""
        Pt = Pt[:, self.cols]
        C = Pt * (1.0 - Pt) if Pt.shape[0] == 1 else Pt
        C = C if self.s is None else C * self.s[self.cols]
        return Pt, C if self.scale is None else C * self.scale

    def hvp(self, PC, V):
        """Hessian of ``S * F`` times ``V`` (``PC`` from :meth:`curvature`)."""
        Pt, C = PC
        dZt = _mm(V.T, self.Ut_h, self.xp)
        if Pt.shape[0] == 1:
            dPt = C * dZt
        else:  # softmax Jacobian sample by sample: s p * (dz - p^T dz)
            dPt = C * (dZt - (Pt * dZt).sum(axis=0))
        return _mm(self.Ut_h, dPt.T, self.xp) + self.reg * V


def output_gradient(Phi, Y, sw, S: float, W, b, alpha: float, xp):
    """Gradient ``(dF/dW, dF/db)`` of the batch objective in the output layer."""
    layer = _OutputLayer(Phi, Y, sw, alpha, xp)
    T = layer.stack(W, b)
    Zt = layer.logits(T)
    G = layer.gradient(T, layer.probabilities(Zt, layer.normalizer(Zt)[1])) / S
    return G[:-1], G[-1]


def output_hvp(Phi, P, sw, S: float, V_W, V_b, alpha: float, xp):
    """Hessian-vector product of the batch objective in the output layer.

    ``P`` holds the probabilities at the current point (``probabilities(Z)``), ``(V_W, V_b)``
    the direction. With ``dZ = Phi @ V_W + V_b`` the softmax Jacobian gives
    ``dP = P * dZ - P * sum(P * dZ)`` (``p (1 - p) dZ`` for the logistic output), and
    ``H v = (Phi^T (s * dP) + alpha V_W, sum(s * dP)) / S``.
    """
    layer = _OutputLayer(Phi, None, sw, alpha, xp)
    HV = layer.hvp(layer.curvature(P.T), layer.stack(V_W, V_b)) / S
    return HV[:-1], HV[-1]


def conjugate_gradient(hvp, r, n_iter: int, xp):
    """``n_iter`` conjugate-gradient iterations for ``H d = r`` from ``d = 0``.

    ``hvp(v)`` returns ``H v`` (arrays of any shape; inner products over all entries). The
    loop runs on the device without reading a number back: a step along a direction of
    non-positive curvature, or once the residual is zero, is a step of length 0. A small fixed
    ``n_iter`` is a truncated Newton step: it regularizes.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> d = conjugate_gradient(lambda v: A @ v, np.array([[1.0], [2.0]]), 2, np)
    >>> np.allclose(A @ d, [[1.0], [2.0]])
    True
    """
    info = np.finfo(r.dtype)
    tiny, eps = info.tiny, info.eps
    d, p = xp.zeros_like(r), r
    rr = xp.vdot(r, r)
    for _ in range(n_iter):
        Hp = hvp(p)
        curvature = xp.vdot(p, Hp)
        # curvature below eps^2 of |p|^2 is none: no overflowing step
        floor = eps * eps * xp.vdot(p, p) + tiny
        step = xp.where(curvature > floor, rr / xp.maximum(curvature, floor), 0.0)
        d = d + step * p
        r = r - step * Hp
        rr_new = xp.vdot(r, r)
        p = r + (rr_new / xp.maximum(rr, tiny)) * p
        rr = rr_new
    return d


@dataclass
class NewtonResult:
    """Output layer after the Newton phase and what the phase did."""

    W: Any
    b: Any
    loss: float
    n_steps: int
    n_backtracks: int
    losses: list = field(default_factory=list)
    logits: Any = None
    probabilities: Any = None


def newton_output_layer(
    Phi,
    Y,
    sw,
    S: float,
    W,
    b,
    alpha: float,
    xp,
    *,
    n_steps: int,
    cg_iter: int,
    armijo_alpha: float = 1e-4,
    armijo_rho: float = 0.5,
    max_backtracks: int = 40,
    penalty_rest: float = 0.0,
    ftol: float = 0.0,
    proximal: float = 0.0,
    on_device: bool = False,
) -> NewtonResult:
    """Minimize the batch objective over the output layer ``(W, b)`` for a fixed basis ``Phi``.

    Each step solves the Newton system approximately with ``cg_iter`` conjugate-gradient
    iterations on Hessian-vector products from ``d = 0`` (a truncated Newton step), then
    backtracks (factor ``armijo_rho``) until the Armijo condition
    ``F(x + t d) <= F(x) + armijo_alpha * t * grad.d`` holds. On a batch of more than
    :data:`HESSIAN_MIN_SAMPLES` samples the products use an evenly spaced subsample of the
    batch (subsampled Newton-CG: the gradient and the line search use the whole batch). The
    truncation is deliberate: the exact Newton step (many CG iterations) fits the output
    layer to the current basis so closely that training slows down. The objective never increases;
    the phase ends early at a stationary point or when no step length satisfies the
    condition, or (``ftol > 0``) before a step whose predicted decrease ``-grad.d / 2`` (the
    decrease of the quadratic model for a CG or Newton step) is below ``ftol * max(1, |F|)``:
    once the output layer is near its optimum for a slowly changing basis, later batches
    stop after one step.

    ``proximal > 0`` adds ``mu / 2 * ||(W, b) - (W_0, b_0)||^2`` to ``S * F``, with ``mu``
    ``proximal`` times the mean eigenvalue (trace over dimension) of the Hessian of ``S * F``
    at the start: the objective of a minibatch plus an isotropic quadratic model of the
    other ``proximal`` batches' objective around the current layer (a Levenberg-Marquardt
    damping that does not fade). ``loss`` and ``losses`` are ``F`` without it.

    The basis enters once: the logits, the gradient, the Hessian-vector products and every
    trial of the line search are a few array operations on ``[Phi, 1]`` and ``[W; b]``; along
    the line the logits are linear in the step length, so a trial needs no product with the
    basis.

    A softmax output is invariant to adding the same vector to every class column of
    ``(W, b)``: the objective is flat along that direction (up to the penalty), which CG would
    otherwise wander along. ``(W, b)`` is
    first centred across the classes (the same model with a smaller penalty) and every step
    is kept centred, so the phase works in the subspace where the objective is strictly
    convex (for ``alpha > 0``).

    ``on_device=True`` takes the same steps without reading a number back, every decision an
    array operation (so that a CUDA graph can replay the phase): the line search evaluates
    all ``max_backtracks`` trial lengths at once and takes the first acceptable one, and a
    step not taken (no descent worth ``ftol``, no acceptable length) ends the phase: the
    later steps move by zero. ``loss``, ``n_steps`` and ``n_backtracks`` are then 0-d arrays
    and ``losses`` has an entry for every step, taken or not. Up to the round-off of the
    sums it decides as the host loop does.

    Returns
    -------
    NewtonResult
        ``losses`` holds ``F`` before the first step (after centring) and after every step,
        ``logits`` and ``probabilities`` those of the returned layer on ``Phi``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Phi = rng.normal(size=(50, 3)); Y = np.eye(3)[rng.integers(0, 3, 50)]
    >>> res = newton_output_layer(Phi, Y, None, 50.0, np.zeros((3, 3)), np.zeros(3), 1.0,
    ...                           np, n_steps=20, cg_iter=10)
    >>> gW, gb = output_gradient(Phi, Y, None, 50.0, res.W, res.b, 1.0, np)
    >>> bool(np.abs(gW).max() < 1e-8 and np.abs(gb).max() < 1e-8)
    True
    """
    k = Y.shape[1]
    n_params = (Phi.shape[1] + 1) * k
    stride = max(1, Phi.shape[0] // max(HESSIAN_MIN_SAMPLES,
                                        HESSIAN_SAMPLES_PER_PARAM * n_params))
    layer = _OutputLayer(Phi, Y, sw, alpha, xp, stride=stride)
    T = layer.stack(W, b)
    softmax = k > 1
    # class means of (m + 1) x k arrays as products: np.mean costs several times more there
    class_mean = xp.full(k, 1.0 / k, dtype=T.dtype)
    if softmax:  # centre: same probabilities, smaller penalty, no flat direction left
        T = T - _mm(T, class_mean, xp)[:, None]
    const = 0.5 * alpha * penalty_rest

    def penalty(A, B):
        return xp.vdot(A, layer.reg * B)

    Zt = layer.logits(T)
    yz = xp.vdot(layer.UtSY, T)
    tt = penalty(T, T)
    lse, parts = layer.normalizer(Zt)
    f = lse - yz + 0.5 * tt + const
    Pt = layer.probabilities(Zt, parts)
    mu = proximal * _mean_curvature(layer, Pt, alpha) if proximal > 0 else 0.0
    if not on_device:
        f, mu = float(f), float(mu)
    moved = xp.zeros_like(T)  # T - T_0, for the proximal term mu / 2 ||T - T_0||^2

    def direction(T, Pt, moved):
        """The gradient, the truncated Newton direction and their inner product."""
        G = layer.gradient(T, Pt) + mu * moved
        PC = layer.curvature(Pt)
        d = conjugate_gradient(lambda V: layer.hvp(PC, V) + mu * V, -G, cg_iter, xp)
        if softmax:  # remove round-off in the flat direction (a shift of all logits)
            d = d - _mm(d, class_mean, xp)[:, None]
        return G, d, xp.vdot(G, d)

    def along(T, d, moved):
        """Along ``T + t d`` the logits and ``<SY, Z> = <U^T SY, T>`` are linear and the
        penalty and the proximal term quadratic in ``t``: their coefficients."""
        near = (xp.vdot(moved, d), xp.vdot(d, d)) if proximal > 0 else (0.0, 0.0)
        return layer.logits(d), xp.vdot(layer.UtSY, d), penalty(T, d), penalty(d, d), *near

    losses = [f / S]
    if on_device:
        return _newton_steps_on_device(
            layer, direction, along, T, Zt, Pt, moved, f, yz, tt, mu, const, S, n_steps,
            armijo_alpha, armijo_rho, max_backtracks, max(1e-15, 2.0 * ftol), losses)
    n_done = n_back = 0
    for _ in range(n_steps):
        G, d, slope = direction(T, Pt, moved)
        slope = float(slope)
        if not slope < 0.0:  # not a descent direction (numerically): use the gradient
            d, slope = -G, -float(xp.vdot(G, G))
        if not -slope > max(1e-15, 2.0 * ftol) * max(S, abs(f)):  # nothing worth a step
            break
        dZt, yd, td, dd, md, d2 = along(T, d, moved)
        md, d2 = float(md), float(d2)
        for j in range(max_backtracks):
            t = armijo_rho**j  # a power, as the device form computes its trials
            Z_new = Zt + t * dZt
            lse, parts = layer.normalizer(Z_new)
            f_new = float(lse - (yz + t * yd) + 0.5 * (tt + 2.0 * t * td + t * t * dd)) + const
            prox = mu * (t * md + 0.5 * t * t * d2)  # change of the proximal term
            if f_new + prox <= f + armijo_alpha * t * slope:
                break
            n_back += 1
        else:
            break  # no acceptable step: (numerically) optimal
        T, Zt, f, moved = T + t * d, Z_new, f_new, moved + t * d
        yz, tt = yz + t * yd, tt + 2.0 * t * td + t * t * dd
        Pt = layer.probabilities(Zt, parts)
        losses.append(f / S)
        n_done += 1
    return NewtonResult(T[:-1], T[-1], f / S, n_done, n_back, losses, Zt.T, Pt.T)


#: the trial logits of one device line search hold at most this many entries (trials times
#: classes times samples); more trials are evaluated in chunks of that size
_TRIAL_ENTRIES = 1 << 22


def _newton_steps_on_device(layer, direction, along, T, Zt, Pt, moved, f, yz, tt, mu, const,
                            S, n_steps, armijo_alpha, armijo_rho, max_backtracks, threshold,
                            losses) -> NewtonResult:
    """The steps of :func:`newton_output_layer` with ``on_device=True``: the host loop's
    decisions as array operations, nothing read back."""
    xp = layer.xp
    J = max_backtracks
    # t = 1, rho, rho^2, ... as the host loop computes them (float64 powers)
    trials = (armijo_rho ** xp.arange(J, dtype=np.float64)).astype(T.dtype)
    chunk = max(1, min(J, _TRIAL_ENTRIES // Zt.size))
    active = xp.ones((), dtype=bool)  # no step refused yet
    n_done = n_back = xp.zeros((), dtype=np.int64)
    for _ in range(n_steps):
        G, d, slope = direction(T, Pt, moved)
        descent = slope < 0.0  # else (numerically) not a descent direction: the gradient
        d = xp.where(descent, d, -G)
        slope = xp.where(descent, slope, -xp.vdot(G, G))
        worth = -slope > threshold * xp.maximum(S, xp.abs(f))
        dZt, yd, td, dd, md, d2 = along(T, d, moved)
        # the first acceptable trial: j = J where none is
        found, j, f_new = xp.zeros((), dtype=bool), xp.full((), J, dtype=np.int64), f
        for start in range(0, J, chunk):
            t = trials[start:start + chunk]
            lse, _ = layer.normalizer(Zt + t[:, None, None] * dZt)
            f_t = lse - (yz + t * yd) + 0.5 * (tt + 2.0 * t * td + t * t * dd) + const
            ok = f_t + mu * (t * md + 0.5 * t * t * d2) <= f + armijo_alpha * t * slope
            first = xp.argmax(ok)
            hit = xp.take(ok, first) & ~found
            j = xp.where(hit, start + first, j)
            f_new = xp.where(hit, xp.take(f_t, first), f_new)
            found = found | hit
        take = active & worth & found
        t = xp.where(take, xp.take(trials, xp.minimum(j, J - 1)), 0.0)
        T, Zt, moved = T + t * d, Zt + t * dZt, moved + t * d
        f = xp.where(take, f_new, f)
        yz, tt = yz + t * yd, tt + 2.0 * t * td + t * t * dd
        Pt = layer.probabilities(Zt, layer.normalizer(Zt)[1])
        losses.append(f / S)
        n_back = n_back + xp.where(active & worth, j, 0)
        n_done = n_done + take
        active = take
    return NewtonResult(T[:-1], T[-1], f / S, n_done, n_back, losses, Zt.T, Pt.T)


def _mean_curvature(layer: _OutputLayer, Pt, alpha: float):
    """Trace of the Hessian of ``S * F`` over the number of output-layer parameters (a 0-d
    array)."""
    xp, Ut = layer.xp, layer.Ut
    q = (Pt * (1.0 - Pt)).sum(axis=0)
    if layer.s is not None:
        q = q * layer.s
    if sp.issparse(Ut):
        col_sq = np.asarray(Ut.multiply(Ut).sum(axis=0)).ravel()
    else:
        col_sq = (Ut * Ut).sum(axis=0)
    n_rows, k = Ut.shape[0], Pt.shape[0]
    return (xp.vdot(col_sq, q) + alpha * (n_rows - 1) * k) / (n_rows * k)


def identifies_output_layer(y, sw, n_classes: int, n_basis: int) -> bool:
    """Whether a batch determines the output layer well enough for a Newton phase.

    The output layer has ``n_basis + 1`` parameters per output. A batch with fewer samples
    (of positive weight) leaves directions in which only the penalty, ``alpha / S``, curves
    the objective, and a class absent from the batch has its logit pushed down without a
    bound but that penalty: in both cases the batch's optimum, which the Newton phase moves
    towards, says more about the batch than about the data, and the step in the weakly
    curved directions is of order ``S / alpha``. Such a batch gets a gradient step instead.

    ``y`` holds the batch's class indices ``0 .. n_classes - 1`` and ``sw`` its sample
    weights or None, both NumPy arrays: the test runs on the host copies of the labels, so
    a batch on a GPU is not read back to decide it.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([0, 1, 2, 0, 1])
    >>> identifies_output_layer(y, None, 3, 4), identifies_output_layer(y, None, 3, 5)
    (True, False)
    >>> identifies_output_layer(np.array([0, 1, 1]), None, 2, 2)  # two classes: both present
    True
    >>> identifies_output_layer(y, np.array([1.0, 1.0, 0.0, 1.0, 1.0]), 3, 2)  # no class 2
    False
    """
    if sw is not None:
        y = y[sw > 0]
    return len(y) >= n_basis + 1 and bool(np.bincount(y, minlength=n_classes).min() > 0)


# -- backward -------------------------------------------------------------------------------
def backprop(acts, coefs, D, S: float, alpha: float, activation: str, xp,
             n_layers: int | None = None, output: bool = True):
    """Gradients of the batch objective for the last ``n_layers`` layers (default: all).

    ``acts`` from :func:`forward_hidden`, ``D`` the gradient of the weighted loss sum with
    respect to the logits (``s_i (p_i - y_i)``). Returns ``(coef_grads, intercept_grads)``
    ordered like ``coefs`` (only the requested trailing layers; ``None`` for the others).
    ``output=False`` leaves out the output layer's own gradient (``None``), which NGD's Adam
    step on the hidden layers does not use.
    """
    n = len(coefs)
    first = 0 if n_layers is None else n - n_layers
    coef_grads: list = [None] * n
    intercept_grads: list = [None] * n
    for i in range(n - 1, first - 1, -1):
        if output or i < n - 1:
            coef_grads[i] = (_mm(acts[i].T, D, xp) + alpha * coefs[i]) / S
            intercept_grads[i] = _column_sum(D, xp) / S
        if i > first:
            D = _mm(D, coefs[i].T, xp) * _activation_derivative(acts[i], activation, xp)
    return coef_grads, intercept_grads


# -- Adam -----------------------------------------------------------------------------------
@dataclass
class AdamState:
    """Moment estimates and step counter of Adam for a list of parameter arrays.

    ``t`` is an int, or a 0-d array on a device: there :func:`adam_update` counts the steps
    in place, so that a replayed CUDA graph counts them too.
    """

    m: list
    v: list
    t: Any = 0

    @classmethod
    def zeros_like(cls, params, xp) -> AdamState:
        return cls([xp.zeros_like(p) for p in params], [xp.zeros_like(p) for p in params], 0)

    def to(self, convert) -> AdamState:
        """A copy with every array passed through ``convert`` (device transfer); the step
        count as an int."""
        return AdamState([convert(a) for a in self.m], [convert(a) for a in self.v],
                         int(self.t))


def adam_update(params, grads, state: AdamState, learning_rate: float, beta_1: float,
                beta_2: float, epsilon: float, xp) -> None:
    """One Adam step, in place on ``params`` and on ``state``'s arrays.

    Bias correction is folded into the step length,
    ``lr_t = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)``, and the update is
    ``-lr_t * m / (sqrt(v) + epsilon)``: the variant scikit-learn's MLP uses, so that the
    ``"adam"`` solver reproduces its iterates. Every array is updated in place (the same
    rounding as new arrays): a CUDA graph of the step replays on the same memory.
    """
    state.t += 1
    sqrt = np.sqrt if isinstance(state.t, int) else xp.sqrt
    lr_t = learning_rate * sqrt(1.0 - beta_2**state.t) / (1.0 - beta_1**state.t)
    for p, g, m, v in zip(params, grads, state.m, state.v, strict=True):
        m *= beta_1
        m += (1.0 - beta_1) * g
        v *= beta_2
        v += (1.0 - beta_2) * (g * g)
        p += -lr_t * m / (xp.sqrt(v) + epsilon)
