"""Bundled real-world binary classification datasets.

Small UCI Machine Learning Repository datasets in the versions used by the ICE
paper (Table 1: ``haberman``, ``caesarian``, ``cryotherapy``, ``voicepath``;
original N, duplicate rows kept) and by the Deep-ICE paper (Table 2,
deduplicated). Each ``load_*`` function follows the scikit-learn loader
convention: it returns a :class:`~sklearn.utils.Bunch` with ``data``,
``target``, ``feature_names``, ``target_names``, ``DESCR``, ``source`` and
``filename``, or ``(X, y)`` with ``return_X_y=True``. Features are float64;
labels are int64 in {0, 1}, the negative class of the source file (-1 or 0)
becoming 0. :func:`published_optima` gives the published exact optima of the
ICE paper's Table 1 (their only home in exactclf).

Attribution: Dua, D. and Graff, C. (2019). UCI Machine Learning Repository
[http://archive.ics.uci.edu/ml]. Irvine, CA: University of California, School
of Information and Computer Science. The files are copies of those in
https://github.com/XiHegrt/DeepICE-algorithm-artifacts (commit 96d10fa) and
https://github.com/XiHegrt/E01Loss (commit 19b2a6f). Each dataset's ``DESCR``
cites its original authors; see :mod:`exactclf.datasets._base` for details.
"""

from ._base import (
    list_datasets,
    load_ai4i,
    load_auction_verification,
    load_bloodtransfer,
    load_caesarian,
    load_cryotherapy,
    load_dataset,
    load_deepice_caesarian,
    load_deepice_haberman,
    load_deepice_voicepath,
    load_diabetic,
    load_haberman,
    load_rice_cammeo,
    load_sepsis,
    load_skin_segmentation,
    load_steel_others,
    load_voicepath,
    published_optima,
)

__all__ = [
    "list_datasets",
    "load_ai4i",
    "load_auction_verification",
    "load_bloodtransfer",
    "load_caesarian",
    "load_cryotherapy",
    "load_dataset",
    "load_deepice_caesarian",
    "load_deepice_haberman",
    "load_deepice_voicepath",
    "load_diabetic",
    "load_haberman",
    "load_rice_cammeo",
    "load_sepsis",
    "load_skin_segmentation",
    "load_steel_others",
    "load_voicepath",
    "published_optima",
]
