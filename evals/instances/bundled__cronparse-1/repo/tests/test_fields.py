import pytest

from cronparse.errors import CronSyntaxError
from cronparse.fields import DAY_OF_MONTH, DAY_OF_WEEK, HOUR, MINUTE, MONTH, parse_field


def values(text, spec):
    return sorted(parse_field(text, spec).values)


def test_star_is_every_value():
    assert values("*", HOUR) == list(range(24))
    assert parse_field("*", MINUTE).is_every


def test_single_value():
    assert values("5", MINUTE) == [5]


def test_range_is_inclusive():
    assert values("1-5", DAY_OF_MONTH) == [1, 2, 3, 4, 5]


def test_list_of_terms():
    assert values("1,15,30", MINUTE) == [1, 15, 30]


def test_step_over_whole_range():
    assert values("*/15", MINUTE) == [0, 15, 30, 45]


def test_step_over_range():
    assert values("10-40/10", MINUTE) == [10, 20, 30, 40]


def test_step_from_single_value_runs_to_the_end():
    assert values("5/20", MINUTE) == [5, 25, 45]


def test_month_names_are_case_insensitive():
    assert values("JAN,Jul", MONTH) == [1, 7]


def test_weekday_name_range():
    assert values("mon-fri", DAY_OF_WEEK) == [1, 2, 3, 4, 5]


def test_is_star_tracks_the_source():
    assert parse_field("*/2", DAY_OF_MONTH).is_star
    assert not parse_field("1-31", DAY_OF_MONTH).is_star


def test_seven_is_sunday():
    assert values("7", DAY_OF_WEEK) == [0]


def test_range_ending_in_seven():
    assert values("5-7", DAY_OF_WEEK) == [0, 5, 6]
    assert parse_field("1-7", DAY_OF_WEEK).is_every


@pytest.mark.parametrize(
    ("text", "spec"),
    [("60", MINUTE), ("24", HOUR), ("0", DAY_OF_MONTH), ("13", MONTH), ("8", DAY_OF_WEEK)],
    ids=["minute", "hour", "day-of-month", "month", "day-of-week"],
)
def test_out_of_range_values_are_rejected(text, spec):
    with pytest.raises(CronSyntaxError, match="out of range") as info:
        parse_field(text, spec)
    assert info.value.field == spec.name


@pytest.mark.parametrize(
    "text",
    ["", "1,,2", "*/0", "*/x", "5-1", "abc", "1-"],
    ids=["empty", "empty-item", "zero-step", "bad-step", "backwards", "name", "open-range"],
)
def test_malformed_fields_are_rejected(text):
    with pytest.raises(CronSyntaxError):
        parse_field(text, MINUTE)
