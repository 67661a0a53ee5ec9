"""The standard library's own module where a script of the same name shadows it.

An execnet socket server (a remote pytest-xdist worker) runs ``execnet/script/socketserver.py``,
so its directory is first on ``sys.path`` and ``import socketserver`` there finds that script:
``http.server`` (the bridge's base) then fails on ``socketserver.TCPServer``. Loading the
module from the interpreter's own library directory first puts the real one in its place.
"""

from __future__ import annotations

import importlib.util
import sys
import sysconfig
from pathlib import Path


def ensure_stdlib(name: str) -> None:
    """Make ``sys.modules[name]`` the standard library's ``name`` (a top-level ``.py`` module)."""
    library = Path(sysconfig.get_paths()["stdlib"]).resolve()
    found = sys.modules.get(name)
    where = getattr(found, "__file__", None)
    if found is not None and where and Path(where).resolve().parent == library:
        return
    spec = importlib.util.spec_from_file_location(name, library / f"{name}.py")
    if spec is None or spec.loader is None:  # pragma: no cover - a Python without its library
        raise ImportError(f"the standard library's {name} is not at {library}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
