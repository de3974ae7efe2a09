"""NGDClassifier versus MLPClassifier in wall time on peaks and digits (the NGD paper's comparison).

The same run as ``exactclf reproduce ngd-peaks``: each estimator trained by ``fit`` with its
defaults, BLAS threads left as the machine gives them (what a user gets; an earlier version
pinned BLAS to one thread, which flattered NGD, see ``exactclf/_experiments/ngd_peaks.py``).
Options: ``--help``. The stored results were made by
``python benchmarks/ngd_vs_adam.py --plot benchmarks/results/ngd_vs_adam.png``
(output, with a header, in ``benchmarks/results/ngd_vs_adam.txt``).
"""

import sys

from exactclf._experiments.ngd_peaks import main

if __name__ == "__main__":
    main(sys.argv[1:])
