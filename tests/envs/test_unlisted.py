"""A spec fitted to a checkout of a version the specs do not list (``unlisted.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_toolpolicy.envs import unlisted
from pytest_toolpolicy.envs.interpreters import InterpreterMissing
from pytest_toolpolicy.envs.spec import EnvSpec, spec_for

PYPROJECT = """\
[project]
name = "pytest"
requires-python = ">=3.10"
[project.optional-dependencies]
dev = ["attrs>=23.1", "hypothesis>=6.75"]
"""


@pytest.fixture(autouse=True)
def pyenv(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(unlisted, "installed_versions", lambda: ["3.8", "3.9", "3.10", "3.11"])


def checkout(tmp_path: Path, **files: str) -> Path:
    for name, text in files.items():
        (tmp_path / name.replace("_", ".", 1)).write_text(text)
    return tmp_path


def test_pytest_9_gets_python_3_10_and_its_dev_extra(tmp_path: Path) -> None:
    spec = spec_for("pytest-dev/pytest", "9.2")
    assert (spec.python, spec.install) == ("3.9", "python -m pip install -e .")
    fitted = unlisted.fit_to_checkout(spec, checkout(tmp_path, pyproject_toml=PYPROJECT))
    assert (fitted.python, fitted.install) == ("3.10", "python -m pip install -e .[dev]")
    assert fitted.substitutions[-2:] == (
        "python 3.9 -> 3.10: the checkout requires >=3.10",
        "install -e .[dev]: the checkout's own test dependencies",
    )


def test_a_listed_version_mined_gets_the_test_extra_alone(tmp_path: Path) -> None:
    spec = spec_for("pytest-dev/pytest", "7.2")  # SWE-bench's table: no hypothesis, no xmlschema
    fitted = unlisted.fit_to_checkout(
        spec, checkout(tmp_path, pyproject_toml=PYPROJECT), python=False
    )
    assert fitted.python == spec.python
    assert fitted.install == "python -m pip install -e .[dev]"
    assert fitted.substitutions[-1] == "install -e .[dev]: the checkout's own test dependencies"


def test_a_setup_cfg_extra_and_a_python_the_spec_already_fits(tmp_path: Path) -> None:
    cfg = "[options]\npython_requires = >=3.6\n[options.extras_require]\ndocs = sphinx\ntesting = pytest\n"
    spec = EnvSpec("acme/calc", "1.0", python="3.9", install="pip install -e .")
    fitted = unlisted.fit_to_checkout(spec, checkout(tmp_path, setup_cfg=cfg))
    assert (fitted.python, fitted.install) == ("3.9", "pip install -e .[testing]")


def test_an_install_that_is_not_plain_is_left_as_it_is(tmp_path: Path) -> None:
    spec = EnvSpec("acme/calc", "1.0", python="3.10", install="python setup.py develop")
    fitted = unlisted.fit_to_checkout(spec, checkout(tmp_path, pyproject_toml=PYPROJECT))
    assert fitted == spec


def test_a_python_nothing_here_satisfies(tmp_path: Path) -> None:
    text = '[project]\nname = "x"\nrequires-python = ">=3.14"\n'
    spec = EnvSpec("acme/calc", "1.0", python="3.9")
    with pytest.raises(InterpreterMissing, match="declares Python >=3.14, and no installed"):
        unlisted.fit_to_checkout(spec, checkout(tmp_path, pyproject_toml=text))


def test_a_checkout_that_declares_nothing(tmp_path: Path) -> None:
    spec = EnvSpec("acme/calc", "1.0", python="3.9", install="pip install -e .")
    assert unlisted.fit_to_checkout(spec, tmp_path) == spec
