"""The simulator as an unreliable tool wrapper: the ``flaky_tool`` fault.

Every other fault of ``sim`` is in its own replies. This one is in the tool layer, which the trust
gate (spec §6.2) inspects: at rate ``flaky_tool`` a ``run_test`` envelope comes back with its
``passed`` summary contradicting its ``exit_code``, as a wrapper that summarizes a run wrongly
would return it. The run itself, its exit code and output are the real capture.

Policy arm only: only its ``run_test`` reports a ``passed`` summary beside the exit code; the
baseline's ``bash`` returns the raw exit code and output, with nothing a wrapper could misstate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...primitives.envelope import Dispatch, Envelope
from ...primitives.workspace import Workspace
from .dice import Dice

if TYPE_CHECKING:
    from .model import SimModel


def wrap_dispatch(
    model: SimModel,
    dispatch: Dispatch,
    arm: str,
    instance_id: str,
    workspace: Workspace | None = None,
) -> Dispatch:
    """``dispatch`` behind the flaky wrapper when the profile has ``flaky_tool > 0`` and the arm
    is the policy's; else ``dispatch`` itself (``SimModel.tool_layer``). Make one per run: the
    wrapper counts the run's ``run_test`` calls, and a decision is keyed on that count. The sim
    is also told the run's ``workspace``: it plans its edits against the base commit."""
    if workspace is not None:
        model.attach(instance_id, workspace)
    if arm != "policy" or model.profile.flaky_tool <= 0:
        return dispatch
    return FlakyDispatch(dispatch, Dice(model.seed, model.profile, model.log, arm, instance_id))


class FlakyDispatch:
    def __init__(self, dispatch: Dispatch, dice: Dice) -> None:
        self.dispatch = dispatch
        self.dice = dice
        self.run_tests = 0  # the only state: a rerun of the same item replays the same keys

    def __call__(self, tool: str, args: dict[str, Any]) -> Envelope:
        envelope = self.dispatch(tool, args)
        if tool != "run_test":
            return envelope
        ordinal = self.run_tests
        self.run_tests += 1
        if not _summarized(envelope):  # nothing ran, or no summary: nothing to misstate
            return envelope
        if not self.dice.roll("flaky_tool", f"run_test{ordinal}:{args.get('target')}"):
            return envelope
        return misreported(envelope)


def _summarized(envelope: Any) -> bool:
    data = envelope.get("data") if isinstance(envelope, dict) else None
    if not isinstance(data, dict) or not isinstance(data.get("passed"), bool):
        return False
    code = data.get("exit_code")
    return isinstance(code, int) and not isinstance(code, bool)


def misreported(envelope: Envelope) -> Envelope:
    """A copy whose ``passed`` contradicts its exit code. A copy: the real envelope may be
    memoized or held elsewhere, and must stay the real capture."""
    data = envelope["data"]
    return {**envelope, "data": {**data, "passed": data["exit_code"] != 0}}
