from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_toolpolicy.grading import testids
from pytest_toolpolicy.grading.testids import PYTEST_PARSERS, path_of, swebench_id

from .swebench_reference import REFERENCE

STATUSES = ("FAILED", "PASSED", "SKIPPED", "ERROR", "XFAIL")
PLUGIN = Path(testids.__file__).with_name("sandbox_plugin.py")


def swebench_parse(log: str, parser: str) -> dict[str, str]:
    """What SWE-bench's harness records for a ``pytest -rA`` log (its code, transcribed)."""
    return REFERENCE[parser](log)


def summary_line(status: str, nodeid: str, message: str = "") -> str:
    """A line of pytest's ``-rA`` short summary (a crash message follows " - ")."""
    return f"{status} {nodeid}" + (f" - {message}" if message else "")


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """The sandbox's copy of the grading plugin, loaded as grading loads it."""
    gdir = tmp_path_factory.mktemp("grade")
    (gdir / "grade.json").write_text(json.dumps({"ids": [], "parser": "pytest"}))
    shutil.copyfile(PLUGIN, gdir / "toolpolicy_grade_plugin.py")
    reader, writer = os.pipe()
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("TOOLPOLICY_CHANNEL_FD", str(writer))
            path = gdir / "toolpolicy_grade_plugin.py"
            spec = importlib.util.spec_from_file_location("graded_plugin", path)
            assert spec and spec.loader
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        # It took the channel over: the descriptor it was given is closed (its private copy
        # stays open in this test process, as it would in the sandbox's).
        with pytest.raises(OSError):
            os.fstat(writer)
    finally:
        os.close(reader)
    return module


@pytest.mark.parametrize(
    ("nodeid", "parser", "listed"),
    [
        ("t.py::test_a", "pytest", "t.py::test_a"),
        ("t.py::T::test_a[x-y]", "pytest", "t.py::T::test_a[x-y]"),
        ("t.py::test_a[a b]", "pytest", "t.py::test_a[a"),
        ("t.py::test_a[a - b]", "pytest", "t.py::test_a[a"),
        ("t.py::test_p[x::y z]", "pytest_options", "t.py::test_p[x::y"),
        ("t.py::test_a[/tmp/x/y.txt]", "pytest", "t.py::test_a[/tmp/x/y.txt]"),
        ("t.py::test_a[/tmp/x/y.txt]", "pytest_options", "t.py::test_a[/y.txt]"),
        ("t.py::test_a[//net/share]", "pytest_options", "t.py::test_a[//net/share]"),
        ("t.py::test_a[/tmp/*.txt]", "pytest_options", "t.py::test_a[/tmp/*.txt]"),
        ("t.py::test_a[/tmp/a b]", "pytest_options", "t.py::test_a[/tmp/a"),
        ("t.py::test_a[/x/y]tail", "pytest_options", "t.py::test_a[/y]"),
        ("t.py::test_a[k[10m]]", "pytest_v2", "t.py::test_a[k]]"),
        ("t.py::test_a[k[10m]]", "pytest", "t.py::test_a[k[10m]]"),
        ("t.py::test_a[MouseButton.LEFT]", "matplotlib", "t.py::test_a[1]"),
        ("t.py::test_a[MouseButton.RIGHT-x]", "matplotlib", "t.py::test_a[3-x]"),
        ("t.py::test_a[MouseButton.MIDDLE]", "matplotlib", "t.py::test_a[MouseButton.MIDDLE]"),
        ("t.py::test_a[MouseButton.LEFT]", "pytest", "t.py::test_a[MouseButton.LEFT]"),
        ("t.py::T::test_a[a b]", "seaborn", "t.py::T::test_a[a"),
        ("   ", "pytest", ""),
    ],
)
def test_swebench_id(nodeid: str, parser: str, listed: str, plugin: ModuleType) -> None:
    assert swebench_id(nodeid, parser) == listed
    assert plugin.swebench_id(nodeid, parser) == listed
    if nodeid.strip():
        status = "FAILED" if "-" in nodeid else "PASSED"
        log = summary_line(status, nodeid, "AssertionError: a - b")
        assert swebench_parse(log, parser) == {listed: status}


# Characters and words a node id's parameters can hold that some parser reads specially.
ID_PARTS = [*"ab/:.[]*- \t\x1b1m_", "MouseButton.LEFT", "MouseButton.RIGHT", "Mouse", " PASSED "]


@given(
    nodeid=st.lists(st.sampled_from(ID_PARTS), min_size=1, max_size=20).map(
        lambda parts: "t.py::test_" + "".join(parts)
    ),
    parser=st.sampled_from(PYTEST_PARSERS),
    status=st.sampled_from(STATUSES[:2] + STATUSES[3:]),
)
def test_both_copies_agree_with_swebench(
    nodeid: str, parser: str, status: str, plugin: ModuleType
) -> None:
    ours = swebench_id(nodeid, parser)
    assert plugin.swebench_id(nodeid, parser) == ours
    recorded = swebench_parse(summary_line(status, nodeid, "E: x - y"), parser)
    if parser == "seaborn" and (status not in ("PASSED", "FAILED") or " PASSED " in nodeid):
        # seaborn's parser records no ERROR or XFAIL line, nor a PASSED summary line that
        # holds " PASSED " further on: the id is the same where it records one at all
        assert recorded in ({}, {ours: status})
    else:
        assert recorded == {ours: status}


def test_seaborn_records_what_pytest_records_and_less() -> None:
    line = summary_line("PASSED", "t.py::test_a[x PASSED y]")
    assert swebench_parse(line, "seaborn") == {}
    assert swebench_parse(line, "pytest") == {"t.py::test_a[x": "PASSED"}
    assert swebench_parse("t.py::test_a PASSED [ 50%]", "seaborn") == {"t.py::test_a": "PASSED"}


def test_a_parser_that_does_not_read_pytest_is_refused() -> None:
    for parser in ("django", "sympy"):
        with pytest.raises(ValueError, match=f"'{parser}' is not one of pytest, pytest_v2"):
            swebench_id("t.py::test_a", parser)


def test_skipped_tests_and_progress_lines_record_ids_that_name_no_test() -> None:
    log = "SKIPPED [2] t.py:10: no db\nPASSED                                   [100%]\n"
    assert swebench_parse(log, "pytest") == {"[2]": "SKIPPED", "[100%]": "PASSED"}
    assert [path_of(i) for i in ("[100%]", "t.py::T::test[a::b]", "t.py")] == [
        "[100%]",
        "t.py",
        "t.py",
    ]


def _old_options_id(nodeid: str) -> str:
    """SWE-bench's own reading for parse_log_pytest_options, regex and all."""
    tokens = nodeid.split()
    test = tokens[0] if tokens else ""
    found = re.search(r"(.*?)\[(.*)\]", test)
    if found:
        main, option = found.groups()
        if option.startswith("/") and not option.startswith("//") and "*" not in option:
            option = "/" + option.split("/")[-1]
        test = f"{main}[{option}]"
    return test


@given(st.text(alphabet="ab[]/*: \n", max_size=40))
def test_the_options_parser_reads_ids_as_swebench_regex_does(nodeid: str) -> None:
    assert swebench_id(nodeid, "pytest_options") == _old_options_id(nodeid)


def test_an_id_of_a_million_brackets_is_read_at_once(plugin: ModuleType) -> None:
    """SWE-bench's regex is cubic on runs of "[" (5,000 took 264 s); the ids come from the
    sandboxed run and the patch."""
    nodeid = "t.py::test_a" + "[" * 1_000_000 + "/x/y]tail"
    assert swebench_id(nodeid, "pytest_options") == nodeid.removesuffix("tail")
    closing = "t.py::test_a[/x/y" + "]" * 1_000_000
    assert swebench_id(closing, "pytest_options") == "t.py::test_a[/y" + "]" * 1_000_000
    assert plugin.swebench_id(nodeid, "pytest_options") == swebench_id(nodeid, "pytest_options")
