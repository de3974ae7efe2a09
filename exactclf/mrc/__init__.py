"""Minimax risk classifiers (MRCs) with the 0-1 and the log loss.

:class:`MRCCCG` is the estimator. :func:`mrc_statistics` (``tau`` and ``lambda``) and
:func:`mrc_full_lp` (the full LP, every row written down) are the references that tests,
benchmarks and examples compare it with.
"""

from ._estimator import MRCCCG
from ._full_lp import mrc_full_lp
from ._statistics import mrc_statistics

__all__ = ["MRCCCG", "mrc_full_lp", "mrc_statistics"]
