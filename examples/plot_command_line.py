"""
The command line: ``exactclf fit`` and ``exactclf verify``
==========================================================

Installing exactclf installs the ``exactclf`` command, which fits a model to a CSV file
without writing any Python, and re-checks its certificate::

    exactclf fit data.csv --target COL --model ice --certificate cert.json
    exactclf verify data.ice.joblib data.csv --target COL --certificate cert.json

``exactclf fit`` saves the model (joblib), prints it as readable rules over the column
names and prints its certificate; ``--certificate`` also writes the certificate as JSON.
``exactclf verify`` re-checks it on the CSV, independently of the code that produced it,
and exits with status 1 when it does not hold. (:doc:`/cli` lists every option.)

This example runs the same commands from Python, through :func:`exactclf.cli.main` (the
function behind the command; it takes the arguments as a list and returns the exit
status), on a CSV written from the bundled Cryotherapy data (90 patients treated for warts,
6 features; the label says whether the treatment worked).
"""

# %%
# A CSV file
# ----------
# A header row of unique column names, one number per feature cell; the target column
# holds class names (here text).
import csv
import json
import tempfile
from pathlib import Path

from exactclf.cli import main
from exactclf.datasets import load_cryotherapy

data = load_cryotherapy()
workdir = Path(tempfile.mkdtemp())
csv_path = workdir / "cryotherapy.csv"
with csv_path.open("w", newline="", encoding="utf-8") as f:
    writer = csv.writer(f)
    writer.writerow([*data.feature_names, "outcome"])
    for x, label in zip(data.data, data.target, strict=True):
        writer.writerow([*(repr(float(v)) for v in x), data.target_names[label]])
print("".join(csv_path.read_text(encoding="utf-8").splitlines(keepends=True)[:4]), "...")

# %%
# ``exactclf fit``
# ----------------
# In a shell: ``exactclf fit cryotherapy.csv --target outcome --model ice --certificate
# cert.json``. The model goes next to the CSV (``cryotherapy.ice.joblib``; ``--output``
# puts it elsewhere). The printed rule is the model itself, at full float64 precision:
# evaluated as printed, it makes exactly the certified training errors. ``--param
# KEY=VALUE`` passes estimator parameters, e.g. ``--param time_limit=60``.
cert_path = workdir / "cert.json"
status = main(["fit", str(csv_path), "--target", "outcome", "--model", "ice",
               "--certificate", str(cert_path)])
print("exit status:", status)

# %%
# ``exactclf verify``
# -------------------
# In a shell: ``exactclf verify cryotherapy.ice.joblib cryotherapy.csv --target outcome
# --certificate cert.json``. The CSV is read exactly as ``exactclf fit`` read it, so that
# the data fingerprint matches; then every check is printed. Exit status 0: verified.
model_path = workdir / "cryotherapy.ice.joblib"
status = main(["verify", str(model_path), str(csv_path), "--target", "outcome",
               "--certificate", str(cert_path)])
print("exit status:", status)

# %%
# A certificate that claims more than the model delivers
# ------------------------------------------------------
# Edit the JSON file to claim one error fewer, and ``exactclf verify`` refuses it with exit
# status 1 (a script or a CI job can test for that).
cert = json.loads(cert_path.read_text(encoding="utf-8"))
cert["value"] -= 1
forged_path = workdir / "forged.json"
forged_path.write_text(json.dumps(cert), encoding="utf-8")
status = main(["verify", str(model_path), str(csv_path), "--target", "outcome",
               "--certificate", str(forged_path)])
print("exit status:", status)

# %%
# Other data, same certificate
# ----------------------------
# A certificate is about the data it was fitted on and no other. One label changed in the
# CSV, and the fingerprint check fails.
lines = csv_path.read_text(encoding="utf-8").splitlines()
first = lines[1].rsplit(",", 1)
other = [name for name in data.target_names if name != first[1]][0]
lines[1] = f"{first[0]},{other}"
other_csv = workdir / "cryotherapy_edited.csv"
other_csv.write_text("\n".join(lines) + "\n", encoding="utf-8")
status = main(["verify", str(model_path), str(other_csv), "--target", "outcome",
               "--certificate", str(cert_path)])
print("exit status:", status)
