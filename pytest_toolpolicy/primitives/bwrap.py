"""The bubblewrap command line of a sandboxed run, and whether bubblewrap can run here at all."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Not all of /etc: only what the dynamic loader, libc's user lookups and time zones read.
# HOME, TMPDIR and execute's cwd inside the sandbox: a directory of its own on the private /tmp,
# empty even when the interpreter or the workspace lives under the host's /tmp.
SANDBOX_HOME = "/tmp/home"
_ETC = ("ld.so.cache", "passwd", "group", "nsswitch.conf", "localtime", "hosts", "alternatives")
# With the network shared: name resolution and the CA certificates (not /etc/ssl/private).
_NET_ETC = ("resolv.conf", "gai.conf", "ssl/certs", "ssl/openssl.cnf", "ca-certificates")
# The harness's own data that carries answers: the bundled instances (gold patches) and the
# projects' histories (every fix), the example history ``toolpolicy mine`` ships. A run that sees
# the harness's package (its interpreter's site-packages, a ``python:`` agent's library mount)
# sees an empty directory there instead.
_PACKAGE = Path(__file__).resolve().parent.parent
ANSWERS = (_PACKAGE / "bench" / "bundled", _PACKAGE / "mine" / "example")


@dataclass(frozen=True)
class SandboxLimits:
    memory_bytes: int = 2 << 30
    pids: int = 256
    output_bytes: int = 1 << 20  # kept per stream
    output_tail_bytes: int = 64 << 10  # of output_bytes, kept from the end of the stream
    tmpfs_bytes: int = 256 << 20
    address_space_bytes: int = 4 << 30
    file_size_bytes: int = 512 << 20  # lowered to the workspace bound when there is one
    open_files: int = 1024
    kill_grace_s: float = 2.0


def bwrap_argv(
    bwrap: str,
    argv: list[str],
    cwd: Path,
    writable: Path | None,
    env: Mapping[str, str],
    python: str,
    limits: SandboxLimits,
    network: bool = False,
    ro_binds: Sequence[str] = (),
    mount: str | None = None,
    ro_mounts: Sequence[tuple[str, str]] = (),
    rw_mounts: Sequence[tuple[str, str]] = (),
) -> list[str]:
    """``network``: the host's network namespace, with what resolving names and TLS need;
    ``ro_binds``: more host paths visible read-only (over the writable directory too);
    ``mount``: where the writable directory is seen (and ``cwd`` with it), else at its own
    path; ``ro_mounts``: (host path, where it is seen) pairs, read-only; ``rw_mounts``: such
    pairs writable (each below the writable directory), ``cwd`` following the one it is in."""
    args = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    args += ["--hostname", "sandbox"]
    if network:
        args.append("--share-net")
    for path in _SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for name in (*_ETC, *(_NET_ETC if network else ())):
        if os.path.exists(f"/etc/{name}"):
            args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--size", str(limits.tmpfs_bytes), "--tmpfs", "/tmp", "--dir", SANDBOX_HOME]
    # After the tmpfs, so an interpreter or workspace that lives under /tmp is still visible.
    for prefix in python_prefixes(python):
        args += ["--ro-bind", prefix, prefix]
    seen = mount or (str(writable) if writable else None)
    if writable and seen:
        args += ["--bind", str(writable), seen]
        if (writable / ".git").is_dir():  # checkpoints and the base commit are the harness's
            args += ["--ro-bind", str(writable / ".git"), f"{seen}/.git"]
        if mount and cwd.is_relative_to(writable):
            cwd = Path(mount) / cwd.relative_to(writable)
    for path in ro_binds:
        args += ["--ro-bind", path, path]
    for host, target in ro_mounts:
        args += ["--ro-bind", host, target]
    for host, target in rw_mounts:
        args += ["--bind", host, target]
        if cwd.is_relative_to(host):
            cwd = Path(target) / cwd.relative_to(host)
    shown = [(p, p) for p in python_prefixes(python)] + [(p, p) for p in ro_binds]
    for seen_at in masks([*shown, *ro_mounts], ANSWERS):
        args += ["--tmpfs", seen_at, "--remount-ro", seen_at]
    # The root is bwrap's own tmpfs holding only mount points: read-only, nothing lands there.
    args += ["--remount-ro", "/", "--chdir", str(cwd), "--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    return [*args, "--", *argv]


def masks(shown: Sequence[tuple[str, str]], hidden: Sequence[Path]) -> list[str]:
    """Where each of the ``hidden`` host directories appears in the sandbox, given what it is
    shown ((host path, where it is seen) pairs): each such place gets an empty directory."""
    found = []
    for path in hidden:
        real = os.path.realpath(path)
        if not os.path.isdir(real):
            continue
        for host, target in shown:
            source = os.path.realpath(host)
            if real == source or real.startswith(source.rstrip("/") + "/"):
                found.append(os.path.normpath(os.path.join(target, os.path.relpath(real, source))))
    return list(dict.fromkeys(found))


def resolve_python(python: str | None) -> str:
    if python is None:
        return sys.executable
    found = shutil.which(python)
    if found is None:
        raise ValueError(f"python interpreter not found: {python}")
    return os.path.abspath(found)


@functools.lru_cache(maxsize=16)
def python_prefixes(python: str) -> tuple[str, ...]:
    """The directories the interpreter needs (``sys.prefix``, ``sys.base_prefix`` and the home
    of the real executable), minus what the system binds cover; never ``/``. Exactly these: a
    venv inside a project checkout exposes the venv, not the checkout."""
    if python == sys.executable:
        found = [sys.prefix, sys.base_prefix]
    else:
        # -S: no site, so no .pth file of its site-packages runs here on the host (an untrusted
        # install may have put one there). A venv's own prefix is then its pyvenv.cfg's directory.
        code = "import sys; print(sys.prefix); print(sys.base_prefix)"
        out = subprocess.run(
            [python, "-I", "-S", "-c", code],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        found = out.stdout.splitlines()
        venv = os.path.dirname(os.path.dirname(os.path.abspath(python)))
        if os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
            found.append(venv)
    found.append(os.path.dirname(os.path.dirname(os.path.realpath(python))))
    # Both spellings of a prefix reached through a symlink: the interpreter may use either.
    paths = {os.path.abspath(p) for p in found} | {os.path.realpath(p) for p in found}
    keep: list[str] = []
    for prefix in sorted(paths, key=len):
        covered = [*_SYSTEM_DIRS, *keep]
        if prefix != "/" and not any(prefix == c or prefix.startswith(c + "/") for c in covered):
            keep.append(prefix)
    return tuple(keep)


@functools.lru_cache(maxsize=8)
def probe_bwrap(bwrap: str) -> str | None:
    """Why bubblewrap cannot run a trivial sandbox here, or None when it can. Cached per path."""
    if shutil.which(bwrap) is None:
        return f"bwrap not found at {bwrap}"
    env = {"PATH": "/usr/bin:/bin"}
    argv = bwrap_argv(
        bwrap, ["/bin/true"], Path("/tmp"), None, env, sys.executable, SandboxLimits()
    )
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap failed to start: {exc}"
    if proc.returncode != 0:
        return f"bwrap cannot create a sandbox: {proc.stderr.strip()[:300] or proc.returncode}"
    return None
