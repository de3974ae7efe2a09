"""The stages a fit of ICE or Deep-ICE can run, by name, and a switch to leave some out.

Every component of the two schedules (:mod:`exactclf._zero_one._portfolio`,
:mod:`exactclf.maxout._portfolio`) is one :class:`Stage`. Its value is the name of its rows in
``fit_trace_`` and of its line in ``benchmarks/ablation.py``, which runs every fit of its
instance set once with the full schedule and once without each stage the full run used
(:func:`ablated`): a stage stays in the schedule only where that table shows what it buys.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from ._certificate import TextEnum

__all__ = ["Stage", "ablated", "enabled"]


class Stage(TextEnum):
    """A component of a fit's schedule; each compares equal to its ``fit_trace_`` name.

    Examples
    --------
    >>> Stage.LOCAL_SEARCH == "local search", Stage("quick bound").name
    (True, 'QUICK_BOUND')
    """

    # the linear 0-1 problem (ICEClassifier, and Deep-ICE's linear seed)
    INCUMBENTS = "incumbents"  # majority class, LinearSVC, LogisticRegression
    ANNEALED_SIGMOID = "annealed sigmoid"
    ONE_UNIT_NETWORKS = "one-unit networks"
    MILP_INCUMBENT = "big-M MILP"
    LOCAL_SEARCH = "local search"
    LOCAL_COVER = "local IIS cover"
    RANDOM_PARTITION = "random partition bound"
    ENUMERATION = "enumeration"
    IIS_COVER = "IIS cover"
    MILP_TURN = "big-M MILP turn"
    FINAL_LP = "final LP relaxation"
    QUICK_BOUND = "quick bound"
    # sign constraints (ICEClassifier(monotonic_cst=...))
    SIGNED_MILP = "big-M MILP with sign constraints"
    SIGNED_IIS_COVER = "IIS cover with sign constraints"
    SIGNED_ENUMERATION = "enumeration with sign constraints"
    # the maxout networks (DeepICEMaxoutClassifier, method="auto" beyond the exact range)
    LINEAR_SEED = "linear seed"
    POLARITY_SEEDS = "coreset seeds"
    HEURISTIC = "coreset heuristic"
    GROW = "grow"
    SURROGATE = "smooth surrogate"
    OBSTRUCTION_COVER = "obstruction cover"
    PAIR_COVER = "pair obstruction cover"
    LEVEL_BLOCKS = "level blocks"
    PARTITION_BOUNDS = "partition bounds"
    JOINT_COVER = "joint cover"
    EXACT_SEARCH = "exact search"
    MORE_SEARCH = "more search"
    LINEAR_RETRY = "linear retry"


_OFF: ContextVar[frozenset[Stage]] = ContextVar("exactclf_stages_off", default=frozenset())


def enabled(stage: Stage) -> bool:
    """Whether the schedules may run ``stage`` (all stages are, outside :func:`ablated`)."""
    return stage not in _OFF.get()


@contextmanager
def ablated(*stages: Stage | str) -> Iterator[None]:
    """Fits inside the block run their schedules without ``stages``.

    For the ablation benchmark and the tests: a stage left out is skipped where the schedule
    would run it, and its share of the budget goes to the stages after it.

    Examples
    --------
    >>> with ablated("local search"):
    ...     enabled(Stage.LOCAL_SEARCH), enabled(Stage.IIS_COVER)
    (False, True)
    >>> enabled(Stage.LOCAL_SEARCH)
    True
    """
    token = _OFF.set(_OFF.get() | {Stage(s) for s in stages})
    try:
        yield
    finally:
        _OFF.reset(token)
