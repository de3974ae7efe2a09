"""HiGHS models that keep the user's standard output clean.

highspy prints a banner on standard output when the first ``Highs`` object of a process is
created, before any option can switch its logging off; ``exactclf fit ... > model.csv`` or a
notebook cell should not show solver chatter that the user did not ask for. The first model
is therefore created with file descriptor 1 pointed at the null device (C's buffers flushed
before it is restored), once per process, under a lock.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

import highspy

__all__ = ["new_highs"]

_LOCK = threading.Lock()
_BANNER_SHOWN = False


def _flush_c_stdio() -> None:
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):  # no C runtime reachable this way (e.g. Windows)
        pass


def _construct_quietly() -> highspy.Highs:
    sys.stdout.flush()
    _flush_c_stdio()
    try:
        saved = os.dup(1)
    except OSError:  # no standard output to protect
        return highspy.Highs()
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        try:
            return highspy.Highs()
        finally:
            _flush_c_stdio()
            os.dup2(saved, 1)
    finally:
        os.close(devnull)
        os.close(saved)


def new_highs(verbose: bool = False) -> highspy.Highs:
    """A ``highspy.Highs`` model whose log goes to the console only when ``verbose``.

    Examples
    --------
    >>> h = new_highs()
    >>> isinstance(h, highspy.Highs)
    True
    """
    global _BANNER_SHOWN
    with _LOCK:
        h = highspy.Highs() if _BANNER_SHOWN or verbose else _construct_quietly()
        _BANNER_SHOWN = True
    h.setOptionValue("output_flag", bool(verbose))
    return h
