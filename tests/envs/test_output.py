"""What the build's probe reads of a venv: here, the pytest plugins it installed, which
grading loads by name with autoloading off."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pytest_toolpolicy.envs.output import PROBE, plugin_modules

from ..grading.test_grade_pytest_versions import pyenv_python


def probe_line(plugins: object) -> str:
    return "noise before\n" + json.dumps({"sys_path": [], "mapped": [], "plugins": plugins})


def test_the_plugins_modules_each_once() -> None:
    found = [
        ["xdist", "xdist.plugin"],
        ["xdist.looponfail", "xdist.looponfail"],
        ["hypothesis", "_hypothesis_pytestplugin"],
        ["cov", "pytest_cov.plugin:CovPlugin"],  # an object in a module: the module
        ["again", "xdist.plugin"],
        ["odd", "os; import sys"],  # not a module name: left out
        "not an entry",
    ]
    assert plugin_modules(probe_line(found)) == [
        "xdist.plugin",
        "xdist.looponfail",
        "_hypothesis_pytestplugin",
        "pytest_cov.plugin",
    ]
    assert plugin_modules("not json") == []
    assert plugin_modules(probe_line("nope")) == []


@pytest.mark.parametrize("minor", [None, "3.7"], ids=["harness", "python-3.7"])
def test_the_probe_reads_a_real_interpreter(minor: str | None) -> None:
    """importlib.metadata where there is one, pkg_resources before 3.8 (pytest's own way then)."""
    python = sys.executable if minor is None else pyenv_python(minor)
    if python is None:
        pytest.skip(f"no Python {minor}")
    out = subprocess.run([python, "-I", "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    modules = plugin_modules(out.stdout)
    if minor is None:  # the harness's venv has xdist and this package's own plugin
        assert "xdist.plugin" in modules and "pytest_toolpolicy.plugin" in modules
    else:
        assert isinstance(json.loads(out.stdout.splitlines()[-1])["plugins"], list)
