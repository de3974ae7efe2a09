"""Device layer and the kernel contract: CPU kernel == array-generic (GPU) path == reference."""

import numpy as np
import pytest

from exactclf._backend import CPU, REFERENCE, resolve_device
from exactclf._base import merge_duplicates
from exactclf._geometry import COPLANAR_RTOL, affine_frame
from exactclf.datasets import load_caesarian, load_haberman, load_voicepath
from exactclf.linear._kernels_array import ice_scan_array
from exactclf.linear._kernels_cpu import ice_scan_cpu
from exactclf.linear._min01 import _Problem, solve_min01


def test_resolve_device():
    assert resolve_device("cpu") is CPU
    assert resolve_device("auto").name in ("cpu", "gpu")
    with pytest.raises(ValueError, match="device must be"):
        resolve_device("tpu")


def _problem(X, y):
    U, wpos, wneg, _ = merge_duplicates(X, y == 1, np.ones(len(y)))
    return _Problem(U, wpos, wneg, affine_frame(U), CPU), (U, wpos, wneg)


DATA = {
    "voicepath": lambda: load_voicepath(return_X_y=True),
    "haberman": lambda: load_haberman(return_X_y=True),  # integer features: degenerate
    "caesarian": lambda: load_caesarian(return_X_y=True),  # small integer grid: very degenerate
}


@pytest.mark.parametrize("name", list(DATA))
def test_kernels_agree_on_a_chunk(name):
    """Same best candidate on a rank range; the CPU kernel's pending degenerate planes are
    among the array path's (it prunes them against a tighter, evolving incumbent)."""
    prob, _ = _problem(*DATA[name]())
    r0, r1 = 1000, 4000
    buf = np.empty((4096, 4))
    val, rank, _, npend, r_stop = ice_scan_cpu(
        prob.Xh, prob.nrm, prob.wpos, prob.wneg, r0, r1, np.inf, np.inf, COPLANAR_RTOL, buf
    )
    aval, arank, _, apending = ice_scan_array(
        np, prob.Xh, prob.nrm, prob.wpos, prob.wneg, r0, r1, np.inf, np.inf, COPLANAR_RTOL
    )
    assert r_stop == r1 and rank >= 0
    assert (val, rank) == (aval, arank)
    assert {int(r) for r in buf[:npend, 0]} <= {p[0] for p in apending}


@pytest.mark.parametrize("name", ["voicepath", "caesarian"])
def test_reference_path_returns_the_cpu_model(name):
    X, y = DATA[name]()
    X, y = (X[:30], y[:30]) if name == "caesarian" else (X[::2], y[::2])
    _, (U, wpos, wneg) = _problem(X, y)
    cpu = solve_min01(U, wpos, wneg, backend=CPU)
    ref = solve_min01(U, wpos, wneg, backend=REFERENCE)
    assert cpu.complete and ref.complete and cpu.value == ref.value
    np.testing.assert_array_equal(cpu.positive, ref.positive)
