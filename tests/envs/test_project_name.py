"""The checkout's own name, read from its files and never constrained in its install, however
it arrives in the resolution (pluggy's testing extra brings pytest, which brings pluggy)."""

from __future__ import annotations

from pytest_toolpolicy.envs.constraints import install_constraints
from pytest_toolpolicy.envs.project_name import project_names

# What `uv pip compile` resolved for pluggy's `.[testing]` as of a day after 1.7.0's release, the
# project's own requirements read from pip's report (so no line names the project itself).
PLUGGY_TESTING = """\
iniconfig==2.1.0
    # via pytest
packaging==25.0
    # via pytest
pluggy==1.7.0
    # via pytest
pytest==8.4.2
    # via -r /testbed/tmp/project-report-0.in
"""


def test_the_name_from_each_kind_of_file() -> None:
    files = {
        "pyproject.toml": '[project]\nname = "pluggy"\n',
        "setup.cfg": "[metadata]\nname = pluggy-cfg\n",
        "setup.py": "from setuptools import setup\nsetup(name='pluggy-py', version='1')\n",
    }
    assert project_names(files.get, "pytest-dev/pluggy") == {
        "pluggy", "pluggy-cfg", "pluggy-py",
    }  # fmt: skip
    assert project_names({}.get, "acme/lib") == {"lib"}  # the repository's name, at least
    broken = {"pyproject.toml": "[project\n", "setup.py": "setup(name=NAME)\n"}
    assert project_names(broken.get, "") == set()


def test_the_project_is_dropped_however_it_arrived() -> None:
    own = project_names({"pyproject.toml": '[project]\nname = "pluggy"\n'}.get, "pytest-dev/pluggy")
    kept = install_constraints(PLUGGY_TESTING, own)
    assert "pluggy==" not in kept
    assert kept.splitlines() == ["iniconfig==2.1.0", "packaging==25.0", "pytest==8.4.2"]
    # Without the name, nothing in the resolution says pluggy is the project.
    assert "pluggy==1.7.0" in install_constraints(PLUGGY_TESTING)
