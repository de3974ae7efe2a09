"""DeepICEMaxoutClassifier versus LinearSVC and an MLP of the same architecture (5-fold CV).

The same run as ``exactclf reproduce deepice-table2``; options: ``--help``.

    python benchmarks/deepice_vs_baselines.py [--datasets haberman ...] [--k 1 2 3] [--no-cv]

First the full-data certificates per dataset and K (errors, proven lower bound, gap, time,
proven?), then the cross-validated comparison.
"""

import sys

from exactclf._experiments.deepice_table2 import main

if __name__ == "__main__":
    main(sys.argv[1:])
