"""The bridge starts where a script named ``socketserver`` shadows the standard library's (an
execnet socket server's directory is first on ``sys.path``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROBE = """\
import sys
sys.path.insert(0, sys.argv[1])
import socketserver
assert not hasattr(socketserver, "TCPServer"), "the shadow should be what plain import finds"
from pytest_toolpolicy.agents.bridge import Bridge
from pytest_toolpolicy.models.scripted import ScriptedModel
bridge = Bridge(ScriptedModel(["hi"]))
print(bridge.start_tcp())
bridge.close()
"""


def test_the_bridge_starts_under_a_shadowing_socketserver(tmp_path: Path) -> None:
    (tmp_path / "socketserver.py").write_text("SHADOW = True\n")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("http://127.0.0.1:")
