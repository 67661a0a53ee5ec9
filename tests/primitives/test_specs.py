import pytest

from pytest_toolpolicy.primitives.specs import TOOL_ARGS, check_args


def test_six_tools_with_the_spec_caps():
    assert list(TOOL_ARGS) == [
        "read_entity",
        "search_symbol",
        "search_code",
        "edit_entity",
        "run_test",
        "execute",
    ]
    described = {t: {a.name: a.describe() for a in specs} for t, specs in TOOL_ARGS.items()}
    assert described["read_entity"]["window"] == "int 1..100 (default 100)"
    assert described["read_entity"]["body"] == "bool (default false)"
    assert described["search_code"]["cap"] == "int 1..8 (default 8)"
    assert described["edit_entity"]["search"] == "str ≤400 (required)"
    assert described["run_test"]["timeout"] == "int 1..300 (default 120)"
    assert described["execute"]["timeout"] == "int 1..30 (default 10)"


def test_defaults_are_filled():
    args, reason = check_args("read_entity", {"selector": "a.b"})
    assert reason is None and args == {"selector": "a.b", "body": False, "window": 100}


@pytest.mark.parametrize(
    ("tool", "args", "reason"),
    [
        ("read_entity", {}, "missing required arg: selector"),
        ("read_entity", {"selector": "a", "colour": 1}, "unknown arg: colour"),
        (
            "read_entity",
            {"selector": "a", "window": 0},
            "invalid arg: window (expected int 1..100, got 0)",
        ),
        (
            "read_entity",
            {"selector": "a", "window": True},
            "invalid arg: window (expected int, got bool)",
        ),
        ("read_entity", {"selector": 3}, "invalid arg: selector (expected str, got int)"),
        (
            "search_symbol",
            {"query": "q", "keywords": ["a", 1]},
            "invalid arg: keywords (expected list[str], got list)",
        ),
        (
            "edit_entity",
            {"selector": "a", "search": "x" * 401, "replace": ""},
            "invalid arg: search (expected str of at most 400 chars, got 401)",
        ),
        (
            "execute",
            {"code": "1", "timeout": 31},
            "invalid arg: timeout (expected int 1..30, got 31)",
        ),
    ],
)
def test_rejections_use_the_spec_strings(tool, args, reason):
    assert check_args(tool, args) == (None, reason)


def test_a_lone_surrogate_is_invalid_input_not_a_crash():
    from pytest_toolpolicy.primitives.specs import check_args

    assert check_args("run_test", {"target": "echo \ud800"}) == (
        None,
        "invalid arg: target (not valid text: a lone surrogate)",
    )
