"""The time of one fit: one monotonic clock, one deadline, and the seconds handed to stages.

The schedules (:mod:`exactclf._zero_one._portfolio`, :mod:`exactclf.maxout._portfolio`)
give each stage a share of the whole budget, capped by what is left; a stage that stops
early leaves the rest to the stages after it, since every share is measured against the
deadline when the stage starts.
"""

from __future__ import annotations

import math
import time

__all__ = ["LONGEST_SEARCH", "MIN_SECONDS", "Budget", "at_least"]

#: an exact search predicted to take longer than this (a day) is refused without a budget,
#: and gets no turns in a schedule without a time limit: past it, a user is better served
#: by a time limit and the bound it proves than by waiting
LONGEST_SEARCH = 86400.0

#: the shortest time handed to a stage: the solvers and searches below take a positive
#: limit (0 or a negative one would mean "no limit" or fail), so a stage whose share is
#: spent still gets a moment to return its incumbent and its proven bound
MIN_SECONDS = 1e-3


def at_least(seconds: float) -> float:
    """``seconds``, raised to :data:`MIN_SECONDS`."""
    return max(seconds, MIN_SECONDS)


class Budget:
    """``seconds`` of a fit from ``start`` (``time.perf_counter()`` when omitted); None
    means no time limit.

    Examples
    --------
    >>> b = Budget(10.0)
    >>> b.limited, b.share(0.25), Budget().share(0.25, default=30.0)
    (True, 2.5, 30.0)
    >>> 9.0 < b.left() <= 10.0, 7.0 < b.left(keep=2.0) <= 8.0, math.isinf(Budget().left())
    (True, True, True)
    """

    def __init__(self, seconds: float | None = None, start: float | None = None):
        self.seconds = seconds
        self.start = time.perf_counter() if start is None else start
        self.deadline = math.inf if seconds is None else self.start + seconds

    @property
    def limited(self) -> bool:
        """Whether the fit has a time limit."""
        return self.seconds is not None

    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.perf_counter() - self.start

    def left(self, keep: float = 0.0) -> float:
        """Seconds to the deadline less ``keep`` (infinite without a time limit)."""
        return self.deadline - keep - time.perf_counter()

    def share(self, fraction: float, default: float | None = None) -> float | None:
        """``fraction`` of the whole budget; without a time limit ``default`` (seconds, or
        None for no limit)."""
        return default if self.seconds is None else fraction * self.seconds
