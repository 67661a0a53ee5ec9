"""What the sandboxed build steps print, read as untrusted text.

It is the repository's code talking (setup.py, build backends, pip run by them). A failed
step's error leads with the one line that says why (``checked_output``); uv's dry run at an
instance's base commit is checked line by line before its packages are installed
(``dry_run_packages``); and ``PROBE``, run by the venv's interpreter at the end of the build,
prints its ``sys.path`` and the editable finders' mappings, of which ``repo_paths`` keeps
those in the checkout (``.`` or ``src``): the environment's import paths.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..primitives.sandbox import RunResult
from .layout import TMP, VENV
from .spec import EnvironmentSetupError

_DIST = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+!\-]*")
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
# A line of uv's ``pip install --dry-run`` report: `` + name==version``.
_WOULD_INSTALL = re.compile(r"^ \+ (?P<name>[A-Za-z0-9][A-Za-z0-9._\-]*)==(?P<version>\S+)$")
# Asked of the venv, in the sandbox: its sys.path, and where editable finders map packages.
PROBE = """import ast, glob, json, os, sys, sysconfig
mapped = []
for site in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
    for name in sorted(glob.glob(os.path.join(site, "__editable__*finder.py"))):
        for node in ast.parse(open(name, encoding="utf-8").read()).body:
            targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
            if any(getattr(t, "id", "") == "MAPPING" for t in targets):
                try:
                    mapped += [os.path.dirname(p) for p in ast.literal_eval(node.value).values()]
                except (ValueError, SyntaxError):
                    pass
plugins = []
where = [os.getcwd()] + [p for p in sys.path if p]  # as pytest, run from the checkout, sees them
try:
    from importlib import metadata
    for dist in metadata.distributions(path=where):
        plugins += [[e.name, e.value] for e in dist.entry_points if e.group == "pytest11"]
except ImportError:  # Python before 3.8: what pytest's own autoload used then
    try:
        import pkg_resources
        found = pkg_resources.WorkingSet(where).iter_entry_points("pytest11")
        plugins += [[e.name, e.module_name] for e in found]
    except Exception:
        pass
print(json.dumps({"sys_path": [p for p in sys.path if p], "mapped": mapped, "plugins": plugins}))
"""


def checked_output(what: str, result: RunResult, timeout: float) -> str:
    output = result.stdout.decode("utf-8", errors="replace")
    if result.workspace_over:
        raise EnvironmentSetupError(f"{what}: {result.workspace_over}")
    if result.timed_out:
        raise EnvironmentSetupError(f"{what}: timed out after {timeout:g}s")
    if result.exit_code:
        tail = "\n".join(output.strip().splitlines()[-12:])
        why = f"{what} failed (exit {result.exit_code}): {_cause(output)}"
        raise EnvironmentSetupError(f"{why}\n{tail}")
    return output


def _cause(output: str) -> str:
    """The line of a failed step's output that says why: what a build backend printed last
    inside pip's ``[N lines of output]`` box, else pip's last ERROR line, else the last line."""
    lines = [line.strip() for line in output.splitlines()]
    if "[end of output]" in lines:
        end = len(lines) - 1 - lines[::-1].index("[end of output]")
        box = [line for line in lines[:end] if line][-1:]
        if box and not box[0].endswith("lines of output]"):
            return box[0]
    errors = [line for line in lines if line.startswith("ERROR:")]
    return (errors or [line for line in lines if line] or ["(no output)"])[-1]


def dry_run_packages(output: str, project: Path) -> list[str]:
    """``name==version`` of each package uv's dry run would install (its ``+ name==version``
    lines), the project itself left out. The output is the sandbox's: each line is checked."""
    wanted = []
    own = project.name.lower().replace("_", "-")
    for line in output.splitlines():
        found = _WOULD_INSTALL.match(line)
        if found is None:
            continue
        name, version = found["name"], found["version"]
        if name.lower().replace("_", "-") == own or not _DIST.fullmatch(version):
            continue
        wanted.append(f"{name}=={version}")
    return sorted(set(wanted))


def plugin_modules(probe: str) -> list[str]:
    """The modules of the ``pytest11`` entry points the ``PROBE`` found (pytest's plugins,
    which it would load on its own), each once, in the order found: what grading loads by
    name (``-p MODULE``) with autoloading off, so that entry points a workspace declares count
    for nothing. An entry point naming an object in a module (``mod:attr``) gives its module."""
    try:
        data = json.loads(probe.strip().splitlines()[-1])
        found = data.get("plugins", [])
    except (ValueError, AttributeError, IndexError):
        return []
    modules: list[str] = []
    for entry in found if isinstance(found, list) else []:
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], str)):
            continue
        module = entry[1].partition(":")[0].strip()
        if _MODULE.fullmatch(module) and module not in modules:
            modules.append(module)
    return modules


def repo_paths(probe: str, seen: Path, checkout: Path) -> list[str]:
    """The ``PROBE``'s paths that lie in the checkout (seen by the build at ``seen``: the
    sandbox's /testbed, else the checkout's own path), relative to it; ``.`` (and ``src``
    where the checkout has a package there) when none does."""
    try:
        data = json.loads(probe.strip().splitlines()[-1])
        paths = [*data["sys_path"], *data["mapped"]]
    except (ValueError, KeyError, TypeError, IndexError):
        raise EnvironmentSetupError(f"read sys.path: unexpected output {probe[-300:]!r}") from None
    root = Path(os.path.normpath(seen))
    found: list[str] = []
    for path in paths:
        if not isinstance(path, str) or not os.path.isabs(path):
            continue
        resolved = Path(os.path.normpath(path))
        if resolved != root and root not in resolved.parents:
            continue
        rel = resolved.relative_to(root).as_posix() if resolved != root else "."
        if rel.split("/")[0] not in (VENV, TMP) and rel not in found:
            found.append(rel)
    if found:
        return found
    src = checkout / "src"
    has_src = src.is_dir() and any(src.glob("*/__init__.py"))
    return [".", "src"] if has_src and not src.is_symlink() else ["."]
