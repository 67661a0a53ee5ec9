"""A toy agent adapter, for the tests only: what a new adapter takes is this file and one line
of the registry (``ARMS["toy"] = Adapter("<this module>")``, ``arm_registry.py``).

The harness's side is ``launch``: this very file, run in the sandbox by the harness's
interpreter. The sandbox's side is ``main`` (standard library only): it asks the bridge once,
writes the reply to ``TOY.txt`` in the workspace and reports that step on the side channel.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from pathlib import Path
from typing import Any

FORM = "toy"


def launch(agent: Any, max_turns: int) -> Any:
    from pytest_toolpolicy.agents.external import SEEN, Launch

    script = f"{SEEN}/toy.py"
    return Launch((sys.executable, script), ro_mounts=((__file__, script),), observable=True)


def main() -> int:
    with open(os.environ["TOOLPOLICY_TASK_FILE"], encoding="utf-8") as handle:
        task = handle.read()
    body = {
        "model": os.environ["TOOLPOLICY_MODEL"],
        "messages": [{"role": "user", "content": task}],
    }
    request = urllib.request.Request(
        os.environ["OPENAI_BASE_URL"] + "/chat/completions",
        json.dumps(body).encode(),
        {"Content-Type": "application/json", "Authorization": "Bearer toolpolicy-bridge"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        reply = json.load(response)["choices"][0]["message"]["content"]
    Path("TOY.txt").write_text(f"{reply}\n", encoding="utf-8")
    step = {"call": 0, "tool": "write_file", "args": {"path": "TOY.txt"}}
    os.write(int(os.environ["TOOLPOLICY_CHANNEL_FD"]), (json.dumps(step) + "\n").encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
