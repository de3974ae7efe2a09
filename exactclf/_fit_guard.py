"""What a ``fit`` leaves behind when it fails or is interrupted: one policy for every estimator.

A fit either returns a model or raises. Ctrl-C (``KeyboardInterrupt``) during a search stops
that search at its next bounded piece of work, and the fit returns the best model found so
far, with a warning and the certificate of that model (``is_optimal_``, ``converged_``: true
only where its proof completed). Elsewhere (validation, set-up, realizing the model) Ctrl-C
propagates like any error, unless the estimator catches it to return a model it already
has; :func:`guarded_fit` then leaves the estimator unfitted
(:func:`~exactclf._base.reset_fitted`: ``predict`` raises ``NotFittedError``, never uses half
of a model), unless the call continues an earlier fit's model (``warm_start``,
``partial_fit``), which it then leaves as it is.

Ctrl-C is raised in the main thread, at the next Python instruction. A Numba kernel called
there runs Python code after its compiled part when it boxes some results (an ``int8`` or
boolean array's dtype is unpickled), the interrupt is raised in that code, and the dispatcher
reports it as ``SystemError: CPUDispatcher(...) returned a result with an exception set``
(the interrupt as its cause): no ``except KeyboardInterrupt`` sees it. Such kernels are
called through :func:`off_main`, and :func:`guarded_fit` re-raises any such error that
still reaches it as the ``KeyboardInterrupt`` it is.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from ._base import reset_fitted

__all__ = ["guarded_fit", "off_main"]

#: the thread that runs the main thread's kernels (created on first use)
_helper: ThreadPoolExecutor | None = None


def _forget_helper() -> None:
    global _helper
    _helper = None


# a forked child has no copy of the helper's thread: it makes its own
os.register_at_fork(after_in_child=_forget_helper)


def off_main(fn: Callable, *args):
    """``fn(*args)``, on a helper thread when called from the main thread, which only waits.

    Ctrl-C then lands in the wait, as a plain ``KeyboardInterrupt`` (at once on SIGINT; the
    helper finishes its call in the background), never inside ``fn``: for Numba kernels of
    bounded work (see the module docstring). Called from any other thread, ``fn`` runs there.

    Parameters
    ----------
    fn : callable
    *args
        Its arguments.

    Returns
    -------
    object
        What ``fn`` returns.

    Examples
    --------
    >>> off_main(max, 1, 2)
    2
    """
    global _helper
    if threading.current_thread() is not threading.main_thread():
        return fn(*args)
    if _helper is None:
        _helper = ThreadPoolExecutor(1, thread_name_prefix="exactclf-kernel")
    return _helper.submit(fn, *args).result()


def _interrupt_in(exc: BaseException) -> bool:
    """Whether ``exc`` is a ``SystemError`` raised by a Numba dispatcher because an
    interrupt landed in it (a chain of them, caused by the ``KeyboardInterrupt``)."""
    cause = exc
    while isinstance(cause, SystemError):
        cause = cause.__cause__
    return cause is not exc and isinstance(cause, KeyboardInterrupt)


def guarded_fit(fit: Callable | None = None, *,
                continues: Callable[[object], bool] | None = None):
    """Decorate ``fit`` (or ``partial_fit``) with the policy of this module.

    The estimator is unfitted (:func:`~exactclf._base.reset_fitted`) before the call and
    again if it raises, whatever it raises; an interrupt that a Numba kernel turned into a
    ``SystemError`` is re-raised as ``KeyboardInterrupt``.

    Parameters
    ----------
    fit : callable, default=None
        The method; without it, the decorator with the given ``continues``.
    continues : callable, default=None
        ``continues(estimator)``, called before the fit: whether this call continues the
        model of an earlier fit; that model is then neither reset before the call nor when
        it fails. None: no call continues one.

    Returns
    -------
    callable
        The decorated method (or the decorator).

    Examples
    --------
    >>> from sklearn.base import BaseEstimator
    >>> class Failing(BaseEstimator):
    ...     @guarded_fit
    ...     def fit(self, X, y=None):
    ...         self.classes_ = [0, 1]
    ...         raise ValueError("no model")
    >>> est = Failing()
    >>> try:
    ...     est.fit([[0.0]])
    ... except ValueError:
    ...     pass
    >>> hasattr(est, "classes_")
    False
    """
    if fit is None:
        return functools.partial(guarded_fit, continues=continues)

    @functools.wraps(fit)
    def guarded(self, *args, **kwargs):
        keep = continues is not None and continues(self)
        if not keep:
            reset_fitted(self)
        try:
            return fit(self, *args, **kwargs)
        except BaseException as exc:
            if not keep:
                reset_fitted(self)
            if _interrupt_in(exc):
                raise KeyboardInterrupt from exc
            raise

    return guarded
