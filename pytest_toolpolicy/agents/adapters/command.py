"""``cmd:COMMAND``: any program as the current arm, run by ``/bin/sh -c`` in the sandbox with
the workspace as its working directory; its task in ``$TOOLPOLICY_TASK_FILE`` and
``$TOOLPOLICY_TASK``, its model at ``$OPENAI_BASE_URL`` (the bridge). The directory the session
started in (the user's project, where their agent's code lives) is visible read-only as
``$TOOLPOLICY_PROJECT``. Its tool calls are not visible to the harness.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..spec import AgentSpecError

if TYPE_CHECKING:  # the run's own module loads only when an agent runs (see agents/loop.py)
    from ..external import Launch
    from ..spec import AgentSpec

FORM = "cmd:COMMAND"


def check(value: str, project: str) -> str:
    if not value:
        raise AgentSpecError("cmd: needs a command, e.g. cmd:'python my_agent.py'")
    return value


def launch(agent: AgentSpec, max_turns: int) -> Launch:
    from ..external import SEEN, Launch

    project = f"{SEEN}/project"
    shown = {"TOOLPOLICY_PROJECT": project} if agent.project else {}
    mounts = ((agent.project, project),) if agent.project else ()
    return Launch(("/bin/sh", "-c", agent.value), env=shown, ro_mounts=mounts)
