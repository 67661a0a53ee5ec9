from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from pytest_toolpolicy.bench import load_instances
from pytest_toolpolicy.bench.instance import Instance
from pytest_toolpolicy.bench.workspaces import materialize
from pytest_toolpolicy.envs.cache import Environment
from pytest_toolpolicy.grading.grade import grade, grade_patch
from pytest_toolpolicy.grading.infra import needs_network, shared_setup_error
from pytest_toolpolicy.grading.outcomes import Failure, TestOutcome, When
from pytest_toolpolicy.primitives.sandbox import Sandbox

from ..bench.gitmirrors import (
    BASE,
    F2P,
    FIXED_OPS,
    P2P,
    git,
    make_bundled,
    make_mirror,
    patches,
    real_instance,
)

SANDBOX = Sandbox.from_env()


def bundled(tmp_path: Path, files: dict[str, str] = BASE, **row: object) -> Instance:
    make_bundled(tmp_path / "instances", "bundled__calc-1", files, **row)
    result = load_instances(f"bundled:{tmp_path / 'instances'}")
    assert not result.errors, result.errors
    return result.instances[0]


@pytest.fixture
def calc(tmp_path: Path) -> Instance:
    return bundled(tmp_path)


def test_gold_patch_resolves(calc: Instance, tmp_path: Path) -> None:
    result = grade_patch(calc, calc.patch, sandbox=SANDBOX, parent=tmp_path)
    assert result.status == "resolved" and result.resolved, result
    assert result.tests == dict.fromkeys([*F2P, *P2P], "passed")
    assert result.reason is None and result.duration_s > 0
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == ["cache", "instances", "repos"]  # the workspace is gone


def test_empty_patch_does_not_resolve(calc: Instance, tmp_path: Path) -> None:
    result = grade_patch(calc, "", sandbox=SANDBOX, parent=tmp_path)
    assert (result.status, result.resolved) == ("unresolved", False)
    assert result.tests == {F2P[0]: "failed", P2P[0]: "passed", P2P[1]: "passed"}
    assert result.reason == f"{F2P[0]} failed"


def test_patch_that_does_not_apply(calc: Instance, tmp_path: Path) -> None:
    wrong = calc.patch.replace("return a // b", "return a %% b")
    result = grade_patch(calc, wrong, sandbox=SANDBOX, parent=tmp_path)
    assert result.status == "patch_error" and not result.resolved
    assert (result.reason or "").startswith(
        "patch does not apply: error: patch failed: calc/ops.py"
    )


def test_missing_test_ids_are_missing_not_a_crash(tmp_path: Path) -> None:
    ghosts = ["tests/test_ops.py::test_nope", "tests/test_ops.py::TestDiv::test_exact[0-0-0]"]
    junk = ["tests/test_gone.py::test_x", "[100%]"]
    instance = bundled(tmp_path, PASS_TO_PASS=[*P2P, *ghosts, *junk])
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, parent=tmp_path)
    assert result.status == "unresolved"
    assert {i: o for i, o in result.tests.items() if o != "passed"} == dict.fromkeys(
        [*ghosts, *junk], "missing"
    )
    assert result.tests[F2P[0]] == "passed"
    # An id whose file is in neither the base commit nor test_patch names no test: reported,
    # and out of the verdict either way; a test missing from an existing file counts.
    assert result.ignored == tuple(junk)
    assert result.reason == (
        f"{ghosts[0]} missing; {ghosts[1]} missing; left out of the verdict, naming no test "
        "file: tests/test_gone.py::test_x, [100%]"
    )
    fine = dataclasses.replace(instance, PASS_TO_PASS=(*P2P, *junk))
    result = grade_patch(fine, fine.patch, sandbox=SANDBOX, parent=tmp_path)
    assert (result.status, result.ignored) == ("resolved", tuple(junk))
    assert result.reason == (
        "left out of the verdict, naming no test file: tests/test_gone.py::test_x, [100%]"
    )


def test_a_listed_test_file_the_agent_deletes_is_put_back(tmp_path: Path) -> None:
    files = {**BASE, "tests/test_extra.py": "def test_x():\n    pass\n"}
    instance = bundled(tmp_path, files, PASS_TO_PASS=["tests/test_extra.py::test_x"])
    ws = materialize(instance, tmp_path / "items")
    (ws.root / "calc/ops.py").write_text(FIXED_OPS)
    (ws.root / "tests/test_extra.py").unlink()
    result = grade(ws, instance, sandbox=SANDBOX)
    assert (result.status, result.ignored) == ("resolved", ()), result
    assert result.reverted == (
        "tests/test_extra.py: a file of the listed tests: graded as at the base commit with "
        "test_patch",
    )
    assert not (ws.root / "tests/test_extra.py").exists()  # the agent's workspace, as it left it
    assert result.tests == {F2P[0]: "passed", "tests/test_extra.py::test_x": "passed"}


def test_only_junk_in_fail_to_pass_is_an_infra_error(calc: Instance, tmp_path: Path) -> None:
    instance = dataclasses.replace(calc, FAIL_TO_PASS=("[100%]",))
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, parent=tmp_path)
    assert (result.status, result.ignored) == ("infra_error", ("[100%]",))
    assert result.reason == "no FAIL_TO_PASS id names a test file: [100%]"


def test_hung_test_times_out_and_the_next_grade_is_unaffected(tmp_path: Path) -> None:
    hang = "\n\ndef test_hang():\n    while True:\n        pass\n"
    files = {**BASE, "tests/test_slow.py": "from calc import add" + hang}
    instance = bundled(tmp_path, files, PASS_TO_PASS=[*P2P, "tests/test_slow.py::test_hang"])
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, parent=tmp_path, timeout=3)
    assert result.status == "unresolved" and result.duration_s < 15
    assert result.reason == "timed out after 3s while running tests/test_slow.py::test_hang"
    assert set(result.tests.values()) == {"failed"}
    fine = dataclasses.replace(instance, PASS_TO_PASS=P2P)
    assert grade_patch(fine, fine.patch, sandbox=SANDBOX, parent=tmp_path).resolved


def test_import_error_of_the_package_is_an_infra_error(tmp_path: Path) -> None:
    files = {**BASE, "calc/__init__.py": "import nosuchdep\n" + BASE["calc/__init__.py"]}
    instance = bundled(tmp_path, files)
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, parent=tmp_path)
    assert result.status == "infra_error" and not result.resolved
    assert result.reason == (
        "collection error in tests/test_ops.py unrelated to the patch: "
        "ModuleNotFoundError: No module named 'nosuchdep'"
    )


def test_collection_error_caused_by_the_patch_is_unresolved(calc: Instance, tmp_path: Path) -> None:
    broken = calc.patch.replace("+    return a / b", "+    return a / b)")
    result = grade_patch(calc, broken, sandbox=SANDBOX, parent=tmp_path)
    assert result.status == "unresolved"
    assert set(result.tests.values()) == {"error"}


def test_test_patch_that_does_not_apply_is_an_infra_error(calc: Instance, tmp_path: Path) -> None:
    instance = dataclasses.replace(calc, test_patch=calc.test_patch.replace(" == q", " == 0"))
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, parent=tmp_path)
    assert result.status == "infra_error"
    assert (result.reason or "").startswith("test_patch does not apply: error: patch failed")


def test_grading_an_agent_workspace_leaves_it_as_it_was(calc: Instance, tmp_path: Path) -> None:
    ws = materialize(calc, tmp_path / "items")
    (ws.root / "calc/ops.py").write_text(BASE["calc/ops.py"].replace("//", "/"))
    # The agent also rewrote the test file: grading uses the base file plus test_patch instead.
    (ws.root / "tests/test_ops.py").write_text("def test_add():\n    assert False\n")
    before = ws.patch()
    result = grade(ws, calc, sandbox=SANDBOX)
    assert result.resolved, result
    assert ws.patch() == before and "test_div_float" not in before
    assert not list(ws.root.glob(".toolpolicy-grade-*"))


def test_real_instance_from_a_mirror(tmp_path: Path) -> None:
    mirror, base, _ = make_mirror(tmp_path / "mirrors" / "acme__calc", bare=True)
    git(tmp_path, "clone", "-q", str(mirror), str(tmp_path / "scratch"))
    git(tmp_path / "scratch", "checkout", "-q", base)
    instance = real_instance("acme/calc", base, *patches(tmp_path / "scratch"))
    env = Environment(sys.executable, (".",), plugin_autoload=False)
    result = grade_patch(
        instance,
        instance.patch,
        sandbox=SANDBOX,
        env=env,
        repos=mirror.parent,
        cache_dir=tmp_path / "cache",
    )
    assert result.status == "resolved"


def test_grading_never_builds_an_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real instance's environment comes from its caller's stage (``envs/stage.py``): without
    one, grading says so as an infra error, and the builder is never entered."""
    from pytest_toolpolicy.envs import builder, cache

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("grading entered the environment builder")

    monkeypatch.setattr(cache, "build_environment", refuse)
    monkeypatch.setattr(builder.Builder, "__init__", refuse)
    mirror, base, _ = make_mirror(tmp_path / "mirrors" / "acme__calc", bare=True)
    git(tmp_path, "clone", "-q", str(mirror), str(tmp_path / "scratch"))
    git(tmp_path / "scratch", "checkout", "-q", base)
    instance = real_instance("acme/calc", base, *patches(tmp_path / "scratch"))
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, repos=mirror.parent)
    assert (result.status, result.reason) == (
        "infra_error",
        "acme__calc-1: its environment was not resolved before grading (envs/stage.py)",
    )


DB_CONFTEST = (
    "import pytest\n\n\n@pytest.fixture(autouse=True)\ndef db():\n"
    "    raise RuntimeError('database unavailable')\n"
)
SERVER_TESTS = "def test_a(server):\n    pass\n\n\ndef test_b(server):\n    pass\n"
SERVER_IDS = dict(
    FAIL_TO_PASS=["tests/test_srv.py::test_a"], PASS_TO_PASS=["tests/test_srv.py::test_b"]
)


def test_a_conftest_fixture_that_fails_every_test_is_an_infra_error(tmp_path: Path) -> None:
    instance = bundled(tmp_path, {**BASE, "conftest.py": DB_CONFTEST})
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, parent=tmp_path)
    assert result.status == "infra_error", result
    assert result.tests == dict.fromkeys([*F2P, *P2P], "error")
    assert result.reason == (
        "every listed test errors at setup: RuntimeError: database unavailable (at conftest.py:6)"
    )


def test_the_same_error_in_a_conftest_the_patch_touched_is_the_patch(tmp_path: Path) -> None:
    instance = bundled(tmp_path, {**BASE, "conftest.py": DB_CONFTEST})
    ws = materialize(instance, tmp_path / "items")
    (ws.root / "calc/ops.py").write_text(FIXED_OPS)
    (ws.root / "conftest.py").write_text(DB_CONFTEST.replace("db()", "db(request)"))
    result = grade(ws, instance, sandbox=SANDBOX)
    assert result.status == "unresolved", result
    assert set(result.tests.values()) == {"error"}


@pytest.mark.parametrize(
    ("conftest", "reason"),
    [
        (
            "import pytest\n\n\n@pytest.fixture\ndef server():\n    raise OSError('no display')\n",
            "every listed test errors at setup: OSError: no display (at conftest.py:6)",
        ),
        ("", "every listed test errors at setup: fixture 'server' not found"),
    ],
    ids=["fixture-error", "fixture-missing"],
)
def test_a_fixture_every_test_needs_and_cannot_have(
    tmp_path: Path, conftest: str, reason: str
) -> None:
    files = {**BASE, "conftest.py": conftest, "tests/test_srv.py": SERVER_TESTS}
    instance = bundled(tmp_path, files, **SERVER_IDS)
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, parent=tmp_path)
    assert (result.status, result.reason) == ("infra_error", reason), result
    # One test that runs is enough to make it the tests' own business.
    both = dataclasses.replace(instance, PASS_TO_PASS=(*SERVER_IDS["PASS_TO_PASS"], *P2P))
    result = grade_patch(both, both.patch, sandbox=SANDBOX, parent=tmp_path)
    assert result.status == "unresolved" and result.tests[P2P[0]] == "passed"


def test_a_conftest_that_does_not_import(tmp_path: Path) -> None:
    instance = bundled(tmp_path, {**BASE, "tests/conftest.py": "import nosuchplugin\n"})
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, parent=tmp_path)
    reason = result.reason or ""
    assert result.status == "infra_error", result
    assert reason.startswith("pytest could not run the tests (exit 4): ")
    assert reason.endswith("ModuleNotFoundError: No module named 'nosuchplugin'")
    # The agent's own conftest takes no part: the environment's failure stays the same.
    ws = materialize(instance, tmp_path / "items")
    (ws.root / "tests/conftest.py").write_text("import pytest\n")
    result = grade(ws, instance, sandbox=SANDBOX)
    assert result.status == "infra_error", result
    assert result.reverted == ("tests/conftest.py: a conftest file configures the test run",)


def test_a_conftest_that_the_patch_breaks_is_the_patch(tmp_path: Path) -> None:
    """The conftest imports the package; the patch breaks the package: the patch's failure."""
    instance = bundled(tmp_path, {**BASE, "tests/conftest.py": "import calc\n"})
    ws = materialize(instance, tmp_path / "items")
    (ws.root / "calc/__init__.py").write_text("def broken(:\n")
    result = grade(ws, instance, sandbox=SANDBOX)
    assert result.status == "unresolved", result
    assert (result.reason or "").startswith("pytest could not run the tests (exit 4): ")
    assert set(result.tests.values()) == {"error"}


NET_TESTS = (
    "import socket\n\n\ndef test_net():\n    socket.create_connection(('example.invalid', 80), 5)\n"
    "\n\ndef test_local():\n    socket.create_connection(('127.0.0.1', 9), 5)\n"
)
NET, LOCAL = "tests/test_net.py::test_net", "tests/test_net.py::test_local"


def test_a_fail_to_pass_test_that_needs_the_network_is_an_infra_error(tmp_path: Path) -> None:
    instance = bundled(tmp_path, {**BASE, "tests/test_net.py": NET_TESTS}, FAIL_TO_PASS=[*F2P, NET])
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, parent=tmp_path)
    assert (result.status, result.reason) == ("infra_error", f"needs the network: {NET}"), result
    assert result.tests[NET] == "network" and result.tests[F2P[0]] == "passed"


def test_a_pass_to_pass_test_that_needs_the_network_is_left_out(tmp_path: Path) -> None:
    files = {**BASE, "tests/test_net.py": NET_TESTS}
    instance = bundled(tmp_path, files, PASS_TO_PASS=[*P2P, NET])
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, parent=tmp_path)
    assert (result.status, result.ignored) == ("resolved", (NET,)), result
    assert result.tests == {**dict.fromkeys([*F2P, *P2P], "passed"), NET: "network"}
    assert result.reason == f"left out of the verdict, needing the network: {NET}"
    # A refused connection to a loopback port is a local server's business, not the network's.
    local = dataclasses.replace(instance, PASS_TO_PASS=(*P2P, NET, LOCAL))
    result = grade_patch(local, local.patch, sandbox=SANDBOX, parent=tmp_path)
    assert (result.status, result.tests[LOCAL], result.ignored) == ("unresolved", "failed", (NET,))


ORDER_TESTS = (
    "import os\n\nMARK = os.path.join(os.environ.get('TMPDIR', '/tmp'), 'order-mark')\n\n\n"
    "def test_builds():\n    open(MARK, 'w').close()\n\n\n"
    "def test_reads_the_build():\n    assert os.path.exists(MARK)\n    os.remove(MARK)\n"
)


def test_the_whole_file_runs_in_its_order(tmp_path: Path) -> None:
    """As SWE-bench runs the test files: an unlisted test that leaves state a listed one needs
    (sphinx's build directories) still runs before it, and only listed tests are reported."""
    files = {**BASE, "tests/test_order.py": ORDER_TESTS}
    listed = "tests/test_order.py::test_reads_the_build"
    instance = bundled(tmp_path, files, PASS_TO_PASS=[*P2P, listed])
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, parent=tmp_path)
    assert result.status == "resolved", result
    assert result.tests == dict.fromkeys([*F2P, *P2P, listed], "passed")


SKIP_TESTS = (
    "import pytest\n\ntry:\n    import cdms2_absent  # noqa\n    has = True\nexcept ImportError:\n"
    "    has = False\n\n\n@pytest.mark.skipif(not has, reason='requires cdms2_absent')\n"
    "def test_marked():\n    pass\n\n\ndef test_imported():\n"
    "    pytest.importorskip('cdms2_absent')\n\n\n@pytest.mark.skip(reason='flaky')\n"
    "def test_plain():\n    pass\n\n\ndef test_json():\n    pytest.importorskip('json')\n"
    "    pytest.skip('requires json')\n"
)
SKIPS = {n: f"tests/test_skip.py::test_{n}" for n in ("marked", "imported", "plain", "json")}


def test_a_fail_to_pass_test_skipped_for_a_missing_module_is_an_infra_error(
    tmp_path: Path,
) -> None:
    """xarray's cdms2 tests (conda-only): the environment's lack, whatever the patch."""
    files = {**BASE, "tests/test_skip.py": SKIP_TESTS}
    marked, imported = SKIPS["marked"], SKIPS["imported"]
    instance = bundled(tmp_path, files, FAIL_TO_PASS=[*F2P, marked, imported])
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, parent=tmp_path)
    why = f"the environment lacks cdms2_absent: {marked}, {imported} skipped"
    assert (result.status, result.reason) == ("infra_error", why), result


def test_a_pass_to_pass_test_skipped_for_a_missing_module_is_left_out(tmp_path: Path) -> None:
    files = {**BASE, "tests/test_skip.py": SKIP_TESTS}
    instance = bundled(tmp_path, files, PASS_TO_PASS=[*P2P, SKIPS["marked"], SKIPS["imported"]])
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, parent=tmp_path)
    assert (result.status, result.ignored) == ("resolved", (SKIPS["marked"], SKIPS["imported"]))
    assert result.reason == (
        "left out of the verdict, skipped for want of cdms2_absent: "
        f"{SKIPS['marked']}, {SKIPS['imported']}"
    )
    # Any other skip, or one naming a module the environment has, stays a failure to pass.
    other = dataclasses.replace(instance, PASS_TO_PASS=(*P2P, SKIPS["plain"], SKIPS["json"]))
    result = grade_patch(other, other.patch, sandbox=SANDBOX, parent=tmp_path)
    assert result.status == "unresolved" and not result.ignored, result
    assert result.reason == f"{SKIPS['plain']} skipped; {SKIPS['json']} skipped"


PARAM_TESTS = (
    "import pytest\n\n\n@pytest.mark.parametrize('x', ['a b', 'a c', '/tmp/x/y.txt'])\n"
    "def test_p(x):\n    assert x\n"
)


@pytest.mark.parametrize(
    ("parser", "outcome"), [("pytest", "missing"), ("pytest_options", "passed")]
)
def test_ids_follow_the_parser_of_the_instance(tmp_path: Path, parser: str, outcome: str) -> None:
    ids = ["tests/test_p.py::test_p[a", "tests/test_p.py::test_p[/y.txt]"]
    instance = bundled(tmp_path, {**BASE, "tests/test_p.py": PARAM_TESTS}, PASS_TO_PASS=ids)
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, parent=tmp_path, parser=parser)
    assert result.tests == {F2P[0]: "passed", ids[0]: "passed", ids[1]: outcome}


def test_a_parser_grading_cannot_follow(calc: Instance, tmp_path: Path) -> None:
    result = grade_patch(calc, calc.patch, sandbox=SANDBOX, parent=tmp_path, parser="junit")
    assert result.status == "infra_error"
    assert result.reason == "log parser 'junit' is not one grading knows"


@pytest.mark.parametrize(
    ("crash", "network"),
    [
        ("socket.gaierror: [Errno -3] Temporary failure in name resolution", True),
        ("OSError: [Errno 101] Network is unreachable", True),
        (
            "requests.exceptions.ConnectionError: HTTPConnectionPool(host='httpbin.org', port=80): "
            "Max retries exceeded with url: /get (Caused by NewConnectionError('<urllib3.connection."
            "HTTPConnection object>: Failed to establish a new connection: [Errno 111] Connection "
            "refused'))",
            True,
        ),
        ("requests.exceptions.ConnectTimeout: HTTPConnectionPool(host='10.255.255.1')", True),
        (
            "requests.exceptions.ConnectionError: HTTPConnectionPool(host='127.0.0.1', port=5000): "
            "Max retries exceeded with url: / (Caused by NewConnectionError(... [Errno 111] "
            "Connection refused'))",
            False,
        ),
        ("AssertionError: assert 'Network is reachable' == 'x'", False),
        ("ValueError: invalid url", False),
    ],
)
def test_what_needs_the_network(crash: str, network: bool) -> None:
    failure = Failure(
        "call", crash, f"    def test():\n>       go()\nE       {crash}\n\nt.py:2: Error"
    )
    assert needs_network(failure) is network


def test_a_shared_setup_error_needs_every_test_and_one_cause() -> None:
    def error(message: str, when: When = "setup") -> Failure:
        return Failure(when, message, f"E   {message}\n\nconftest.py:3: RuntimeError")

    ids = ["t.py::a", "t.py::b"]
    both: dict[str, TestOutcome] = dict.fromkeys(ids, "error")
    same = dict.fromkeys(ids, error("RuntimeError: no db"))
    reason = "every listed test errors at setup: RuntimeError: no db (at conftest.py:3)"
    assert shared_setup_error(ids, both, same, {"calc/ops.py"}) == reason
    assert shared_setup_error(ids, both, same, {"conftest.py"}) is None
    assert shared_setup_error(ids, {**both, "t.py::b": "passed"}, same, set()) is None
    other = {**same, "t.py::b": error("RuntimeError: no cache")}
    assert shared_setup_error(ids, both, other, set()) is None
    teardown = {**same, "t.py::b": error("RuntimeError: no db", "teardown")}
    assert shared_setup_error(ids, both, teardown, set()) is None
    assert shared_setup_error([], {}, {}, set()) is None


def test_what_only_the_agents_changes_break_is_never_an_infra_error(
    calc: Instance, tmp_path: Path
) -> None:
    """The agent's package ends the interpreter before any test starts, printing nothing:
    with the agent's changes the run cannot start, without them it can. That is the agent's
    doing, never grounds to leave the instance out of both arms."""
    ws = materialize(calc, tmp_path / "items")
    (ws.root / "calc/__init__.py").write_text("import os\nos._exit(0)\n")
    result = grade(ws, calc, sandbox=SANDBOX)
    assert result.status == "unresolved", result
    assert "; the tests could not run with the agent's changes (" in (result.reason or "")
    assert (result.reason or "").endswith("); without them they did")
    assert result.tampering == (
        "calc/__init__.py: reaches into the harness (exit: os._exit; exit: os._exit() on import)",
    )


def test_a_project_that_turns_warnings_into_errors(tmp_path: Path) -> None:
    """flask and pytest itself run with `filterwarnings = error`: the grading plugin must give
    pytest no warning of its own (an already imported plugin named by -p gave one)."""
    config = "[pytest]\nfilterwarnings =\n    error\n"
    instance = bundled(tmp_path, {**BASE, "pytest.ini": config})
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, parent=tmp_path)
    assert result.status == "resolved", result


# astropy 1.3's test plugin, in short: its own `cache_dir` ini, a directory it makes a subdirectory
# of before every test (astropy/tests/plugins/config.py, astropy/config/paths.py).
CACHE_DIR_PLUGIN = """\
import os


def pytest_addoption(parser):
    parser.addini("cache_dir", "the project's own cache directory", default=None)


def pytest_runtest_setup(item):
    cache_dir = item.config.getini("cache_dir")
    if cache_dir and not os.path.exists(os.path.join(cache_dir, "mine")):
        os.mkdir(os.path.join(cache_dir, "mine"))
"""


def test_a_project_plugin_that_reads_the_cache_dir_ini_gets_a_directory(tmp_path: Path) -> None:
    """Grading moves pytest's cache with `-o cache_dir=`; a project whose plugin registers that
    ini name for its own use (astropy 1.3) is handed a directory that exists."""
    instance = bundled(tmp_path, {**BASE, "conftest.py": CACHE_DIR_PLUGIN})
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, parent=tmp_path)
    assert result.status == "resolved", result


def test_a_named_plugin_another_imported_first_is_no_error(tmp_path: Path) -> None:
    """Grading names an environment's plugins with -p; one that another plugin imported before
    its turn (xdist.looponfail imports xdist.plugin) made pytest warn that it could not rewrite
    it, an error under filterwarnings = error (astropy 4.3 and 5.0): the rows could not start."""
    files = {
        **BASE,
        "pytest.ini": "[pytest]\nfilterwarnings =\n    error\n",
        "plug_b.py": "def pytest_configure(config):\n    config.plug_b = True\n",
        "plug_a.py": "import plug_b  # noqa: F401\n",
    }
    instance = bundled(tmp_path, files)
    # named last, so -p plug_a comes first on the command line and imports plug_b
    env = Environment(sys.executable, plugin_autoload=False, plugins=("plug_b", "plug_a"))
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, parent=tmp_path, env=env)
    assert result.status == "resolved", result
