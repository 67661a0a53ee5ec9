import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_toolpolicy.primitives.matching import occurrences, smallest_period

MB = 1_000_000


def every_place(text: str, search: str) -> int:
    """The count by definition: each position where the search starts."""
    return sum(text.startswith(search, i) for i in range(len(text))) if search else 0


def test_overlapping_occurrences_are_counted() -> None:
    assert occurrences("\n\n\n", "\n\n") == 2
    assert "\n\n\n".count("\n\n") == 1  # what str.count says, and why it is not used


def test_plain_counts() -> None:
    assert occurrences("a b a", "a") == 2
    assert occurrences("abc", "x") == 0
    assert occurrences("abc", "") == 0


# Few letters, so that searches repeat themselves and overlap in every way.
small = st.text(alphabet="ab\n", max_size=24)
short = st.text(alphabet="ab\n", min_size=1, max_size=6)


@settings(max_examples=1000, deadline=None)
@given(small, short)
def test_the_count_is_every_place_the_search_starts(text: str, search: str) -> None:
    assert occurrences(text, search) == every_place(text, search)


@settings(max_examples=300, deadline=None)
@given(short, st.integers(0, 5), small)
def test_repeated_searches_are_counted(search: str, times: int, noise: str) -> None:
    text = noise + search * times + noise
    assert occurrences(text, search) == every_place(text, search)


@settings(max_examples=500, deadline=None)
@given(short)
def test_smallest_period(text: str) -> None:
    least = next(p for p in range(1, len(text) + 1) if text[p:] == text[: len(text) - p])
    assert smallest_period(text) == least


@pytest.mark.parametrize(
    ("text", "search", "count"),
    [
        ("a" * MB, "a" * (MB // 2), MB // 2 + 1),  # half the text, at every place it fits
        ("a" * MB, "a" * 400, MB - 399),  # an edit_entity search at its cap
        ("ab" * (MB // 2), "ab" * 1000 + "a", MB // 2 - 1000),
        ("a" * MB, "a" * 1000 + "b", 0),
        (("a" * 999 + "b") * (MB // 1000), "a" * 999 + "b" + "a" * 999, MB // 1000 - 1),
    ],
)
def test_a_megabyte_of_overlapping_places(text: str, search: str, count: int) -> None:
    assert occurrences(text, search) == count
