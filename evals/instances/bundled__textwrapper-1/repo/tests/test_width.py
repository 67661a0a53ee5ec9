import pytest

from textwrapper import display_width
from textwrapper.width import char_width


@pytest.mark.parametrize("text, width", [
    ("", 0),
    ("abc", 3),
    ("日本", 4),
    ("ｈｉ", 4),
    ("café", 4),
    ("a b", 3),
], ids=["empty", "ascii", "cjk", "fullwidth", "precomposed-accent", "space"])
def test_display_width(text, width):
    assert display_width(text) == width


def test_char_width_of_ascii_and_wide():
    assert char_width("x") == 1
    assert char_width("語") == 2
