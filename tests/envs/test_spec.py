from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from pytest_toolpolicy.envs.spec import (
    SPECS_ENV,
    EnvironmentSetupError,
    EnvSpec,
    EnvSpecError,
    spec_for,
)


@pytest.fixture(autouse=True)
def no_user_specs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SPECS_ENV, raising=False)


def test_shipped_specs_are_swebenchs() -> None:
    old = spec_for("pytest-dev/pytest", "5.4")
    assert old.python == "3.9" and old.install == "python -m pip install -e ."
    assert old.pip_packages == (
        "py==1.11.0",
        "packaging==23.1",
        "attrs==23.1.0",
        "more-itertools==10.1.0",
        "pluggy==0.13.1",
    )
    assert old.log_parser == "pytest" and old.test_cmd == "pytest -rA"
    assert "swebench 4.x" in old.source and "pytest-dev/pytest 5.4" in old.source
    assert spec_for("pytest-dev/pytest", "6.3").pre_install == ("sed -i 's/>=>=/>=/' setup.cfg",)
    assert "exceptiongroup==1.1.3" in spec_for("pytest-dev/pytest", "8.4").pip_packages
    assert (
        spec_for("pytest-dev/pytest", "5.1").pip_packages
        == spec_for("pytest-dev/pytest", "5.0").pip_packages
    )
    flask = spec_for("pallets/flask", "2.1")
    assert flask.python == "3.10" and "Werkzeug==2.3.7" in flask.pip_packages
    assert flask.requirements[0] == "requirements/tests.txt" and flask.fallback_packages == (
        "pytest",
    )
    assert spec_for("pallets/flask", "3.0").python == "3.11"
    requests = spec_for("psf/requests", "2.0")
    assert (requests.python, requests.install) == ("3.9", "python -m pip install .")
    assert (requests.pip_packages, requests.log_parser) == (("pytest",), "pytest_options")


def test_any_other_repo_gets_the_default() -> None:
    spec = spec_for("acme/calc", "1.0")
    assert (spec.python, spec.pip_packages) == ("", ("pytest",))
    assert spec.install == "python -m pip install -e ." and spec.source.endswith("default")
    # An unlisted version of a listed repository: that repository's defaults.
    assert spec_for("pytest-dev/pytest", "3.0").python == "3.9"


def test_key_covers_what_changes_the_build_only() -> None:
    spec = spec_for("pytest-dev/pytest", "5.4")
    assert spec.key() == spec_for("pytest-dev/pytest", "5.4").key()
    same = dataclasses.replace(spec, test_cmd="pytest", log_parser="pytest_options", source="x")
    assert same.key() == spec.key()
    changes: list[tuple[str, Any]] = [
        ("python", "3.10"),
        ("pip_packages", ("py==1.10.0",)),
        ("requirements", ("r.txt",)),
        ("pre_install", ("true",)),
        ("install", "python -m pip install ."),
        ("repo", "other/pytest"),
    ]
    for field, value in changes:
        assert dataclasses.replace(spec, **{field: value}).key() != spec.key(), field


def test_resolved_for_a_checkout() -> None:
    flask = spec_for("pallets/flask", "2.3")
    has = {"requirements/tests.txt", "pyproject.toml"}
    resolved = flask.resolved(has.__contains__)
    assert resolved.requirements == ("requirements/tests.txt",)
    assert "pytest" not in resolved.pip_packages
    bare = flask.resolved({"setup.py"}.__contains__)
    assert bare.requirements == () and bare.pip_packages[-1] == "pytest"
    assert bare.install == "python -m pip install -e ."
    # No packaging at all: nothing to install, the tests run from the checkout.
    plain = spec_for("acme/calc", "1.0").resolved(lambda rel: False)
    assert plain.install == "" and plain.pip_packages == ("pytest",)
    custom = EnvSpec("a/b", "1", install="make install")
    assert custom.resolved(lambda rel: False).install == "make install"


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_user_file_overrides_and_adds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = write(
        tmp_path / "mine.toml",
        """
source = "my team's pins"
[default]
pip_packages = ["pytest==8.0.0"]

[repo."pytest-dev/pytest"]
test_cmd = "pytest -rA -q"

[[repo."pytest-dev/pytest".spec]]
versions = ["5.4"]
pip_packages = ["pluggy==0.13.0"]

[repo."acme/calc"]
python = "3.11"

[[repo."acme/calc".spec]]
versions = ["2.0"]
install = ""
""",
    )
    monkeypatch.setenv(SPECS_ENV, str(user))
    old = spec_for("pytest-dev/pytest", "5.4")
    assert old.pip_packages == ("pluggy==0.13.0",) and old.python == "3.9"
    assert old.test_cmd == "pytest -rA -q"
    assert "mine.toml" in old.source and "my team's pins" in old.source
    other = spec_for("pytest-dev/pytest", "6.0")  # the shipped entry wins over a repo default
    assert "toml==0.10.2" in other.pip_packages and other.test_cmd == "pytest -rA -q"
    assert "with overrides from user file" in other.source
    calc = spec_for("acme/calc", "1.0")
    assert (calc.python, calc.pip_packages) == ("3.11", ("pytest==8.0.0",))
    assert spec_for("acme/calc", "2.0").install == ""
    assert spec_for("acme/calc", "2.0", user_file=tmp_path / "mine.toml") == spec_for(
        "acme/calc", "2.0"
    )
    monkeypatch.delenv(SPECS_ENV)
    assert spec_for("acme/calc", "2.0", user_file=user).install == ""
    assert spec_for("acme/calc", "2.0").install == "python -m pip install -e ."


@pytest.mark.parametrize(
    "text, where",
    [
        ("[default\npython = 1", "not valid TOML"),
        ("[default]\npyhton = '3.9'", "default.pyhton: unknown key"),
        ("[default]\npython = 3.9", "default.python: expected a string, got float"),
        ("[default]\npython = '3'", 'default.python: expected "X.Y"'),
        ("[default]\nlog_parser = 'junit'", "default.log_parser: expected one of"),
        ('[repo."a/b"]\npip_packages = "pytest"', 'repo."a/b".pip_packages: expected a list'),
        ('[repo."nope"]\npython = "3.9"', 'repo."nope": not a repository name'),
        ('[[repo."a/b".spec]]\npython = "3.9"', 'repo."a/b".spec[0].versions: expected'),
        (
            '[[repo."a/b".spec]]\nversions = ["1"]\n[[repo."a/b".spec]]\nversions = ["1"]',
            "version '1' is listed twice",
        ),
        ("specs = 1", "specs: unknown key"),
    ],
)
def test_a_bad_user_file_names_the_file_and_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, where: str
) -> None:
    user = write(tmp_path / "bad.toml", text)
    monkeypatch.setenv(SPECS_ENV, str(user))
    with pytest.raises(EnvSpecError, match="bad.toml") as info:
        spec_for("a/b", "1")
    assert where in str(info.value)
    assert isinstance(info.value, EnvironmentSetupError)  # an infrastructure error to callers


def test_a_missing_user_file(tmp_path: Path) -> None:
    with pytest.raises(EnvSpecError, match=r"nowhere\.toml: cannot read it"):
        spec_for("a/b", "1", user_file=tmp_path / "nowhere.toml")


def test_has_spec(tmp_path: Path) -> None:
    from pytest_toolpolicy.envs.spec import has_spec

    assert has_spec("pytest-dev/pytest", "5.4") and has_spec("psf/requests", "2.0")
    assert not has_spec("pytest-dev/pytest", "3.0")  # a version SWE-bench does not list
    assert not has_spec("acme/calc", "1.0")
    user = write(tmp_path / "mine.toml", '[repo."acme/calc"]\npython = "3.11"\n')
    assert has_spec("acme/calc", "1.0", user) and not has_spec("acme/other", "1.0", user)
    everything = write(tmp_path / "all.toml", "[default]\npip_packages = []\n")
    assert has_spec("acme/other", "1.0", everything)
