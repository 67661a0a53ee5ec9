"""The current arm played by an external agent: one run of it (``external.py``) as the arm's
loop, its trajectory built from what passed through the bridge. How the agent starts is its
adapter's (``adapters/<name>.py``, found by its name in ``arm_registry.py``).

Each model call the agent made is a turn: the messages it sent, the completion it got (the
endpoint's usage and the price table's cost), or the refusal or model error it was told (a
refusal cost nothing; a model error's spend is unknown). What the agent did between calls is
its own affair unless it reports its steps; a command agent's are not visible, so its
trajectory says ``calls_observable: false`` and the measures that need them (call precision,
selection accuracy) are reported as not observable, never as 0 or 1.

How the run ended: a limit the bridge enforced, or the wall time, is ``budget_exhausted`` with
the limit named; a last call the endpoint failed (its own fault: a 5xx, a timeout, a replay
miss) is ``model_error``; an agent that finished (exit 0, or mini-swe-agent's ``Submitted``) is
``stop``; one that ended otherwise (a crash, its own step limit, a format its model never kept,
a last request refused as its own mistake, by the bridge or the endpoint) is
``budget_exhausted`` with its status — never an abstention, never a ``model_error``: an agent
cannot leave the measures by sending what the endpoint refuses. Either way what it left in the
workspace is graded.
"""

from __future__ import annotations

import bisect
import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from .. import jsonsafe
from ..arm_registry import adapter
from ..arms.finish import finish
from ..models.base import Model
from ..primitives.envelope import Dispatch
from ..primitives.sandbox import Sandbox
from ..primitives.toolbox import Toolbox
from ..types import Outcome, Task, ToolCall, Trajectory, Turn
from .spec import AgentSpec

if TYPE_CHECKING:  # the bridge (http.server, socketserver) loads only when an agent runs: on
    # an execnet socket worker ``socketserver`` is execnet's own script, not the stdlib's
    from ..arm_registry import ArmSetup
    from .bridge import Exchange
    from .external import ExternalRun, Launch


OUTPUT_TAIL = 4000  # of what the agent printed, kept in the trajectory
# How an agent that reports its end says it finished (mini-swe-agent's word; the runner's)
FINISHED = ("Submitted", "finished")


@dataclass
class ExternalLoop:
    """Every external agent's arm (``cmd``, ``python``, ``mini-swe-agent``, ``smolagents`` in
    the registry, ``arm_registry.py``): its adapter says how it starts."""

    # No call of an external agent can be removed and the run replayed; its requests and its
    # replies are in its own format.
    calls_removable: ClassVar[bool] = False
    own_requests: ClassVar[bool] = True

    toolbox: Toolbox
    model: Model
    agent: AgentSpec
    sandbox: Sandbox
    max_turns: int = 30
    max_cost_usd: float | None = None
    wall_s: float = 1800.0
    max_reply_tokens: int | None = None  # the session's cap on a reply (--toolpolicy-max-output)
    variant: str = "current"

    @classmethod
    def build(cls, setup: ArmSetup) -> ExternalLoop:
        if setup.agent is None or setup.sandbox is None:
            raise ValueError("an external agent's arm needs its agent and its sandbox")
        return cls(
            setup.toolbox,
            setup.model,
            setup.agent,
            setup.sandbox,
            max_turns=setup.config.max_turns,
            max_cost_usd=setup.config.max_cost_usd,
            wall_s=setup.wall_s,
            max_reply_tokens=setup.max_reply_tokens,
            variant=setup.variant or "current",
        )

    @staticmethod
    def tools(toolbox: Toolbox) -> Dispatch:
        """Never called: the agent runs its own tools in the sandbox."""
        return toolbox.call

    def launch(self) -> Launch:
        return launch_for(self.agent, self.max_turns)

    def run(self, task: Task) -> Trajectory:
        from .bridge import BridgeLimits
        from .external import run_external

        limits = BridgeLimits(calls=self.max_turns, cost_usd=self.max_cost_usd)
        if self.max_reply_tokens is not None:
            limits = dataclasses.replace(limits, max_completion_tokens=self.max_reply_tokens)
        launch = self.launch()
        run = run_external(
            launch,
            workspace=self.toolbox.root,
            task=task.issue_text,
            model=self.model,
            limits=limits,
            sandbox=self.sandbox,
            item=task.instance_id,
            wall_s=self.wall_s,
        )
        ended = [s for s in run.steps if "exit_status" in s]
        meta = {
            "agent": self.agent.label,
            "agent_exit": run.exit_code,
            "agent_output": run.output[-OUTPUT_TAIL:],
            "agent_seconds": run.seconds,
            "agent_notes": list(run.notes),
            # its own requests the bridge or the endpoint refused (each one of its turns)
            "agent_refused": sum(1 for e in run.exchanges if e.fault == "request"),
            "calls_observable": launch.observable,
            # no call of an external agent can be removed and the run replayed, so which of
            # its calls were necessary is never known
            "call_precision_observable": False,
            **({"agent_status": ended[-1]} if ended else {}),
            **({"agent_steps_error": run.steps_error} if run.steps_error else {}),
            "max_turns": self.max_turns,
            "test_target": None,
        }
        return finish(
            task,
            arm="current",
            variant=self.variant,
            model=self.model,
            workspace=self.toolbox.workspace,
            turns=_turns(run),
            outcome=_outcome(run),
            meta=meta,
        )


def launch_for(agent: AgentSpec, max_turns: int) -> Launch:
    """How ``agent`` starts in the sandbox: its adapter's ``launch`` (``arm_registry.py``)."""
    return adapter(agent.kind).launch(agent, max_turns)


def attribute(steps: tuple[dict[str, Any], ...], exchanges: tuple[Exchange, ...]) -> list[int]:
    """The model call each step came of: the one it names (``call``), else the last call that
    arrived before it was reported (``t``), else -1 (none: reported before any call)."""
    arrivals = [e.at for e in exchanges]
    out = []
    for step in steps:
        call = step.get("call")
        if isinstance(call, int) and not isinstance(call, bool):
            out.append(call)
            continue
        at = step.get("t")
        if isinstance(at, (int, float)) and not isinstance(at, bool):
            out.append(bisect.bisect_right(arrivals, float(at)) - 1)
        else:
            out.append(-1)
    return out


def _turns(run: ExternalRun) -> tuple[Turn, ...]:
    calls = attribute(run.steps, run.exchanges)
    acted = [(c, s) for c, s in zip(calls, run.steps, strict=True) if "exit_status" not in s]
    return tuple(_turn(e, [s for c, s in acted if c == e.index]) for e in run.exchanges)


def _turn(exchange: Exchange, steps: list[dict[str, Any]]) -> Turn:
    if exchange.completion is not None:
        completion: dict[str, Any] = exchange.completion.record()
    else:
        # The endpoint failed a call it was sent: its tokens and cost unknown, never a silent
        # zero. A refused request (by the bridge, or by the endpoint before any generation) or
        # a limit's refusal spent nothing.
        sent = exchange.fault == "endpoint"
        completion = {"text": "", "error": exchange.error, "cost_usd": None if sent else 0.0,
                      "latency_s": exchange.seconds, "model": "", "replayed": False, "extra": {},
                      "usage": {"prompt_tokens": 0, "completion_tokens": 0,
                                "cached_prompt_tokens": 0, "estimated": False,
                                "missing": sent, "total_tokens": 0},
                      "blame": exchange.fault}  # fmt: skip
    executed = tuple(ToolCall(str(s.get("tool", "bash")), _args(s.get("args"))) for s in steps)
    if not executed:  # an agent that calls tools: the functions the model called are its steps
        executed = tuple(
            _function_call(c) for c in completion.get("extra", {}).get("tool_calls", ())
        )
    return Turn(
        index=exchange.index,
        prompt=list(exchange.messages),
        completion=completion,
        request=executed[0] if executed else None,
        executed=executed,
    )


def _function_call(call: dict[str, Any]) -> ToolCall:
    """A tool call as the endpoint sent it; arguments that are not a JSON object are kept
    whole under ``arguments``, never dropped."""
    function = call.get("function", {})
    text = function.get("arguments", "")
    try:
        args = jsonsafe.loads(text)  # the model's text: nested past the bound is refused
    except ValueError:
        args = None
    return ToolCall(
        str(function.get("name", "")), args if isinstance(args, dict) else {"arguments": text}
    )


def _args(value: object) -> dict[str, Any]:
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


def _outcome(run: ExternalRun) -> Outcome:
    if run.stopped is not None:
        return Outcome(
            "budget_exhausted", {"reason": f"limit: {run.stopped}", "limit": run.stopped}
        )
    last = run.exchanges[-1] if run.exchanges else None
    if last is not None and last.fault == "endpoint":
        return Outcome("model_error", {"reason": last.error})
    ended = [s["exit_status"] for s in run.steps if "exit_status" in s]
    status = ended[-1] if ended else None
    if (status is None and run.exit_code == 0) or status in FINISHED:
        return Outcome("stop", {"reason": f"the agent finished ({status or 'exit 0'})"})
    # Not its own decision to stop (a crash, its own step limit, a format it never kept, a
    # request of its own refused): no abstention, whatever it left in the workspace.
    why = status or f"exit {run.exit_code}"
    if last is not None and last.fault == "request":
        why += f"; its last request was refused: {last.error}"
    return Outcome(
        "budget_exhausted",
        {"reason": f"the agent ended without finishing: {why}", "output_tail": run.output[-800:]},
    )
