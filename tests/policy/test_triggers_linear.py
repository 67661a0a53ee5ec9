"""The symbol trigger's scan finds exactly what the spec's regex finds, and reads a megabyte of
adversarial text (one long word, many tokens) at once: the regex itself took the square of a
word's length, so these inputs would never finish under it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_toolpolicy.policy.triggers import CAMEL_RE, symbol_tokens
from pytest_toolpolicy.primitives.symbols import SYMBOL_RE, symbol_spans

MB = 1_000_000
# Every character class the regexes tell apart: ASCII letters (upper and lower), digits, "_",
# ".", spaces and line breaks, punctuation, and non-ASCII letters and digits (\b counts them
# as word characters, SYMBOL_RE does not).
ALPHABET = "aZbM_09.. \n,;:-()!éÉß٣€"
texts = st.text(alphabet=ALPHABET, max_size=40)


def spec_tokens(text: str, camel: bool = False) -> list[str]:
    """The trigger's tokens as first written: the spec's regexes run directly."""
    found = [(m.start(), m.group(0)) for m in SYMBOL_RE.finditer(text)]
    if camel:
        spans = [(m.start(), m.end()) for m in SYMBOL_RE.finditer(text)]
        for m in CAMEL_RE.finditer(text):
            if not any(lo <= m.start() and m.end() <= hi for lo, hi in spans):
                found.append((m.start(), m.group(0)))
    return list(dict.fromkeys(token for _, token in sorted(found)))


@settings(max_examples=1000, deadline=None)
@given(texts)
def test_spans_are_the_spec_regex_matches(text: str) -> None:
    assert symbol_spans(text) == [m.span() for m in SYMBOL_RE.finditer(text)]


@settings(max_examples=500, deadline=None)
@given(texts, st.booleans())
def test_tokens_are_the_spec_tokens(text: str, camel: bool) -> None:
    assert symbol_tokens(text, camel) == spec_tokens(text, camel)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "a.b",
        "1a.b",  # digits before the first letter: the match starts at the letter
        "12ab.cd.3x.y",  # "ab.cd", then a digit segment ends it, then "x.y"
        "a.b.1x.y",
        "a..b.c",
        "a.b..c.d",
        "x.1.a.b",
        "_._",
        "foo.bar.",
        "a.é.b",  # a non-ASCII letter is no part of a token
        "éa.b",
        "Aé.b Foo.Bar FooBar Foo_1 a.FooBar.c Barré",
        ".a.b",
        "9.a",
        "ab1.2c",
    ],
)
def test_targeted_cases_match_the_spec(text: str) -> None:
    assert symbol_spans(text) == [m.span() for m in SYMBOL_RE.finditer(text)]
    for camel in (False, True):
        assert symbol_tokens(text, camel) == spec_tokens(text, camel)


def test_a_megabyte_word_without_a_dot_has_no_token() -> None:
    assert symbol_tokens("a" * MB) == []
    assert symbol_tokens("a1" * (MB // 2)) == []  # a letter after a digit starts nothing new
    assert symbol_tokens("see x.y then " + "a" * MB) == ["x.y"]


def test_a_megabyte_word_ending_in_a_dotted_part_is_one_token() -> None:
    word = "1" * (MB // 2) + "a" * (MB // 2) + ".b"  # leading digits are not part of it
    assert symbol_spans(word) == [(MB // 2, MB + 2)]
    assert symbol_tokens(word) == ["a" * (MB // 2) + ".b"]


def test_a_megabyte_dotted_token() -> None:
    text = "a." * (MB // 2) + "!"
    token = "a." * (MB // 2 - 1) + "a"
    assert symbol_tokens(text) == [token]
    assert symbol_tokens(text, camel=True) == [token]


def test_a_megabyte_of_dots_and_digit_segments() -> None:
    # Each "a.1" fails at its digit; nothing in it is a token.
    assert symbol_spans("a.1" * (MB // 3)) == []


def test_many_tokens_and_camel_words_in_a_megabyte() -> None:
    """Every CamelCase word is checked against the dotted tokens: 100,000 of each, which a
    check of every pair would make 10^10 comparisons."""
    text = "Foo a.b Bar.Baz " * (MB // 16)
    assert len(symbol_spans(text)) == 2 * (MB // 16)
    assert symbol_tokens(text) == ["a.b", "Bar.Baz"]
    assert symbol_tokens(text, camel=True) == ["Foo", "a.b", "Bar.Baz"]
