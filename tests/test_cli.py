import io

from exactclf.cli import demo, main


def test_demo_prints_a_comparison_table():
    out = io.StringIO()
    rows = demo(["voicepath"], n_jobs=1, out=out)
    text = out.getvalue()
    assert "ICEClassifier" in text and "LinearSVC" in text and "proven optimal" in text
    errors = {r["model"]: r["errors"] for r in rows}
    assert errors["ICEClassifier"] == 19
    assert all(e >= 19 for e in errors.values())


def test_main_parses_demo(capsys):
    assert main(["demo", "--datasets", "voicepath", "--n-jobs", "1"]) == 0
    assert "voicepath" in capsys.readouterr().out
