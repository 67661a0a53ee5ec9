"""What an A/B session must have before anything it runs can reach the host: fail closed.

- A session whose runs come from a real model (any model spec but ``sim`` and ``scripted:``) or
  an external agent (``--toolpolicy-current`` other than builtin) runs them only in
  bubblewrap's sandbox. Where bubblewrap cannot run, it refuses to start, with the probe's reason
  and how to install it, unless the user opted in to the degraded mode by name
  (``TOOLPOLICY_SANDBOX=degraded`` or ``--toolpolicy-sandbox=degraded``); the table's header
  then says that the runs saw the host's files and network. A held-out suite escaped the
  degraded mode in 5 of 11 attempts: it is never chosen silently for a model's commands.
- An external agent never runs degraded (``agents/external.py`` refuses it), so a session that
  names one is refused at once rather than failing on every item.
- ``sim`` and ``scripted:`` replies are the harness's own or the user's file, so those sessions
  keep running degraded where bubblewrap cannot, with the note saying so.
- An external agent is shown the directory the session started in (read-only,
  ``$TOOLPOLICY_PROJECT``): a session started in a home directory or ``/`` would show it the
  user's credentials (a ``.env``, ``.ssh``), so it is refused (``home_problem``).
"""

from __future__ import annotations

import os
import pwd
import shutil
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..primitives.bwrap import probe_bwrap
from ..primitives.sandbox import Sandbox, SandboxUnavailable

if TYPE_CHECKING:
    from .settings import Settings

INSTALL = (
    "install it: apt-get install bubblewrap (or `make sandbox` in a checkout of pytest-toolpolicy)"
)
OPT_IN = (
    "or, to run anyway with this host's files and network in view of every run, opt in with"
    " TOOLPOLICY_SANDBOX=degraded (or --toolpolicy-sandbox=degraded)"
)
_HOME_PARENTS = ("/home", "/Users")


class SandboxRefused(Exception):
    """The session cannot run as asked without a sandbox; the message says what to do."""


def untrusted_runs(settings: Settings) -> str | None:
    """What in the session runs commands no one wrote in advance, in words; None for ``sim``
    and ``scripted:`` with the builtin loop."""
    if settings.current.external:
        return f"an external agent (--toolpolicy-current {settings.current.label})"
    return model_runs(settings.model)


def model_runs(model: str) -> str | None:
    """``a real model (SPEC)`` for any model spec but ``sim`` and ``scripted:``; else None."""
    kind = model.partition(":")[0].strip()
    if model.strip() == "sim" or kind in ("sim", "scripted"):
        return None
    return f"a real model ({model})"


def session_sandbox(settings: Settings) -> Sandbox:
    """The session's sandbox, or ``SandboxRefused`` (``SandboxUnavailable`` for ``require``)."""
    return confined(
        untrusted_runs(settings),
        settings.sandbox,
        settings.bwrap,
        external=settings.current.external,
        source=settings.sandbox_source,
    )


def confined(
    runs: str | None,
    policy: str,
    bwrap: str | None = None,
    *,
    external: bool = False,
    source: str = "TOOLPOLICY_SANDBOX",
) -> Sandbox:
    """The sandbox for ``runs`` (what runs unwritten commands, in words; None: nothing does)
    under ``policy`` (auto | require | degraded, as the user set it at ``source``), or
    ``SandboxRefused`` saying why and what to do."""
    bwrap = bwrap or shutil.which("bwrap") or "bwrap"
    if policy == "degraded":
        if external:
            raise SandboxRefused(
                f"{runs} runs only in bubblewrap's sandbox, never degraded"
                f" ({source}=degraded): it would see this host's files and network"
            )
        return Sandbox.select("degraded", bwrap=bwrap)
    if runs is None:
        try:
            return Sandbox.select(policy, bwrap=bwrap)
        except SandboxUnavailable as exc:
            raise SandboxRefused(f"--toolpolicy-sandbox=require: {exc}; {INSTALL}") from None
    why = probe_bwrap(bwrap)
    if why is None:
        return Sandbox.select("require", bwrap=bwrap)
    if shutil.which(bwrap) is None:
        reason = f"bubblewrap is not installed ({why})"
    else:
        reason = f"bubblewrap cannot create its namespaces here ({why})"
    fix = INSTALL if external else f"{INSTALL}; {OPT_IN}"
    raise SandboxRefused(f"sandbox: {runs} runs only in bubblewrap's sandbox, and {reason}: {fix}")


def home_problem(project: str, env: Mapping[str, str]) -> str | None:
    """Why ``project`` must not be shown to an external agent: it is ``/`` or a home directory
    (the user's ``$HOME`` or password-database home, ``/root``, ``/home/<name>``); else None."""
    real = os.path.realpath(project)
    if real == "/":
        return "the root directory, which holds every file of this host"
    homes = {"/root", *_HOME_PARENTS}
    for home in (env.get("HOME"), _passwd_home()):
        if home:
            homes.add(os.path.realpath(home))
    if real in homes or os.path.dirname(real) in _HOME_PARENTS:
        return "a home directory, which holds its user's credentials (.env, .ssh, cloud keys)"
    return None


def _passwd_home() -> str | None:
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except (KeyError, OSError):
        return None
