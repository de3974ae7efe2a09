"""
Re-checking a certificate: ``verify`` and the JSON certificate
==============================================================

Every fitted exactclf estimator carries a ``certificate_``: what its fit proves about the
returned model (its training errors, a proven lower bound on the fewest errors any model
of its class makes, whether the two meet) and, where the proof has one, a compact
*witness* of the bound. The certificate can be written as JSON and sent along with the
model. :func:`exactclf.verify` re-checks it on the model and the data with code that
shares nothing with the search that produced it: a reader need not trust the fitting
code, nor the person who sent the file.

Here :class:`~exactclf.ICEClassifier` proves the best linear classifier of the
Cryotherapy data (90 patients, 6 features) by an IIS cover: a list of small sets of
points of which no linear classifier gets all right (irreducible infeasible subsystems,
each with exact Farkas multipliers). Then the certificate is tampered with in three ways
and ``verify`` says which check fails.
"""

# %%
# Fit, and write the certificate as JSON
# --------------------------------------
import copy
import json
import tempfile
from fractions import Fraction
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch

from exactclf import ICEClassifier, verify
from exactclf.datasets import load_cryotherapy

X, y = load_cryotherapy(return_X_y=True)
clf = ICEClassifier(method="iis_cover").fit(X, y)
print(f"{clf.training_errors_:g} training errors, proven optimal: {clf.is_optimal_} "
      f"({clf.lower_bound_method_})")

workdir = Path(tempfile.mkdtemp())
path = workdir / "cryotherapy.cert.json"
path.write_text(clf.certificate_.to_json(indent=2), encoding="utf-8")
print(f"wrote {path.name}: {path.stat().st_size} bytes")

# %%
# Read it back
# ------------
# The file is plain JSON: any JSON reader gets the claim. The witness holds the IISs, each a
# list of members ``[row, side, u]`` (training row, the label it wants: +1 for
# ``classes_[1]``, -1 for ``classes_[0]``, and an integer multiplier).
cert = json.loads(path.read_text(encoding="utf-8"))
for key, value in cert.items():
    if key != "witness":
        print(f"{key:>12}: {value}")
iis_list = cert["witness"]["data"]["iis"]
print(f"{'witness':>12}: {cert['witness']['kind']}, {len(iis_list)} IISs; the first: "
      f"{iis_list[0]}")

# %%
# Why one IIS proves an error: its multipliers add its members' sides times ``(x, 1)`` to
# exactly zero. If a classifier ``sign(w.x + b)`` got every member right, every
# ``side * (w.x + b)`` would be positive, and their sum with positive weights ``u`` would be
# positive too; but that sum is ``w`` and ``b`` dotted with zero. Checked here in exact
# rational arithmetic on the float64 data, as ``verify`` does:
total = [Fraction(0)] * (X.shape[1] + 1)
for row, side, u in iis_list[0]:
    point = [Fraction(float(v)) for v in X[row]] + [Fraction(1)]
    total = [t + u * side * p for t, p in zip(total, point, strict=True)]
print("sum of u * side * (x, 1) over the first IIS:", [str(t) for t in total])

# %%
# Verify the certificate read back
# --------------------------------
# ``verify`` re-computes the value from the model's own predictions, checks that the
# certificate is about this data (a SHA-256 fingerprint of ``X``, ``y`` and the weights),
# re-checks every IIS in exact arithmetic and re-solves the set cover that turns them into
# the bound. It never raises on a bad certificate: a failed check says what was wrong.
report = verify(clf, X, y, certificate=cert)
print(report)

# %%
# Tampering
# ---------
# Three forgeries: a smaller error count than the model makes (``value``), one Farkas
# multiplier changed in the witness, and the right certificate checked against other data
# (one label flipped).
forged_value = copy.deepcopy(cert)
forged_value["value"] = cert["value"] - 1

forged_witness = copy.deepcopy(cert)
row, side, u = forged_witness["witness"]["data"]["iis"][0][0]
forged_witness["witness"]["data"]["iis"][0][0] = [row, side, u + 1]

y_other = y.copy()
y_other[0] = 1 - y_other[0]

reports = {
    "as written": report,
    "value lowered by 1": verify(clf, X, y, certificate=forged_value),
    "one multiplier changed": verify(clf, X, y, certificate=forged_witness),
    "one label flipped in y": verify(clf, X, y_other, certificate=cert),
}
for name, rep in reports.items():
    failed = [c for c in rep.checks if not c.passed]
    print(f"\n{name}: {'verified' if rep.ok else 'NOT verified'}")
    for check in failed:
        print(f"  [FAILED] {check.name}: {check.detail}")

# %%
# Which check catches which forgery
# ---------------------------------
# One row per case, one column per check ``verify`` ran on the genuine one: green
# where the check passed, red where it failed, grey where it was not reached (a check that
# needs the data to match is not run on other data).
checks = [c.name for c in report.checks]
status = np.full((len(reports), len(checks)), 2)  # 2: not run
for i, rep in enumerate(reports.values()):
    for check in rep.checks:
        if check.name in checks:
            status[i, checks.index(check.name)] = int(check.passed)
colors = ListedColormap(["#d62728", "#2ca02c", "#bbbbbb"])
fig, ax = plt.subplots(figsize=(10, 3.8), layout="constrained")
ax.imshow(status, cmap=colors, vmin=0, vmax=2, aspect="auto")
ax.set_xticks(range(len(checks)), checks, rotation=40, ha="right")
ax.set_yticks(range(len(reports)), list(reports))
ax.set_xticks(np.arange(len(checks) + 1) - 0.5, minor=True)
ax.set_yticks(np.arange(len(reports) + 1) - 0.5, minor=True)
ax.grid(which="minor", color="white", lw=2)
ax.tick_params(which="minor", length=0)
ax.set(xlabel="check of verify()", ylabel="what was checked",
       title="verify() on the genuine certificate and on three tampered cases")
ax.legend(handles=[Patch(color="#2ca02c", label="passed"), Patch(color="#d62728",
                                                                  label="failed"),
                   Patch(color="#bbbbbb", label="not run")],
          loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
plt.show()
