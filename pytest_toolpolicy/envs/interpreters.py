"""The Python interpreter a spec names, found on this machine rather than hard-wired.

First match wins:

1. ``TOOLPOLICY_PYTHON``, comma separated ``owner/name@version=PATH``, ``owner/name=PATH``,
   ``X.Y=PATH`` and one bare ``PATH``, e.g. ``django/django=python3.9,3.10=/opt/py310/bin/python``.
   The bare ``PATH`` is the default only for a spec that names no Python (``""``);
2. pyenv: ``$PYENV_ROOT``, else ``pyenv root``, else ``~/.pyenv``, its
   ``versions/X.Y.*/bin/pythonX.Y`` of the highest patch release;
3. ``pythonX.Y`` on ``PATH``.

A spec that names no Python gets the interpreter running the harness unless the first step
names one. Whatever is found for ``X.Y`` must really be ``X.Y`` (asked once per interpreter and
remembered); a missing one is ``InterpreterMissing``, an infrastructure error whose message says
where it looked and how to fix it.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from .spec import EnvironmentSetupError

ENV = "TOOLPOLICY_PYTHON"
_VERSION = re.compile(r"\d+\.\d+")
_PATCH = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_ASK = "import sys; print('%d.%d' % sys.version_info[:2])"


class InterpreterMissing(EnvironmentSetupError):
    """No interpreter of the version a spec needs; the message says where it looked."""


def find_python(
    version: str,
    *,
    repo: str = "",
    repo_version: str = "",
    environ: Mapping[str, str] = os.environ,
) -> str:
    """The absolute path of an interpreter of Python ``version`` ("X.Y"; "" = any: the
    harness's own unless ``TOOLPOLICY_PYTHON`` names one for ``repo``)."""
    mapping, default = parse_setting(environ.get(ENV, ""))
    needs = f"{repo} {repo_version}".strip() or "this environment"
    search = environ.get("PATH", os.defpath)
    looked: list[str] = []
    keys = [k for k in (f"{repo}@{repo_version}" if repo else "", repo, version) if k]
    explicit = next(((k, mapping[k]) for k in keys if k in mapping), None)
    if explicit is None and not version and default:
        explicit = ("default", default)
    if explicit:
        # Named by the user: used, or reported, never passed over for another.
        key, path = explicit
        found = _check(path, version, f"{ENV} {key}={path}", looked, search)
        if found:
            return found
        raise InterpreterMissing(
            f"{needs}: {ENV} names an interpreter that cannot be used: {looked[0]}"
        )
    if not version:
        return sys.executable
    if not _VERSION.fullmatch(version):
        raise InterpreterMissing(f"{needs}: Python version must be X.Y, got {version!r}")
    looked.append(f"{ENV} (no entry for {', '.join(keys)})")
    root = pyenv_root(environ)
    candidates = _pyenv_candidates(root, version) if root else []
    for candidate in candidates:
        found = _check(str(candidate), version, f"pyenv {candidate}", looked, search)
        if found:
            return found
    if not candidates:
        where = f"{root}/versions/{version}.*" if root else "no pyenv root found"
        looked.append(f"pyenv ({where}: none)")
    on_path = shutil.which(f"python{version}", path=search)
    if on_path:
        found = _check(on_path, version, f"PATH {on_path}", looked, search)
        if found:
            return found
    else:
        looked.append(f"python{version} on PATH (not found)")
    raise InterpreterMissing(
        f"Python {version} not found for {needs}: looked at {'; '.join(looked)}. "
        f"Install it (pyenv install {version}) or name one: "
        f"{ENV}={version}=/path/to/python{version}"
    )


def parse_setting(text: str) -> tuple[dict[str, str], str | None]:
    """``TOOLPOLICY_PYTHON`` as (key -> path, the bare default path or None)."""
    mapping: dict[str, str] = {}
    default = None
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, path = item.rpartition("=")
        if sep:
            mapping[key.strip()] = path.strip()
        else:
            default = path
    return mapping, default


def pyenv_root(environ: Mapping[str, str] = os.environ) -> Path | None:
    if environ.get("PYENV_ROOT"):
        return Path(environ["PYENV_ROOT"])
    pyenv = shutil.which("pyenv", path=environ.get("PATH", os.defpath))
    if pyenv:
        out = _run([pyenv, "root"], {"HOME": environ.get("HOME", "")})
        if out:
            return Path(out)
    home = environ.get("HOME")
    fallback = Path(home) / ".pyenv" if home else None
    return fallback if fallback and fallback.is_dir() else None


def _pyenv_candidates(root: Path, version: str) -> list[Path]:
    """``versions/X.Y.N/bin/pythonX.Y``, highest N first (pre-releases and builds such as
    ``3.13.0t`` or ``3.9-dev`` are not releases of X.Y and are left out)."""
    found = []
    for entry in (root / "versions").glob(f"{version}.*"):
        match = _PATCH.fullmatch(entry.name)
        exe = entry / "bin" / f"python{version}"
        if match and exe.is_file() and os.access(exe, os.X_OK):
            found.append((int(match.group(3)), exe))
    return [exe for _, exe in sorted(found, reverse=True)]


def _check(path: str, version: str, label: str, looked: list[str], search: str) -> str | None:
    """``path`` (found on ``search`` when it is a bare name) made absolute when it runs and is
    Python ``version`` (any, for ""), else None with what was wrong appended to ``looked``."""
    exe = shutil.which(path, path=search) if os.sep not in path else path
    if not exe or not os.access(exe, os.X_OK):
        looked.append(f"{label} (not an executable)")
        return None
    actual = interpreter_version(os.path.realpath(exe))
    if actual is None:
        looked.append(f"{label} (does not run as Python)")
        return None
    if version and actual != version:
        looked.append(f"{label} (is Python {actual})")
        return None
    return os.path.abspath(exe)


@functools.lru_cache(maxsize=64)
def interpreter_version(exe: str) -> str | None:
    """ "X.Y" of the interpreter at ``exe``, asked once per path."""
    out = _run([exe, "-I", "-S", "-c", _ASK])
    return out if out and _VERSION.fullmatch(out) else None


def _run(argv: list[str], extra: Mapping[str, str] | None = None) -> str | None:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C", **(extra or {})}
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=30, check=False, env=env
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None
