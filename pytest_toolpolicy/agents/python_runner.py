"""Runs a Python agent (``python:MODULE:FACTORY``) inside the sandbox, in the workspace.

Copied out of the package and started by the harness's interpreter in the sandbox. The
harness's package is visible read-only at ``LIB`` (so ``from pytest_toolpolicy.agents.protocol
import AgentTask`` works whether the harness is installed from a wheel or in place), the
directory the session started in at ``$TOOLPOLICY_PROJECT``; both go on ``sys.path``, the
harness's first, then the user's project, then the interpreter's own packages.

``FACTORY()`` returns the agent: an object with ``run(task)`` or a callable taking the task.
Its end is reported on the side channel: ``finished`` when it returned, else the exception's
type and message (exit 1, the traceback in what it printed).

Argument: ``MODULE:FACTORY``.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback

LIB = "/toolpolicy/lib"


def main(argv: list[str]) -> int:
    target = argv[0] if argv else ""
    module_name, _, factory_name = target.partition(":")
    paths = [LIB, os.environ.get("TOOLPOLICY_PROJECT", "")]
    sys.path[:0] = [p for p in paths if p and os.path.isdir(p)]
    from pytest_toolpolicy.agents.protocol import AgentTask

    task = AgentTask.from_environment()
    try:
        factory = importlib.import_module(module_name)
        for part in factory_name.split("."):
            factory = getattr(factory, part)
        agent = factory()  # type: ignore[operator]
        run = getattr(agent, "run", None)
        if run is None and not callable(agent):
            raise TypeError(
                f"{target}() returned {type(agent).__name__}, which has no run(task) and is"
                " not callable"
            )
        (run or agent)(task)
    except SystemExit as exc:  # sys.exit() in the agent: its code says how it ended
        if exc.code not in (None, 0):
            task.end("SystemExit", error=f"exit {exc.code}")
            return exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:
        traceback.print_exc()
        task.end(type(exc).__name__, error=str(exc)[:2000])
        return 1
    task.end("finished")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
