"""The current arm played by an external agent: one run of it (``external.py``) as the arm's
loop, its trajectory built from what passed through the bridge.

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
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..models.base import Model
from ..primitives.envelope import Dispatch
from ..primitives.sandbox import Sandbox
from ..primitives.toolbox import Toolbox
from ..primitives.workspace import final_patch
from ..types import Outcome, Task, ToolCall, Trajectory, Turn
from .spec import AgentSpec

if TYPE_CHECKING:  # the bridge (http.server, socketserver) loads only when an agent runs: on
    # an execnet socket worker ``socketserver`` is execnet's own script, not the stdlib's
    from .bridge import Exchange
    from .external import ExternalRun, Launch


OUTPUT_TAIL = 4000  # of what the agent printed, kept in the trajectory
HERE = Path(__file__).parent
ADAPTERS = HERE / "adapters"
SMOLAGENTS = "pytest_toolpolicy.agents.adapters.smolagents_agent:make_agent"
# How an agent that reports its end says it finished (mini-swe-agent's word; the runner's)
FINISHED = ("Submitted", "finished")


@dataclass
class ExternalLoop:
    toolbox: Toolbox
    model: Model
    agent: AgentSpec
    sandbox: Sandbox
    max_turns: int = 30
    max_cost_usd: float | None = None
    wall_s: float = 1800.0
    max_reply_tokens: int | None = None  # the session's cap on a reply (--toolpolicy-max-output)
    variant: str = "current"
    dispatch: Dispatch | None = None  # unused: the agent runs its own tools
    suppress: Any = None  # counterfactual reruns cannot remove an external agent's calls

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
        patch, snapshot = final_patch(self.toolbox.workspace)
        ended = [s for s in run.steps if "exit_status" in s]
        return Trajectory(
            instance_id=task.instance_id,
            arm="current",
            variant=self.variant,
            model=getattr(self.model, "name", "?"),
            turns=_turns(run),
            outcome=_outcome(run),
            patch=patch,
            meta={
                **snapshot,
                "agent": self.agent.label,
                "agent_exit": run.exit_code,
                "agent_output": run.output[-OUTPUT_TAIL:],
                "agent_seconds": run.seconds,
                "agent_notes": list(run.notes),
                # its own requests the bridge or the endpoint refused (each one of its turns)
                "agent_refused": sum(1 for e in run.exchanges if e.fault == "request"),
                "calls_observable": launch.observable,
                # no call of an external agent can be removed and the run replayed, so which
                # of its calls were necessary is never known
                "call_precision_observable": False,
                **({"agent_status": ended[-1]} if ended else {}),
                **({"agent_steps_error": run.steps_error} if run.steps_error else {}),
                "max_turns": self.max_turns,
                "test_target": None,
            },
        )


def launch_for(agent: AgentSpec, max_turns: int) -> Launch:
    """How ``agent`` starts in the sandbox."""
    from .external import SEEN, Launch

    if agent.kind == "mini-swe-agent":
        script = f"{SEEN}/adapter.py"
        return Launch(
            (sys.executable, script, str(max_turns)),
            ro_mounts=((str(ADAPTERS / "mini_swe_agent.py"), script),),
            observable=True,
        )
    project = f"{SEEN}/project"
    shown = {"TOOLPOLICY_PROJECT": project} if agent.project else {}
    mounts = ((agent.project, project),) if agent.project else ()
    if agent.kind in ("python", "smolagents"):
        from .python_runner import LIB

        target = SMOLAGENTS if agent.kind == "smolagents" else agent.value
        runner = f"{SEEN}/runner.py"
        # Of the project, only the agent's own top-level module or package is shown: the rest
        # of it (a .env, credentials) stays out of reach of a model that reads what it can.
        top = target.partition(":")[0].split(".")[0]
        own = [p for p in (Path(agent.project) / top, Path(agent.project) / f"{top}.py")
               if agent.project and agent.kind == "python" and p.exists()]  # fmt: skip
        return Launch(
            (sys.executable, runner, target),
            env=shown if own else {},
            ro_mounts=(
                (str(HERE / "python_runner.py"), runner),
                (str(HERE.parent), f"{LIB}/pytest_toolpolicy"),
                *((str(p), f"{project}/{p.name}") for p in own[:1]),
            ),
            observable=True,
        )
    return Launch(("/bin/sh", "-c", agent.value), env=shown, ro_mounts=mounts)


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
    return Turn(
        index=exchange.index,
        prompt=list(exchange.messages),
        completion=completion,
        request=executed[0] if executed else None,
        executed=executed,
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
