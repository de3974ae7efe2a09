"""Warnings that point at the user's line, however deep in the package they are raised.

``warnings.warn`` attributes a warning to the frame ``stacklevel`` levels up. A hard-coded
level is right for one call path only: a decorator, a helper or a second caller shifts it,
and the warning then names a line inside the package, which tells the user nothing (and the
``"default"`` filter shows it once per package line, not once per line of theirs). :func:`warn`
counts the level at each call instead: the first frame outside the package.

Frames of scikit-learn are skipped as well. Between the user and an estimator's code they are
the ``_fit_context`` wrapper of ``fit`` and, when the estimator is a step of a ``Pipeline``
(or of a search such as ``GridSearchCV`` run in this process), the meta-estimator's own
frames; the line that matters to the user is the one that called scikit-learn. Where no such
line exists (a joblib worker of a parallel search, a thread) the warning names the first
frame that belongs to neither package, such as joblib's.

Frames are told apart by their module's ``__name__``: a script run as ``python -m`` is
``"__main__"`` and counts as the user's.
"""

from __future__ import annotations

import sys
import warnings

__all__ = ["warn"]

#: modules whose frames a warning is never attributed to (with their submodules)
_SKIPPED = ("exactclf", "sklearn")


def _skipped(frame) -> bool:
    name = frame.f_globals.get("__name__") or ""
    return any(name == top or name.startswith(top + ".") for top in _SKIPPED)


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)``, attributed to the first frame of the calling
    stack outside exactclf and scikit-learn (the user's call of ``fit``, say).

    Parameters
    ----------
    message : str
        The warning's text.
    category : type of Warning, default=UserWarning
        Its class.

    Examples
    --------
    A function of the package (one defined here runs in this module's namespace) warns on
    behalf of the user's ``fit``, defined in a file of theirs:

    >>> import warnings
    >>> def search():
    ...     warn("search stopped early", RuntimeWarning)
    >>> user = {"__name__": "user_script", "search": search}
    >>> exec(compile("def fit():\\n    search()\\n", "user_script.py", "exec"), user)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     user["fit"]()
    >>> caught[0].filename, caught[0].lineno, str(caught[0].message)
    ('user_script.py', 2, 'search stopped early')
    """
    # stacklevel=1 is this function, 2 its caller: count from there past the skipped frames
    level, frame = 2, sys._getframe(1)
    while frame is not None and _skipped(frame):
        frame, level = frame.f_back, level + 1
    if frame is None:  # the whole stack is the packages' (no user line): the caller's
        level = 2
    warnings.warn(message, category, stacklevel=level)
