"""MRCCCG versus the full 0-1 MRC LP solved by HiGHS (and MRCpy's ccg if installed).

The same run as ``exactclf reproduce mrc``; options: ``--help``.

    python benchmarks/mrc_vs_baselines.py [--n 10000 30000] [--classes 2 5] [--datasets ...]
"""

import sys

from exactclf._experiments.mrc import main

if __name__ == "__main__":
    main(sys.argv[1:])
