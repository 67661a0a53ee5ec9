"""The public API: everything ``pytest_toolpolicy`` exports is there, is the object its home
module defines, and costs nothing until it is asked for."""

from __future__ import annotations

import subprocess
import sys

import pytest_toolpolicy


def test_every_export_resolves_to_its_home_modules_object() -> None:
    import importlib

    for name, module in pytest_toolpolicy._EXPORTS.items():
        home = importlib.import_module(f"pytest_toolpolicy.{module}")
        assert getattr(pytest_toolpolicy, name) is getattr(home, name), name
    assert set(pytest_toolpolicy.__all__) == {"__version__", *pytest_toolpolicy._EXPORTS}
    assert set(dir(pytest_toolpolicy)) >= set(pytest_toolpolicy._EXPORTS)


def test_importing_the_package_imports_none_of_the_api() -> None:
    code = (
        "import sys, pytest_toolpolicy, pytest_toolpolicy.plugin;"
        "print(sorted(m for m in sys.modules if m.startswith('pytest_toolpolicy.')"
        " and m.split('.')[1] in ('policy', 'current', 'models', 'primitives', 'bench')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        _ = pytest_toolpolicy.NoSuchThing  # type: ignore[attr-defined]
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("no AttributeError")
