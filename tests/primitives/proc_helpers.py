"""Helpers shared by the sandbox tests: what is still running, what cgroups can do here."""

from __future__ import annotations

from pathlib import Path

from pytest_toolpolicy.primitives.cgroups import RunCgroups, create_run_cgroups


def probe_cgroups() -> RunCgroups:
    """A throwaway pair of run cgroups, to learn which limits this machine can apply."""
    cgroups = create_run_cgroups(pids_max=8, memory_bytes=64 << 20)
    cgroups.destroy()
    return cgroups


def processes_with(marker: str) -> list[int]:
    """Pids of live processes whose command line contains ``marker``."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker.encode() in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


def daemonizer_code(marker: str) -> str:
    """Code that starts a child with a grandchild and a double-forked setsid daemon, then hangs."""
    return f"""
import os, subprocess
subprocess.Popen(["sh", "-c", "sleep {marker}; true"])
ready, up = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.write(up, b"1")
        os.execv("/bin/sleep", ["sleep", "{marker}"])
    os._exit(0)
os.read(ready, 1)
print("all started", flush=True)
os.execv("/bin/sleep", ["sleep", "{marker}"])
"""
