"""Per-run pids and memory cgroups: the process and memory limits that bind even root.

A run's cgroups are created as children of the cgroup the harness itself runs in, so every limit
above the harness still applies to the sandbox. cgroup v1 (``/sys/fs/cgroup/{pids,memory}``) and
a pure v2 hierarchy are supported; anything not writable is reported as unavailable, never fatal.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
_PREFIX = "toolpolicy-"


@dataclass
class RunCgroups:
    """The cgroups of one run; ``procs_files`` are where a new process writes its pid."""

    dirs: list[Path] = field(default_factory=list)
    pids_limited: bool = False
    memory_limited: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def procs_files(self) -> list[Path]:
        return [d / "cgroup.procs" for d in self.dirs]

    def pids(self) -> set[int]:
        found: set[int] = set()
        for procs in self.procs_files:
            with contextlib.suppress(OSError):
                found.update(int(line) for line in procs.read_text().split())
        return found

    def kill_all(self, timeout: float = 10.0) -> bool:
        """SIGKILL every process in the run's cgroups until none is left; False on timeout."""
        for d in self.dirs:
            with contextlib.suppress(OSError):
                (d / "cgroup.kill").write_text("1")  # v2 only; v1 has no such file
        deadline = time.monotonic() + timeout
        while pids := self.pids():
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            if time.monotonic() > deadline:
                return False
            time.sleep(0.005)
        return True

    def destroy(self) -> bool:
        """Kill what is left and remove the cgroups; False if a process or directory remains."""
        empty = self.kill_all()
        for d in self.dirs:
            for _ in range(100):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # EBUSY while the last task is still being torn down
                    time.sleep(0.01)
        return empty and not any(d.exists() for d in self.dirs)


def create_run_cgroups(pids_max: int, memory_bytes: int) -> RunCgroups:
    name = f"{_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    run = RunCgroups()
    if (CGROUP_ROOT / "cgroup.controllers").exists():
        _create_v2(run, name, pids_max, memory_bytes)
    else:
        pids = _create(_own_cgroup("pids"), name, [("pids.max", pids_max)])
        # memsw (memory + swap) is written after the plain limit, which it may not undercut.
        memory = _create(
            _own_cgroup("memory"),
            name,
            [
                ("memory.limit_in_bytes", memory_bytes),
                ("memory.memsw.limit_in_bytes?", memory_bytes),
            ],
        )
        for controller, path in (("pids", pids), ("memory", memory)):
            if isinstance(path, str):
                run.notes.append(f"{controller} cgroup unavailable: {path}")
            else:
                run.dirs.append(path)
        run.pids_limited = isinstance(pids, Path)
        run.memory_limited = isinstance(memory, Path)
    if not run.pids_limited:
        run.notes.append("no process limit applies (RLIMIT_NPROC does not bind root)")
    if not run.memory_limited:
        run.notes.append("memory bounded only by RLIMIT_AS")
    return run


def _create_v2(run: RunCgroups, name: str, pids_max: int, memory_bytes: int) -> None:
    parent = _own_cgroup("")
    try:
        enabled = (parent / "cgroup.subtree_control").read_text().split()
    except OSError as exc:
        run.notes.append(f"cgroup v2 unavailable: {exc}")
        return
    settings: list[tuple[str, int | str]] = []
    if "pids" in enabled:
        settings.append(("pids.max", pids_max))
    if "memory" in enabled:
        settings += [("memory.max", memory_bytes), ("memory.swap.max?", 0)]
    path = _create(parent, name, settings)
    if isinstance(path, str):
        run.notes.append(f"cgroup v2 unavailable: {path}")
        return
    run.dirs.append(path)
    run.pids_limited = "pids" in enabled
    run.memory_limited = "memory" in enabled


def _own_cgroup(controller: str) -> Path:
    """The directory of the cgroup this process is in, for a v1 controller ("" means v2)."""
    mount = CGROUP_ROOT / controller if controller else CGROUP_ROOT
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, names, path = line.split(":", 2)
            if controller in names.split(",") or (not controller and names == ""):
                own = mount / path.lstrip("/")
                return own if own.is_dir() else mount
    return mount


def _create(parent: Path, name: str, settings: list[tuple[str, int | str]]) -> Path | str:
    """Make ``parent/name`` and write its limits (a trailing ``?`` marks an optional file).

    Returns the new directory, or the reason it could not be made."""
    if not (parent / "cgroup.procs").exists():
        return f"{parent} is not a writable cgroup"
    _remove_stale(parent)
    path = parent / name
    try:
        path.mkdir()
    except OSError as exc:
        return f"cannot create {path}: {exc.strerror}"
    for filename, value in settings:
        optional = filename.endswith("?")
        target = path / filename.rstrip("?")
        if optional and not target.exists():
            continue
        try:
            target.write_text(str(value))
        except OSError as exc:
            if optional:
                continue
            path.rmdir()
            return f"cannot write {target}: {exc.strerror}"
    return path


def _remove_stale(parent: Path) -> None:
    """Remove empty run cgroups left by harness processes that no longer exist."""
    with contextlib.suppress(OSError):
        for child in parent.glob(f"{_PREFIX}*-*"):
            pid = child.name[len(_PREFIX) :].split("-")[0]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                with contextlib.suppress(OSError):
                    child.rmdir()
