from __future__ import annotations

import dataclasses
import re
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


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("acme__calc.toml", '[repo."acme/other"]\npython = "3.9"\n', "repo.'acme/other'"),
        ("acme__calc.toml", '[default]\npython = "3.9"\n', "default"),
        ("default.toml", '[repo."acme/calc"]\npython = "3.9"\n', "repo.'acme/calc'"),
    ],
)
def test_a_shipped_file_sets_only_its_own_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str, where: str
) -> None:
    from pytest_toolpolicy.envs import spec

    for shipped in spec.SHIPPED.glob("*.toml"):
        write(tmp_path / shipped.name, shipped.read_text(encoding="utf-8"))
    write(tmp_path / name, (tmp_path / name).read_text() + text if name == "default.toml" else text)
    monkeypatch.setattr(spec, "SHIPPED", tmp_path)
    with pytest.raises(EnvSpecError, match=rf"{name}: {re.escape(where)}: not this file's to set"):
        spec_for("acme/calc", "1")


def test_every_shipped_repository_has_its_file() -> None:
    from pytest_toolpolicy.envs.spec import SHIPPED, shipped_repos

    files = {f.stem for f in SHIPPED.glob("*.toml")} - {"default"}
    assert {r.replace("/", "__") for r in shipped_repos()} == files
    assert spec_for("pallets/flask", "2.0").source.startswith("specs/pallets__flask.toml")


# Every version key SWE-bench 4.1 lists for the twelve SWE-bench Verified repositories, by the
# Python its spec runs (SWE-bench's, but 3.5: no interpreter here, 3.6 in its place), and the
# log parser SWE-bench's MAP_REPO_TO_PARSER_PY gives the repository.
COVERED: dict[str, tuple[str, list[tuple[str, list[str]]]]] = {
    "astropy/astropy": (
        "pytest_v2",
        [
            ("3.6", ["0.1", "0.2", "0.3", "0.4", "1.1", "1.2", "1.3"]),
            ("3.9", ["3.0", "3.1", "3.2", "4.1", "4.2", "4.3", "5.0", "5.1", "5.2"]),
            ("3.10", ["v5.3"]),
        ],
    ),
    "django/django": (
        "django",
        [
            ("3.6", ["1.4", "1.5", "1.6", "1.7", "1.8", "1.9", "1.10", "1.11", "2.0", "2.1"]),
            ("3.6", ["2.2", "3.0", "3.1", "3.2"]),
            ("3.8", ["4.0"]),
            ("3.9", ["4.1", "4.2"]),
            ("3.11", ["5.0", "5.1", "5.2"]),
        ],
    ),
    "matplotlib/matplotlib": (
        "matplotlib",
        [
            ("3.6", ["1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "2.0", "2.1", "2.2"]),
            ("3.7", ["3.0"]),
            ("3.8", ["3.1", "3.2", "3.3", "3.4"]),
            ("3.11", ["3.5", "3.6", "3.7", "3.8", "3.9"]),
        ],
    ),
    "mwaskom/seaborn": ("seaborn", [("3.9", ["0.11", "0.12", "0.13", "0.14"])]),
    "pallets/flask": (
        "pytest",
        [("3.9", ["2.0"]), ("3.10", ["2.1"]), ("3.11", ["2.2", "2.3", "3.0", "3.1"])],
    ),
    "psf/requests": (
        "pytest_options",
        [
            ("3.9", ["0.7", "0.8", "0.9", "0.11", "0.13", "0.14", "1.1", "1.2", "2.0", "2.2"]),
            ("3.9", ["2.3", "2.4", "2.5", "2.7", "2.8", "2.9", "2.10", "2.11", "2.12", "2.17"]),
            ("3.9", ["2.18", "2.19", "2.22", "2.26", "2.25", "2.27", "2.31", "3.0"]),
        ],
    ),
    "pydata/xarray": (
        "pytest",
        [("3.10", ["0.12", "0.18", "0.19", "0.20", "2022.03", "2022.06", "2022.09"])]
        + [("3.10", ["2023.07", "2024.05"])],
    ),
    "pylint-dev/pylint": (
        "pytest_options",
        [
            ("3.9", ["2.8", "2.9", "2.10", "2.11", "2.13", "2.14", "2.15", "2.16", "2.17"]),
            ("3.9", ["3.0", "3.1", "3.2", "3.3", "4.0"]),
        ],
    ),
    "pytest-dev/pytest": (
        "pytest",
        [
            ("3.9", ["4.4", "4.5", "4.6", "5.0", "5.1", "5.2", "5.3", "5.4", "6.0", "6.2"]),
            ("3.9", ["6.3", "7.0", "7.1", "7.2", "7.4", "8.0", "8.1", "8.2", "8.3", "8.4"]),
        ],
    ),
    "scikit-learn/scikit-learn": (
        "pytest_v2",
        [("3.6", ["0.20", "0.21", "0.22"]), ("3.9", ["1.3", "1.4", "1.5", "1.6"])],
    ),
    "sphinx-doc/sphinx": (
        "pytest_v2",
        [
            ("3.9", ["1.5", "1.6", "1.7", "1.8", "2.0", "2.1", "2.2", "2.3", "2.4", "3.0"]),
            ("3.9", ["3.1", "3.2", "3.3", "3.4", "3.5", "4.0", "4.1", "4.2", "4.3", "4.4"]),
            ("3.9", ["4.5", "5.0", "5.1", "5.2", "5.3", "6.0", "6.2", "7.0", "7.1", "7.2"]),
            ("3.9", ["7.3", "7.4"]),
            ("3.10", ["8.0", "8.1"]),
        ],
    ),
    "sympy/sympy": (
        "sympy",
        [
            ("3.9", ["0.7", "1.0", "1.1", "1.2", "1.4", "1.5", "1.6", "1.7", "1.8", "1.9"]),
            ("3.9", ["1.10", "1.11", "1.12", "1.13", "1.14"]),
        ],
    ),
}
# The repositories whose tests SWE-bench runs with their own runner, and that runner's files.
RUNNERS = {
    "django/django": (
        "./tests/runtests.py",
        {"tests/runtests.py", "tests/test_sqlite.py", "django/test/runner.py"},
    ),
    "sympy/sympy": (
        "bin/test",
        {"bin/test", "sympy/utilities/runtests.py", "sympy/testing/runtests.py"},
    ),
    "sphinx-doc/sphinx": ("tox", {"tox.ini"}),
}
COVERED_PAIRS = [
    (repo, version, python)
    for repo, (_, groups) in COVERED.items()
    for python, versions in groups
    for version in versions
]


def test_every_covered_pair_is_listed_once() -> None:
    pairs = [(repo, version) for repo, version, _ in COVERED_PAIRS]
    assert len(pairs) == len(set(pairs)) == 193
    from pytest_toolpolicy.envs.spec import shipped_repos

    assert set(COVERED) == set(shipped_repos())


@pytest.mark.parametrize(("repo", "version", "python"), COVERED_PAIRS)
def test_every_covered_version_has_its_own_spec(repo: str, version: str, python: str) -> None:
    from pytest_toolpolicy.envs.spec import LOG_PARSERS, has_spec

    assert has_spec(repo, version)
    spec = spec_for(repo, version)
    assert (spec.python, spec.log_parser) == (python, COVERED[repo][0])
    assert spec.log_parser in LOG_PARSERS and spec.test_cmd and spec.install
    assert f"specs/{repo.replace('/', '__')}.toml" in spec.source
    assert spec.source.endswith(f"{repo} {version}")  # its own entry, not a repository default
    # Python 3.6's venv pip (18.1) ignores Requires-Python: a newer one goes in first; pylint
    # 2.15's back-end has no PEP 660 hook, which pip 25.3 requires of an editable install.
    # astropy 3.x's setup.py needs the venv's astropy_helpers, which only pip's `setup.py
    # develop` (gone in 25.3) sees.
    legacy = (repo, version) in {("pylint-dev/pylint", "2.15")} | {
        ("astropy/astropy", v) for v in ("3.0", "3.1", "3.2")
    }
    older = ("pip<25.3",) if legacy else ()
    assert spec.pip_first == (("pip==21.3.1",) if python == "3.6" else older)
    program, files = RUNNERS.get(repo, ("pytest", set()))
    assert spec.test_cmd.split()[0] == program and set(spec.runner_files) == files
    for name, value in spec.test_env:
        assert re.fullmatch(r"[A-Z_]+", name) and value
    for command in spec.pre_install:
        assert "apt-get" not in command and "/testbed" not in command  # apt is its own field
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9.+\-]+", p) for p in spec.apt)
    assert spec.key() == spec_for(repo, version).key()


# "WHAT -> NEW: why", WHAT being the replaced pin ("numpy==1.19.2", "python==3.5"), an unpinned
# requirement ("pylibmc"), or a git submodule ("astropy-helpers@submodule").
_SUBSTITUTION = re.compile(
    r"(?P<name>[A-Za-z0-9][A-Za-z0-9._\-]*)(?:(?:==|@)(?P<old>\S+))? -> (?P<new>\S+): \S.*"
)


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@pytest.mark.parametrize(("repo", "version", "python"), COVERED_PAIRS)
def test_every_substitution_names_what_it_replaced(repo: str, version: str, python: str) -> None:
    spec = spec_for(repo, version)
    pins = {}
    for requirement in (*spec.pip_first, *spec.pip_packages):
        name, _, pinned = requirement.partition("==")
        pins[_normal(name)] = pinned
    for text in spec.substitutions:
        found = _SUBSTITUTION.fullmatch(text)
        assert found, f"{repo} {version}: {text!r} is not 'WHAT -> NEW: why'"
        name, old, new = _normal(found["name"]), found["old"], found["new"]
        if name == "python":
            assert (old, spec.python) == ("3.5", new) and python == new
            continue
        # The spec pins the replacement, and no longer what it replaced.
        assert pins.get(name) == new, f"{repo} {version}: {text!r} but pins {pins.get(name)!r}"
        assert old != new


def test_substitutions_where_swebenchs_pins_cannot_be_had_here() -> None:
    sklearn = spec_for("scikit-learn/scikit-learn", "1.3")
    assert {"numpy==1.19.3", "scipy==1.5.4"} <= set(sklearn.pip_packages)
    assert any(
        s.startswith("numpy==1.19.2 -> 1.19.3: no cp39 wheel") for s in sklearn.substitutions
    )
    # 0.20-0.22 keep SWE-bench's pins (Python 3.6 has wheels of both); only the unpinned
    # pandas, whose old releases' metadata uv rejects, is pinned.
    old = spec_for("scikit-learn/scikit-learn", "0.22")
    assert {"numpy==1.19.2", "scipy==1.5.2"} <= set(old.pip_packages)
    assert [s.split(" -> ")[0] for s in old.substitutions] == ["pandas"]
    assert spec_for("django/django", "2.2").substitutions[0].startswith("python==3.5 -> 3.6")
    # astropy_helpers: the PyPI release in place of the submodule, its bootstrapper turned off.
    astropy = spec_for("astropy/astropy", "1.3")
    assert "astropy-helpers==3.1" in astropy.pip_packages and not astropy.submodules
    assert "auto_use = False" in astropy.pre_install[0]


def test_system_needs_and_test_variables_are_swebenchs() -> None:
    assert spec_for("sphinx-doc/sphinx", "7.2").apt == ("graphviz",)
    assert spec_for("sphinx-doc/sphinx", "7.1").apt == ()
    assert spec_for("pylint-dev/pylint", "2.8").apt == ("libenchant-2-dev", "hunspell-en-us")
    django = spec_for("django/django", "3.0")
    assert dict(django.test_env)["LC_ALL"] == "en_US.UTF-8" and "locales-all" in django.apt
    assert spec_for("django/django", "1.9").test_cmd == "./tests/runtests.py --verbosity 2"
    sympy = spec_for("sympy/sympy", "1.1")
    assert dict(sympy.test_env) == {"PYTHONWARNINGS": "ignore::UserWarning,ignore::SyntaxWarning"}
    assert sympy.test_cmd == "bin/test -C --verbose"
    assert "libfreetype-dev" in spec_for("matplotlib/matplotlib", "3.0").apt
    assert spec_for("pydata/xarray", "0.12").exclude_newer == "2023-09-01"
    assert spec_for("mwaskom/seaborn", "0.12").install == "python -m pip install -e .[dev]"
