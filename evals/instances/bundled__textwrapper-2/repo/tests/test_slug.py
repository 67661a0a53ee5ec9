import pytest

from textwrapper import slugify


@pytest.mark.parametrize("text, slug", [
    ("Hello, World!", "hello-world"),
    ("  spaces   everywhere  ", "spaces-everywhere"),
    ("Crème brûlée", "creme-brulee"),
    ("don't stop", "dont-stop"),
    ("Rock ’n’ Roll", "rock-n-roll"),
    ("C++ & Python 3.11", "c-python-3-11"),
    ("---", ""),
], ids=["punctuation", "whitespace", "accents", "apostrophe", "curly-apostrophes", "symbols",
        "only-separators"])
def test_slugify(text, slug):
    assert slugify(text) == slug


def test_custom_separator():
    assert slugify("Hello World", sep="_") == "hello_world"


def test_keep_case():
    assert slugify("Hello World", lowercase=False) == "Hello-World"


def test_max_length_cuts_inside_a_word():
    assert slugify("hello world", max_length=8) == "hello-wo"


def test_max_length_longer_than_slug():
    assert slugify("short", max_length=50) == "short"


def test_max_length_must_be_positive():
    with pytest.raises(ValueError):
        slugify("x", max_length=0)
