"""The baseline loop: what users run today (mini-swe-agent / SWE-agent style).

Every tool schema in every prompt, a chat history that grows by one reply and one results message
per turn, several calls per reply run in order, no validation beyond dispatching, and the run
ends when the model says it is done. Same budgets and Trajectory format as the policy arm.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from ..arms.finish import failed, finish, spent, turn_cap
from ..models.base import Model, ModelError, ModelRequest
from ..models.budget import Budget
from ..primitives.envelope import Dispatch, Envelope
from ..primitives.toolbox import Toolbox
from ..types import Observation, Outcome, Task, ToolCall, Trajectory, Turn
from .prompt import (
    SUBMIT,
    deferred_submit,
    format_error_message,
    issue_message,
    parse_reply,
    results_message,
    system_message,
    target_of,
)
from .tools import TOOL_NAMES, call_tool

if TYPE_CHECKING:
    from ..arm_registry import ArmSetup

TEMPERATURE = 0.0
# Unlike the policy's one-call replies, a baseline reply may carry whole files and several calls.
MAX_COMPLETION_TOKENS = 4096


class CurrentLoop:
    """The stock arm (``builtin`` in the registry, ``arm_registry.py``)."""

    calls_removable: ClassVar[bool] = True
    own_requests: ClassVar[bool] = False

    @classmethod
    def build(cls, setup: ArmSetup) -> CurrentLoop:
        return cls(
            setup.toolbox,
            setup.model,
            max_turns=setup.config.max_turns,
            max_cost_usd=setup.config.max_cost_usd,
            variant=setup.variant or "current",
            dispatch=setup.dispatch,
            suppress=setup.suppress,
        )

    @staticmethod
    def tools(toolbox: Toolbox) -> Dispatch:
        """The four baseline tools over ``toolbox``."""
        return partial(call_tool, toolbox)

    def __init__(
        self,
        toolbox: Toolbox,
        model: Model,
        *,
        max_turns: int = 30,
        max_cost_usd: float | None = None,
        variant: str = "current",
        dispatch: Dispatch | None = None,
        suppress: Callable[[ToolCall], bool] | None = None,
    ) -> None:
        """``dispatch`` runs a tool (default: the four baseline tools over ``toolbox``; the A/B
        puts its memo here); ``suppress`` removes a call (counterfactual reruns)."""
        self.toolbox = toolbox
        self.model = model
        self.max_turns = max_turns
        self.max_cost_usd = max_cost_usd
        self.variant = variant
        self.dispatch = dispatch or self.tools(toolbox)
        self.suppress = suppress

    def run(self, task: Task) -> Trajectory:
        budget = Budget(max_usd=self.max_cost_usd)
        messages = [system_message(), issue_message(task.issue_text)]
        turns: list[Turn] = []
        outcome: Outcome | None = None
        for index in range(self.max_turns):
            prompt = list(messages)
            request = ModelRequest(
                messages=tuple(prompt),
                temperature=TEMPERATURE,
                max_completion_tokens=MAX_COMPLETION_TOKENS,
                item=task.instance_id,
                turn=index,
            )
            try:
                completion = self.model.complete(request)
            except ModelError as exc:
                # The failed attempt's tokens and cost: unknown, never a silent zero (a refused
                # request's: none spent).
                turns.append(Turn(index=index, prompt=prompt, completion=exc.record()))
                outcome = failed(exc)
                break
            budget = budget.charge(completion)
            messages.append({"role": "assistant", "content": completion.text})
            calls, error = parse_reply(completion.text)
            turn: dict[str, Any] = {"index": index, "prompt": prompt}
            turn["completion"] = completion.record()
            if error is not None:
                messages.append(format_error_message(error))
                turns.append(Turn(**turn, noop=error))
            else:
                observations, results, outcome, suppressed, blind = self._execute(calls)
                if outcome is None:
                    shown = results if blind is None else [*results, (blind, deferred_submit())]
                    messages.append(results_message(shown))
                turns.append(
                    Turn(
                        **turn,
                        request=calls[0],
                        observations=tuple(observations),
                        executed=tuple(call for call, _ in results),
                        suppressed=tuple(suppressed),
                    )
                )
            outcome = outcome or spent(budget)
            if outcome is not None:
                break
        return finish(
            task,
            arm="current",
            variant=self.variant,
            model=self.model,
            workspace=self.toolbox.workspace,
            turns=turns,
            outcome=outcome or turn_cap(self.max_turns),
            meta={
                "test_target": None,  # no triggers in the baseline: it never runs tests itself
                "tools": [*TOOL_NAMES, SUBMIT],
                "max_turns": self.max_turns,
            },
            budget=budget,
        )

    def _execute(
        self, calls: list[ToolCall]
    ) -> tuple[
        list[Observation],
        list[tuple[ToolCall, Envelope]],
        Outcome | None,
        list[ToolCall],
        ToolCall | None,
    ]:
        """Run the calls in order; ``submit`` ends the run there (calls after it are dropped),
        unless calls before it ran: then it is returned last (a blind submit), answered "not
        run" so the model sees their results first. A suppressed call is left out as if the
        reply had not contained it."""
        observations: list[Observation] = []
        results: list[tuple[ToolCall, Envelope]] = []
        suppressed: list[ToolCall] = []
        for call in calls:
            if call.tool == SUBMIT and results:
                # A blind submit: the reply ran calls whose results the model has not seen (seen
                # on Qwen2.5-Coder-1.5B: [run the tests, submit] in the first reply, ending every
                # run after one turn). mini-swe-agent runs one action per turn, so its model
                # always sees a result before it finishes; this loop lets the model read them.
                return observations, results, None, suppressed, call
            if call.tool == SUBMIT:
                message = call.args.get("message", "")
                reason = message if isinstance(message, str) else str(message)
                return observations, results, Outcome("stop", {"reason": reason}), suppressed, None
            if self.suppress is not None and self.suppress(call):
                suppressed.append(call)
                continue
            envelope = self.dispatch(call.tool, call.args)
            results.append((call, envelope))
            observations.append(
                Observation(call.tool, target_of(call), summarize(call, envelope), envelope)
            )
        return observations, results, None, suppressed, None


def summarize(call: ToolCall, envelope: Envelope) -> str:
    """The one-line result an Observation carries; the full envelope is its ``data``."""
    data = envelope.get("data")
    if call.tool == "bash" and isinstance(data, dict):
        timed_out = ", timed out" if data["timed_out"] else ""
        stopped = f", {envelope['error']}" if not envelope["ok"] and not timed_out else ""
        return f"exit_code={data['exit_code']}{timed_out}{stopped}"
    if not envelope["ok"]:
        return f"error: {envelope['error']}"
    if call.tool == "read_file":
        return f"lines {data['start']}-{data['end']} of {data['total_lines']}"
    if call.tool == "write_file":
        return f"wrote {data['chars']} chars"
    return f"replaced 1 match at line {data['line']}"
