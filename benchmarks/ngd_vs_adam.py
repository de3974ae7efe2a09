"""NGDClassifier versus MLPClassifier in wall time on peaks and digits (the NGD paper's comparison).

The same run as ``exactclf reproduce ngd-peaks``, with BLAS limited to one thread (set before
NumPy is imported: the matrices are tiny). Options: ``--help``. The stored results were made by
``python benchmarks/ngd_vs_adam.py --plot benchmarks/results/ngd_vs_adam.png``
(output, with a header, in ``benchmarks/results/ngd_vs_adam.txt``).
"""

import os
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from exactclf._experiments.ngd_peaks import main  # noqa: E402

if __name__ == "__main__":
    main(sys.argv[1:])
