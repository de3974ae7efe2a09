"""The command line: demo table, reproduce, fit on a CSV file with readable rules."""

import io

import joblib
import numpy as np
import pytest

from exactclf import ICEClassifier
from exactclf.cli import demo, describe_model, main, read_csv
from exactclf.datasets import load_voicepath


def test_demo_prints_a_comparison_table():
    out = io.StringIO()
    rows = demo(["voicepath"], n_jobs=1, out=out, estimators=["ice"])
    text = out.getvalue()
    assert "ICEClassifier" in text and "LinearSVC" in text and "proven optimal" in text
    errors = {r["model"]: r["train"] for r in rows}
    assert errors["ICEClassifier"] == 19
    assert all(e >= 19 for e in errors.values())


def test_main_parses_demo(capsys):
    assert main(["demo", "--datasets", "voicepath", "--estimators", "ice", "--n-jobs", "1"]) == 0
    assert "voicepath" in capsys.readouterr().out


@pytest.fixture
def voicepath_csv(tmp_path):
    X, y = load_voicepath(return_X_y=True)
    path = tmp_path / "voice.csv"
    label = {1: "sick"}
    lines = ["jitter,shimmer,diagnosis"] + [f"{float(a)!r},{float(b)!r},{label.get(t, 'healthy')}"
                                            for (a, b), t in zip(X, y, strict=True)]
    path.write_text("\n".join(lines) + "\n")
    return path, X, y


def test_fit_ice_writes_the_model_and_prints_the_rule(voicepath_csv, capsys):
    path, X, y = voicepath_csv
    out = path.with_suffix(".joblib")
    assert main(["fit", str(path), "--target", "diagnosis", "--model", "ice",
                 "--output", str(out)]) == 0
    text = capsys.readouterr().out
    assert "*jitter" in text and "*shimmer" in text and "proven optimal" in text
    model = joblib.load(out)
    assert model.training_errors_ == 19
    assert set(model.classes_) == {"healthy", "sick"}
    # the printed rule is the model: re-evaluate it from the text
    rule = next(line for line in text.splitlines() if line.startswith("predict"))
    expr = rule.split(" if ")[1].split("> 0")[0].replace("*jitter", "*X[:, 0]")
    expr = expr.replace("*shimmer", "*X[:, 1]")
    pred = np.where(eval(expr) > 0, model.classes_[1], model.classes_[0])
    np.testing.assert_array_equal(pred, model.predict(X))


def test_fit_deepice_and_params(voicepath_csv, capsys):
    path, X, y = voicepath_csv
    assert main(["fit", str(path), "--target", "diagnosis", "--model", "deepice",
                 "--param", "n_hyperplanes=2", "--param", "random_state=0",
                 "--output", str(path.with_suffix(".dj"))]) == 0
    text = capsys.readouterr().out
    assert "ANY of:" in text
    assert sum("> 0" in line for line in text.splitlines()) == 2


@pytest.mark.parametrize("model", ["threshold", "mrc", "ngd"])
def test_describe_other_models(voicepath_csv, model, capsys):
    path, X, y = voicepath_csv
    params = {"threshold": ["arrangements='sample'", "n_arrangements=50"],
              "mrc": [], "ngd": ["hidden_layer_sizes=(4,)", "max_iter=5"]}[model]
    argv = ["fit", str(path), "--target", "diagnosis", "--model", model,
            "--output", str(path.with_suffix(f".{model}"))]
    for p in params:
        argv += ["--param", p]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert {"threshold": "neurons", "mrc": "worst-case", "ngd": "neural network"}[model] in text


def test_read_csv_errors(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,label\n1,x,0\n")
    with pytest.raises(ValueError, match="non-numeric feature"):
        read_csv(bad, "label")
    with pytest.raises(ValueError, match="no column 'target'"):
        read_csv(bad, "target")
    bad.write_text("a,b,label\n1,2\n")
    with pytest.raises(ValueError, match="2 fields"):
        read_csv(bad, "label")


def test_fit_reports_bad_input_without_traceback(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,label\n1,0\n2,0\n")  # a single class
    assert main(["fit", str(bad), "--target", "label", "--model", "ice"]) == 2
    assert "exactclf fit: error:" in capsys.readouterr().err


def test_describe_model_uses_feature_names():
    X, y = load_voicepath(return_X_y=True)
    text = describe_model(ICEClassifier().fit(X, y), ["f0", "f1"])
    assert "*f0" in text and "*f1" in text


def test_reproduce_ice_table1_rows():
    from exactclf._experiments.ice_table1 import ice_table1

    out = io.StringIO()
    rows = ice_table1(datasets=["voicepath"], milp_time_limit=2.0, n_jobs=1, out=out)
    errors = {r["method"]: r["errors"] for r in rows}
    assert errors["ICEClassifier"] == 19
    assert min(errors.values()) == 19  # the MILP and the surrogates never beat the optimum
    assert "MILP time / ICE time" in out.getvalue()
