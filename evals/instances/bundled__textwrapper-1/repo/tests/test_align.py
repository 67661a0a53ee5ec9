import pytest

from textwrapper import align_columns, pad
from textwrapper.align import column_widths


@pytest.mark.parametrize("align, expected", [
    ("left", "ab   "),
    ("right", "   ab"),
    ("center", " ab  "),
], ids=["left", "right", "center"])
def test_pad(align, expected):
    assert pad("ab", 5, align) == expected


def test_pad_never_truncates():
    assert pad("abcdef", 3) == "abcdef"


def test_pad_counts_wide_characters_twice():
    assert pad("日本", 6, "right") == "  日本"


def test_pad_rejects_unknown_alignment():
    with pytest.raises(ValueError, match="unknown alignment"):
        pad("x", 3, "middle")


def test_pad_fillchar():
    assert pad("7", 3, "right", fillchar="0") == "007"
    with pytest.raises(ValueError):
        pad("7", 3, fillchar="--")


def test_column_widths_handles_ragged_rows():
    assert column_widths([["a", "bbb"], ["cc"], ["d", "e", "ffff"]]) == [2, 3, 4]


def test_align_columns():
    rows = [["name", "qty"], ["apple", "3"], ["fig", "12"]]
    assert align_columns(rows, ["left", "right"]) == [
        "name   qty",
        "apple    3",
        "fig     12",
    ]


def test_align_columns_strips_trailing_padding():
    assert align_columns([["a", "b"], ["long", ""]]) == ["a     b", "long"]


def test_align_columns_custom_separator():
    assert align_columns([["a", "b"], ["cc", "d"]], sep=" | ") == ["a  | b", "cc | d"]


def test_align_columns_with_wide_characters():
    assert align_columns([["日本", "x"], ["abc", "y"]]) == ["日本  x", "abc   y"]
