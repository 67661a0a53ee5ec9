"""Which spec commands grading's own-runner launcher runs in the shell's place, and how."""

from __future__ import annotations

import pytest

from pytest_toolpolicy.envs.spec import listed_versions, spec_for
from pytest_toolpolicy.grading.own_command import Invocation, Unlaunchable, invocation


@pytest.mark.parametrize(
    ("repo", "script"), [("django/django", "./tests/runtests.py"), ("sympy/sympy", "bin/test")]
)
def test_every_shipped_command_of_an_own_runner(repo: str, script: str) -> None:
    for version in sorted(listed_versions(repo)):
        spec = spec_for(repo, version)
        call = invocation(spec.test_cmd, ["x"])
        assert (call.chdir, call.script) == (".", script), version
        assert call.args == (*spec.test_cmd.split()[1:], "x")


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cd tests && python runtests.py", Invocation("tests", "runtests.py", ("a.b",))),
        ("python3.9 bin/test -C", Invocation(".", "bin/test", ("-C", "a.b"))),
        ("python bin/test", Invocation(".", "bin/test", ("a.b",))),
        ("tests/runtests.py --settings=test_sqlite", Invocation(".", "tests/runtests.py", ("--settings=test_sqlite", "a.b"))),
    ],
)  # fmt: skip
def test_the_forms_it_takes_over(command: str, expected: Invocation) -> None:
    assert invocation(command, ["a.b"]) == expected


def test_directives_go_through_as_they_are() -> None:
    """They are quoted for no shell: what the instance names is what the runner gets."""
    call = invocation("bin/test", ["sympy/a b.py", "-k", "$x;"])
    assert call.args == ("sympy/a b.py", "-k", "$x;")


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("pytest -rA", "'pytest' is a program on PATH, not a script"),
        ("tox --current-env -epy39 -v --", "'tox' is a program on PATH, not a script"),
        ("python -m pytest", "the interpreter option '-m'"),
        ("bin/test; rm -rf /", "'bin/test;' is more than a plain word"),
        ("bin/test | tee log", "'|' is more than a plain word"),
        ("bin/test $ARGS", "'$ARGS' is more than a plain word"),
        ("bin/test 'a b'", '"\'a" is more than a plain word'),
        ("bin/test *.py", "'*.py' is more than a plain word"),
        ("cd .. && bin/test", "the directory '..' is not a path in the repository"),
        ("cd tests bin/test", "a `cd` that is not `cd DIR && ...`"),
        ("/usr/bin/env bin/test", "the script '/usr/bin/env' is not a path in the repository"),
        ("python ../runtests.py", "the script '../runtests.py' is not a path in the repository"),
        ("python", "no script"),
    ],
)
def test_what_it_refuses_says_why(command: str, why: str) -> None:
    with pytest.raises(Unlaunchable) as refused:
        invocation(command, [])
    assert str(refused.value) == (
        f"grading's launcher cannot run the test command {command!r} ({why}); it takes over "
        "[cd DIR &&] [python] SCRIPT ARGS..., SCRIPT a path in the repository"
    )
