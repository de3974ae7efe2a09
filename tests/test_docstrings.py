"""The Examples sections of the docstrings run and say what they show."""

import doctest
import importlib
import inspect
import pkgutil

import pytest

import exactclf

MODULES = sorted(
    m.name for m in pkgutil.walk_packages(exactclf.__path__, prefix="exactclf.")
)
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def test_every_module_is_collected():
    assert "exactclf.linear._ice" in MODULES and "exactclf.mrc._ccg" in MODULES
    assert len(MODULES) > 30


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=FLAGS, report=True)
    assert result.failed == 0


def _public_api():
    import exactclf.datasets

    for owner in (exactclf, exactclf.datasets):
        for name in owner.__all__:
            obj = getattr(owner, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                yield f"{owner.__name__}.{name}", obj


@pytest.mark.parametrize("name, obj", list(_public_api()), ids=[n for n, _ in _public_api()])
def test_public_api_has_examples_that_run(name, obj):
    finder = doctest.DocTestFinder(recurse=False)
    tests = [t for t in finder.find(obj, name) if t.examples]
    assert tests, f"{name} has no Examples section"
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    module = inspect.getmodule(obj)
    for t in tests:
        t.globs = dict(vars(module))
        runner.run(t)
    assert runner.failures == 0
