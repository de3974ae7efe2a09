"""The GPU against the same machine's CPU (issue 27): the work of each exact search and of NGD.

Every row fits the same estimator with ``device="cpu"`` (``n_jobs=-1`` where the estimator
has it), ``device="gpu"`` and ``device="auto"``, after a warm-up fit on a slice of the data
(CuPy and Numba compile on first use; the CUDA kernels are then cached on disk), with the
device synchronized before each clock reading. It prints the seconds, which device ``auto``
chose, whether ``auto`` is within 10 % of the better device (issue 27's bar), and whether the
devices found the same training errors. NGD rows add the GPU without CUDA graphs (its batch
steps run eagerly, as where a capture fails) and PyTorch Adam on the same network and GPU
where PyTorch is installed. ``--frontier`` adds the exact frontier of ICE: for D = 2, 3, 4,
the largest N (doubling) whose optimum each device proves within ``--frontier-limit``
seconds.

On a GPU machine (see ``../shared/gpu/README.md``), from the project root:

    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl \\
        && export PYTHONPATH=/tmp/site:$PWD && python3 benchmarks/gpu_vs_cpu.py --frontier

Without a GPU it says so and exits.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable

import numpy as np

from exactclf import MRCCCG, DeepICEMaxoutClassifier, ICEClassifier, NGDClassifier
from exactclf._backend import gpu_available
from exactclf.datasets import load_dataset

DEVICES = ("cpu", "gpu", "auto")


def _synchronize() -> None:
    """Wait for the GPU's queued work, so that a clock reading includes it."""
    import cupy

    cupy.cuda.runtime.deviceSynchronize()


def _blobs(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two overlapping Gaussian classes (about 15 % of the points on the wrong side of the
    best plane): a search with many errors, as the issue's synthetic rows."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = rng.normal(size=(n, d)) + 1.2 * y[:, None] / np.sqrt(d)
    return X, y


def _ngd_data(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype(np.float64)
    y = (np.sin(X[:, 0]) + X[:, 1] * X[:, 2] > 0).astype(int)
    return X, y


def rows(time_limit: float) -> list[tuple[str, Callable, np.ndarray, np.ndarray, float]]:
    """``(name, make(device), X, y, per)``: seconds are divided by ``per`` (epochs)."""
    def ice(**kw):
        return lambda device: ICEClassifier(method="exact", device=device, n_jobs=-1, **kw)

    out = []
    for name in ("haberman", "voicepath"):
        X, y = load_dataset(name, return_X_y=True)
        out.append((f"ICE {name} {X.shape[0]}x{X.shape[1]}", ice(), X, y, 1))
    for n, d in ((1500, 2), (5000, 2), (1500, 3), (1000, 3)):
        X, y = _blobs(n, d)
        out.append((f"ICE synthetic {n}x{d}", ice(time_limit=time_limit), X, y, 1))
    X, y = load_dataset("voicepath", return_X_y=True)
    out.append(("Deep-ICE K=2 exact voicepath",
                lambda device: DeepICEMaxoutClassifier(n_hyperplanes=2, method="exact",
                                                       device=device, n_jobs=-1,
                                                       time_limit=time_limit), X, y, 1))
    X, y = _ngd_data(100_000, 60)
    out.append(("NGD 100k x 60 (256, 256) b1024 [s/epoch]",
                lambda device: NGDClassifier((256, 256), batch_size=1024, max_iter=3,
                                             tol=0, random_state=0, device=device), X, y, 3))
    X, y = _ngd_data(100_000, 20)
    y = np.digitize(X[:, 0] + X[:, 1], [-1.0, -0.3, 0.3, 1.0])
    out.append(("MRCCCG 100000x20, 5 classes",
                lambda device: MRCCCG(device=device, random_state=0), X, y, 1))
    return out


def timed(make: Callable, device: str, X, y, per: float) -> tuple[float, object]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # warm-up on a sample (files sorted by label): compilation, CUDA context; NGD's
        # Newton phase (and its kernels) runs only on batches wider than the last hidden
        # layer, so its warm-up takes two full batches
        est = make(device)
        batch = getattr(est, "batch_size", 0)
        n_warm = min(len(X), max(60, 2 * batch if isinstance(batch, int) else 0))
        warm = np.random.default_rng(0).choice(len(X), n_warm, replace=False)
        est.fit(X[warm], y[warm])
        _synchronize()
        t0 = time.perf_counter()
        model = make(device).fit(X, y)
        _synchronize()
    return (time.perf_counter() - t0) / per, model


def ngd_without_graphs(make, X, y, per) -> list[str]:
    """NGD on the GPU with its batch steps run eagerly (no CUDA graphs), and any warning that
    a capture failed in the graphed fit."""
    from exactclf.ngd import _device

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make("gpu").fit(X[:4096], y[:4096])
    out = [f"  warning: {w.message}" for w in caught if "CUDA graph" in str(w.message)]
    graphs = _device._Graphs
    _device._Graphs = lambda *args: None
    try:
        t, _ = timed(make, "gpu", X, y, per)
    finally:
        _device._Graphs = graphs
    out.append(f"{'  NGD on the GPU without CUDA graphs':<42} {'':>9} {t:9.3f}")
    return out


def torch_adam_epoch(X, y, hidden=(256, 256), batch=1024, epochs=3) -> float | None:
    """Seconds per epoch of PyTorch Adam on the same network, on the GPU (None without
    PyTorch)."""
    try:
        import torch
    except ImportError:
        return None
    dev = torch.device("cuda")
    Xt = torch.as_tensor(X, dtype=torch.float64, device=dev)
    yt = torch.as_tensor(y, device=dev)
    sizes = (X.shape[1], *hidden)
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    net = torch.nn.Sequential(*layers, torch.nn.Linear(sizes[-1], int(y.max()) + 1)).to(dev)
    net = net.double()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)

    def epoch():
        for i in range(0, len(Xt), batch):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(net(Xt[i:i + batch]), yt[i:i + batch]).backward()
            opt.step()

    epoch()  # warm-up
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(epochs):
        epoch()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / epochs


def frontier(limit: float, dims=(2, 3, 4), start: int = 100,
             devices=("cpu", "gpu")) -> list[str]:
    """For each D in ``dims``: the largest N (from ``start``, doubling) that each device
    proves optimal within ``limit`` seconds."""
    lines = []
    for d in dims:
        for device in devices:
            n, proven = start, None
            while True:
                X, y = _blobs(n, d, seed=n)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t0 = time.perf_counter()
                    try:
                        clf = ICEClassifier(method="exact", device=device, n_jobs=-1,
                                            time_limit=limit).fit(X, y)
                    except Exception as exc:
                        print(f"  frontier D={d} N={n} {device}: {type(exc).__name__}: {exc}")
                        break
                    dt = time.perf_counter() - t0
                if not clf.is_optimal_:
                    break
                proven = (n, dt)
                n *= 2
            got = "none" if proven is None else f"N = {proven[0]} ({proven[1]:.1f} s)"
            lines.append(f"frontier D={d} {device}: largest proven within {limit:g} s: {got}")
            print(lines[-1], flush=True)
    return lines


def measure(make, X, y, per, reuse_auto: bool, devices=DEVICES) -> dict:
    """Seconds, training errors and proof of each device; with ``reuse_auto`` the device
    ``auto`` chose is not run again (it runs the same code): its time is ``auto``'s."""
    out = {}
    order = ("auto", "cpu", "gpu") if reuse_auto else DEVICES
    for device in order:
        if device not in devices:
            out[device] = {"t": float("nan"), "errors": None, "proven": None, "on": "-",
                           "work": None}
            continue
        if reuse_auto and device != "auto" and out.get("auto", {}).get("on") == device:
            out[device] = out["auto"]
            continue
        try:
            t, model = timed(make, device, X, y, per)
        except Exception as exc:  # a row's failure must not lose the others' figures
            print(f"  {device}: {type(exc).__name__}: {exc}", flush=True)
            out[device] = {"t": float("nan"), "errors": None, "proven": None, "on": "?",
                           "work": None}
            continue
        out[device] = {"t": t, "errors": getattr(model, "training_errors_", None),
                       "proven": getattr(model, "is_optimal_", None),
                       "on": getattr(model, "device_", "?"),
                       "work": getattr(model, "n_candidates_", getattr(model, "n_tuples_", None))}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frontier", action="store_true", help="add the ICE frontier")
    parser.add_argument("--frontier-limit", type=float, default=60.0)
    parser.add_argument("--frontier-dims", default="2,3,4", help="comma-separated D")
    parser.add_argument("--frontier-start", type=int, default=100, help="first N")
    parser.add_argument("--time-limit", type=float, default=150.0,
                        help="of the synthetic ICE searches and Deep-ICE, seconds")
    parser.add_argument("--only", default="", help="only the rows whose name contains this")
    parser.add_argument("--reuse-auto", action="store_true",
                        help="run auto first and not again the device it chose")
    parser.add_argument("--devices", default="cpu,gpu,auto", help="the devices to run")
    parser.add_argument("--frontier-devices", default="cpu,gpu")
    args = parser.parse_args()
    if not gpu_available():
        print("no GPU: CuPy cannot use a CUDA device here; run this on a GPU machine "
              "(see the docstring)")
        return
    header = (f"{'work':<42} {'cpu [s]':>9} {'gpu [s]':>9} {'auto [s]':>9} {'auto on':>7} "
              f"{'<=1.1x':>6}  proven cpu/gpu  same errors cpu/gpu")
    lines = []
    for name, make, X, y, per in rows(args.time_limit):
        if args.only not in name:
            continue
        r = measure(make, X, y, per, args.reuse_auto, args.devices.split(","))
        t = {d: r[d]["t"] for d in DEVICES}
        ok = t["auto"] <= 1.1 * min(t["cpu"], t["gpu"])
        errs = {d: r[d]["errors"] for d in DEVICES}
        ran = [e for e in errs.values() if e is not None]
        same = "n/a" if len(ran) < 2 else str(len(set(ran)) == 1)
        proven = f"{r['cpu']['proven']}/{r['gpu']['proven']}"
        lines.append(f"{name:<42} {t['cpu']:9.3f} {t['gpu']:9.3f} {t['auto']:9.3f} "
                     f"{r['auto']['on']:>7} {str(ok):>6}  {proven:<14}  {same:<5} "
                     f"{errs['cpu']}/{errs['gpu']}  "
                     f"evaluated cpu/gpu {r['cpu']['work']}/{r['gpu']['work']}")
        print(lines[-1], flush=True)
        if name.startswith("NGD"):
            for line in ngd_without_graphs(make, X, y, per):
                lines.append(line)
                print(line, flush=True)
            torch_t = torch_adam_epoch(X, y)
            if torch_t is not None:
                lines.append(f"{'  PyTorch Adam, same net and GPU [s/epoch]':<42} "
                             f"{'':>9} {torch_t:9.3f}")
                print(lines[-1], flush=True)
    if args.frontier:
        dims = tuple(int(d) for d in args.frontier_dims.split(","))
        lines += frontier(args.frontier_limit, dims, args.frontier_start,
                          args.frontier_devices.split(","))
    print()
    print(header)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
