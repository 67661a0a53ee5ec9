import pytest

from textwrapper import render_table


def test_basic_table():
    assert render_table(["Name", "Qty"], [["apple", "3"], ["fig", "12"]]) == (
        "| Name  | Qty |\n"
        "| :---- | :-- |\n"
        "| apple | 3   |\n"
        "| fig   | 12  |\n"
    )


def test_alignment_rules():
    out = render_table(["L", "R", "C"], [["a", "b", "c"]], align=["left", "right", "center"])
    assert out.splitlines()[1] == "| :-- | --: | :-: |"
    assert out.splitlines()[2] == "| a   |   b |  c  |"


def test_pipes_are_escaped_and_newlines_flattened():
    out = render_table(["expr"], [["a|b"], ["two\nlines"]])
    assert "| a\\|b      |" in out
    assert "| two lines |" in out


def test_short_rows_are_padded():
    out = render_table(["a", "b"], [["only"]])
    assert out.splitlines()[2] == "| only |     |"


def test_long_rows_are_rejected():
    with pytest.raises(ValueError, match="3 cells"):
        render_table(["a", "b"], [["1", "2", "3"]])


def test_alignment_count_must_match():
    with pytest.raises(ValueError, match="alignments"):
        render_table(["a", "b"], [], align=["left"])


def test_wide_characters_line_up():
    out = render_table(["城市", "x"], [["東京", "1"], ["Paris", "2"]])
    assert out.splitlines()[2] == "| 東京  | 1   |"
    assert out.splitlines()[3] == "| Paris | 2   |"


def test_header_only_table():
    assert render_table(["h"], []) == "| h   |\n| :-- |\n"


def test_cells_are_not_normalised():
    decomposed = "Jose\u0301"
    out = render_table(["name"], [[decomposed]])
    assert decomposed in out
