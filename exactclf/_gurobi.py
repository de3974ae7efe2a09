"""What every use of the optional Gurobi solver shares: the import that names the extra to
install, a quiet licensed environment, and the licence refusals that make a caller fall back
to HiGHS (the free pip licence takes models of at most 2000 variables and 2000 constraints).
"""

from __future__ import annotations

__all__ = ["GurobiLicenceError", "LICENCE_ERRNOS", "SolverFallbackWarning", "import_gurobipy",
           "optimize", "quiet_env"]

#: Gurobi error codes meaning "the licence does not allow this model / no licence"
LICENCE_ERRNOS = {10009, 10010}


class SolverFallbackWarning(UserWarning):
    """The requested solver could not take the model; another one solved it."""


class GurobiLicenceError(RuntimeError):
    """Gurobi refused the model because of its licence (e.g. the size-limited one)."""


def import_gurobipy(option: str):
    """The gurobipy module, or an ImportError that says how to get it (``option``: the
    parameter setting that asked for it, e.g. ``"lp_solver='gurobi'"``).

    Examples
    --------
    >>> try:
    ...     gp = import_gurobipy("mip_solver='gurobi'")
    ... except ImportError as exc:
    ...     assert "exactclf[gurobi]" in str(exc)
    """
    try:
        import gurobipy
    except ImportError as exc:
        name = option.partition("=")[0]
        raise ImportError(
            f"{option} needs the gurobipy package, which is not installed ({exc}). Install "
            f"the optional extra with `pip install exactclf[gurobi]`, or use "
            f"{name}='highs'."
        ) from exc
    return gurobipy


def quiet_env(gp, verbose: bool = False):
    """A started Gurobi environment that logs only when ``verbose``; raises
    :class:`GurobiLicenceError` when no licence lets it start."""
    try:
        env = gp.Env(empty=True)
        env.setParam("OutputFlag", 1 if verbose else 0)
        env.start()
    except gp.GurobiError as exc:
        if exc.errno in LICENCE_ERRNOS:
            raise GurobiLicenceError(str(exc)) from exc
        raise
    return env


def optimize(gp, model) -> None:
    """``model.optimize()``, a licence refusal raised as :class:`GurobiLicenceError` (the
    caller's cue to fall back to HiGHS), and Ctrl-C as ``KeyboardInterrupt``: Gurobi catches
    SIGINT during a solve and only reports it in the status, where the fits' interrupt
    handling would never see it."""
    try:
        model.optimize()
    except gp.GurobiError as exc:
        if exc.errno in LICENCE_ERRNOS:
            raise GurobiLicenceError(str(exc)) from exc
        raise
    if model.Status == gp.GRB.INTERRUPTED:
        raise KeyboardInterrupt
