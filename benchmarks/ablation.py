"""What each stage of the ICE and Deep-ICE schedules buys: every fit once with the full
schedule, then once without each stage that the full fit ran (``exactclf._stages.ablated``).

    python benchmarks/ablation.py [--estimators ice monotone deepice] [--budget 30] [--quick]
                                  [--budgeted-only] [--stages NAME ...] [--repeat 1]
                                  [--out benchmarks/results/ablation.txt]

Instances (defaults; ``--quick`` keeps the first of each group, ``--budgeted-only`` the
fits with a time limit; ``--stages`` leaves out only the stages named; ``--repeat N`` runs
every fit N times and reports their medians):

- ICEClassifier without a time limit on the ICE paper's four data sets and on ten seeded
  Gaussian instances in D = 5-8 (a random linear rule, 10 % of labels flipped); without a
  stage, these fits get 20 times the full schedule's time (at least 30 s);
- ICEClassifier with ``time_limit=--budget`` on one 80 % split (``random_state=0``) of each
  large Deep-ICE Table 2 set (beyond the exact range);
- ICEClassifier with ``monotonic_cst`` (the signs of a LogisticRegression's coefficients)
  and ``time_limit=--budget`` on the ICE paper's four sets, bloodtransfer, sepsis, and
  (beyond the exact range) auction_verification, rice and diabetic;
- DeepICEMaxoutClassifier with ``time_limit=--budget`` at K = 2 and 3 on Haberman,
  bloodtransfer and sepsis, and at K = 2 on 80 % of rice.

Per fit: training errors, the proven bound, the gap ``(errors - bound) / errors``, seconds,
and whether it is proven. A stage *buys* something on an instance where leaving it out
costs an error, two points of gap, the proof, or (both proven) 1.5x the time; it *costs*
where leaving it out does better by the same margins. A stage that neither buys nor costs on
any instance where it ran is listed as such at the end; budget-stopped fits vary from run to
run on a busy machine, so a single difference there is a hint, not a verdict.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from exactclf import DeepICEMaxoutClassifier, ICEClassifier
from exactclf import datasets as ds
from exactclf._stages import Stage, ablated

#: the stages of each estimator's schedule that the table switches off in turn (the linear
#: seed stays: it is what keeps a K >= 2 fit from ending above the linear model)
ICE_STAGES = [Stage.ANNEALED_SIGMOID, Stage.MILP_INCUMBENT, Stage.ONE_UNIT_NETWORKS,
              Stage.LOCAL_SEARCH, Stage.LOCAL_COVER, Stage.RANDOM_PARTITION,
              Stage.ENUMERATION, Stage.IIS_COVER, Stage.MILP_TURN, Stage.FINAL_LP,
              Stage.QUICK_BOUND]
MONOTONE_STAGES = [Stage.SIGNED_MILP, Stage.SIGNED_IIS_COVER, Stage.SIGNED_ENUMERATION]
DEEPICE_STAGES = [Stage.POLARITY_SEEDS, Stage.HEURISTIC, Stage.GROW, Stage.SURROGATE,
                  Stage.OBSTRUCTION_COVER, Stage.PAIR_COVER, Stage.LEVEL_BLOCKS,
                  Stage.PARTITION_BOUNDS, Stage.JOINT_COVER, Stage.EXACT_SEARCH,
                  Stage.MORE_SEARCH, Stage.LINEAR_RETRY]
#: stages that run inside another's trace row: each is counted as run where its host ran
INSIDE = {Stage.ANNEALED_SIGMOID: Stage.LOCAL_SEARCH, Stage.FINAL_LP: Stage.IIS_COVER,
          Stage.PAIR_COVER: Stage.OBSTRUCTION_COVER, Stage.LINEAR_RETRY: Stage.MORE_SEARCH}
#: an instance fitted without a time limit gets this many times its full schedule's time
#: (at least these seconds) when a stage is left out
UNLIMITED_FACTOR, UNLIMITED_CAP = 20.0, 30.0
#: differences that count (see the module's docstring)
ERRORS, GAP_POINTS, TIME_RATIO = 1.0, 2.0, 1.5

LARGE = {"ai4i": ds.load_ai4i, "auction": ds.load_auction_verification,
         "diabetic": ds.load_diabetic, "rice": ds.load_rice_cammeo,
         "skin": ds.load_skin_segmentation, "steel": ds.load_steel_others}


@dataclass
class Instance:
    name: str
    X: np.ndarray
    y: np.ndarray
    estimator: str  # "ice", "monotone" or "deepice"
    K: int = 1
    time_limit: float | None = None

    def fit(self, time_limit=None):
        cls = DeepICEMaxoutClassifier if self.estimator == "deepice" else ICEClassifier
        kwargs = ({"n_hyperplanes": self.K} if self.estimator == "deepice" else
                  {"monotonic_cst": _lr_signs(self.X, self.y)}
                  if self.estimator == "monotone" else {})
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf = cls(time_limit=time_limit or self.time_limit, **kwargs).fit(self.X, self.y)
        return clf, time.perf_counter() - t0


def _gaussian(n: int, d: int, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, ((X @ rng.normal(size=d) > 0) ^ (rng.random(n) < 0.1)).astype(int)


def _lr_signs(X, y):
    """The signs of a LogisticRegression's coefficients on standardized features: the
    directions a user would ask a monotone rule to keep."""
    std = X.std(axis=0)
    lr = LogisticRegression(max_iter=5000).fit((X - X.mean(axis=0)) / np.where(std, std, 1),
                                               y)
    return np.sign(lr.coef_[0]).astype(int)


def _split(loader):
    X, y = loader(return_X_y=True)
    X_train, _, y_train, _ = train_test_split(X, y, test_size=0.2, random_state=0)
    return X_train, y_train


def instances(budget: float, estimators, quick: bool, budgeted_only: bool = False
              ) -> list[Instance]:
    groups = []
    if "ice" in estimators and not budgeted_only:
        groups.append([Instance(name, *loader(return_X_y=True), "ice") for name, loader in [
            ("voicepath", ds.load_voicepath), ("haberman", ds.load_haberman),
            ("caesarian", ds.load_caesarian), ("cryotherapy", ds.load_cryotherapy)]])
        groups.append([Instance(f"gauss{n}x{d}", *_gaussian(n, d, 1000 * d + n), "ice")
                       for n, d in [(150, 5), (200, 5), (100, 6), (150, 6), (90, 7),
                                    (120, 7), (80, 8), (100, 8), (120, 8), (60, 8)]])
    if "ice" in estimators:
        groups.append([Instance(f"{name} 80%", *_split(loader), "ice", time_limit=budget)
                       for name, loader in LARGE.items()])
    if "monotone" in estimators:
        groups.append([Instance(name, *loader(return_X_y=True), "monotone",
                                time_limit=budget) for name, loader in [
            ("voicepath", ds.load_voicepath), ("haberman", ds.load_haberman),
            ("caesarian", ds.load_caesarian), ("cryotherapy", ds.load_cryotherapy),
            ("bloodtransfer", ds.load_bloodtransfer), ("sepsis", ds.load_sepsis),
            ("auction", ds.load_auction_verification), ("rice", ds.load_rice_cammeo),
            ("diabetic", ds.load_diabetic)]])
    if "deepice" in estimators:
        small = [("haberman", ds.load_deepice_haberman), ("bloodtransfer",
                                                          ds.load_bloodtransfer),
                 ("sepsis", ds.load_sepsis)]
        groups.append([Instance(name, *loader(return_X_y=True), "deepice", K=K,
                                time_limit=budget) for name, loader in small for K in (2, 3)]
                      + [Instance("rice 80%", *_split(ds.load_rice_cammeo), "deepice", K=2,
                                  time_limit=budget)])
    return [inst for group in groups for inst in (group[:1] if quick else group)]


def _ran(clf) -> set[str]:
    """The stages a fit ran, from its trace (the final LP runs only under a time limit)."""
    ran = {row.stage.split(" (")[0] for row in clf.fit_trace_}
    inside = {str(s) for s, host in INSIDE.items() if str(host) in ran}
    if clf.time_limit is None:
        inside.discard(str(Stage.FINAL_LP))
    return ran | inside


def _median_row(inst, repeat, time_limit=None):
    """The fit's row, each figure the median of ``repeat`` fits; and the first fit."""
    fits = [inst.fit(time_limit) for _ in range(repeat)]
    rows = [_row(*fit) for fit in fits]
    med = {key: float(np.median([r[key] for r in rows])) for key in
           ("errors", "bound", "gap", "seconds")}
    med["proven"] = sum(r["proven"] for r in rows) * 2 > len(rows)
    return med, fits[0][0]


def _row(clf, seconds):
    errors = clf.training_errors_
    bound = clf.lower_bound_
    gap = 0.0 if errors == 0 else 100.0 * (errors - bound) / errors
    return dict(errors=errors, bound=bound, gap=gap, seconds=seconds,
                proven=bool(clf.is_optimal_))


def _verdict(full, off) -> str:
    """What leaving the stage out did: "worse", "better" or "same"."""
    if full["proven"] != off["proven"]:
        return "worse" if full["proven"] else "better"
    if off["errors"] - full["errors"] >= ERRORS or off["gap"] - full["gap"] >= GAP_POINTS:
        return "worse"
    if full["errors"] - off["errors"] >= ERRORS or full["gap"] - off["gap"] >= GAP_POINTS:
        return "better"
    if full["proven"] and off["seconds"] >= TIME_RATIO * max(full["seconds"], 0.05):
        return "worse"
    if full["proven"] and full["seconds"] >= TIME_RATIO * max(off["seconds"], 0.05):
        return "better"
    return "same"


def _fmt(name, r, verdict=""):
    return (f"{name:<28} {r['errors']:>9g} {r['bound']:>9g} {r['gap']:>6.1f} "
            f"{r['seconds']:>8.2f} {'yes' if r['proven'] else 'no':>6}  {verdict}")


def run(insts, stages_of, say, repeat=1):
    """The table's lines; a summary of each stage's verdicts by instance."""
    summary = {}
    for inst in insts:
        full, clf = _median_row(inst, repeat)
        seconds = full["seconds"]
        ran = _ran(clf)
        budget = "none" if inst.time_limit is None else f"{inst.time_limit:g} s"
        say(f"\n{inst.name} ({len(inst.X)} x {inst.X.shape[1]}), {inst.estimator}"
            f"{f' K={inst.K}' if inst.K > 1 else ''}, time_limit {budget}")
        say(f"{'schedule':<28} {'errors':>9} {'bound':>9} {'gap%':>6} {'seconds':>8} "
            f"{'proven':>6}  without it")
        say(_fmt("full", full))
        for stage in stages_of(inst):
            if str(stage) not in ran:
                continue
            with ablated(stage):
                # a fit without a time limit gets one when a stage is left out, so that a
                # schedule that cannot prove without it ends
                off, _ = _median_row(inst, repeat, None if inst.time_limit else max(
                    UNLIMITED_CAP, UNLIMITED_FACTOR * seconds))
            verdict = _verdict(full, off)
            summary.setdefault(str(stage), []).append((inst.name, inst.K, verdict))
            say(_fmt(f"- {stage}", off, verdict))
    return summary


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--estimators", nargs="+", default=["ice", "deepice"],
                        choices=["ice", "monotone", "deepice"])
    parser.add_argument("--budget", type=float, default=30.0)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--budgeted-only", action="store_true")
    parser.add_argument("--stages", nargs="+", default=None, choices=[str(s) for s in Stage])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    out = open(args.out, "a") if args.out else None

    def say(line):
        print(line, flush=True)
        if out is not None:
            print(line, file=out, flush=True)

    say(f"# benchmarks/ablation.py {' '.join(argv if argv is not None else sys.argv[1:])}"
        f"\n# {time.strftime('%Y-%m-%d %H:%M')} UTC, {platform.processor() or platform.machine()}"
        f", {os.cpu_count()} cores, python {platform.python_version()}")
    insts = instances(args.budget, args.estimators, args.quick, args.budgeted_only)
    chosen = None if args.stages is None else {Stage(s) for s in args.stages}
    schedules = {"ice": ICE_STAGES, "monotone": MONOTONE_STAGES, "deepice": DEEPICE_STAGES}
    summary = run(insts, lambda inst: [
        s for s in schedules[inst.estimator] if chosen is None or s in chosen], say,
        args.repeat)
    say("\n# per stage: instances where leaving it out was worse / better / the same")
    for stage in [s for e in args.estimators for s in schedules[e]]:
        if chosen is not None and stage not in chosen:
            continue
        rows = summary.get(str(stage), [])
        if not rows:
            say(f"{stage!s:<28} never ran")
            continue
        count = {v: [f"{n}{f' K={k}' if k > 1 else ''}" for n, k, x in rows if x == v]
                 for v in ("worse", "better", "same")}
        say(f"{stage!s:<28} worse {len(count['worse'])} / better {len(count['better'])} / "
            f"same {len(count['same'])}"
            + (f"; worse without it: {', '.join(count['worse'])}" if count["worse"] else "")
            + (f"; better without it: {', '.join(count['better'])}" if count["better"] else ""))
    if out is not None:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
