from pytest_toolpolicy.primitives.matching import occurrences


def test_overlapping_occurrences_are_counted() -> None:
    assert occurrences("\n\n\n", "\n\n") == 2
    assert "\n\n\n".count("\n\n") == 1  # what str.count says, and why it is not used


def test_plain_counts() -> None:
    assert occurrences("a b a", "a") == 2
    assert occurrences("abc", "x") == 0
    assert occurrences("abc", "") == 0
