"""The Examples sections of the public docstrings run and say what they show."""

import doctest
import importlib

import pytest

MODULES = [
    "exactclf._backend",
    "exactclf._combinatorics",
    "exactclf._geometry",
    "exactclf._separator",
    "exactclf.linear._ice",
    "exactclf.linear._milp",
    "exactclf.linear._min01",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
