"""The clock an instance's tests read: the spec's ``clock``, the instance's day for
``created_at``, through libfaketime, in the sandbox."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_toolpolicy.bench.instance import Instance
from pytest_toolpolicy.envs.cache import clock_date
from pytest_toolpolicy.envs.clock import ClockUnavailable, clock_env, library
from pytest_toolpolicy.envs.environment import Environment
from pytest_toolpolicy.envs.spec import EnvSpec, EnvSpecError, spec_for
from pytest_toolpolicy.primitives.sandbox import Sandbox


def _instance(created_at: str | None) -> Instance:
    return Instance(
        instance_id="astropy__astropy-13033",
        repo="astropy/astropy",
        base_commit="a" * 40,
        problem_statement="x",
        patch="",
        test_patch="",
        FAIL_TO_PASS=("t.py::test_a",),
        PASS_TO_PASS=(),
        version="4.3",
        created_at=created_at,
    )


def test_created_at_is_the_instance_day_and_a_date_is_itself() -> None:
    spec = EnvSpec("astropy/astropy", "5.0", clock="created_at")
    assert clock_date(spec, _instance("2022-03-03T15:14:54Z")) == "2022-03-03"
    assert clock_date(spec, _instance(None)) == ""  # no date in the row: the real clock
    fixed = EnvSpec("astropy/astropy", "5.0", clock="2019-11-01")
    assert clock_date(fixed, _instance("2022-03-03T15:14:54Z")) == "2019-11-01"
    assert clock_date(EnvSpec("astropy/astropy", "5.0"), _instance("2022-03-03")) == ""


def test_a_spec_clock_is_checked_and_is_not_part_of_the_build_key(tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text('[repo."o/n"]\nclock = "created_at"\n[[repo."o/n".spec]]\nversions = ["1.0"]\n')
    (tmp_path / "plain.toml").write_text('[repo."o/n"]\n[[repo."o/n".spec]]\nversions = ["1.0"]\n')
    spec = spec_for("o/n", "1.0", user_file=good)
    assert spec.clock == "created_at"
    unset = spec_for("o/n", "1.0", user_file=tmp_path / "plain.toml")
    assert spec.key() == unset.key()  # the same build, whatever the clock
    assert spec_for("astropy/astropy", "5.0").clock == "created_at"  # the shipped spec
    bad = tmp_path / "bad.toml"
    bad.write_text('[repo."o/n"]\nclock = "yesterday"\n[[repo."o/n".spec]]\nversions = ["1.0"]\n')
    with pytest.raises(EnvSpecError, match=r"clock.*created_at or YYYY-MM-DD.*'yesterday'"):
        spec_for("o/n", "1.0", user_file=bad)


def test_a_missing_library_is_an_error_saying_how_to_install_it(tmp_path: Path) -> None:
    with pytest.raises(ClockUnavailable, match=r"apt-get install faketime"):
        clock_env("2022-03-03", patterns=(str(tmp_path / "none" / "libfaketime.so.1"),))
    lib = tmp_path / "x86_64-linux-gnu" / "faketime" / "libfaketime.so.1"
    lib.parent.mkdir(parents=True)
    lib.write_bytes(b"")
    env = clock_env("2022-03-03", patterns=(str(tmp_path / "*" / "faketime" / "libfaketime.so.1"),))
    assert env["LD_PRELOAD"] == str(lib)
    assert env["FAKETIME"] == "@2022-03-03 00:00:00"
    assert env["FAKETIME_DONT_FAKE_MONOTONIC"] == "1"  # timeouts and durations stay real


def _today(env: Environment, cwd: Path) -> list[str]:
    code = "import datetime, time; print(datetime.date.today(), time.monotonic() > 0)"
    run = env.sandbox(Sandbox.from_env(), cwd).run(
        [sys.executable, "-c", code],
        cwd=cwd,
        writable=cwd,
        stdin=None,
        timeout=60,
        merge_stderr=True,
        python=sys.executable,
    )
    return run.stdout.decode().split()


@pytest.mark.skipif(library() is None, reason="libfaketime is not installed (make sandbox)")
def test_a_sandboxed_test_run_reads_the_environment_clock(tmp_path: Path) -> None:
    fixed = Environment(sys.executable, plugin_autoload=False, clock="2021-03-04")
    assert _today(fixed, tmp_path) == ["2021-03-04", "True"]
    real = Environment(sys.executable, plugin_autoload=False)
    assert _today(real, tmp_path)[0] != "2021-03-04"
