"""Where a fit's budget went: one row per stage run, recorded as the stage ends.

An exact fit runs stages in turn (incumbent heuristics, the enumeration, the IIS cover, the
bounds). :class:`FitTrace` records each run with the incumbent and the proven bound after it,
so that ``fit_trace_`` answers "where did my time go, and what did it buy" without reading the
code; with ``verbose`` each row is also printed (to stderr) as it is recorded.
"""

from __future__ import annotations

import sys
import time
from typing import NamedTuple

__all__ = ["FitTrace", "TraceRow"]


class TraceRow(NamedTuple):
    """One stage run of a fit: its name, when it started and how long it ran (seconds from
    the start of ``fit``), the incumbent's value and the proven bound after it, and why it
    ended (``"done"``, ``"proven"``, ``"slice"`` when its turn of a shared budget ended, or a
    :class:`~exactclf.StopReason` value). ``row._asdict()`` gives it as a dict.

    Examples
    --------
    >>> row = TraceRow("exact", 0.5, 1.25, 66.0, 60.0, "slice")
    >>> row.stage, row._asdict()["bound"]
    ('exact', 60.0)
    """

    stage: str
    start: float
    seconds: float
    incumbent: float
    bound: float
    stop: str


class FitTrace:
    """The rows of one fit, timed from ``t0`` (a ``time.perf_counter()`` value); ``verbose``
    prints each row as it is recorded, prefixed by ``who``.

    Examples
    --------
    >>> import time
    >>> trace = FitTrace(time.perf_counter())
    >>> trace.record("incumbents", time.perf_counter(), 12.0, 3.0, "done")
    >>> [row.stage for row in trace.rows]
    ['incumbents']
    """

    def __init__(self, t0: float, who: str = "", verbose: int = 0):
        self.t0 = t0
        self.who = who
        self.verbose = verbose
        self.rows: list[TraceRow] = []

    def record(self, stage: str, started: float, incumbent: float, bound: float,
               stop: str) -> None:
        """Add the row of a stage that started at ``started`` (``perf_counter``) and ends
        now, with the incumbent's value and the proven bound after it."""
        now = time.perf_counter()
        row = TraceRow(str(stage), started - self.t0, now - started, float(incumbent), float(bound),
                       str(stop))
        self.rows.append(row)
        if self.verbose:
            print(f"{self.who}: [{row.start:8.2f} s +{row.seconds:7.2f} s] {stage}: incumbent "
                  f"{row.incumbent:g}, bound {row.bound:g} ({row.stop})", file=sys.stderr,
                  flush=True)
