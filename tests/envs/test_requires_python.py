"""The Python a checkout declares (``requires_python.py``), for versions the specs do not list."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from pytest_toolpolicy.envs.requires_python import choose, declared, installed_versions

HERE = f"{sys.version_info[0]}.{sys.version_info[1]}"


def files(**texts: str) -> Callable[[str], str | None]:
    return lambda rel: texts.get(rel.replace(".", "_"))


@pytest.mark.parametrize(
    ("texts", "spec"),
    [
        ({"pyproject_toml": '[project]\nname = "x"\nrequires-python = ">=3.10"\n'}, ">=3.10"),
        ({"setup_cfg": "[options]\npython_requires = >=3.6, <4\n"}, ">=3.6,<4"),
        ({"setup_py": "setup(name='x',\n      python_requires='>=3.8')\n"}, ">=3.8"),
        # pyproject without the key: setup.cfg still says
        (
            {
                "pyproject_toml": "[build-system]\nrequires = []\n",
                "setup_cfg": "[options]\npython_requires = >=3.7\n",
            },
            ">=3.7",
        ),
    ],
)
def test_what_the_checkout_declares(texts: dict[str, str], spec: str) -> None:
    assert declared(files(**texts)) == SpecifierSet(spec)


@pytest.mark.parametrize(
    "texts",
    [
        {},
        {"pyproject_toml": "not = [toml"},
        {"pyproject_toml": '[project]\nrequires-python = "three"\n'},
        {"setup_cfg": "[options\npython_requires = >=3"},
        {"setup_py": "python_requires=REQUIRES  # computed: not read"},
    ],
)
def test_nothing_declared_or_nothing_readable(texts: dict[str, str]) -> None:
    assert declared(files(**texts)) is None


def test_the_specs_interpreter_stays_where_it_is_admitted() -> None:
    assert choose("3.9", SpecifierSet(">=3.8"), ["3.8", "3.9", "3.10"]) == "3.9"
    assert choose("", SpecifierSet(f">={HERE}"), ["3.8"]) == ""  # the harness's own


def test_else_the_lowest_installed_one_that_is() -> None:
    available = ["3.12", "3.6", "3.10", "3.11", "3.9"]
    assert choose("3.9", SpecifierSet(">=3.10"), available) == "3.10"
    assert choose("", SpecifierSet("<3.7"), available) == "3.6"
    assert choose("3.9", SpecifierSet(">=3.14"), available) is None


def test_installed_versions_are_pyenv_releases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("3.9.18", "3.10.14", "3.10.2", "3.13.0t", "3.12-dev", "2.7.18"):
        (tmp_path / "versions" / name / "bin").mkdir(parents=True)
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    assert installed_versions() == ["2.7", "3.9", "3.10"]
