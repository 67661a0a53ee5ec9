"""Masking pytest's durations gives what the summary regex's ``sub`` gives, and reads a megabyte
of adversarial output at once: the regex alone read from every status word to the end of its
line, the square of the line's length when no duration follows."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_toolpolicy.primitives import volatile
from pytest_toolpolicy.primitives.volatile import mask_volatile

MB = 1_000_000
# Pieces of summaries and of what surrounds them, so that words, durations and line breaks
# meet in every order.
PIECES = [
    "passed", "failed", "errors", "error", "warning", "no tests ran", "xpassed", "skipped",
    " in ", "in", " in 1", "0.25", "12", "s", "s ", " (0:01:15)", " (1:00:0", ")", "\n", " ",
    ", ", "x", "_", "é", ".", "=",
]  # fmt: skip
outputs = st.lists(st.sampled_from(PIECES), max_size=14).map("".join)


def spec_mask(text: str) -> str:
    return volatile._PYTEST_SUMMARY.sub(r"\1 in ?s", text)


@settings(max_examples=1000, deadline=None)
@given(outputs)
def test_masking_is_the_regex_substitution(text: str) -> None:
    assert volatile._mask_summaries(text) == spec_mask(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="pasedfil nt0123456789.s()\n:é", max_size=40))
def test_masking_is_the_regex_substitution_on_any_text(text: str) -> None:
    assert volatile._mask_summaries(text) == spec_mask(text)


@pytest.mark.parametrize(
    "text",
    [
        "passed in 1s and in 2s",  # the first duration ends the match; the second stays
        "passed in 1s, failed in 2s",
        "in 1s passed",  # a duration before any word: nothing
        "passed\n in 1s",  # the word's line has no duration
        "xpassed in 1s",
        "bypassed in 1s",  # no word boundary before "passed"
        "passed in 1.5x in 2s",
        "3 passed in 75.02s (0:01:15) =\n1 failed in 0.1s\n",
        "passed in 1s (0:01:1",
    ],
)
def test_targeted_cases_match_the_regex(text: str) -> None:
    assert volatile._mask_summaries(text) == spec_mask(text)


def test_a_megabyte_line_of_status_words_without_a_duration_is_left_alone() -> None:
    text = "passed " * (MB // 7)
    assert mask_volatile(text) == text


def test_a_megabyte_line_of_words_after_its_only_duration() -> None:
    text = "1 passed in 0.5s " + "failed " * (MB // 7)
    assert mask_volatile(text) == "1 passed in ?s " + "failed " * (MB // 7)


def test_a_megabyte_line_of_words_ending_in_a_duration_is_one_summary() -> None:
    text = "failed, " * (MB // 8) + "passed in 2.0s"
    assert mask_volatile(text) == "failed, " * (MB // 8) + "passed in ?s"


def test_a_megabyte_of_summary_lines() -> None:
    text = "= 1 failed, 2 passed in 0.12s =\n" * (MB // 32)
    assert mask_volatile(text) == "= 1 failed, 2 passed in ?s =\n" * (MB // 32)
