"""``run_test`` splits its target into the tokens its regex gives, in time linear in the target:
the regex alone read from every "[" that no "]" follows to the target's end."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_toolpolicy.primitives.run_test import _TOKEN, target_tokens

MB = 1_000_000
targets = st.text(alphabet="ab[] ]\t\n:/.-_=é", max_size=30)


@settings(max_examples=1000, deadline=None)
@given(targets)
def test_tokens_are_the_regex_tokens(target: str) -> None:
    assert target_tokens(target) == _TOKEN.findall(target)


@pytest.mark.parametrize(
    "target",
    [
        "",
        "t.py::test[a b] t.py::other",
        "t.py::test[a",  # an unclosed part: the "[" is no part of a token
        "x][y",  # the token ending on the last "]" runs on to "["
        "x]y z",
        "a [b]c [d",
        "[]",
        "]",
        "[[a]",
        "a b]",
        "a ]b",
    ],
)
def test_targeted_cases_match_the_regex(target: str) -> None:
    assert target_tokens(target) == _TOKEN.findall(target)


def test_a_megabyte_of_unclosed_brackets_has_no_token() -> None:
    assert target_tokens("[" * MB) == []


def test_a_megabyte_of_unclosed_brackets_after_a_node_id() -> None:
    target = "t.py::test[a b]x " + "[ " * (MB // 2) + "y"
    assert target_tokens(target) == ["t.py::test[a b]x", "y"]
    target = "t.py::test[a]" + "[" * MB
    assert target_tokens(target) == ["t.py::test[a]"]


def test_a_megabyte_of_parameter_parts() -> None:
    target = "t.py::test" + "[a b]" * (MB // 5)
    assert target_tokens(target) == [target]
