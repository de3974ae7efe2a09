"""The exact searches' core stays readable: short functions, one-way imports, named stages.

The core is every module of ``exactclf/`` outside the other estimators' packages, the
verifier, the experiments, the data sets and the command line. Complexity is ruff's C901
(``pyproject.toml``); the length rule is checked here.
"""

import ast
from pathlib import Path

import pytest

from exactclf._stages import Stage

PACKAGE = Path(__file__).resolve().parent.parent / "exactclf"
OUTSIDE = {"mrc", "threshold", "ngd", "_verification", "_experiments", "datasets"}
COMMAND_LINE = {"cli.py", "_csv_input.py"}
#: a function longer than this does more than one job (compiled kernels aside: a kernel is
#: one flat loop that numba or CUDA compiles as a whole)
MAX_LINES = 100


def _core_modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] in OUTSIDE or rel.name in COMMAND_LINE:
            continue
        yield path


def _is_kernel(node) -> bool:
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = ast.unparse(target)
        if name in ("njit", "jit", "cuda.jit", "numba.njit", "vectorize"):
            return True
    return False


@pytest.mark.parametrize("path", list(_core_modules()), ids=lambda p: str(p.name))
def test_no_core_function_is_over_a_hundred_lines(path):
    tree = ast.parse(path.read_text())
    long = [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.end_lineno - node.lineno + 1 > MAX_LINES and not _is_kernel(node)]
    assert not long, f"{path.name}: {long}"


def test_the_networks_import_no_private_module_of_the_linear_estimator():
    """What ICE and Deep-ICE share lives in exactclf._zero_one; maxout/ reaches the linear
    problem only through it."""
    for path in (PACKAGE / "maxout").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("linear._"), (path.name, node.module)
                assert "linear._" not in node.module, (path.name, node.module)


def test_every_trace_row_of_the_linear_schedule_is_a_stage():
    """A newcomer reads where the budget went from ``fit_trace_`` alone: every row of a fit
    beyond the exact range names a Stage (the incumbents' row adds the winner's source)."""
    import numpy as np

    from exactclf import ICEClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    y = X[:, 0] + X[:, 1] + rng.normal(size=2000) > 0
    with pytest.warns(Warning):
        clf = ICEClassifier(time_limit=3.0).fit(X, y)
    names = {str(s) for s in Stage}
    stages = [row.stage.split(" (")[0] for row in clf.fit_trace_]
    assert all(s in names for s in stages), stages
    assert "local search" in stages and "local IIS cover" in stages
