from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_toolpolicy.envs.spec import LOG_PARSERS as SPEC_PARSERS
from pytest_toolpolicy.grading.parsers import LOG_PARSERS, outcomes, parse_log

from .swebench_reference import REFERENCE

LOGS = Path(__file__).parents[1] / "data" / "logs"


def django_ids(module_class: str, names: str, py311: bool) -> list[str]:
    """unittest's ``str(test)`` of each test: the class's dotted path, and from Python 3.11
    the method's name after it."""
    return [
        f"{n} ({module_class}.{n})" if py311 else f"{n} ({module_class})" for n in names.split()
    ]


def django_demo(py311: bool) -> dict[str, str]:
    """What SWE-bench records for the log_demo module (sources/django_log_demo_tests.py.txt)
    and validators.tests."""
    demo = "log_demo.tests.DemoTests"
    errors, fails, passes, skips = (
        django_ids(demo, names, py311)
        for names in ("test_errors", "test_fails", "test_passes test_prints", "test_skipped")
    )
    checks = (
        "test_max_length_validator_message test_message_dict test_message_list "
        "test_regex_validator_flags test_single_message"
    )
    equal = "basic decimal email file_extension prohibit_null_characters_validator regex"
    validators = [
        *django_ids("validators.tests.TestValidators", checks, py311),
        *django_ids(
            "validators.tests.TestValidatorEquality",
            " ".join(f"test_{n}_equality" for n in equal.split())
            + " test_regex_equality_blank test_regex_equality_nocache",
            py311,
        ),
    ]
    recorded = {
        **dict.fromkeys(errors, "ERROR"),
        **dict.fromkeys(fails, "FAILED"),
        **dict.fromkeys(passes + validators, "PASSED"),
        **dict.fromkeys(skips, "SKIPPED"),
        # A docstring's first line stands for the test; FAIL:/ERROR: headers give the name.
        "A docstring of several lines: its first line": "PASSED",
        "A one-line docstring names the test in verbose output.": "PASSED",
        "Fails, with a docstring": "FAILED",
        "test_errors": "ERROR",
        "test_fails": "FAILED",
        "test_multi_line_docstring_fails": "FAILED",
        "test_subtests": "FAILED",
    }
    tv = "test_validators (validators.tests.TestValidators"
    if py311:  # each subTest has a line of its own
        recorded[django_ids(demo, "test_subtests", True)[0] + " (value=2)"] = "FAILED"
        why = " [validate_image_file_extension] (value=<ContentFile: Raw content>)"
        recorded[f"{tv}.test_validators){why}"] = "SKIPPED"
    else:
        recorded[f"{tv})"] = "SKIPPED"
    return recorded


def django_sites() -> dict[str, str]:
    docstrings = [
        "#15346, #15573 - create_default_site() creates an example site only if",
        "#23945 - The configured ``SITE_ID`` should be respected.",
        "#16353, #16828 - The default site creation should respect db routing.",
        "#24488 - The pk should default to 1 if no ``SITE_ID`` is configured.",
        "#17415 - Another site can be created right after the default one.",
        "#23641 - Sending the ``post_migrate`` signal triggers creation of the",
        "#24075 - A Site shouldn't be created if the model isn't available.",
        "The site is matched if the name in the request has a trailing dot.",
    ]
    frameworks = (
        "test_check_site_id test_clear_site_cache test_clear_site_cache_domain "
        "test_delete_all_sites_clears_cache test_domain_name_with_whitespaces "
        "test_get_current_site test_get_current_site_no_site_id "
        "test_get_current_site_no_site_id_and_handle_port_fallback test_site_cache "
        "test_site_manager test_site_natural_key test_unique_domain test_valid_site_id"
    )
    ids = [
        *docstrings,
        *django_ids("sites_tests.tests.CreateDefaultSiteTests", "test_multi_db", False),
        *django_ids("sites_tests.tests.MiddlewareTest", "test_request", False),
        *django_ids("sites_tests.tests.SitesFrameworkTests", frameworks, False),
        *django_ids(
            "sites_tests.tests.RequestSiteTests", "test_delete test_init_attributes test_save test_str", False
        ),
    ]  # fmt: skip
    return dict.fromkeys(ids, "PASSED")


SYMPY_PASSED = """
test_is_palindromic test_postorder_traversal test_flatten test_iproduct test_group test_subsets
test_variations test_cartes test_filter_symbols test_numbered_symbols test_sift test_take
test_dict_merge test_prefixes test_postfixes test_topological_sort
test_strongly_connected_components test_connected_components test_rotate
test_multiset_partitions test_multiset_combinations test_multiset_permutations
test_binary_partitions test_bell_perm test_involutions test_derangements test_necklaces
test_bracelets test_generate_oriented_forest test_unflatten test_common_prefix_suffix
test_minlex test_ordered test_runs test_reshape test_kbins test_has_dups test__partition
test_ordered_partitions test_rotations test_ibin
"""
ITERABLES = "sympy/utilities/tests/test_iterables.py"
SYMPY = {
    **dict.fromkeys(SYMPY_PASSED.split(), "PASSED"),
    # test_partitions and test_uniq: the instance's FAIL_TO_PASS, failing at its base commit
    **dict.fromkeys(["test_partitions", "test_uniq", "test_provoked_failure"], "FAILED"),
    "test_provoked_error": "ERROR",
    # Each underlined failure header, errors too; no listed id is spelled so.
    **{
        f"{ITERABLES}:{name}": "FAILED"
        for name in ("test_provoked_error", "test_partitions", "test_uniq", "test_provoked_failure")
    },
    # Not there: skipped ("s"), XFAIL ("f"), XPASS ("X"), slow ("w"), and
    # test_provoked_last_passes, whose " ok" the file's "[FAIL]" follows on the same line.
}

MPL = "lib/matplotlib/tests/test_widgets_demo.py::"
MATPLOTLIB = {
    **{f"{MPL}test_click[{b}]": "PASSED" for b in (1, 3)},
    f"{MPL}test_click_fails[1]": "PASSED",
    **{f"{MPL}test_drag[drag{i}]": "PASSED" for i in (0, 1)},
    # cut at the space: "[a b]" and "[x - y]"
    **{f"{MPL}test_label_with_spaces[{p}": "PASSED" for p in ("a", "x")},
    "[1]": "SKIPPED",  # "SKIPPED [1] file:line: reason", the count of skips taken for an id
    f"{MPL}test_xfail": "XFAIL",
    f"{MPL}test_errors": "ERROR",
}
SNS = "tests/test_core_demo.py::"
SEABORN = {
    f"{SNS}TestPlotter::test_passes": "PASSED",
    f"{SNS}TestPlotter::test_palette[dark": "PASSED",
    f"{SNS}TestPlotter::test_palette[a": "PASSED",
    f"{SNS}TestPlotter::test_fails": "FAILED",
    f"{SNS}TestPlotter::test_palette[deep]": "FAILED",
    # never ERROR, SKIPPED or XFAIL
}
APY = "astropy/tests/test_demo.py::"
OPT = "tests/test_options_demo.py::"

RECORDED = {
    "django-4.2-py3.9.log": ("django", django_demo(py311=False)),
    "django-5.0-py3.11.log": ("django", django_demo(py311=True)),
    "django-4.2-py3.9-sites.log": ("django", django_sites()),
    "sympy-1.7-py3.9.log": ("sympy", SYMPY),
    # Python 3.11 prints an IntEnum parameter as its number; 3.8 as MouseButton.LEFT, which
    # the parser renames, but MIDDLE (2) it leaves.
    "matplotlib-py3.11-pytest8.3.log": (
        "matplotlib",
        {**MATPLOTLIB, f"{MPL}test_click_fails[2]": "FAILED"},
    ),
    "matplotlib-py3.8-pytest7.4.log": (
        "matplotlib",
        {**MATPLOTLIB, f"{MPL}test_click_fails[MouseButton.MIDDLE]": "FAILED"},
    ),
    "seaborn-py3.9-pytest7.1.log": ("seaborn", SEABORN),
    # pytest 3.3 with -rA prints no summary: the verbose lines are read, and an id with a
    # space in it gets the word after the space for a status.
    "pytest_v2-py3.6-pytest3.3.log": (
        "pytest_v2",
        {
            f"{APY}TestPlotter::test_passes": "PASSED",
            f"{APY}TestPlotter::test_fails": "FAILED",
            f"{APY}TestPlotter::test_palette[deep]": "FAILED",
            f"{APY}TestPlotter::test_palette[dark": "blue]",
            f"{APY}TestPlotter::test_palette[a": "-",
            f"{APY}test_errors": "ERROR",
            f"{APY}test_skipped": "SKIPPED",
        },
    ),
    "pytest_v2-colour-py3.11-pytest8.3.log": (
        "pytest_v2",
        {**SEABORN, "[1]": "SKIPPED", f"{SNS}test_xfail": "XFAIL", f"{SNS}test_errors": "ERROR"},
    ),
    "pytest_options-py3.11-pytest8.3.log": (
        "pytest_options",
        {
            f"{OPT}test_path_param[/a.txt]": "PASSED",
            f"{OPT}test_path_param[/tmp/*.txt]": "PASSED",
            f"{OPT}test_path_param[//server/share]": "FAILED",
            f"{OPT}test_url[http://example.com/a": "PASSED",
            f"{OPT}test_url[https://x/y]": "PASSED",
            f"{OPT}test_xfail": "XFAIL",
            f"{OPT}test_fails": "FAILED",
        },
    ),
}


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_a_recorded_log_reads_as_swebench_reads_it(name: str) -> None:
    parser, expected = RECORDED[name]
    log = (LOGS / name).read_text(encoding="utf-8")
    assert parse_log(log, parser) == expected
    assert REFERENCE[parser](log) == expected


def test_every_recorded_log_is_checked_and_small() -> None:
    logs = sorted(p.name for p in LOGS.glob("*.log"))
    assert logs == sorted(RECORDED)
    assert all((LOGS / name).stat().st_size < 8_000 for name in logs)


def test_the_parsers_are_the_specs_parsers() -> None:
    assert sorted(LOG_PARSERS) == sorted(SPEC_PARSERS) == sorted(REFERENCE)
    with pytest.raises(ValueError, match="'unittest' is not one of pytest"):
        parse_log("", "unittest")


# Pieces of lines each parser reads specially; logs are made of them.
PYTEST_PARTS = [
    "PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS", " ", "  ", " - ", "-", "\n", "\t",
    "\r", "t.py::test_a", "[", "]", "/", "//", "*", "x", "\x1b", "[1m", "[31m", "[0m",
    "MouseButton.LEFT", "MouseButton.RIGHT", "Mouse", " PASSED ",
]  # fmt: skip
DJANGO_PARTS = [
    "test_a (m.C)", "Doc", " ... ", "...", " ... ok", " ... OK", " ...  OK", "ok", " ... skipped",
    " 'r'", " ... FAIL", " ... ERROR", "FAIL:", "ERROR:", " ", "\n", "\t", "\x0b", "\x85",
    "\u3000", "Applying sites.0002_alter_domain_unique...test_no_migrations",
    "--version is equivalent to version", " ... Testing against Django installed in ",
    "Testing against", " silenced).", "\nok", " ... Internal Server Error: /", "/", "/\nok",
    " ... System check identified no issues (0 silenced)", " (0 silenced)\nok", "x",
]  # fmt: skip
# The whole-log patterns' pieces alone, so that generated logs match them often.
DJANGO_PATTERN_PARTS = [
    "t", " ", "\t", "\n", "\x85", "...", " ... ", " ... Testing against Django installed in ",
    " silenced).\nok", " silenced).", "\nok", "ok", " ... Internal Server Error: /", "/", "/\nok",
    " ... System check identified no issues (0 silenced)\nok", "x",
]  # fmt: skip
SYMPY_PARTS = [
    "_", "___", " ", "  ", "a", "b/c", ".py:", ".py", ".", "py:", ":", "test_x", "test_", " ok",
    " F", " E", "ok", "\n", "\t", "\r", "[OK]",
]  # fmt: skip
PARTS = {"django": [DJANGO_PARTS, DJANGO_PATTERN_PARTS], "sympy": [SYMPY_PARTS]}


def logs(parts: list[str]) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(parts), max_size=40).map("".join)


@pytest.mark.parametrize("parser", sorted(REFERENCE))
@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_each_parser_records_what_swebench_records(parser: str, data: st.DataObject) -> None:
    kinds = PARTS.get(parser, [PYTEST_PARTS])
    log = data.draw(st.one_of(*(logs(parts) for parts in kinds)), label="log")
    assert parse_log(log, parser) == REFERENCE[parser](log)


@pytest.mark.parametrize(
    ("log", "recorded"),
    [
        # the runner's own output between a test and its "ok"
        ("test_a (m.C) ... noise\nok", {"test_a (m.C)": "PASSED"}),
        ("test_a (m.C) ... FAIL\nokay", {"test_a (m.C)": "PASSED"}),
        ("  FAIL: test_a (m.C)", {"test_a": "FAILED"}),
        ("ERROR:", {}),
        ("Applying sites.0002_alter_domain_unique...test_no_migrations ... ok", {"test_no_migrations": "PASSED"}),
        # The whole-log patterns add a key only where their unstripped line differs from the
        # stripped one the "ok" line credits.
        ("  t ... Testing against Django installed in '/d'\nSystem check identified no issues (0 silenced).\nok", {"t": "PASSED", "  t": "PASSED"}),
        ("  t ... Internal Server Error: /a/b/\nok\n", {"t": "PASSED", "  t": "PASSED"}),
        ("  t ... Internal Server Error: /\nok", {"t": "PASSED"}),
        ("  t ... System check identified no issues (0 silenced)\nok", {"t": "PASSED", "  t": "PASSED"}),
        # django prints a full stop after "(0 silenced)": the third pattern never matches it
        ("  t ... System check identified no issues (0 silenced).\nok", {"t": "PASSED"}),
        ("--version is equivalent to version ... FAIL", {"--version is equivalent to version": "FAILED"}),
    ],
)  # fmt: skip
def test_django_readings(log: str, recorded: dict[str, str]) -> None:
    assert parse_log(log, "django") == REFERENCE["django"](log) == recorded


def test_sympy_reads_failure_headers_from_the_first_space_to_the_last() -> None:
    log = "__ a b.py:c d.py:e f __\n x.py:y\ntest_q ok   [OK]\n   test_r F\n"
    assert parse_log(log, "sympy") == {"a b.py:c d.py:e f": "FAILED", "test_r": "FAILED"}


BRACKETS = "t.py::t" + "[" * 100_000 + "/x]"


@pytest.mark.parametrize(
    ("parser", "log", "recorded"),
    [
        # SWE-bench's findall tries every space against every ".py:" and every later space
        ("sympy", " " * 100_000 + ".py:" * 100_000, {}),
        # its lazy (?s:.*?) rescans the rest of the log from each header with no ending
        ("django", "t ... Testing against Django installed in x\n" * 20_000, {}),
        # its (.*) rescans the line from each header for a "/" that ends it
        ("django", "t ... Internal Server Error: /" * 20_000 + "x\nok", {"t": "PASSED"}),
        ("pytest_options", f"PASSED {BRACKETS}", {BRACKETS: "PASSED"}),
    ],
)
def test_a_log_that_makes_swebench_backtrack_is_read_at_once(
    parser: str, log: str, recorded: dict[str, str]
) -> None:
    """SWE-bench's code would take hours on these (benchmarks/bench_log_parsers.py)."""
    assert parse_log(log, parser) == recorded


def test_outcomes_of_listed_ids() -> None:
    statuses = {
        "a": "PASSED", "b": "XFAIL", "c": "FAILED", "d": "ERROR", "e": "SKIPPED", "f": "blue]",
    }  # fmt: skip
    assert outcomes(statuses, ["a", "b", "c", "d", "e", "f", "g"]) == {
        "a": "passed",
        "b": "passed",
        "c": "failed",
        "d": "error",
        "e": "skipped",
        "f": "missing",  # a word SWE-bench's grading counts neither way
        "g": "missing",
    }


def test_a_listed_test_graded_from_a_recorded_log() -> None:
    parser, _ = RECORDED["sympy-1.7-py3.9.log"]
    statuses = parse_log((LOGS / "sympy-1.7-py3.9.log").read_text(), parser)
    listed = ["test_partitions", "test_uniq", "test_flatten", "test_provoked_skip"]
    assert outcomes(statuses, listed) == {
        "test_partitions": "failed",
        "test_uniq": "failed",
        "test_flatten": "passed",
        "test_provoked_skip": "missing",
    }
