import pytest

from cronparse import CronExpression, describe


@pytest.mark.parametrize(
    ("expression", "text"),
    [
        ("* * * * *", "Every minute"),
        ("*/15 * * * *", "Every 15 minutes"),
        ("30 9 * * *", "At 9:30 AM"),
        ("0 17 * * *", "At 5:00 PM"),
        ("0 0 * * *", "At 12:00 AM"),
        ("0 9,13 * * *", "At 9:00 AM and 1:00 PM"),
        ("@hourly", "At minute 0 past the hour"),
        ("5,10 * * * *", "At minutes 5 and 10 past the hour"),
    ],
    ids=[
        "every-minute",
        "step",
        "morning",
        "evening",
        "midnight",
        "two-hours",
        "hourly",
        "minutes",
    ],
)
def test_time_of_day(expression, text):
    assert describe(CronExpression(expression)) == text


def test_hour_range():
    text = describe(CronExpression("*/15 9-17 * * mon-fri"))
    assert text == "Every 15 minutes, between 9:00 AM and 5:59 PM, on Monday through Friday"


def test_hour_step():
    assert describe(CronExpression("0,30 */2 * * *")) == (
        "At minutes 0 and 30 past the hour, every 2 hours"
    )


def test_days_of_month_and_months():
    assert describe(CronExpression("0 6 1,15 jan-mar *")) == (
        "At 6:00 AM, on days 1 and 15 of the month, in January through March"
    )


def test_both_day_fields_read_as_or():
    assert describe(CronExpression("0 0 13 * fri")) == (
        "At 12:00 AM, on day 13 of the month or on Friday"
    )


def test_method_matches_function():
    expr = CronExpression("@weekly")
    assert expr.describe() == describe(expr) == "At 12:00 AM, on Sunday"


def test_noon_is_pm():
    assert describe(CronExpression("30 12 * * 1-5")) == "At 12:30 PM, on Monday through Friday"


def test_range_ending_at_noon():
    assert describe(CronExpression("*/10 8-12 * * *")) == (
        "Every 10 minutes, between 8:00 AM and 12:59 PM"
    )
