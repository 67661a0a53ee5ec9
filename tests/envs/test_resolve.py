"""``toolpolicy envs resolve``: what is asked of uv per spec, how its answers are read, the
lines and table printed — with a fake runner — and one real ``uv pip compile``, in the
sandbox without the network, of a find-links directory of wheels made here (``--no-index``)."""

from __future__ import annotations

import dataclasses
import sys
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_toolpolicy.envs.resolve import (
    Completed,
    Outcome,
    Status,
    compile_argv,
    format_line,
    format_table,
    plan_for,
    resolve_spec,
    sandboxed,
    spec_versions,
    uv_reason,
    wheels_missing,
)
from pytest_toolpolicy.envs.spec import SPECS_ENV, EnvSpec, spec_for
from pytest_toolpolicy.envs.venvs import uv_binary

# What uv 0.9 prints (NO_COLOR, not a terminal) for a pin with no wheel for the interpreter.
NO_WHEEL = """\
error: No solution found when resolving dependencies
  cause: Because maxminddb==1.5.1 has no usable wheels and you require maxminddb==1.5.1, \
we can conclude that your requirements are unsatisfiable.

hint: Wheels are required for `maxminddb` because building from source is disabled for all \
packages (i.e., with `--no-build`)
"""
NUMPY = (
    "  × No solution found when resolving dependencies:\n"
    "  ╰─▶ Because numpy==1.19.2 has no usable wheels and you require numpy==1.19.2, we can"
    " conclude that your requirements are unsatisfiable.\n"
)


@pytest.fixture(autouse=True)
def no_user_specs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SPECS_ENV, raising=False)


class FakeUv:
    """A runner that answers each call from ``answer(argv)`` and keeps what it was asked."""

    def __init__(self, answer: Callable[[list[str]], Completed]) -> None:
        self.answer = answer
        self.calls: list[list[str]] = []

    def __call__(self, argv: Sequence[str], workdir: Path, interpreter: str) -> Completed:
        assert workdir.is_dir()
        self.calls.append(list(argv))
        return self.answer(list(argv))


def ok(text: str = "") -> Completed:
    return Completed(0, text, "")


def test_plan_of_the_shipped_specs() -> None:
    sklearn = plan_for(spec_for("scikit-learn/scikit-learn", "1.3"))
    assert {"numpy", "scipy", "cython"} <= sklearn.exact
    assert sklearn.cutoff is None and sklearn.cutoff_note.startswith("none: setup_commit")
    assert sklearn.unchecked == ()
    django = plan_for(spec_for("django/django", "1.7"))
    # Pinned here to a release its substitution names: a source build the spec chose.
    assert django.source_ok == {"pylibmc", "maxminddb"}
    assert django.pip_first == ("pip==21.3.1",)
    assert django.unchecked == ("tests/requirements/py3.txt (needs the checkout)",)
    mpl = plan_for(spec_for("matplotlib/matplotlib", "3.5"))
    assert mpl.cutoff == "2023-09-01" and mpl.cutoff_note == "2023-09-01: the spec's"


def test_only_a_substituted_pin_may_build_from_source() -> None:
    spec = EnvSpec(
        repo="o/n",
        version="1",
        pip_packages=("foo==1.1", "bar==2.0", "baz", "qux[x]==3.0; python_version<'4'"),
        substitutions=(
            "foo==1.0 -> 1.1: why",  # the pin is the substitution's: allowed
            "bar -> 2.1: why",  # pinned to another release: not
            "python==3.5 -> 3.6: why",  # not a package the spec pins
            "Qux -> 3.0: why",
        ),
        exclude_newer="created_at",
    )
    plan = plan_for(spec)
    assert plan.source_ok == {"foo", "qux"}
    assert plan.exact == {"foo", "bar", "qux"}
    assert plan.cutoff is None and plan.cutoff_note == "none: created_at, a date per instance"


def test_compile_argv() -> None:
    argv = compile_argv(
        "uv",
        ["--python", "/py/bin/python3.9"],
        ["/w/pins.txt"],
        overrides="/w/overrides.txt",
        constraints="/w/tool-bounds.txt",
        no_binary={"maxminddb"},
        cut_off={"b", "a"},
        cutoff="2023-09-01",
        extra=["--no-index"],
    )
    assert argv == [
        "uv", "pip", "compile", "--quiet", "--no-header", "--python", "/py/bin/python3.9",
        "--no-index", "--only-binary", ":all:", "--no-binary=maxminddb",
        "--override", "/w/overrides.txt", "--constraint", "/w/tool-bounds.txt",
        "--exclude-newer-package=a=2023-09-01", "--exclude-newer-package=b=2023-09-01",
        "/w/pins.txt",
    ]  # fmt: skip
    # No cutoff date: no name is cut off, whatever is listed.
    bare = compile_argv("uv", ["--python-version", "3.6"], ["p"], cut_off={"a"})
    assert bare == [
        "uv", "pip", "compile", "--quiet", "--no-header", "--python-version", "3.6",
        "--only-binary", ":all:", "p",
    ]  # fmt: skip


def test_uv_reason_and_missing_wheels() -> None:
    assert uv_reason(NO_WHEEL) == (
        "No solution found when resolving dependencies: Because maxminddb==1.5.1 has no usable"
        " wheels and you require maxminddb==1.5.1, we can conclude that your requirements are"
        " unsatisfiable."
    )
    assert uv_reason(NUMPY).startswith("No solution found when resolving dependencies: Because")
    warned = "warning: something\nerror: Failed to fetch: `https://pypi.org/simple/x/`\n"
    assert uv_reason(warned) == "Failed to fetch: `https://pypi.org/simple/x/`"
    assert uv_reason("last words\n") == "last words" and uv_reason("") == "(no output)"
    assert wheels_missing(NO_WHEEL) == {"maxminddb"}
    assert wheels_missing(NUMPY) == {"numpy"}
    assert wheels_missing("error: Failed to fetch") == set()


def run_plan(spec: EnvSpec, uv: FakeUv, tmp_path: Path, interpreter: str = "/py") -> Outcome:
    return resolve_spec(
        plan_for(spec), uv, tmp_path, interpreter=interpreter, python=spec.python, uv="uv"
    )


def test_a_pin_without_a_wheel_fails(tmp_path: Path) -> None:
    spec = EnvSpec(repo="o/n", version="1.3", python="3.9", pip_packages=("numpy==1.19.2",))
    uv = FakeUv(lambda argv: Completed(1, "", NUMPY))
    outcome = run_plan(spec, uv, tmp_path)
    assert outcome.status == "failed" and "numpy==1.19.2 has no usable wheels" in outcome.reason
    (argv,) = uv.calls  # not retried from source: no substitution chose that
    assert argv[5:9] == ["--python", "/py", "--only-binary", ":all:"]
    assert not any(a.startswith("--exclude-newer") for a in argv)
    assert (tmp_path / "pins.txt").read_text() == "numpy==1.19.2\n"
    assert argv[argv.index("--override") + 1] == str(tmp_path / "overrides.txt")


def test_a_substituted_sdist_is_resolved_and_built(tmp_path: Path) -> None:
    spec = EnvSpec(
        repo="django/django",
        version="2.2",
        python="3.6",
        pip_first=("pip==21.3.1",),
        pip_packages=("setuptools", "maxminddb==1.5.1"),
        substitutions=("maxminddb -> 1.5.1: the first that builds",),
    )

    def answer(argv: list[str]) -> Completed:
        if argv[2] == "install":
            return ok()
        if "--no-binary=maxminddb" in argv or argv[-1].endswith("pip-first.txt"):
            return ok("maxminddb==1.5.1\n    # via -r pins.txt\nsetuptools==59.6.0\n")
        return Completed(1, "", NO_WHEEL)

    uv = FakeUv(answer)
    outcome = run_plan(spec, uv, tmp_path)
    assert outcome.status == "resolved", outcome
    assert outcome.from_source == ("maxminddb==1.5.1",) and outcome.packages == 2
    first, binary, source, build = uv.calls
    assert first[-1] == str(tmp_path / "pip-first.txt") and "--override" not in first
    assert "--no-binary=maxminddb" not in binary and "--no-binary=maxminddb" in source
    assert build == [
        "uv", "pip", "install", "--quiet", "--no-deps", "--python", "/py",
        "--no-binary=maxminddb", "--target", str(tmp_path / "built"), "maxminddb==1.5.1",
    ]  # fmt: skip


def test_a_failed_source_build_fails(tmp_path: Path) -> None:
    spec = EnvSpec(
        repo="o/n", version="1", python="3.6", pip_packages=("m==1.0",),
        substitutions=("m -> 1.0: why",),
    )  # fmt: skip

    no_wheel = Completed(1, "", NO_WHEEL.replace("maxminddb", "m"))

    def answer(argv: list[str]) -> Completed:
        if argv[2] == "install":
            return Completed(1, "", "error: Failed to build `m==1.0`\n  cause: setup.py failed\n")
        return ok("m==1.0\n") if "--no-binary=m" in argv else no_wheel

    outcome = run_plan(spec, FakeUv(answer), tmp_path)
    assert outcome.status == "failed"
    assert outcome.reason == "source build: Failed to build `m==1.0`: setup.py failed"
    # Without an interpreter of the version, resolved for it but not built: a failure.
    versionless = FakeUv(answer)
    missing = run_plan(spec, versionless, tmp_path, interpreter="")
    assert missing.reason == "no Python 3.6 here to build m==1.0 with"
    assert versionless.calls[0][5:7] == ["--python-version", "3.6"]
    assert [c[2] for c in versionless.calls] == ["compile", "compile"]


def test_the_cutoff_rounds_as_the_build(tmp_path: Path) -> None:
    spec = EnvSpec(
        repo="o/n", version="1", python="3.11", exclude_newer="2023-09-01",
        pip_packages=("lib", "pinned==1.0", "pytest"),
    )  # fmt: skip
    first = (
        "dep==2.0\n    # via lib\nlib==3.0\n    # via -r pins.txt\npinned==1.0\n"
        "    # via -r pins.txt\npluggy==1.5\n    # via pytest\npytest==8.0\n    # via -r pins.txt\n"
    )
    rounds = iter([ok(first), ok(first + "new==1.0\n    # via lib\n"), ok(first)])
    uv = FakeUv(lambda argv: next(rounds))
    outcome = run_plan(spec, uv, tmp_path)
    assert outcome.status == "resolved" and outcome.cutoff == "2023-09-01"
    cut = [sorted(a.split("=")[1] for a in argv if a.startswith("--exclude-newer-package"))
           for argv in uv.calls]  # fmt: skip
    # Neither the exact pin nor the test runner (and what only it needs) is cut off.
    assert cut == [[], ["dep", "lib"], ["dep", "lib", "new"]]
    failing = FakeUv(lambda argv: ok(first) if len(failing.calls) == 1 else Completed(1, "", NUMPY))
    assert run_plan(spec, failing, tmp_path).status == "failed"


def test_pip_first_and_nothing_pinned(tmp_path: Path) -> None:
    spec = EnvSpec(repo="o/n", version="1", python="3.6", pip_first=("pip==99",))
    bad = FakeUv(lambda argv: Completed(1, "", "error: pip==99 does not exist\n"))
    assert run_plan(spec, bad, tmp_path).reason == "pip_first: pip==99 does not exist"
    good = FakeUv(lambda argv: ok("pip==99\n"))
    outcome = run_plan(spec, good, tmp_path)
    assert outcome.status == "resolved" and outcome.packages == 0 and len(good.calls) == 1


def outcome(version: str, status: Status = "resolved", **more: Any) -> Outcome:
    base = Outcome(
        repo="django/django", version=version, python="3.6", interpreter="/py",
        status="resolved", seconds=1.25, packages=3, cutoff_note="none: setup_commit, x",
    )  # fmt: skip
    return dataclasses.replace(base, status=status, **more)


def test_lines_and_table() -> None:
    good = outcome(
        "2.2", from_source=("maxminddb==1.5.1",), unchecked=("a.txt (needs the checkout)",)
    )
    bad = outcome("1.3", "failed", reason="No solution found: Because x", seconds=0.5)
    other = dataclasses.replace(outcome("3.0"), repo="o/n")
    assert format_line(good) == (
        "resolved django/django 2.2  python 3.6  1.2s  3 package(s); from source:"
        " maxminddb==1.5.1; cutoff none: setup_commit, x; not checked: a.txt (needs the checkout)"
    )
    line = "failed   django/django 1.3  python 3.6  0.5s  No solution found: Because x"
    assert format_line(bad) == line
    assert format_table([good, bad, other]).splitlines() == [
        "repo           versions  resolved  failed  seconds  reqs not checked  failing",
        "django/django  2         1         1       1.8      1                 1.3",
        "o/n            1         1         0       1.2      0                 -",
        "3 spec(s): 2 resolved, 1 failed",
    ]


def test_versions_in_order() -> None:
    versions = spec_versions("django/django")
    assert versions[:3] == ["1.4", "1.5", "1.6"] and versions[-1] == "5.2"
    assert versions.index("1.10") == versions.index("1.9") + 1
    assert spec_versions("nobody/nothing") == []


def wheel(directory: Path, name: str, version: str, requires: Sequence[str] = ()) -> Path:
    """A real wheel (a zip file) of one module, as tests/envs/test_cache.py makes them."""
    directory.mkdir(parents=True, exist_ok=True)
    info = f"{name}-{version}.dist-info/"
    needs = "".join(f"Requires-Dist: {r}\n" for r in requires)
    tag = "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files = {
        f"{name}.py": "v = 1\n",
        info + "METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{needs}",
        info + "WHEEL": tag,
    }
    files[info + "RECORD"] = "".join(f"{p},,\n" for p in [*files, info + "RECORD"])
    path = directory / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as out:
        for rel, text in files.items():
            out.writestr(rel, text)
    return path


def test_real_uv_on_local_wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """uv itself, in the sandbox without the network, on a find-links directory only."""
    import os

    for name in [n for n in os.environ if n.startswith(("PIP_", "UV_"))]:
        monkeypatch.delenv(name)  # the host's index settings stay out: only the directory
    wheels = tmp_path / "wheels"
    wheel(wheels, "alpha", "1.0", ["beta<2"])
    wheel(wheels, "beta", "1.0")
    wheel(wheels, "beta", "2.0")
    wheel(wheels, "setuptools", "70.0.0")  # what TOOL_BOUNDS constrains must be findable
    run = sandboxed(tmp_path / "uv-cache", read=(str(wheels),), network=False)
    index = ("--no-index", "--find-links", str(wheels))

    def resolve(*packages: str) -> Outcome:
        spec = EnvSpec(repo="o/n", version="1", pip_packages=packages)
        work = tmp_path / f"work-{len(list(tmp_path.glob('work-*')))}"
        work.mkdir()
        return resolve_spec(
            plan_for(spec), run, work, interpreter=sys.executable,
            python=f"{sys.version_info[0]}.{sys.version_info[1]}", uv=uv_binary(), extra=index,
        )  # fmt: skip

    found = resolve("alpha==1.0", "beta")
    assert (found.status, found.packages, found.reason) == ("resolved", 2, "")
    missing = resolve("alpha==1.0", "beta>=2")
    assert missing.status == "failed" and "all versions of alpha depend on beta<2" in missing.reason
    absent = resolve("gamma==1.0")
    assert absent.status == "failed" and "gamma" in absent.reason
