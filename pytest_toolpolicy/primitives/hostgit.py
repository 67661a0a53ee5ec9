"""The one way the harness runs git on the host over a workspace a model has written into.

A workspace is hostile (DESIGN.md, "Trust boundary"): a nested repository's config, a hook, an
attribute or an inherited environment variable must never make the harness's git run a program
or see the harness's secrets. So every call gets:

- an environment built from scratch, never ``os.environ``: a system PATH, ``LC_ALL=C``, an
  empty private HOME, no system or global config or attributes, no prompts, a fixed identity
  and fixed dates (checkpoint ids are then a function of content only), and only the few
  variables the caller names (``GIT_INDEX_FILE``, ``GIT_DIR``, ...);
- ``-c`` overrides of every config key that runs a program or recurses into nested
  repositories. Command-line config outranks every config file, a nested repository's
  included, and reaches child git processes through ``GIT_CONFIG_PARAMETERS``;
- a timeout, ``limits.current().snapshot_s``, that kills git and whatever it started.

Keys that name a driver (``filter.<x>.clean``, ``diff.<x>.textconv``, ``merge.<x>.driver``)
cannot be overridden without knowing ``<x>``; only config files can define them, and with
system and global config off that leaves the repository's own ``.git/config``: for a workspace
the harness writes it and ``Workspace`` pins it (it refuses to run git once that file
changes); a repository the harness did not make (a mirror, a history to mine) is never git's
repository at all, but read through a git directory of the harness's own whose configuration is
an allow-list (``foreign.py``). This list is then a second line, not the mechanism.

In-tree ``.gitattributes`` files are the repository's (or the model's) to write, and no
command-line switch of git 2.39 turns them off: ``working-tree-encoding`` alone makes
``git add`` fail outright on a file without a byte order mark, and ``eol``, ``ident`` and
``-diff`` change what a snapshot stores or a diff shows. ``$GIT_DIR/info/attributes`` outranks
every in-tree file, so every repository the harness makes gets one (``neutralize_attributes``,
before its first checkout) that sets each attribute git acts on back to unspecified: files go
between the work tree and the object store byte for byte, as they are.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import limits

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
IDENTITY = {
    "GIT_AUTHOR_NAME": "toolpolicy",
    "GIT_AUTHOR_EMAIL": "toolpolicy@localhost",
    "GIT_COMMITTER_NAME": "toolpolicy",
    "GIT_COMMITTER_EMAIL": "toolpolicy@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}
# Program-running and recursing keys, switched off (an empty value clears a list or a command).
NEUTRAL_CONFIG = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.editor=false",
    "sequence.editor=false",
    "core.askPass=",
    "core.sshCommand=false",
    "credential.helper=",
    "diff.external=",
    "gpg.program=false",
    "gpg.ssh.program=false",
    "gpg.x509.program=false",
    "log.showSignature=false",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "init.templateDir=",  # no template hooks in a new repository
    "core.attributesFile=/dev/null",
    "core.excludesFile=/dev/null",
    "diff.ignoreSubmodules=all",  # else diffs run `git status` inside each nested repository
    "submodule.recurse=false",
    "fetch.recurseSubmodules=false",
    "status.submoduleSummary=false",
    "core.untrackedCache=false",
    "core.splitIndex=false",
    "gc.auto=0",  # no detached `git gc` (nor its pre-auto-gc hook)
    "maintenance.auto=false",
    "color.ui=false",
    # Snapshots store what is on disk: links as links, bytes without line-ending rewrites.
    "core.symlinks=true",
    "core.autocrlf=false",
    "core.safecrlf=false",
    # Hashing a huge file is then bounded by the disk, not by zlib.
    "core.looseCompression=0",
    "core.compression=0",
    "protocol.allow=never",  # each call names the transports it needs (see ``run``)
)
# Every attribute that changes what git reads, writes or shows, unspecified ("!") for all paths.
NEUTRAL_ATTRIBUTES = "* " + " ".join(
    f"!{name}"
    for name in (
        "text", "eol", "crlf", "working-tree-encoding", "ident", "filter", "diff", "merge",
        "whitespace", "export-subst", "export-ignore", "delta", "encoding",
    )
) + "\n"  # fmt: skip
# What a caller may add to the environment.
CALLER_ENV = frozenset(
    {"GIT_INDEX_FILE", "GIT_DIR", "GIT_WORK_TREE", "GIT_CEILING_DIRECTORIES"}
    | {"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES"}
)
# Passed through only to a call that may use the network: a proxy or a CA is host setup.
NETWORK_ENV = (
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "GIT_SSL_CAINFO",
    "GIT_SSL_CAPATH",
)


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", errors="surrogateescape")


@functools.cache
def git_binary() -> str:
    return shutil.which("git", path=SYSTEM_PATH) or shutil.which("git") or "git"


@functools.cache
def _home() -> str:
    # Empty and not writable: nothing git or a helper might look up under HOME exists.
    home = tempfile.mkdtemp(prefix="toolpolicy-git-home-")
    os.chmod(home, 0o500)
    atexit.register(shutil.rmtree, home, True)
    return home


def environment(extra: Mapping[str, str] | None = None, *, network: bool = False) -> dict[str, str]:
    """The whole environment of a host-side git call."""
    unknown = set(extra or {}) - CALLER_ENV
    if unknown:
        raise ValueError(f"hostgit: {sorted(unknown)} may not be set for git")
    env = {
        "PATH": SYSTEM_PATH,
        "LC_ALL": "C",
        "HOME": _home(),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_PAGER": "cat",
        **IDENTITY,
    }
    if network:
        env.update({k: os.environ[k] for k in NETWORK_ENV if k in os.environ})
    env.update(extra or {})
    return env


def config_args(protocols: Sequence[str] = ("file",)) -> list[str]:
    pairs = [*NEUTRAL_CONFIG, *(f"protocol.{p}.allow=always" for p in protocols)]
    return [arg for pair in pairs for arg in ("-c", pair)]


def run(
    args: Sequence[str],
    *,
    cwd: Path,
    error: Callable[[str], Exception],
    env: Mapping[str, str] | None = None,
    stdin: bytes | str | None = None,
    ok: Container[int] = (0,),
    protocols: Sequence[str] = ("file",),
) -> Result:
    """Run ``git args`` in ``cwd``; an exit code outside ``ok`` or the timeout raises
    ``error(message)``, the message in git's own (shortened) words or naming the limit."""
    extra = dict(env or {})
    if "GIT_DIR" not in extra:
        # Repository discovery may find ``cwd`` itself, never a repository above it.
        extra["GIT_CEILING_DIRECTORIES"] = str(Path(cwd).resolve().parent)
    full_env = environment(extra, network=any(p != "file" for p in protocols))
    data = stdin.encode("utf-8", errors="surrogateescape") if isinstance(stdin, str) else stdin
    limit = limits.current().snapshot_s
    proc = subprocess.Popen(
        [git_binary(), *config_args(protocols), *args],
        cwd=cwd,
        env=full_env,
        stdin=subprocess.DEVNULL if data is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # one process group: a timeout kills git's children too
    )
    try:
        out, err = proc.communicate(data, timeout=limit)
    except subprocess.TimeoutExpired:
        _kill(proc)
        raise error(
            f"git {args[0]} timed out after {limit:g}s (limit snapshot_s; {limits.ENV})"
        ) from None
    except BaseException:
        _kill(proc)
        raise
    if proc.returncode not in ok:
        words = " ".join(err.decode("utf-8", errors="replace").split())[:500]
        raise error(f"git {args[0]} failed: {words or f'exit code {proc.returncode}'}")
    return Result(proc.returncode, out, err)


def neutralize_attributes(git_dir: Path) -> None:
    """Give the repository at ``git_dir`` (one the harness made) the attributes file that
    outranks its work tree's ``.gitattributes`` (see the module docstring)."""
    info = Path(git_dir) / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text(NEUTRAL_ATTRIBUTES, encoding="utf-8")


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    # A grandchild that left the group may hold the pipes open: stop waiting for it.
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.communicate(timeout=5)
