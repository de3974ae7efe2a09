"""The Deep-ICE paper's Table 2 protocol on all eleven of its datasets, K = 1, 2, 3.

The same run as ``exactclf reproduce deepice-table2 --full``; options: ``--help``.

    python benchmarks/table2.py [--datasets ai4i ...] [--k 1 2 3] [--time-limit 300]
                                [--splits 5] [--protocol full|splits|both] [--n-jobs -1]

Per row: training errors, training and test accuracy next to the paper's, the issue-26 target,
the exact model's proven bound, gap, fit time and whether it is proven; LinearSVC and an MLP
of the same width on the same rows; then a summary per dataset and K.
"""

import sys

from exactclf._experiments.table2 import main

if __name__ == "__main__":
    main(sys.argv[1:])
