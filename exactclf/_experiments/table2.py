"""``exactclf reproduce deepice-table2 --full`` (``benchmarks/table2.py``): the Deep-ICE paper's
Table 2 protocol on all eleven of its datasets.

For each dataset and K hidden hyperplanes, the exact model (``ICEClassifier`` for K = 1, the
exact linear problem; ``DeepICEMaxoutClassifier(n_hyperplanes=K)`` for K >= 2) is fitted
under a fixed ``--time-limit``, on the full data and on stratified 80/20 splits (the paper's
protocol), next to LinearSVC and scikit-learn's MLPClassifier with K ReLU units fitted on the
same rows. Each row prints the training errors, training and test accuracy, the paper's
Table-2 figures where they are sourced (:data:`PAPER_TABLE2`; an unsourced figure prints as
``-``), whether the training accuracy meets the target of exactclf issue 26 (at least the
paper's training mean minus its standard deviation), and the certificate of the exact model:
proven lower bound, gap ``(errors - bound) / errors``, fit time, proven or not. A summary per
dataset and K comes last.

    python benchmarks/table2.py [--datasets ai4i ...] [--k 1 2 3] [--time-limit 300]
                                [--splits 5] [--protocol both] [--n-jobs -1]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.model_selection import StratifiedShuffleSplit

from .. import DeepICEMaxoutClassifier, ICEClassifier
from ..datasets import load_dataset
from ._common import linear_baselines, mlp, timed_fit

__all__ = ["DATASETS", "PAPER_TABLE2", "PaperFigure", "Row", "main", "paper_figure"]

#: the eleven datasets of the Deep-ICE paper's Table 2, as bundled (deduplicated)
DATASETS = ("ai4i", "auction_verification", "bloodtransfer", "deepice_caesarian", "diabetic",
            "deepice_haberman", "rice_cammeo", "skin_segmentation", "sepsis", "steel_others",
            "deepice_voicepath")

#: the issue-26 budget: seconds per exact fit
TIME_LIMIT = 300.0
#: the paper's number of 80/20 splits is not sourced here; five is this module's choice
SPLITS = 5
#: the issue-26 target on the proven gap of ICE (K = 1)
ICE_GAP_TARGET = 0.25


@dataclass(frozen=True)
class PaperFigure:
    """One (dataset, K) cell of the paper's Table 2, in percent; None where not sourced."""

    train_mean: float | None = None
    train_sd: float | None = None
    test_mean: float | None = None
    test_sd: float | None = None
    source: str | None = None

    def target(self) -> float | None:
        """The issue-26 floor on the training accuracy: the mean minus the standard deviation,
        the mean itself while the deviation is not sourced (stricter, never looser)."""
        if self.train_mean is None:
            return None
        return self.train_mean - (self.train_sd or 0.0)


_ISSUE_26 = ("He, Miao & Little, Deep-ICE, Table 2: mean training accuracy over 80/20 splits, "
             "as quoted in exactclf issue 26")

#: The paper's Table 2 (percent), keyed by (dataset, K). Only the training means quoted in
#: issue 26 are sourced: the paper's table itself (standard deviations, test accuracies, the
#: other datasets) was not found in a readable source, so those cells are absent (None).
PAPER_TABLE2: dict[tuple[str, int], PaperFigure] = {
    (name, K): PaperFigure(train_mean=mean, source=_ISSUE_26)
    for (name, K), mean in {
        ("ai4i", 1): 97.45, ("ai4i", 2): 97.90, ("ai4i", 3): 97.71,
        ("rice_cammeo", 1): 93.88, ("rice_cammeo", 2): 93.91, ("rice_cammeo", 3): 93.94,
        ("auction_verification", 1): 89.89,
        ("diabetic", 1): 78.78, ("diabetic", 2): 83.60, ("diabetic", 3): 83.88,
        ("steel_others", 1): 77.77,
        ("skin_segmentation", 1): 86.57, ("skin_segmentation", 2): 86.60,
        ("skin_segmentation", 3): 86.59,
    }.items()
}


def paper_figure(name: str, K: int) -> PaperFigure:
    """The paper's Table 2 figures for one dataset and K.

    Parameters
    ----------
    name : str
        One of :data:`DATASETS`.
    K : int
        Hidden hyperplanes, 1 to 3.

    Returns
    -------
    figure : PaperFigure
        The sourced figures of :data:`PAPER_TABLE2`; every field None where none is sourced.
    """
    return PAPER_TABLE2.get((name, K), PaperFigure())


@dataclass
class Row:
    """One fitted model on one protocol: what the table prints."""

    dataset: str
    protocol: str  # "full" or "split i"
    K: int | None  # None for LinearSVC, which has no hidden units
    model: str
    n_train: int
    errors: int
    train: float  # accuracy on the rows it was fitted on, percent
    test: float | None
    seconds: float
    bound: float | None = None  # the certificate of an exact model
    gap: float | None = None
    proven: bool | None = None

    @property
    def exact(self) -> bool:
        return self.bound is not None

    def meets_target(self) -> bool | None:
        floor = paper_figure(self.dataset, self.K).target() if self.exact else None
        return None if floor is None else self.train >= floor


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _yes_no(flag: bool | None) -> str:
    return "-" if flag is None else ("yes" if flag else "no")


def _percent(fraction: float | None) -> str:
    return "-" if fraction is None else f"{100 * fraction:.1f}%"


def _paper_train(fig: PaperFigure) -> str:
    if fig.train_mean is None:
        return "-"
    return f"{fig.train_mean:.2f} ({_fmt(fig.train_sd, '.2f')})"


HEADER = (f"{'dataset':<20} {'N x D':>9} {'protocol':<8} {'K':>1} {'model':<9} {'errors':>6} "
          f"{'train %':>7} {'test %':>7} {'paper train':>13} {'paper test':>10} {'target':>6} "
          f"{'bound':>7} {'gap':>6} {'fit [s]':>7} proven")


def _print_row(row: Row, shape: str) -> None:
    fig = paper_figure(row.dataset, row.K) if row.K else PaperFigure()
    print(f"{row.dataset:<20} {shape:>9} {row.protocol:<8} {_fmt(row.K, 'd'):>1} "
          f"{row.model:<9} {row.errors:>6d} {row.train:>7.2f} {_fmt(row.test, '7.2f'):>7} "
          f"{_paper_train(fig):>13} {_fmt(fig.test_mean, '.2f'):>10} "
          f"{_yes_no(row.meets_target()):>6} {_fmt(row.bound, 'g'):>7} {_percent(row.gap):>6} "
          f"{row.seconds:>7.1f} {_yes_no(row.proven)}", flush=True)


def _exact_model(K: int, seed: int, args) -> tuple[str, object]:
    if K == 1:
        return "ICE", ICEClassifier(time_limit=args.time_limit, n_jobs=args.n_jobs)
    return "Deep-ICE", DeepICEMaxoutClassifier(n_hyperplanes=K, time_limit=args.time_limit,
                                               n_jobs=args.n_jobs, random_state=seed)


def _fit_row(name, protocol, K, label, model, X, y, test) -> Row:
    # the budget that stopped a search is in the certificate (gap, proven); its warning is
    # the same news, so timed_fit's record of it is dropped
    seconds, _ = timed_fit(model, X, y)
    errors = int((model.predict(X) != y).sum())
    test_acc = None if test is None else 100 * float((model.predict(test[0]) == test[1]).mean())
    certified = hasattr(model, "certificate_")
    return Row(name, protocol, K, label, len(y), errors, 100 * (1 - errors / len(y)), test_acc,
               seconds, bound=model.lower_bound_ if certified else None,
               gap=model.gap_ if certified else None,
               proven=bool(model.is_optimal_) if certified else None)


def _protocols(X, y, protocol: str, splits: int):
    """(label, seed, training indices, test indices or None): the full data, then the
    splits; split i seeds its fits with i whatever the protocol, so a split's row is the same
    in a ``splits`` and a ``both`` run."""
    if protocol in ("full", "both"):
        yield "full", 0, np.arange(len(y)), None
    if protocol in ("splits", "both"):
        sss = StratifiedShuffleSplit(n_splits=splits, test_size=0.2, random_state=0)
        for i, (tr, te) in enumerate(sss.split(X, y)):
            yield f"split {i}", i, tr, te


def _run_dataset(name: str, args, failures: list[str]) -> list[Row]:
    """The rows of one dataset; a fit that raises is said in ``failures`` and on its line."""
    X, y = load_dataset(name, return_X_y=True)
    shape = f"{X.shape[0]}x{X.shape[1]}"
    rows = []
    for protocol, seed, tr, te in _protocols(X, y, args.protocol, args.splits):
        test = None if te is None else (X[te], y[te])
        fits = [(None, "LinearSVC", linear_baselines()["LinearSVC"])]
        for K in args.k:
            fits += [(K, *_exact_model(K, seed, args)), (K, f"MLP({K})", mlp((K,)))]
        for K, label, model in fits:
            try:
                rows.append(_fit_row(name, protocol, K, label, model, X[tr], y[tr], test))
            except Exception as exc:  # noqa: BLE001 - hours of other fits go on past one
                failures.append(f"{name} {protocol} K={K} {label}: {type(exc).__name__}: "
                                f"{exc}")
                print(f"{name:<20} {shape:>9} {protocol:<8} {_fmt(K, 'd'):>1} {label:<9} "
                      f"FAILED: {type(exc).__name__}: {exc}", flush=True)
                continue
            _print_row(rows[-1], shape)
    return rows


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


def _split_accuracies(rows: list[Row], name: str, model: str) -> str:
    """``train/test``: the mean accuracies of ``model`` on ``name`` over the splits."""
    fitted = [r for r in rows if r.dataset == name and r.model == model and r.protocol != "full"]
    return (f"{_fmt(_mean(r.train for r in fitted), '.1f')}/"
            f"{_fmt(_mean(r.test for r in fitted), '.1f')}")


def summary(rows: list[Row]) -> None:
    """Print the summary table and the verdicts on the issue-26 targets.

    Per dataset and K: the exact model's mean accuracies over the splits next to the paper's
    and the baselines', its certificate on the full data and its worst gap anywhere; then
    whether the targets hold on what was run.

    Parameters
    ----------
    rows : list of Row
        The fits, as :func:`main` returns them.
    """
    print("\nSummary (accuracies: mean over the splits, percent; target: mean train >= paper "
          "train mean - sd)")
    print(f"{'dataset':<20} {'K':>1} {'model':<8} {'train':>6} {'test':>6} {'paper train':>13} "
          f"{'target':>6} {'full err':>8} {'full gap':>8} {'worst gap':>9} {'proven':>6} "
          f"{'SVC train/test':>14} {'MLP train/test':>14}")
    checked, misses, ice_gaps = 0, [], []
    for name, K in dict.fromkeys((r.dataset, r.K) for r in rows if r.exact):
        exact = [r for r in rows if r.dataset == name and r.K == K and r.exact]
        split = [r for r in exact if r.protocol != "full"]
        full = next((r for r in exact if r.protocol == "full"), None)
        full_errors, full_gap = (None, None) if full is None else (full.errors, full.gap)
        train = _mean(r.train for r in split)
        floor = paper_figure(name, K).target()
        met = None if floor is None or train is None else train >= floor
        checked += met is not None
        if met is False:
            misses.append(f"{name} K={K}")
        worst = max(r.gap for r in exact)
        if K == 1:
            ice_gaps.append((worst, name))
        proven = f"{sum(bool(r.proven) for r in exact)}/{len(exact)}"
        print(f"{name:<20} {K:>1} {exact[0].model:<8} {_fmt(train, '6.2f'):>6} "
              f"{_fmt(_mean(r.test for r in split), '6.2f'):>6} "
              f"{_paper_train(paper_figure(name, K)):>13} {_yes_no(met):>6} "
              f"{_fmt(full_errors, 'd'):>8} {_percent(full_gap):>8} "
              f"{_percent(worst):>9} {proven:>6} "
              f"{_split_accuracies(rows, name, 'LinearSVC'):>14} "
              f"{_split_accuracies(rows, name, f'MLP({K})'):>14}", flush=True)
    verdict = ("-" if not checked else "yes" if not misses else "no; " + ", ".join(misses))
    print(f"mean training accuracy over the splits >= paper mean - sd on the {checked} "
          f"(dataset, K) with a sourced paper mean: {verdict}")
    if ice_gaps:
        worst, name = max(ice_gaps)
        print(f"ICE (K=1) proven gap <= {100 * ICE_GAP_TARGET:.0f}% on every dataset run:",
              "yes" if worst <= ICE_GAP_TARGET else "no", f"(worst {_percent(worst)}, {name})")


def main(argv: Sequence[str] | None = None) -> list[Row]:
    """Run the Table 2 protocol; print every row as it is fitted, then the summary.

    Parameters
    ----------
    argv : sequence of str, optional
        Command-line options (``--help`` lists them); default ``sys.argv[1:]``.

    Returns
    -------
    rows : list of Row
        Every fitted model, in the order printed.
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS,
                        metavar="NAME", help=f"default: all eleven, {', '.join(DATASETS)}")
    parser.add_argument("--k", nargs="+", type=int, default=[1, 2, 3], choices=[1, 2, 3])
    parser.add_argument("--time-limit", type=float, default=TIME_LIMIT,
                        help="seconds per exact fit (default %(default)g, issue 26's budget)")
    parser.add_argument("--splits", type=int, default=SPLITS,
                        help="stratified 80/20 splits, random_state=0 (default %(default)d)")
    parser.add_argument("--protocol", choices=["full", "splits", "both"], default="both",
                        help="fit on the full data, on the splits, or both (default)")
    parser.add_argument("--n-jobs", type=int, default=-1,
                        help="workers of the exact fits (default: all cores)")
    args = parser.parse_args(argv)
    print(f"Deep-ICE Table 2 protocol: time limit {args.time_limit:g} s per exact fit, "
          f"n_jobs={args.n_jobs}; K=1 is ICEClassifier, K>=2 DeepICEMaxoutClassifier; "
          f"paper figures: {_ISSUE_26} ('-': not sourced); target: train % >= paper train "
          "mean - sd; gap = (errors - bound) / errors")
    print(HEADER, flush=True)
    failures: list[str] = []
    rows = [row for name in args.datasets for row in _run_dataset(name, args, failures)]
    summary(rows)
    print("failed fits:", "none" if not failures else "; ".join(failures))
    return rows
