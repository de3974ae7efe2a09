"""ICEClassifier versus the linear classifiers a user would otherwise pick.

Prints, per bundled ICE-paper dataset, the training errors and fit time of ICEClassifier (exact),
a big-M MILP on HiGHS and on Gurobi when installed (|w| <= 1e3 on standardized features, a
common "exact" formulation that is not: it cannot reach thin cells), LinearSVC,
LogisticRegression and LDA, all in one run, then the speed ratio MILP / ICE. The same table
as ``exactclf reproduce ice-table1``.

    python benchmarks/ice_vs_baselines.py [--milp-time-limit 300] [--datasets voicepath haberman]

The default datasets add seeded synthetic instances in dimensions 6-12 (``synth90x6``, ...;
D = 9-12 with N = 100-200 for issue 26). ICEClassifier gets the MILP's time limit.
"""

from __future__ import annotations

import argparse

from exactclf._experiments.ice_table1 import SYNTHETIC, ice_table1
from exactclf.datasets import published_optima

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=[*published_optima(), *SYNTHETIC])
    parser.add_argument("--milp-time-limit", type=float, default=300.0)
    parser.add_argument("--n-jobs", type=int, default=-1)
    args = parser.parse_args()
    ice_table1(datasets=args.datasets, milp_time_limit=args.milp_time_limit, n_jobs=args.n_jobs)
