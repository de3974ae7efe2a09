"""The seed papers' experiments, re-run on this machine: ``exactclf reproduce NAME``.

Each experiment prints its table as it goes; the scripts in ``benchmarks/`` are thin
command-line wrappers around the same code. ``quick`` runs a smaller version (fewer
datasets, sizes or seeds) that finishes in minutes; :data:`FULL_RUNS` holds the experiments
with a full protocol (``--full``: every dataset of the paper, its splits, hours).
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["EXPERIMENTS", "FULL_RUNS"]


def _ice_table1(quick: bool) -> None:
    from .ice_table1 import ice_table1

    ice_table1(quick=quick)


def _deepice_table2(quick: bool) -> None:
    from .deepice_table2 import main

    main(["--datasets", "haberman", "caesarian", "--k", "1", "2"] if quick else [])


def _deepice_table2_full() -> None:
    from .deepice_table2 import main

    main(["--full"])


def _mrc(quick: bool) -> None:
    from .mrc import main

    main(["--n", "10000", "--classes", "2", "5", "--datasets"] if quick else [])


def _ngd_peaks(quick: bool) -> None:
    from .ngd_peaks import main

    main(["--seeds", "4", "--peaks-iter", "300", "--datasets", "peaks"] if quick else [])


EXPERIMENTS: dict[str, Callable[[bool], None]] = {
    "ice-table1": _ice_table1,
    "deepice-table2": _deepice_table2,
    "mrc": _mrc,
    "ngd-peaks": _ngd_peaks,
}

#: experiments with a full protocol, run by ``exactclf reproduce NAME --full``
FULL_RUNS: dict[str, Callable[[], None]] = {"deepice-table2": _deepice_table2_full}
