"""Command line: ``exactclf demo``, ``exactclf reproduce ...``, ``exactclf fit ...``.

``exactclf demo`` fits the five estimators on bundled data next to the baselines a user would
otherwise pick and prints one comparison table (:mod:`exactclf._experiments.demo`).
``exactclf reproduce`` re-runs a seed paper's experiment (see :mod:`exactclf._experiments`).
``exactclf fit`` fits a model to a CSV file, saves it and prints its interpretable form and
its certificate (``--certificate FILE`` also writes it as JSON); ``exactclf verify`` re-checks
a saved model's certificate on the CSV it was fitted on, independently of the code that
produced it, and exits non-zero when it does not hold. Problems are one-line messages on
stderr (``--debug`` shows the traceback).
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ._csv_input import MISSING, line_list, read_csv
from ._describe import _name, describe_model
from ._experiments import EXPERIMENTS, FULL_RUNS
from ._experiments._common import timed_fit
from ._experiments.demo import DEMO_ICE, demo
from ._registry import MODELS, estimator_class
from .linear._monotone import check_monotone_fit

__all__ = ["main", "demo", "describe_model", "fit_csv", "read_csv", "verify_csv"]

#: exit status of ``exactclf fit`` when the input, the output or a parameter is refused
#: before fitting, and when the fit itself fails (``exactclf verify``: the certificate
#: does not hold)
EXIT_BAD_INPUT, EXIT_FIT_FAILED, EXIT_INTERRUPTED = 2, 1, 130
EXIT_NOT_VERIFIED = 1


class FitFailed(Exception):
    """The estimator's ``fit`` raised (the cause is chained)."""


def _make_model(name: str, params: dict):
    """The estimator ``name`` with ``params``, validated before any data is read.

    Raises
    ------
    ValueError
        For an unknown parameter, or a value the estimator's parameter constraints refuse
        (scikit-learn's ``InvalidParameterError``, a ``ValueError``).
    """
    cls = estimator_class(name)
    valid = cls().get_params()
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise ValueError(f"{cls.__name__} has no parameter(s) {', '.join(unknown)}; its "
                         f"parameters are {', '.join(sorted(valid))}")
    model = cls(**params)
    model._validate_params()
    return model


def _parse_params(items: Sequence[str]) -> dict:
    params = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--param expects KEY=VALUE, got {item!r}")
        try:
            params[key.strip()] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[key.strip()] = value
    return params


def _destination(path: Path, output: str | None, model_name: str,
                 option: str = "--output") -> Path:
    """Where the model goes; checked before the fit: never the input file, and a directory
    that exists and takes a new file."""
    default_name = path.with_suffix(f".{model_name}.joblib").name
    dest = Path(output) if output else path.with_name(default_name)
    if dest.is_dir():
        dest = dest / default_name
    if dest.exists() and path.exists() and os.path.samefile(dest, path):
        raise ValueError(f"{option} {dest} is the input file: refusing to overwrite the data")
    if not dest.parent.is_dir():
        problem = "is not a directory" if dest.parent.exists() else "does not exist"
        raise ValueError(f"cannot save the model to {dest}: {dest.parent} {problem}")
    try:
        with tempfile.TemporaryFile(dir=dest.parent):
            pass
    except OSError as exc:
        raise ValueError(f"cannot save the model to {dest}: {dest.parent} is not writable "
                         f"({exc.strerror})") from exc
    if dest.exists() and not os.access(dest, os.W_OK):
        raise ValueError(f"cannot save the model to {dest}: the file is not writable")
    return dest


def _save(model, dest: Path) -> None:
    """Write ``dest`` whole or not at all (a temporary file in its directory, then a rename)."""
    import joblib

    _write_whole(dest, lambda tmp: joblib.dump(model, tmp))


def _write_whole(dest: Path, write) -> None:
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _class_weights(text: str, y: np.ndarray) -> str | dict:
    """``--class-weight``: ``"balanced"``, or ``LABEL=WEIGHT,...`` with each label as the CSV
    writes it (a class name of ``y``) and a finite non-negative weight."""
    if text.strip() == "balanced":
        return "balanced"
    names = {str(c): c for c in np.unique(y).tolist()}
    weights = {}
    for item in text.split(","):
        label, sep, value = item.rpartition("=")
        label = label.strip()
        if not sep or label not in names:
            raise ValueError(f"--class-weight expects 'balanced' or LABEL=WEIGHT,... with "
                             f"labels among {sorted(names)}, got {item.strip()!r}")
        try:
            weight = float(value)
        except ValueError:
            weight = math.nan
        if not (math.isfinite(weight) and weight >= 0):
            raise ValueError(f"--class-weight: the weight of {label!r} must be a finite "
                             f"number >= 0, got {value.strip()!r}")
        weights[names[label]] = weight
    return weights


def _max_features(text: str) -> int:
    """``--max-features``: a whole number of features, at least 1."""
    value = text.strip()
    if not (value.isascii() and value.isdigit() and int(value) >= 1):
        raise ValueError(f"--max-features expects a whole number of features >= 1, got "
                         f"{text!r}")
    return int(value)


#: the values ``--monotone`` takes for a column, and the sign each asks of its coefficient
_MONOTONE_SIGNS = {"+1": 1, "1": 1, "-1": -1, "0": 0}
#: what each sign asks, as the printed constraint says it
_MONOTONE_MEANING = {1: "+1 (coef >= 0)", -1: "-1 (coef <= 0)", 0: "0 (free)"}


def _monotone_model(model, params: dict, monotone: str | None) -> None:
    """Refuse ``--monotone`` for a model without ``monotonic_cst``, and next to ``--param
    monotonic_cst=...`` (which of the two would hold is not obvious); checked before the
    data is read.

    Parameters
    ----------
    model : estimator
        The unfitted model of ``exactclf fit``.
    params : dict
        The ``--param`` values.
    monotone : str or None
        The text of ``--monotone``; None: nothing to check.

    Raises
    ------
    ValueError
        When the model takes no ``monotonic_cst``, or ``params`` sets it.
    """
    if monotone is None:
        return
    if "monotonic_cst" not in model.get_params():
        raise ValueError(f"--monotone: {type(model).__name__} takes no monotonic_cst (only "
                         "ICEClassifier, --model ice, does)")
    if "monotonic_cst" in params:
        raise ValueError("--monotone and --param monotonic_cst=... both set monotonic_cst; "
                         "give one of them")


def _monotone(text: str, names: Sequence[str], target: str) -> tuple[np.ndarray, dict]:
    """``--monotone``: ``COL=SIGN,...`` with each COL a feature column of the CSV and SIGN
    one of ``+1``, ``1`` (coefficient >= 0), ``-1`` (<= 0) or ``0`` (free).

    Parameters
    ----------
    text : str
        The option's value, e.g. ``"age=+1, nodes=-1"``.
    names : sequence of str
        The feature columns, in the order of ``X``.
    target : str
        The label column (not a feature).

    Returns
    -------
    signs : ndarray of shape (len(names),)
        ``monotonic_cst`` in feature order (0 for the columns not named).
    given : dict
        The sign of each column named, by its index in ``names``.

    Raises
    ------
    ValueError
        For an item that is not ``COL=SIGN``, the label column, an unknown column, a value
        other than those above, or a column given twice.

    Examples
    --------
    >>> signs, given = _monotone("b=-1, a=+1", ["a", "b", "c"], "label")
    >>> signs.tolist(), given
    ([1, -1, 0], {1: -1, 0: 1})
    """
    index = {name: j for j, name in enumerate(names)}
    given: dict[int, int] = {}
    for item in text.split(","):
        column, sep, value = item.rpartition("=")
        column, value = column.strip(), value.strip()
        if not sep or not column:
            raise ValueError(f"--monotone expects COL=SIGN,... (SIGN: +1, 1, -1 or 0), got "
                             f"{item.strip()!r}")
        if column == target.strip():
            raise ValueError(f"--monotone: {column!r} is the label column (--target), not a "
                             "feature")
        if column not in index:
            raise ValueError(f"--monotone: no feature column {column!r}; the feature columns "
                             f"are {', '.join(map(repr, names))}")
        if value not in _MONOTONE_SIGNS:
            raise ValueError(f"--monotone: the sign of {column!r} must be +1, 1, -1 or 0, got "
                             f"{value!r}")
        if index[column] in given:
            raise ValueError(f"--monotone: the column {column!r} is given twice")
        given[index[column]] = _MONOTONE_SIGNS[value]
    signs = np.zeros(len(names), dtype=np.int64)
    signs[list(given)] = list(given.values())
    return signs, given


def _set_monotone(model, text: str, names: Sequence[str], target: str) -> str:
    """Set ``model.monotonic_cst`` from ``--monotone`` (see :func:`_monotone`) and check
    that the model fits it (:func:`exactclf.linear._monotone.check_monotone_fit`).

    Parameters
    ----------
    model : ICEClassifier
        The unfitted model.
    text : str
        The option's value.
    names : sequence of str
        The feature columns, in the order of ``X``.
    target : str
        The label column.

    Returns
    -------
    str
        The line that states the constraints (see :func:`_monotone_line`).
    """
    signs, given = _monotone(text, names, target)
    model.set_params(monotonic_cst=signs)
    model._validate_params()
    if np.any(signs):
        params = model.get_params()
        try:
            check_monotone_fit(params["method"])
        except ValueError as exc:
            raise ValueError(f"--monotone: {exc}") from None
    return _monotone_line(given, names)


def _monotone_line(given: dict, names: Sequence[str]) -> str:
    """The constraints of ``--monotone`` as printed next to the rule, in feature order, e.g.
    ``monotone: age +1 (coef >= 0), nodes -1 (coef <= 0)``.

    Parameters
    ----------
    given : dict
        The sign of each column named, by feature index (see :func:`_monotone`).
    names : sequence of str
        The feature columns.

    Returns
    -------
    str
        One line; the names written as the rule writes them.
    """
    terms = [f"{_name(names[j])} {_MONOTONE_MEANING[given[j]]}" for j in sorted(given)]
    return "monotone: " + ", ".join(terms)


def _with_line(description: str, line: str) -> str:
    """``description`` (of :func:`describe_model`) with ``line``, if any, after its first
    line, the rule."""
    if not line:
        return description
    rule, _, rest = description.partition("\n")
    return "\n".join([rule, line] + ([rest] if rest else []))


def fit_csv(path: str | Path, target: str, model_name: str, params: dict, output: str | None,
            *, drop_missing_target: bool = False, certificate: str | None = None, out=None,
            err=None, class_weight: str | None = None,
            max_features: str | None = None, monotone: str | None = None) -> Path:
    """``exactclf fit``: check the output, read the CSV, fit, save, print the model.

    Everything that can be checked before the fit is (parameters, the output locations, the
    data, at least two classes); a failing ``fit`` raises :class:`FitFailed`. Warnings of the
    fit go to ``err``, one line each, and the printed certificate says whether the model is
    proven; ``certificate`` names a file to write it to as JSON; ``class_weight`` is the
    text of ``--class-weight`` (see :func:`_class_weights`), ``max_features`` that of
    ``--max-features`` (see :func:`_max_features`), ``monotone`` that of ``--monotone``
    (see :func:`_monotone`; the printed rule is followed by the constraints).
    """
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    path = Path(path)
    model = _make_model(model_name, params)
    if max_features is not None:
        if "max_features" not in model.get_params():
            raise ValueError(f"--max-features: {type(model).__name__} takes no max_features")
        model.set_params(max_features=_max_features(max_features))
        model._validate_params()
    _monotone_model(model, params, monotone)
    X, y, names, dropped = read_csv(path, target, drop_missing_target=drop_missing_target)
    constraint = "" if monotone is None else _set_monotone(model, monotone, names, target)
    dest = _destination(path, output, model_name)
    cert_dest = (None if certificate is None
                 else _destination(path, certificate, model_name, "--certificate"))
    if cert_dest is not None and cert_dest == dest:
        raise ValueError(f"--certificate {cert_dest} is where the model goes")
    if dropped:
        print(f"exactclf fit: warning: left out {len(dropped)} row(s) without a value in "
              f"{target!r} (line(s) {line_list(dropped)})", file=err)
    classes, counts = np.unique(y, return_counts=True)
    if len(classes) < 2:
        raise ValueError(f"{path}: the target column {target!r} holds a single class "
                         f"({classes.tolist()[0]!r}); a classifier needs at least two")
    if class_weight is not None:
        if "class_weight" not in model.get_params():
            raise ValueError(f"--class-weight: {type(model).__name__} takes no class_weight")
        model.set_params(class_weight=_class_weights(class_weight, y))
        model._validate_params()
    try:
        seconds, caught = timed_fit(model, X, y)
    except Exception as exc:
        raise FitFailed(f"{type(model).__name__}.fit failed: {type(exc).__name__}: "
                        f"{_one_line(exc).rstrip('.')}") from exc
    for w in caught:
        print(f"exactclf fit: warning: {w.category.__name__}: {_one_line(w.message)}", file=err)
    _save(model, dest)
    if cert_dest is not None:
        text = model.certificate_.to_json(indent=2)
        _write_whole(cert_dest, lambda tmp: Path(tmp).write_text(text + "\n", encoding="utf-8"))
    classes_text = ", ".join(f"{c!r}: {n}" for c, n in zip(classes.tolist(), counts, strict=True))
    print(f"{type(model).__name__} fitted on {X.shape[0]} x {X.shape[1]} ({classes_text}) in "
          f"{seconds:.2f} s; training accuracy {model.score(X, y):.4f}; saved to {dest}",
          file=out)
    print(_with_line(describe_model(model, names), constraint), file=out)
    if cert_dest is not None:
        print(f"certificate written to {cert_dest} (check it: exactclf verify {dest} {path} "
              f"--target {target!r} --certificate {cert_dest})", file=out)
    return dest


_JSON_TYPES = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}


def _load_model(path: Path):
    """The object pickled in ``path`` by joblib (load only files you trust)."""
    import joblib

    try:
        return joblib.load(path)
    except OSError as exc:
        raise ValueError(f"cannot read the model {path}: {exc.strerror or exc}") from exc
    except Exception as exc:  # noqa: BLE001 - unpickling raises anything; --debug shows it
        raise ValueError(f"{path}: not a model saved by 'exactclf fit' "
                         f"({type(exc).__name__}: {_one_line(exc)})") from exc


def _read_certificate(path: Path) -> dict:
    """The JSON object of a certificate file, unchecked: :func:`exactclf.verify` judges it.

    Raises
    ------
    ValueError
        When the file cannot be read, is not JSON, or its JSON is not an object.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read the certificate {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: the certificate is not UTF-8 text") from exc
    try:
        cert = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: the certificate is not JSON ({exc.msg}: line {exc.lineno}, "
                         f"column {exc.colno})") from exc
    except RecursionError as exc:
        raise ValueError(f"{path}: the certificate's JSON is nested too deeply") from exc
    if not isinstance(cert, dict):
        kind = _JSON_TYPES.get(type(cert), "a number")
        raise ValueError(f"{path}: a certificate is a JSON object, the file holds {kind}")
    return cert


def _verify_inputs(model_path: str | Path, path: str | Path, target: str, *,
                   certificate: str | None = None,
                   drop_missing_target: bool = False) -> tuple:
    """The model, the certificate (None: the model's own), ``X`` and ``y`` of a verify.

    ``X`` and ``y`` are read as ``exactclf fit`` read them, so that the data fingerprint
    matches. Raises a ``ValueError`` for an input that cannot be read.
    """
    model = _load_model(Path(model_path))
    cert = None if certificate is None else _read_certificate(Path(certificate))
    X, y, _, _ = read_csv(Path(path), target, drop_missing_target=drop_missing_target)
    return model, cert, X, y


def _report(model, cert: dict | None, X: np.ndarray, y: np.ndarray, out) -> bool:
    """Print the report of :func:`exactclf.verify` to ``out``; whether the certificate holds."""
    from ._verification import verify

    report = verify(model, X, y, certificate=cert)
    print(report, file=out)
    return report.ok


def verify_csv(model_path: str | Path, path: str | Path, target: str, *,
               certificate: str | None = None, drop_missing_target: bool = False,
               out=None) -> bool:
    """``exactclf verify``: re-check a saved model's certificate on its training CSV.

    Loads the model (joblib: load only files you trust, as for any pickle), reads the CSV as
    ``exactclf fit`` does, runs :func:`exactclf.verify` (with the JSON object of
    ``certificate`` instead of the model's own, when given), prints the report and returns
    whether it holds. A malformed certificate is a failed report, not an error; a file that
    cannot be read (or a certificate that is not a JSON object) raises a ``ValueError``.
    """
    out = sys.stdout if out is None else out
    inputs = _verify_inputs(model_path, path, target, certificate=certificate,
                            drop_missing_target=drop_missing_target)
    return _report(*inputs, out)


def _parser() -> argparse.ArgumentParser:
    from .datasets import published_optima

    parser = argparse.ArgumentParser(
        prog="exactclf",
        description="Classifiers trained to a proven or certified optimum "
                    "(scikit-learn estimators).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_demo = sub.add_parser("demo", help="the five estimators vs their usual baselines on "
                                         "bundled data (about a minute)")
    p_demo.add_argument("--datasets", nargs="+", default=list(DEMO_ICE),
                        choices=list(published_optima()),
                        help="ICE datasets (default: %(default)s)")
    p_demo.add_argument("--estimators", nargs="+", default=list(MODELS),
                        choices=list(MODELS))
    p_demo.add_argument("--n-jobs", type=int, default=-1, help="workers (default: all cores)")

    p_rep = sub.add_parser("reproduce", help="re-run a seed paper's experiment")
    p_rep.add_argument("experiment", choices=list(EXPERIMENTS))
    size = p_rep.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true",
                      help="a smaller version (fewer datasets, folds or seeds)")
    size.add_argument("--full", action="store_true",
                      help=f"the paper's full protocol ({', '.join(FULL_RUNS)} only; "
                           "deepice-table2: all eleven datasets, K = 1, 2, 3, 300 s per fit, "
                           "the full data and 80/20 splits: hours)")

    missing = ", ".join(repr(m) for m in sorted(MISSING - {""}))
    p_fit = sub.add_parser(
        "fit", help="fit a model to a CSV file, save it, print its rules and certificate",
        description="Fit a model to a CSV file, save it with joblib, print its rules and its "
                    "certificate (proven optimal, or the gap left). Exit status: 0 fitted; "
                    f"{EXIT_BAD_INPUT} input, output or parameter refused before fitting; "
                    f"{EXIT_FIT_FAILED} the fit failed; {EXIT_INTERRUPTED} interrupted.")
    p_fit.add_argument("csv", help="comma-separated UTF-8 file (a byte-order mark is fine) with "
                                   "a header row of unique column names; every column but the "
                                   "target holds a finite number in every row: a sign, ASCII "
                                   "digits, a decimal point and an exponent (-1.5, 2e3), "
                                   "spaces around it at most")
    p_fit.add_argument("--target", required=True,
                       help="name of the label column; its values are class names (a column "
                            "of integers gives integer classes, any other one text). A row "
                            f"without a label (cell empty or one of {missing}, any case) is "
                            "an error, unless --drop-missing-target")
    p_fit.add_argument("--drop-missing-target", action="store_true",
                       help="leave out rows without a label (their number and lines are "
                            "printed as a warning) instead of stopping")
    p_fit.add_argument("--model", required=True, choices=list(MODELS))
    p_fit.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                       help="estimator parameter, e.g. --param time_limit=60 (repeatable)")
    p_fit.add_argument("--class-weight", metavar="balanced|LABEL=W,...",
                       help="what an error on each class costs, times the sample's weight: "
                            "'balanced', or weights by label as the CSV writes it "
                            "(e.g. 'yes=5,no=1'); the certificate counts them")
    p_fit.add_argument("--max-features", metavar="K",
                       help="ice: the best rule on at most K features (the printed rule "
                            "shows only those), proven over every subset of K features")
    p_fit.add_argument("--monotone", metavar="COL=SIGN,...",
                       help="ice: the signs of the rule's coefficients of feature columns, "
                            "named as in the header: +1 (or 1) coef >= 0, -1 coef <= 0, 0 "
                            "free (e.g. 'age=+1,nodes=-1'); the best rule with those signs, "
                            "proven; the constraints are printed next to the rule")
    p_fit.add_argument("--output", help="file or existing directory to save the model to "
                                        "(default: CSV.MODEL.joblib next to the CSV); never "
                                        "the input file; checked before fitting")
    p_fit.add_argument("--certificate", metavar="FILE",
                       help="also write the certificate as JSON to FILE (format: the user "
                            "guide's 'Certificates' page)")
    p_fit.add_argument("--debug", action="store_true",
                       help="on an error, show the full traceback")

    p_ver = sub.add_parser(
        "verify", help="re-check a saved model's certificate on its training CSV",
        description="Re-check a saved model's certificate (or a JSON certificate written by "
                    "'exactclf fit --certificate') on the CSV it was fitted on: the data "
                    "fingerprint, the model's errors, the bound and its witness, "
                    "independently of the code that produced it. Exit status: 0 verified; "
                    f"{EXIT_NOT_VERIFIED} not verified (a malformed certificate included); "
                    f"{EXIT_BAD_INPUT} input refused (a file that cannot be read, a CSV "
                    "'exactclf fit' refuses, a certificate file that is not a JSON object).")
    p_ver.add_argument("model", help="a model saved by 'exactclf fit' (joblib; load only "
                                     "files you trust)")
    p_ver.add_argument("csv", help="the CSV the model was fitted on")
    p_ver.add_argument("--target", required=True, help="name of the label column")
    p_ver.add_argument("--drop-missing-target", action="store_true",
                       help="as given to 'exactclf fit'")
    p_ver.add_argument("--certificate", metavar="FILE",
                       help="check this JSON certificate instead of the model's own")
    p_ver.add_argument("--debug", action="store_true",
                       help="on an error, show the full traceback")
    return parser


def _fit_command(args) -> int:
    try:
        fit_csv(args.csv, args.target, args.model, _parse_params(args.param), args.output,
                drop_missing_target=args.drop_missing_target, certificate=args.certificate,
                class_weight=args.class_weight, max_features=args.max_features,
                monotone=args.monotone)
    except KeyboardInterrupt:
        if args.debug:
            raise
        print("exactclf fit: interrupted; no model saved", file=sys.stderr)
        return EXIT_INTERRUPTED
    except FitFailed as exc:
        if args.debug:
            raise exc.__cause__ from None  # the estimator's own exception and traceback
        print(f"exactclf fit: error: {exc}; no model saved (--debug shows the traceback)",
              file=sys.stderr)
        return EXIT_FIT_FAILED
    except Exception as exc:  # noqa: BLE001 - every refusal is one line; --debug shows more
        if args.debug:
            raise
        print(f"exactclf fit: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return 0


def _verify_command(args) -> int:
    try:
        inputs = _verify_inputs(args.model, args.csv, args.target,
                                certificate=args.certificate,
                                drop_missing_target=args.drop_missing_target)
    except Exception as exc:  # noqa: BLE001 - every refusal is one line; --debug shows more
        if args.debug:
            raise
        print(f"exactclf verify: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return 0 if _report(*inputs, sys.stdout) else EXIT_NOT_VERIFIED


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "demo":
        demo(args.datasets, args.n_jobs, estimators=args.estimators)
    elif args.command == "reproduce" and args.full:
        if args.experiment not in FULL_RUNS:
            parser.error(f"--full: {args.experiment} has no full protocol; "
                         f"{', '.join(FULL_RUNS)} has")
        FULL_RUNS[args.experiment]()
    elif args.command == "reproduce":
        EXPERIMENTS[args.experiment](quick=args.quick)
    elif args.command == "verify":
        return _verify_command(args)
    else:
        return _fit_command(args)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
