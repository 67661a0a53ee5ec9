import pytest

from textwrapper import fill, wrap

TEXT = "The quick brown fox jumps over the lazy dog"


def test_wrap_greedy():
    assert wrap(TEXT, 15) == ["The quick brown", "fox jumps over", "the lazy dog"]


def test_wrap_collapses_whitespace():
    assert wrap("a   b\n\tc", 10) == ["a b c"]


def test_wrap_empty_text():
    assert wrap("   ", 10) == []


def test_fill_joins_lines():
    assert fill(TEXT, 20) == "The quick brown fox\njumps over the lazy\ndog"


def test_indent_counts_towards_width():
    lines = wrap(TEXT, 16, indent="> ", subsequent_indent="> ")
    assert lines == ["> The quick", "> brown fox", "> jumps over the", "> lazy dog"]
    assert all(len(line) <= 16 for line in lines)


def test_first_line_indent_only():
    assert wrap(TEXT, 20, indent="    ") == [
        "    The quick brown",
        "fox jumps over the",
        "lazy dog",
    ]


def test_long_word_overflows_without_hyphenation():
    assert wrap("see antidisestablishmentarianism now", 12) == [
        "see",
        "antidisestablishmentarianism",
        "now",
    ]


def test_long_word_is_hyphenated():
    lines = wrap("antidisestablishmentarianism", 10, hyphenate=True, hyphen="")
    assert lines == ["antidisest", "ablishment", "arianism"]


def test_width_must_leave_room():
    with pytest.raises(ValueError, match="no room"):
        wrap("text", 4, indent="    ")
