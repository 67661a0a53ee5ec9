"""mini-swe-agent as the current arm: ``main`` runs inside the sandbox, in the workspace.

Copied out of the package and run as a script by an interpreter that has ``mini-swe-agent``
installed (the ``[mini-swe-agent]`` extra); it imports nothing of the harness. Its model is
mini-swe-agent's text-based one (``LitellmTextbasedModel``: one bash block a reply, no ``tools``
in the request, which is what the bridge serves), pointed at the bridge (``OPENAI_BASE_URL``)
with litellm kept offline and its retries off (a refused call is final: the harness has stopped
the run). Its environment runs each action as mini-swe-agent's ``LocalEnvironment`` does — here
already inside the sandbox — and reports every step on the side channel
(``TOOLPOLICY_CHANNEL_FD``): which model call it came from, the command, its exit status.
mini-swe-agent's own cost accounting is off; the harness prices the tokens.

The harness's side is ``launch`` (and ``NEEDS``, the registry's): importing this module there
runs nothing of mini-swe-agent. Argument of the script: the step limit (the item's turn budget).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..external import Launch
    from ..spec import AgentSpec

NEEDS = "minisweagent"  # the [mini-swe-agent] extra
# Read at import or class-definition time by mini-swe-agent and litellm: set before either.
SETTINGS = {
    "MSWEA_SILENT_STARTUP": "1",
    "MSWEA_COST_TRACKING": "ignore_errors",
    "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "1",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_OFFLINE_MODE": "true",
}
# mini-swe-agent's own fence, and the plain ``bash`` one a small model is likelier to write
ACTION = r"```(?:mswea_bash_command|bash)\s*\n(.*?)\n```"


def launch(agent: AgentSpec, max_turns: int) -> Launch:
    from ..external import SEEN, Launch

    script = f"{SEEN}/adapter.py"
    return Launch(
        (sys.executable, script, str(max_turns)),
        ro_mounts=((str(Path(__file__)), script),),
        observable=True,
    )


def _report(record: dict) -> None:
    fd = os.environ.get("TOOLPOLICY_CHANNEL_FD")
    if fd:
        os.write(int(fd), (json.dumps(record) + "\n").encode())


def _reporting_environment() -> Any:
    """LocalEnvironment, each action reported as a step of the model call that asked for it."""
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.environments.local import LocalEnvironment

    class ReportingEnvironment(LocalEnvironment):
        agent: DefaultAgent | None = None

        def execute(self, action: dict, cwd: str = "", **kwargs: Any) -> dict:
            call = (self.agent.n_calls - 1) if self.agent is not None else -1
            try:
                result = super().execute(action, cwd, **kwargs)
            except BaseException as exc:  # Submitted, among others: the step still happened
                ended = type(exc).__name__
                # its submit command is how it says it is done: the stock loop's `submit`
                tool = "submit" if ended == "Submitted" else "bash"
                _report({"call": call, "tool": tool, "args": {"command": action.get("command")},
                         "returncode": 0, "ended": ended})  # fmt: skip
                raise
            _report({"call": call, "tool": "bash", "args": {"command": action.get("command")},
                     "returncode": result.get("returncode")})  # fmt: skip
            return result

    return ReportingEnvironment


def main(argv: list[str]) -> int:
    os.environ.update(
        {
            **SETTINGS,
            "MSWEA_GLOBAL_CONFIG_DIR": os.path.join(os.environ.get("HOME", "/tmp"), ".mswea"),
        }
    )
    import litellm  # mini-swe-agent's own dependencies
    import yaml
    from minisweagent import package_dir
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.models.litellm_textbased_model import LitellmTextbasedModel

    litellm.suppress_debug_info = True  # else a "Provider List" banner for each unpriced reply
    steps = int(argv[0]) if argv else 30
    config = yaml.safe_load((package_dir / "config" / "default.yaml").read_text())
    model_config = {
        k: v
        for k, v in config["model"].items()
        if k in ("observation_template", "format_error_template")
    }
    model = LitellmTextbasedModel(
        model_name="openai/" + os.environ.get("TOOLPOLICY_MODEL", "toolpolicy-bridge"),
        model_kwargs={
            "api_base": os.environ["OPENAI_BASE_URL"],
            "api_key": os.environ.get("OPENAI_API_KEY", "toolpolicy-bridge"),
            "drop_params": True,
            "temperature": 0.0,
        },
        cost_tracking="ignore_errors",
        action_regex=ACTION,
        **model_config,
    )
    env = _reporting_environment()(cwd=os.getcwd(), timeout=120, env=config["environment"]["env"])
    agent_config = config["agent"] | {"step_limit": steps, "cost_limit": 0}
    agent = DefaultAgent(model, env, **agent_config)
    env.agent = agent
    with open(os.environ["TOOLPOLICY_TASK_FILE"], encoding="utf-8") as handle:
        task = handle.read()
    try:
        result = agent.run(task)
    except Exception as exc:  # the run's end as mini-swe-agent names it, then the error
        _report({"exit_status": type(exc).__name__, "error": str(exc)[:2000]})
        print(f"mini-swe-agent stopped: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    _report({"exit_status": result.get("exit_status"), "submission": result.get("submission")})
    print(f"mini-swe-agent: {result.get('exit_status')}")
    # Its CLI exits 0 whatever happens; this adapter says how it ended.
    return 0 if result.get("exit_status") == "Submitted" else 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
