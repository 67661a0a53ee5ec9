from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_toolpolicy.envs.interpreters import InterpreterMissing, find_python, parse_setting
from pytest_toolpolicy.envs.spec import EnvironmentSetupError


def fake_python(path: Path, version: str) -> Path:
    """An executable that answers the version question as Python ``version`` would."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho {version}\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def machine(tmp_path: Path) -> dict[str, str]:
    """A pyenv tree with 3.9.2, 3.9.12 and 3.9.1 (and a 3.9-dev), a bin dir on PATH."""
    root = tmp_path / "pyenv"
    for patch in ("3.9.2", "3.9.12", "3.9.1"):
        fake_python(root / "versions" / patch / "bin" / "python3.9", "3.9")
    fake_python(root / "versions" / "3.9-dev" / "bin" / "python3.9", "3.9")
    fake_python(root / "versions" / "3.7.1" / "bin" / "python3.7", "3.6")  # a liar
    fake_python(tmp_path / "bin" / "python3.8", "3.8")
    fake_python(tmp_path / "bin" / "python3.7", "3.7")
    return {"PYENV_ROOT": str(root), "PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "HOME": "/"}


def test_pyenv_highest_patch_release(machine: dict[str, str]) -> None:
    found = find_python("3.9", environ=machine)
    assert found == f"{machine['PYENV_ROOT']}/versions/3.9.12/bin/python3.9"


def test_path_when_pyenv_has_none(machine: dict[str, str]) -> None:
    assert find_python("3.8", environ=machine).endswith("/bin/python3.8")
    # pyenv's 3.7 answers 3.6: it is passed over, PATH's real 3.7 is used.
    assert find_python("3.7", environ=machine) == machine["PATH"].split(":")[0] + "/python3.7"


def test_pyenv_root_from_the_pyenv_command(tmp_path: Path, machine: dict[str, str]) -> None:
    tools = tmp_path / "tools"
    pyenv = tools / "pyenv"
    tools.mkdir()
    pyenv.write_text(f"#!/bin/sh\necho {machine['PYENV_ROOT']}\n")
    pyenv.chmod(0o755)
    environ = {"PATH": f"{tools}:/usr/bin:/bin", "HOME": str(tmp_path / "nohome")}
    assert "/versions/3.9.12/" in find_python("3.9", environ=environ)
    # No PYENV_ROOT, no pyenv command: ~/.pyenv.
    home = tmp_path / "home"
    home.mkdir()
    (home / ".pyenv").symlink_to(machine["PYENV_ROOT"])
    assert "/versions/3.9.12/" in find_python("3.9", environ={"PATH": "/bin", "HOME": str(home)})


def test_toolpolicy_python_comes_first(tmp_path: Path, machine: dict[str, str]) -> None:
    mine = fake_python(tmp_path / "opt" / "py39", "3.9")
    other = fake_python(tmp_path / "opt" / "py39b", "3.9")
    default = fake_python(tmp_path / "opt" / "py311", "3.11")
    setting = f"acme/calc@2.0={mine}, acme/calc={other}, 3.9={other}, {default}"
    environ = {**machine, "TOOLPOLICY_PYTHON": setting}
    assert find_python("3.9", repo="acme/calc", repo_version="2.0", environ=environ) == str(mine)
    assert find_python("3.9", repo="acme/calc", repo_version="1.0", environ=environ) == str(other)
    assert find_python("3.9", repo="x/y", repo_version="1", environ=environ) == str(other)
    # The bare default serves only specs that name no Python; 3.8 still comes from PATH.
    assert find_python("", repo="x/y", environ=environ) == str(default)
    assert find_python("3.8", repo="x/y", environ=environ).endswith("/bin/python3.8")
    assert find_python("", environ=machine) == sys.executable
    assert parse_setting("a/b@1=p, q") == ({"a/b@1": "p"}, "q")


def test_a_named_interpreter_of_the_wrong_version_is_an_error(
    tmp_path: Path, machine: dict[str, str]
) -> None:
    wrong = fake_python(tmp_path / "opt" / "py38", "3.8")
    environ = {**machine, "TOOLPOLICY_PYTHON": f"3.9={wrong}"}
    with pytest.raises(InterpreterMissing, match=r"3\.9=.*py38 \(is Python 3\.8\)"):
        find_python("3.9", repo="acme/calc", repo_version="1.0", environ=environ)
    environ = {**machine, "TOOLPOLICY_PYTHON": "acme/calc=/bin/false"}
    with pytest.raises(InterpreterMissing, match="does not run as Python"):
        find_python("", repo="acme/calc", environ=environ)


def test_missing_interpreter_says_where_it_looked_and_how_to_fix_it(
    machine: dict[str, str],
) -> None:
    with pytest.raises(InterpreterMissing) as info:
        find_python("3.4", repo="pytest-dev/pytest", repo_version="4.4", environ=machine)
    message = str(info.value)
    assert "Python 3.4 not found for pytest-dev/pytest 4.4" in message
    assert f"{machine['PYENV_ROOT']}/versions/3.4.*" in message
    assert "python3.4 on PATH (not found)" in message
    assert "pyenv install 3.4" in message and "TOOLPOLICY_PYTHON=3.4=" in message
    assert isinstance(info.value, EnvironmentSetupError)


def test_the_real_machines_pyenv() -> None:
    """On this kind of machine pyenv has 3.9 (tests/conftest's CI has the same): found and
    really 3.9."""
    try:
        found = find_python("3.9")
    except InterpreterMissing as exc:
        pytest.skip(str(exc))
    import subprocess

    out = subprocess.run([found, "-c", "import sys; print(sys.version_info[:2])"], text=True,
                         capture_output=True, check=True).stdout  # fmt: skip
    assert out.strip() == "(3, 9)"
