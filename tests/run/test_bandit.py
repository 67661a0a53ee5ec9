"""Row 12 live: UCB1 picks a tau run by run from the runs begun so far, across processes
sharing one file; a run is paid by whether it resolved; the curve is read off the rows."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from pytest_toolpolicy.decide.bandit_curve import curve, line_of
from pytest_toolpolicy.policy.confidence import ConfidenceTrigger
from pytest_toolpolicy.run.bandit import BanditSpec, BanditStore, ucb1

SPEC = BanditSpec("lp_mean", (-2.0, -0.5))


def test_ucb1_tries_every_arm_then_follows_mean_and_doubt() -> None:
    assert ucb1([1, 0, 3], [1, 0, 3], [1.0, 0.0, 0.0]) == 1  # never pulled: first
    assert ucb1([5, 5, 5], [5, 5, 5], [5.0, 1.0, 0.0]) == 0  # same doubt: the best mean
    # a rarely pulled arm's doubt outweighs a slightly better mean pulled often
    assert ucb1([50, 2], [50, 2], [30.0, 1.0]) == 1
    # pulled but not yet paid (a run in flight) counts as the best it could be
    assert ucb1([3, 3], [3, 0], [2.0, 0.0]) == 1


def test_the_arms_are_withhold_nothing_and_each_tau() -> None:
    assert SPEC.arms == ("none", "-2", "-0.5")
    assert SPEC.trigger(0) is None
    assert SPEC.trigger(2) == ConfidenceTrigger("lp_mean", -0.5, "below")
    with pytest.raises(ValueError, match="at least one tau"):
        BanditSpec("lp_mean", ())
    with pytest.raises(ValueError, match="feature must be one of"):
        BanditSpec("vibes", (1.0,))


def test_processes_sharing_the_file_share_the_bandit(tmp_path: Path) -> None:
    path = tmp_path / "memo.bandit.sqlite"
    one, two = BanditStore(path), BanditStore(path)  # as two workers open it
    picks = [store.pick("b", SPEC, f"i{n}") for n, store in enumerate([one, two, one])]
    assert picks == [(0, 1), (1, 2), (2, 3)]  # in flight at once: spread over the arms
    assert two.pick("b", SPEC, "i1") == (1, 2)  # a run that runs again keeps its arm
    for item, reward in (("i0", 0.0), ("i1", 1.0), ("i2", 0.0)):
        one.pay("b", SPEC, item, reward)
    assert [two.pick("b", SPEC, f"j{n}")[0] for n in range(3)][0] == 1  # the one that paid
    # a run that measured nothing is taken back: its arm learns nothing, its item may re-pick
    two.pay("b", SPEC, "j2", None)
    assert two.pick("b", SPEC, "j2")[1] == 6
    # another bandit (other taus, another candidate) starts afresh
    assert one.pick("b", BanditSpec("lp_mean", (-1.0,)), "i0") == (0, 1)
    assert one.pick("c", SPEC, "i0") == (0, 1)
    one.close(), two.close()


def rows(arms: list[str], resolved: list[bool]) -> pd.DataFrame:
    n = len(arms)
    return pd.DataFrame({"variant": ["cand:b"] * n, "bandit_arm": arms, "resolved": resolved,
                         "bandit_seq": list(range(n, 0, -1)), "status": ["ok"] * n})  # fmt: skip


def test_the_curve_is_in_the_order_runs_began() -> None:
    # seq runs backwards here: the last row began first
    found = curve(rows(["-2", "none", "none", "-2"], [False, True, True, True]))
    assert found is not None
    assert (found.arms, found.pulls, found.means) == (("-2", "none"), (2, 2), (0.5, 1.0))
    assert found.regret == (0.0, 0.0, 0.0, 1.0)  # best mean 1.0; only the -2 run that failed
    line = line_of(rows(["-2", "none", "none", "-2"], [False, True, True, True]))
    assert "4 runs" in line and "-2 2x (0.50), none 2x (1.00)" in line and "4: 1.00" in line
    assert line_of(rows(["", ""], [True, False])) == ""  # no bandit chose


def test_a_run_that_faults_takes_its_pull_back(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from pytest_toolpolicy.decide.variants import ItemSpec
    from pytest_toolpolicy.policy.config import PolicyConfig
    from pytest_toolpolicy.run import item
    from pytest_toolpolicy.run.candidates import Candidate

    seen = []

    def faulting(*_: object, config: PolicyConfig, **__: object) -> None:
        seen.append(config.trigger)
        raise RuntimeError("harness fault")

    monkeypatch.setattr(item, "run_instance", faulting)
    store = BanditStore(tmp_path / "memo.bandit.sqlite")
    harness = item.Harness(
        instances={"i": object()}, make_model=lambda trial: None, workdir=tmp_path,
        sandbox=None, candidates={"b": Candidate("b", bandit=SPEC)}, bandit=store,
    )  # fmt: skip
    spec = ItemSpec("i", "policy", candidate="b")
    with pytest.raises(RuntimeError, match="harness fault"):
        item.run_item(spec, harness)
    assert seen == [None]  # the first pull: "withhold nothing", no trigger
    # taken back: the next run begins first again, on the same arm
    assert store.pick("b", SPEC, "other") == (0, 1)
    store.close()
