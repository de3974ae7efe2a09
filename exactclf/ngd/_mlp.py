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
minimizes it by inexact Newton steps (truncated conjugate gradients on exact Hessian-vector
products, Armijo backtracking).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

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
# matrix-vector product or a few elementwise ``maximum`` calls over the columns; the output
# layer's arrays are of exactly that shape and the Newton phase reduces them many times.
_NARROW = 16  # up to this many columns, the row maximum is taken column by column


def _row_sum(A, xp):
    """Sums of the rows of a 2-D array (shape ``(n,)``)."""
    return A @ xp.ones(A.shape[1], dtype=A.dtype)


def _column_sum(A, xp):
    """Sums of the columns of a 2-D array (shape ``(k,)``)."""
    return xp.ones(A.shape[0], dtype=A.dtype) @ A


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
        acts.append(_activate(acts[-1] @ W + b, activation, xp))
    return acts


def output_logits(Phi, W, b):
    """Logits ``Phi @ W + b`` of the output layer, shape ``(n_samples, n_outputs)``."""
    return Phi @ W + b


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
    loss = _weighted_sum(cross_entropy(output_logits(Phi, W, b), Y, xp), sw)
    reg = 0.5 * alpha * (float((W * W).sum()) + penalty_rest)
    return (float(loss) + reg) / S


def logit_gradient(Z, Y, sw, xp):
    """Gradient of ``sum_i s_i CE_i`` with respect to the logits: ``s_i (p_i - y_i)``."""
    D = probabilities(Z, xp) - Y
    return D if sw is None else D * sw[:, None]


def network_loss(Z, Y, sw, S: float, coefs, alpha: float, xp) -> float:
    """Batch objective ``F`` of the whole network from its logits ``Z``."""
    loss = float(_weighted_sum(cross_entropy(Z, Y, xp), sw))
    reg = 0.5 * alpha * sum(float((W * W).sum()) for W in coefs)
    return (loss + reg) / S


def output_gradient(Phi, Y, sw, S: float, W, b, alpha: float, xp):
    """Gradient ``(dF/dW, dF/db)`` of the batch objective in the output layer."""
    D = logit_gradient(output_logits(Phi, W, b), Y, sw, xp)
    return (Phi.T @ D + alpha * W) / S, _column_sum(D, xp) / S


def output_hvp(Phi, P, sw, S: float, V_W, V_b, alpha: float, xp):
    """Hessian-vector product of the batch objective in the output layer.

    ``P`` holds the probabilities at the current point (``probabilities(Z)``), ``(V_W, V_b)``
    the direction. With ``dZ = Phi @ V_W + V_b`` the softmax Jacobian gives
    ``dP = P * dZ - P * sum(P * dZ)`` (``p (1 - p) dZ`` for the logistic output), and
    ``H v = (Phi^T (s * dP) + alpha V_W, sum(s * dP)) / S``.
    """
    dZ = Phi @ V_W + V_b
    if P.shape[1] == 1:
        dP = P * (1.0 - P) * dZ
    else:
        PdZ = P * dZ
        dP = PdZ - P * _row_sum(PdZ, xp)[:, None]
    if sw is not None:
        dP = dP * sw[:, None]
    return (Phi.T @ dP + alpha * V_W) / S, _column_sum(dP, xp) / S


def _dot(a, b, c, d) -> float:
    return float((a * b).sum() + (c * d).sum())


def conjugate_gradient(hvp, r_W, r_b, n_iter: int, xp, rtol: float = 1e-12):
    """At most ``n_iter`` conjugate-gradient iterations for ``H d = r`` from ``d = 0``.

    ``hvp(v_W, v_b)`` returns ``H v``; the unknowns are pairs ``(d_W, d_b)``. Stops early when
    the residual has fallen by ``rtol`` or on a direction of non-positive curvature (then
    the iterate so far is returned; the first iterate is then the steepest-descent step).
    A small fixed ``n_iter`` is a truncated Newton step: it regularizes.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> hvp = lambda vW, vb: (A @ vW, 0 * vb)
    >>> d_W, _ = conjugate_gradient(hvp, np.array([[1.0], [2.0]]), np.zeros(1), 2, np)
    >>> np.allclose(A @ d_W, [[1.0], [2.0]])
    True
    """
    d_W, d_b = xp.zeros_like(r_W), xp.zeros_like(r_b)
    p_W, p_b = r_W, r_b
    rr = _dot(r_W, r_W, r_b, r_b)
    stop = rtol * rtol * rr
    for _ in range(n_iter):
        if rr <= stop or rr == 0.0:
            break
        Hp_W, Hp_b = hvp(p_W, p_b)
        curvature = _dot(p_W, Hp_W, p_b, Hp_b)
        if not curvature > 0.0:
            if not _dot(d_W, d_W, d_b, d_b) > 0.0:  # nothing yet: take the gradient step
                d_W, d_b = p_W, p_b
            break
        step = rr / curvature
        d_W, d_b = d_W + step * p_W, d_b + step * p_b
        r_W, r_b = r_W - step * Hp_W, r_b - step * Hp_b
        rr_new = _dot(r_W, r_W, r_b, r_b)
        p_W, p_b = r_W + (rr_new / rr) * p_W, r_b + (rr_new / rr) * p_b
        rr = rr_new
    return d_W, d_b


@dataclass
class NewtonResult:
    """Output layer after the Newton phase and what the phase did."""

    W: Any
    b: Any
    loss: float
    n_steps: int
    n_backtracks: int
    losses: list = field(default_factory=list)


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
) -> NewtonResult:
    """Minimize the batch objective over the output layer ``(W, b)`` for a fixed basis ``Phi``.

    Each step solves the Newton system approximately with ``cg_iter`` conjugate-gradient
    iterations on exact Hessian-vector products, then backtracks (factor ``armijo_rho``) until
    the Armijo condition ``F(x + t d) <= F(x) + armijo_alpha * t * grad.d`` holds. The
    objective never increases; the phase ends early at a stationary point or when no step
    length satisfies the condition, or (``ftol > 0``) after a step that decreased ``F`` by
    less than ``ftol * max(1, |F|)``.

    A softmax output is invariant to adding the same vector to every class column of
    ``(W, b)``: the objective is flat along that direction (up to the penalty), which CG would
    otherwise wander along. ``(W, b)`` is first centred across the classes (the same model
    with a smaller penalty) and every step is kept centred, so the phase works in the
    subspace where the objective is strictly convex (for ``alpha > 0``).

    Returns
    -------
    NewtonResult
        ``losses`` holds ``F`` before the first step (after centring) and after every step.

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
    SY = Y if sw is None else Y * sw[:, None]  # weighted targets: CE sum = sum(s*lse) - <SY, Z>

    def value(Z, yz, wsq):  # F from the logits, <SY, Z> and ||W||^2
        loss = float(_weighted_sum(_log_normalizer(Z, xp), sw)) - yz
        return (loss + 0.5 * alpha * (wsq + penalty_rest)) / S

    softmax = W.shape[1] > 1
    if softmax:  # centre: same probabilities, smaller penalty, no flat direction left
        W, b = W - W.mean(axis=1, keepdims=True), b - b.mean()
    Z = output_logits(Phi, W, b)
    wsq, yz = float((W * W).sum()), float((SY * Z).sum())
    f = value(Z, yz, wsq)
    losses = [f]
    n_done = n_back = 0
    for _ in range(n_steps):
        P = probabilities(Z, xp)
        D = P - Y if sw is None else (P - Y) * sw[:, None]
        g_W, g_b = (Phi.T @ D + alpha * W) / S, _column_sum(D, xp) / S
        gg = _dot(g_W, g_W, g_b, g_b)
        if not gg > 0.0:
            break

        def hvp(v_W, v_b, P=P):
            return output_hvp(Phi, P, sw, S, v_W, v_b, alpha, xp)

        d_W, d_b = conjugate_gradient(hvp, -g_W, -g_b, cg_iter, xp)
        if softmax:  # remove round-off in the flat direction (a shift of all logits)
            d_W, d_b = d_W - d_W.mean(axis=1, keepdims=True), d_b - d_b.mean()
        slope = _dot(g_W, d_W, g_b, d_b)
        if not slope < 0.0:  # not a descent direction (numerically): use the gradient
            d_W, d_b, slope = -g_W, -g_b, -gg
        if -slope <= 1e-15 * max(1.0, abs(f)):  # no decrease left to resolve in float64
            break
        # along the line the logits and <SY, Z> are linear and ||W||^2 quadratic in t
        dZ = Phi @ d_W + d_b
        w_d, d_d, y_d = float((W * d_W).sum()), float((d_W * d_W).sum()), float((SY * dZ).sum())
        t = 1.0
        for _ in range(max_backtracks):
            Z_new, wsq_new = Z + t * dZ, wsq + 2.0 * t * w_d + t * t * d_d
            f_new = value(Z_new, yz + t * y_d, wsq_new)
            if f_new <= f + armijo_alpha * t * slope:
                break
            t *= armijo_rho
            n_back += 1
        else:
            break  # no acceptable step: (numerically) optimal
        decrease = f - f_new
        W, b, Z, f, yz = W + t * d_W, b + t * d_b, Z_new, f_new, yz + t * y_d
        wsq = float((W * W).sum())
        losses.append(f)
        n_done += 1
        if decrease <= ftol * max(1.0, abs(f)):
            break
    return NewtonResult(W, b, f, n_done, n_back, losses)


def identifies_output_layer(Y, sw, n_basis: int, xp) -> bool:
    """Whether a batch determines the output layer well enough for a Newton phase.

    The output layer has ``n_basis + 1`` parameters per output. A batch with fewer samples
    (of positive weight) leaves directions in which only the penalty, ``alpha / S``, curves
    the objective, and a class absent from the batch has its logit pushed down without a
    bound but that penalty: in both cases the batch's optimum, which the Newton phase moves
    towards, says more about the batch than about the data, and the step in the weakly
    curved directions is of order ``S / alpha``. Such a batch gets a gradient step instead.

    Examples
    --------
    >>> import numpy as np
    >>> Y = np.eye(3)[[0, 1, 2, 0, 1]]
    >>> identifies_output_layer(Y, None, 4, np), identifies_output_layer(Y, None, 5, np)
    (True, False)
    >>> identifies_output_layer(Y[:, :1], None, 2, np)  # two classes, one logit: both present
    True
    >>> identifies_output_layer(Y, np.array([1.0, 1.0, 0.0, 1.0, 1.0]), 2, np)  # no class 2
    False
    """
    if sw is not None:
        Y = Y[sw > 0]
    if Y.shape[0] < n_basis + 1:
        return False
    if Y.shape[1] == 1:  # logistic output: both the 0 and the 1 target occur
        return bool(Y.max() > 0.0) and bool(Y.min() < 1.0)
    return bool(Y.max(axis=0).min() > 0.0)


# -- backward -------------------------------------------------------------------------------
def backprop(acts, coefs, D, S: float, alpha: float, activation: str, xp,
             n_layers: int | None = None):
    """Gradients of the batch objective for the last ``n_layers`` layers (default: all).

    ``acts`` from :func:`forward_hidden`, ``D`` the gradient of the weighted loss sum with
    respect to the logits (``s_i (p_i - y_i)``). Returns ``(coef_grads, intercept_grads)``
    ordered like ``coefs`` (only the requested trailing layers; ``None`` for the others).
    """
    n = len(coefs)
    first = 0 if n_layers is None else n - n_layers
    coef_grads: list = [None] * n
    intercept_grads: list = [None] * n
    for i in range(n - 1, first - 1, -1):
        coef_grads[i] = (acts[i].T @ D + alpha * coefs[i]) / S
        intercept_grads[i] = _column_sum(D, xp) / S
        if i > first:
            D = (D @ coefs[i].T) * _activation_derivative(acts[i], activation, xp)
    return coef_grads, intercept_grads


# -- Adam -----------------------------------------------------------------------------------
@dataclass
class AdamState:
    """Moment estimates and step counter of Adam for a list of parameter arrays."""

    m: list
    v: list
    t: int = 0

    @classmethod
    def zeros_like(cls, params, xp) -> AdamState:
        return cls([xp.zeros_like(p) for p in params], [xp.zeros_like(p) for p in params], 0)

    def to(self, convert) -> AdamState:
        """A copy with every array passed through ``convert`` (device transfer)."""
        return AdamState([convert(a) for a in self.m], [convert(a) for a in self.v], self.t)


def adam_update(params, grads, state: AdamState, learning_rate: float, beta_1: float,
                beta_2: float, epsilon: float, xp) -> None:
    """One Adam step, in place on ``params`` (and ``state``).

    Bias correction is folded into the step length,
    ``lr_t = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)``, and the update is
    ``-lr_t * m / (sqrt(v) + epsilon)``: the variant scikit-learn's MLP uses, so that the
    ``"adam"`` solver reproduces its iterates.
    """
    state.t += 1
    lr_t = learning_rate * np.sqrt(1.0 - beta_2**state.t) / (1.0 - beta_1**state.t)
    for k, (p, g) in enumerate(zip(params, grads, strict=True)):
        state.m[k] = beta_1 * state.m[k] + (1.0 - beta_1) * g
        state.v[k] = beta_2 * state.v[k] + (1.0 - beta_2) * (g * g)
        p += -lr_t * state.m[k] / (xp.sqrt(state.v[k]) + epsilon)
