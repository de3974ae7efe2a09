"""MRCCCG versus the full 0-1 MRC LP solved by HiGHS and MRCpy's ccg (in its own environment).

The same run as ``exactclf reproduce mrc``; options: ``--help``. MRCpy 3.0 runs only with
``--mrcpy-python`` (a Python of its own environment, see ``benchmarks/README_mrcpy.md``), through
``benchmarks/_mrcpy_runner.py``.

    python benchmarks/mrc_vs_baselines.py [--n 10000 30000] [--classes 2 5] [--datasets ...]
    python benchmarks/mrc_vs_baselines.py --datasets --mrcpy-python /work/mrcpy-venv/bin/python
"""

import sys
from pathlib import Path

from exactclf._experiments.mrc import main

if __name__ == "__main__":
    main(sys.argv[1:], mrcpy_runner=Path(__file__).with_name("_mrcpy_runner.py"))
