"""ICE's declared schedule (plan_linear) says what doc/user_guide/budgets.rst says it does, and
the stage switch of the ablation leaves out exactly the stages named."""

import numpy as np
import pytest

from exactclf import ICEClassifier
from exactclf._stages import Stage, ablated, enabled
from exactclf._zero_one._min01 import search_size
from exactclf._zero_one._portfolio import MILP_INCUMBENT_SECONDS, plan_linear


def _plan(n, dim, time_limit=None, **kwargs):
    return plan_linear(n, dim, search_size(n, dim), time_limit=time_limit, **kwargs)


def test_within_the_exact_range_the_paths_take_turns_after_the_surrogates():
    plan = _plan(300, 3)
    assert plan.stages() == [Stage.INCUMBENTS, Stage.ENUMERATION, Stage.IIS_COVER,
                              Stage.FINAL_LP, Stage.QUICK_BOUND]
    assert not plan.beyond and plan.milp_seconds is None
    # from 5 dimensions the IIS cover goes first
    assert _plan(120, 6).paths[0] == "iis_cover"


@pytest.mark.parametrize(("dim", "partition"), [(3, True), (6, False)])
def test_beyond_the_exact_range_the_local_stages_run_first(dim, partition):
    plan = _plan(50_000, dim, time_limit=60)
    stages = plan.stages()
    local = [Stage.ANNEALED_SIGMOID, Stage.MILP_INCUMBENT, Stage.ONE_UNIT_NETWORKS,
             Stage.LOCAL_SEARCH, Stage.LOCAL_COVER]
    assert plan.beyond and all(s in stages for s in local)
    assert stages.index(Stage.LOCAL_COVER) < stages.index(Stage.IIS_COVER)
    assert (Stage.RANDOM_PARTITION in stages) == partition  # below 5 dimensions only
    assert "exact" not in plan.paths  # it cannot finish in the budget
    # the big-M MILP: a tenth of the budget there (budgets.rst's table)
    assert plan.milp_seconds == pytest.approx(0.1 * 60)


def test_the_milp_shares_of_the_user_guide():
    # from 9 dimensions beyond the exact range: half the budget
    assert _plan(50_000, 9, time_limit=60).milp_seconds == pytest.approx(30.0)
    # where the enumeration goes first with more than 1e7 candidates: 30 s, at most 25 %
    assert _plan(500, 3).paths[0] == "exact" and search_size(500, 3) > 1e7
    assert _plan(500, 3).milp_seconds == MILP_INCUMBENT_SECONDS
    assert _plan(500, 3, time_limit=8).milp_seconds == pytest.approx(2.0)
    assert _plan(150, 3).milp_seconds is None  # 551,300 candidates
    # the turn inside the IIS cover: from 9 dimensions, within the exact range
    assert _plan(200, 10).milp_turn and not _plan(200, 8).milp_turn


def test_ablated_stages_are_not_planned_and_not_run():
    with ablated(Stage.ENUMERATION, "big-M MILP"):
        assert not enabled(Stage.ENUMERATION) and enabled(Stage.IIS_COVER)
        plan = _plan(2000, 3)
        assert plan.paths == ("iis_cover",) and plan.milp_seconds is None
        rng = np.random.default_rng(0)
        X = rng.normal(size=(40, 2))
        y = (X[:, 0] + 0.5 * rng.normal(size=40) > 0).astype(int)
        clf = ICEClassifier().fit(X, y)
    stages = {row.stage.split(" (")[0] for row in clf.fit_trace_}
    assert "enumeration" not in stages and "IIS cover" in stages
    # the IIS cover alone proves the same optimum
    assert clf.is_optimal_
    assert clf.training_errors_ == ICEClassifier(method="exact").fit(X, y).training_errors_
    assert enabled(Stage.ENUMERATION)  # the switch ends with its block
