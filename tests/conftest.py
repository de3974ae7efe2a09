"""Test-session settings (the environment must precede the first import of scipy, and
SIGINT must raise KeyboardInterrupt) and the skip of the ``gpu`` marker."""

import os
import signal

import pytest

# scikit-learn's array-API conformance checks run only with this set; enabling it makes
# them check that array-API dispatch on NumPy inputs leaves every estimator's results unchanged
os.environ.setdefault("SCIPY_ARRAY_API", "1")


@pytest.fixture(autouse=True, scope="session")
def _sigint_raises_keyboard_interrupt():
    """The Ctrl-C tests send SIGINT to their own process. A runner started as a background
    job of a non-interactive shell inherits SIGINT ignored, and Python then installs no
    handler: the signal would be lost and an interrupted fit would run to its time limit
    (600 s in some tests)."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def pytest_collection_modifyitems(config, items):
    """Skip the tests marked ``gpu`` where CuPy cannot use a CUDA device (saying why); where
    it can, they run like any other."""
    marked = [item for item in items if item.get_closest_marker("gpu")]
    if not marked:
        return
    from exactclf._backend import _cupy_or_reason  # after the environment above is set

    cupy, reason = _cupy_or_reason()
    if cupy is None:
        for item in marked:
            item.add_marker(pytest.mark.skip(reason=f"needs a GPU: {reason}"))
