"""An item's row off its trajectory (``run/row.py``): how the way a run ended sets its status,
and what a run the endpoint ended is measured at."""

from __future__ import annotations

import math

from pytest_toolpolicy.models.base import ModelError
from pytest_toolpolicy.run.row import row_of, spec_of
from pytest_toolpolicy.types import Outcome

from .trajectories import completion, trajectory, turn

BROKE = "server error 503 after 4 retries: overloaded"


def ended(outcome: Outcome, last: dict, *, grade: str = "ok") -> dict:
    traj = trajectory("x__y-1", "policy", [turn(0, completion("{}")), turn(1, last)], outcome,
                      resolved=True)  # fmt: skip
    traj.meta["grade"] = {"resolved": True, "status": grade, "reason": "pip install failed"}
    return row_of(traj, spec_of(traj), None)


def test_a_run_the_endpoint_ended_is_measured_at_what_its_answered_calls_cost() -> None:
    row = ended(Outcome("model_error", {"reason": BROKE}), ModelError(BROKE).record())
    assert (row["status"], row["error"]) == ("model_error", f"model error: {BROKE}")
    # the first call's $0.001; the failed call's own spend unknown, and said to be
    assert row["cost_usd"] == 0.001 and row["tokens_unknown"] is True
    assert row["resolved"] is True  # as graded: the measures read it as not resolved


def test_a_refused_request_is_the_arms_own_failure_at_no_cost() -> None:
    refused = ModelError("request rejected (400): context too long", blame="request")
    why = f"the arm's request was refused: {refused}"
    row = ended(Outcome("budget_exhausted", {"reason": why}), refused.record())
    assert (row["status"], row["error"], row["cost_usd"]) == ("ok", None, 0.001)
    assert row["tokens_unknown"] is False


def test_an_ungradable_instance_is_left_out_whatever_ended_the_run() -> None:
    row = ended(Outcome("model_error", {"reason": BROKE}), ModelError(BROKE).record(),
                grade="infra_error")  # fmt: skip
    assert (row["status"], row["error"]) == ("infra_error", "infra error: pip install failed")
    ok = ended(Outcome("stop"), completion("{}"))
    assert ok["status"] == "ok" and not math.isnan(ok["cost_usd"])
