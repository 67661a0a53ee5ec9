"""parse_reply on hostile replies: JSON nested past the bound is a no-op with its reason (never a
RecursionError), and the code-fence tolerance is the pattern it replaced, found in linear time."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_toolpolicy import jsonsafe
from pytest_toolpolicy.policy.parse import ParsedCall, ParsedNoop, _unfenced, parse_reply
from pytest_toolpolicy.types import ToolCall

TOO_DEEP = f"reply is nested deeper than {jsonsafe.MAX_DEPTH} levels"
DEEP = "[" * 200_000 + "]" * 200_000
# The fence as a pattern, before it was found by slicing: quadratic in a run of spaces.
OLD_FENCE = re.compile(r"\A```(?:json)?[ \t]*\n(.*?)\n?[ \t]*```\Z", re.DOTALL)


def old_unfenced(body: str) -> str:
    fenced = OLD_FENCE.match(body)
    return fenced.group(1) if fenced else body


@pytest.mark.parametrize(
    "text",
    [
        DEEP,
        '{"tool": "read_entity", "args": {"selector": ' + DEEP + "}}",
        "```json\n" + DEEP + "\n```",
        '{"tool": "stop", "args": {}} ' + DEEP,  # a later value is measured too
        '{"tool": "stop", "args": {"x": ' + "[" * 200_000,  # never closed
    ],
    ids=["bare", "in the args", "fenced", "a later value", "unclosed"],
)
def test_json_nested_200000_deep_is_a_noop_naming_the_bound(text: str) -> None:
    assert parse_reply(text) == ParsedNoop(TOO_DEEP)


def test_one_level_past_the_bound_is_refused_and_the_bound_itself_is_not() -> None:
    def at(levels: int) -> str:
        inner = "[" * (levels - 2) + "]" * (levels - 2)  # the call object and args are two
        return '{"tool": "read_entity", "args": {"selector": ' + inner + "}}"

    assert parse_reply(at(jsonsafe.MAX_DEPTH + 1)) == ParsedNoop(TOO_DEEP)
    parsed = parse_reply(at(jsonsafe.MAX_DEPTH))
    assert isinstance(parsed, ParsedCall) and parsed.call.tool == "read_entity"


def test_deep_brackets_inside_a_string_are_text() -> None:
    parsed = parse_reply(json.dumps({"tool": "search_code", "args": {"query": DEEP}}))
    assert parsed == ParsedCall(ToolCall("search_code", {"query": DEEP}))


FENCE_LIKE = st.tuples(
    st.sampled_from(["", "`", "```", "```json", "```js", "``` \t"]),
    st.text(alphabet="`\n \tjsonx{}", max_size=16),
    st.sampled_from(["", "```", "\n```", " \t```", "\n \n```", "``"]),
).map("".join)


@settings(max_examples=3000, deadline=None)
@given(FENCE_LIKE)
def test_the_fence_is_found_as_the_old_pattern_found_it(body: str) -> None:
    assert _unfenced(body) == old_unfenced(body)


@pytest.mark.parametrize(
    "body",
    [
        "```\n```",
        "```\n``",
        "```json\n\n```",
        "```json \t\n x \n \t```",
        "```\nab`````",
        "```jsonx\n{}\n```",
        "```\n{}\n\n```",
        "``` \n{} \t\n```",
    ],
)
def test_the_fence_edge_cases_match_the_old_pattern(body: str) -> None:
    assert _unfenced(body) == old_unfenced(body)


def test_a_megabyte_of_spaces_inside_a_fence_parses() -> None:
    # The old pattern retried the run of spaces from every position in it: ~25 minutes here.
    text = "```\n" + " " * 1_000_000 + '{"tool": "stop", "args": {}}\n```'
    assert parse_reply(text).kind == "terminal"
    assert parse_reply("```\n" + " " * 1_000_000 + "x\n```") == ParsedNoop(
        "reply is not JSON: Expecting value (char 0)"
    )


def test_a_megabyte_of_space_between_two_calls_defers_the_second() -> None:
    text = '{"tool": "search_code", "args": {}}' + " \n" * 500_000 + '{"tool": "read_entity"}'
    parsed = parse_reply(text)
    assert parsed == ParsedCall(ToolCall("search_code", {}), (ToolCall("read_entity", {}),))
