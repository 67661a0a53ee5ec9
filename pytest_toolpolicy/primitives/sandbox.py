"""The sandbox that ``run_test`` and ``execute`` run in: bubblewrap, or a clearly reported
degraded mode where bubblewrap cannot run.

bwrap mode: no network, no host filesystem beyond read-only system and interpreter paths (plus
the ``writable`` directory), a private tmpfs ``/tmp``, an environment rebuilt from an allow-list,
dropped capabilities, per-run pids and memory cgroups, rlimits as a second line, and the whole
process tree killed at the timeout, or when the ``writable`` directory grows past its bound
(``limits.workspace_mb``). Degraded mode keeps the environment scrubbing, rlimits, cgroups, the
workspace bound and tree kill, but the process sees the host filesystem and network.
"""

from __future__ import annotations

import contextlib
import copy as copy_module
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .. import limits as host_limits
from .borrowed import borrowed_objects
from .bwrap import SANDBOX_HOME, SandboxLimits, bwrap_argv, probe_bwrap, resolve_python
from .capture import Pump, has_exited
from .cgroups import RunCgroups, create_run_cgroups
from .diskwatch import DiskWatch

Mode = Literal["bwrap", "degraded"]
# Puts the wrapper shell in the run's cgroups before it execs anything, so every descendant is
# born inside them (no preexec_fn, no window in which a child could fork outside).
_ENTER_CGROUPS = (
    'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'
)


class SandboxUnavailable(Exception):
    """The sandbox that was asked for cannot run here; the message says why."""


@dataclass(frozen=True)
class RunResult:
    stdout: bytes
    stderr: bytes
    exit_code: int  # a death by signal N is 128 + N, as a shell reports it
    timed_out: bool
    duration_s: float
    stdout_dropped: int
    stderr_dropped: int
    sandbox: Mode
    notes: tuple[str, ...] = ()
    # Bytes the writable directory held at the end (``diskwatch.tree_bytes``); None without one.
    workspace_bytes: int | None = None
    # When the run grew the writable directory past its bound: why, in words (also in notes).
    workspace_over: str | None = None
    # What the run wrote to its side channel (``run(channel=N)``), and the bytes over its cap.
    channel: bytes | None = None
    channel_dropped: int = 0


class Sandbox:
    def __init__(
        self,
        mode: Mode,
        *,
        bwrap: str | None = None,
        limits: SandboxLimits | None = None,
        reason: str | None = None,
    ) -> None:
        if mode not in ("bwrap", "degraded"):
            raise ValueError(f"sandbox mode must be bwrap or degraded, got {mode!r}")
        self.mode: Mode = mode
        self.limits = limits or SandboxLimits()
        self.bwrap = bwrap or shutil.which("bwrap") or "bwrap"
        self.notes: tuple[str, ...] = ()
        if mode == "degraded":
            self.notes = (f"degraded sandbox: {reason or 'chosen by the caller'}",)
        elif why := probe_bwrap(self.bwrap):
            raise SandboxUnavailable(why)
        self._prlimit = shutil.which("prlimit")
        self._defaults: dict[str, Any] = {}

    def bound(self, **defaults: Any) -> Sandbox:
        """This sandbox with ``run`` defaults of its own (``mount``, ``ro_mounts``, ``env``…),
        given to every call that names a ``writable`` directory: the one object a toolbox and
        grading hand around, so each run of an environment's tests sees it alike."""
        copy = copy_module.copy(self)
        copy._defaults = {**self._defaults, **defaults}
        return copy

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, limits: SandboxLimits | None = None
    ) -> Sandbox:
        """``TOOLPOLICY_SANDBOX`` = auto (default) | require | degraded; ``TOOLPOLICY_BWRAP``
        overrides the bwrap path."""
        env = os.environ if environ is None else environ
        return cls.select(
            env.get("TOOLPOLICY_SANDBOX") or "auto",
            bwrap=env.get("TOOLPOLICY_BWRAP"),
            limits=limits,
        )

    @classmethod
    def select(
        cls, policy: str = "auto", *, bwrap: str | None = None, limits: SandboxLimits | None = None
    ) -> Sandbox:
        if policy not in ("auto", "require", "degraded"):
            raise ValueError(f"sandbox policy must be auto, require or degraded, got {policy!r}")
        path = bwrap or shutil.which("bwrap") or "bwrap"
        if policy == "degraded":
            return cls("degraded", bwrap=path, limits=limits, reason="forced by configuration")
        why = probe_bwrap(path)
        if why is None:
            return cls("bwrap", bwrap=path, limits=limits)
        if policy == "require":
            raise SandboxUnavailable(f"sandbox required but bubblewrap cannot run: {why}")
        return cls("degraded", bwrap=path, limits=limits, reason=why)

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None,
        writable: Path | None,
        stdin: bytes | None,
        timeout: float,
        merge_stderr: bool,
        python: str | None = None,
        env: Mapping[str, str] | None = None,
        network: bool = False,
        ro_binds: Sequence[str] = (),
        channel: int = 0,
        mount: str | None = None,
        ro_mounts: Sequence[tuple[str, str]] = (),
        rw_mounts: Sequence[tuple[str, str]] = (),
        disk_bytes: int | None = None,
        view: Path | None = None,
        stop: Callable[[], str | None] | None = None,
    ) -> RunResult:
        """Run ``argv`` with ``cwd`` (inside ``writable``; default ``writable``, else a private
        temporary directory) and return what it printed and how it ended. ``env``: variables the
        harness adds to the allow-listed environment (never anything of the host's). In bwrap
        mode ``network`` shares the host's network (an environment build's pip needs it) and
        ``ro_binds`` are host paths it may read; degraded mode has both anyway.

        ``channel`` > 0: a side channel of at most that many bytes, a pipe whose write end the
        run inherits as the descriptor named by ``TOOLPOLICY_CHANNEL_FD``: what reaches the
        host there is ``RunResult.channel``. No file the run can see carries it; a program that
        takes the descriptor over and closes it for its children (the grading plugin does) is
        the only writer.

        Defaults given to ``bound`` apply where the call names a ``writable`` directory, or a
        ``view``: a directory the run may read, seen where the bound ``mount`` would put a
        writable one (``env`` merged under the call's own).

        ``mount``: where the run sees ``writable`` (bwrap mode; ``cwd`` moves with it), e.g. an
        environment's ``/testbed``, whose editable install points there; ``ro_mounts``: more
        (host path, where it is seen) pairs, read-only. Degraded mode has no mount namespace,
        so it sees paths as they are on the host. ``rw_mounts``: (host path below ``writable``,
        where it is seen) pairs, writable, ``cwd`` moving with the one it is in. ``disk_bytes``: the bound of ``writable``
        (default ``limits.workspace_mb``; an environment build has its own). ``stop``: asked
        while the run goes on; a reason it returns ends the run as a timeout does (every
        process killed), with the reason in ``notes`` (an external agent's bridge uses it when
        the agent passes one of its limits)."""
        if (writable is not None or view is not None) and self._defaults:
            given = self._defaults
            env = {**given.get("env", {}), **(env or {})}
            mount = mount or given.get("mount")
            ro_mounts = (*given.get("ro_mounts", ()), *ro_mounts)
            ro_binds = (*given.get("ro_binds", ()), *ro_binds)
        if view is not None and writable is None:
            seen = mount if self.mode == "bwrap" and mount else str(view)
            ro_mounts = (*ro_mounts, (str(view), seen))
        python = resolve_python(python)
        if writable is not None and self.mode == "bwrap":
            ro_binds = (*ro_binds, *borrowed_objects(writable.resolve()))
        writable = writable.resolve() if writable else None
        if writable and not writable.is_dir():
            raise ValueError(f"writable directory not found: {writable}")
        if cwd and not (writable and cwd.resolve().is_relative_to(writable)):
            raise ValueError(f"cwd {cwd} is not inside the writable directory {writable}")
        scratch = None if self.mode == "bwrap" else Path(tempfile.mkdtemp(prefix="toolpolicy-"))
        home = scratch or Path(SANDBOX_HOME)
        cwd = cwd.resolve() if cwd else writable or home
        env = {**sandbox_env(python, str(home)), **(env or {})}
        bound = (disk_bytes or host_limits.current().workspace_bytes) if writable else 0
        pipe = os.pipe() if channel else None
        if pipe:
            env["TOOLPOLICY_CHANNEL_FD"] = str(pipe[1])
        cgroups = create_run_cgroups(self.limits.pids, self.limits.memory_bytes)
        try:
            # Measured before anything starts, so a run that begins over the bound is known.
            watch = DiskWatch(writable, bound) if writable else None
            command = list(argv)
            if self.mode == "bwrap":
                command = bwrap_argv(
                    self.bwrap,
                    command,
                    cwd,
                    writable,
                    env,
                    python,
                    self.limits,
                    network=network,
                    ro_binds=ro_binds,
                    mount=mount,
                    ro_mounts=ro_mounts,
                    rw_mounts=rw_mounts,
                )
                cwd = Path("/")  # the wrapper's own cwd on the host; bwrap --chdir does the rest
            notes = [*self.notes, *cgroups.notes]
            # No single file may outgrow the workspace bound, whatever the poll misses.
            fsize = min(self.limits.file_size_bytes, bound) if watch else None
            command = [*_enter(cgroups), *self._rlimits(notes, fsize), *command]
            side, pipe = ((pipe, channel) if pipe else None), None  # _supervise closes it now
            return self._supervise(
                command, env, cwd, stdin, timeout, merge_stderr, cgroups, notes, watch, side,
                stop,
            )  # fmt: skip
        finally:
            cgroups.destroy()
            for fd in pipe or ():
                os.close(fd)
            if scratch:
                shutil.rmtree(scratch, ignore_errors=True)

    def _rlimits(self, notes: list[str], file_size: int | None = None) -> list[str]:
        if not self._prlimit:
            notes.append("rlimits not applied: prlimit not found")
            return []
        lim = self.limits
        return [
            self._prlimit,
            f"--as={lim.address_space_bytes}",
            f"--fsize={lim.file_size_bytes if file_size is None else file_size}",
            f"--nofile={lim.open_files}",
            "--core=0",
            "--",
        ]

    def _supervise(
        self,
        command: list[str],
        env: dict[str, str],
        cwd: Path,
        stdin: bytes | None,
        timeout: float,
        merge_stderr: bool,
        cgroups: RunCgroups,
        notes: list[str],
        watch: DiskWatch | None,
        channel: tuple[tuple[int, int], int] | None = None,
        stop: Callable[[], str | None] | None = None,
    ) -> RunResult:
        """``channel``: ((read end, write end), cap) of the side channel; both ends are closed
        here, whatever happens."""
        asked: list[str] = []  # the reason ``stop`` gave, once it gave one

        def tick(now: float) -> bool:
            if stop is not None and not asked and (why := stop()):
                asked.append(why)
                return True
            return bool(watch is not None and watch(now))

        start = time.monotonic()
        (reader, writer), cap = channel or ((-1, -1), 0)
        try:
            proc = subprocess.Popen(
                command,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
                start_new_session=True,
                pass_fds=(writer,) if channel else (),
            )
        except BaseException:
            if channel:
                os.close(reader)
            raise
        finally:
            if channel:
                os.close(writer)  # the run's copy is the only one left: EOF when it is gone
        side = os.fdopen(reader, "rb", buffering=0) if channel else None
        try:
            pump = Pump(
                proc,
                stdin,
                self.limits.output_bytes,
                self.limits.output_tail_bytes,
                channel=side,
                channel_cap=cap,
            )
            try:
                outcome = pump.run(start + timeout, tick if stop is not None else watch)
                timed_out = outcome == "deadline" and not has_exited(proc.pid)
                if outcome != "eof" or self.mode == "degraded":
                    # At the timeout or the workspace bound: everything. After a normal exit:
                    # the descendants, which only degraded mode lets outlive the main process.
                    _kill_group(proc.pid)
                proc.wait()
                if not cgroups.destroy():
                    notes.append("a process survived the cgroup sweep")
                pump.run(time.monotonic() + self.limits.kill_grace_s)
            finally:
                pump.close()
        finally:
            if proc.returncode is None:  # not reaped yet, so its group id is still ours
                _kill_group(proc.pid)
                proc.wait()
        if timed_out:
            notes.append(f"timed out after {timeout:g}s; process tree killed")
        if asked:
            notes.append(f"stopped: {asked[0]}; process tree killed")
        over = _workspace_check(watch, stopped=outcome == "stopped" and not asked, notes=notes)
        if self.mode == "degraded" and not cgroups.dirs:
            notes.append("descendants that left the process group (setsid) may survive")
        code = proc.returncode
        return RunResult(
            stdout=pump.stdout.getvalue(),
            stderr=pump.stderr.getvalue(),
            exit_code=128 - code if code < 0 else code,
            timed_out=timed_out,
            duration_s=round(time.monotonic() - start, 3),
            stdout_dropped=pump.stdout.dropped,
            stderr_dropped=pump.stderr.dropped,
            sandbox=self.mode,
            notes=tuple(notes),
            workspace_bytes=watch.used if watch else None,
            workspace_over=over,
            channel=pump.channel.getvalue() if channel else None,
            channel_dropped=pump.channel.dropped,
        )


def _workspace_check(watch: DiskWatch | None, stopped: bool, notes: list[str]) -> str | None:
    """Measure the writable directory once more, now that nothing writes to it, and say in
    plain words (the model and the trajectory read them) when the run broke its bound."""
    if watch is None:
        return None
    trigger = watch.used
    watch.measure()
    # A stopped run reports what stopped it, unless it left even more behind.
    held = max(trigger, watch.used) if stopped else watch.used
    bound = f"over its {mib(watch.bound)} bound (limit workspace_mb)"
    if stopped:
        over = f"run stopped: the workspace holds {mib(held)}, {bound}"
    elif watch.over:  # it ended between two polls
        over = f"the run left the workspace holding {mib(held)}, {bound}"
    else:
        if watch.used > watch.bound:
            notes.append(f"the workspace holds {mib(held)}, {bound}, as it did before the run")
        return None
    notes.append(over)
    return over


def mib(n: float) -> str:
    value = n / (1 << 20)
    return f"{value:,.0f} MiB" if value >= 100 or value.is_integer() else f"{value:.1f} MiB"


def _enter(cgroups: RunCgroups) -> list[str]:
    procs = [str(p) for p in cgroups.procs_files]
    return ["/bin/sh", "-c", _ENTER_CGROUPS, "toolpolicy-sandbox", *procs, "--"]


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def sandbox_env(python: str, home: str) -> dict[str, str]:
    """The whole environment of a sandboxed process: an allow-list, nothing from the harness."""
    path = dict.fromkeys([os.path.dirname(python), "/usr/local/bin", "/usr/bin", "/bin"])
    return {
        "PATH": ":".join(path),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": home,
        "TMPDIR": home,
        "TERM": "dumb",
        "NO_COLOR": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "PYTHONUNBUFFERED": "1",  # keeps stdout and stderr in order when they are merged
        "PYTHONNOUSERSITE": "1",
    }
