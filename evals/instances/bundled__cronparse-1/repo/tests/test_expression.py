from datetime import datetime, timezone

import pytest

from cronparse import MACROS, CronError, CronExpression, CronSyntaxError


class TestParsing:
    def test_five_fields_are_required(self):
        with pytest.raises(CronSyntaxError, match="expected 5 fields"):
            CronExpression("* * * *")

    def test_error_names_the_field(self):
        with pytest.raises(CronSyntaxError) as info:
            CronExpression("0 25 * * *")
        assert info.value.field == "hour"

    @pytest.mark.parametrize("macro", sorted(MACROS))
    def test_macros_expand(self, macro):
        assert CronExpression(macro) == CronExpression(MACROS[macro])

    def test_equal_expressions_hash_alike(self):
        assert hash(CronExpression("0 0 * * mon")) == hash(CronExpression("0 0 * * 1"))

    def test_repr_shows_the_source(self):
        assert repr(CronExpression("@daily")) == "CronExpression('@daily')"


class TestMatches:
    def test_matches_ignores_seconds(self):
        assert CronExpression("30 9 * * *").matches(datetime(2024, 5, 1, 9, 30, 59))

    def test_day_of_week_only(self):
        expr = CronExpression("0 0 * * 1")
        assert expr.matches(datetime(2024, 5, 6))  # a Monday
        assert not expr.matches(datetime(2024, 5, 7))

    def test_day_of_month_only(self):
        expr = CronExpression("0 0 15 * *")
        assert expr.matches(datetime(2024, 5, 15))
        assert not expr.matches(datetime(2024, 5, 16))

    def test_star_step_in_day_of_month_still_needs_the_weekday(self):
        expr = CronExpression("0 0 */2 * 1")
        assert expr.matches(datetime(2024, 5, 13))  # Monday the 13th
        assert not expr.matches(datetime(2024, 5, 6))  # Monday the 6th
        assert not expr.matches(datetime(2024, 5, 15))  # Wednesday the 15th

    def test_day_of_month_or_day_of_week(self):
        expr = CronExpression("0 0 13 * fri")
        assert expr.matches(datetime(2024, 5, 13))  # a Monday
        assert expr.matches(datetime(2024, 5, 10))  # a Friday
        assert not expr.matches(datetime(2024, 5, 14))


class TestNextRun:
    def test_next_minute(self):
        expr = CronExpression("* * * * *")
        assert expr.next_run(datetime(2024, 1, 1, 10, 0)) == datetime(2024, 1, 1, 10, 1)

    def test_is_strictly_after(self):
        expr = CronExpression("30 9 * * *")
        assert expr.next_run(datetime(2024, 1, 1, 9, 30)) == datetime(2024, 1, 2, 9, 30)

    def test_rolls_over_the_year(self):
        expr = CronExpression("@yearly")
        assert expr.next_run(datetime(2024, 6, 1)) == datetime(2025, 1, 1)

    def test_weekday_range(self):
        expr = CronExpression("0 9 * * mon-fri")
        assert expr.next_run(datetime(2024, 5, 10, 10, 0)) == datetime(2024, 5, 13, 9, 0)

    def test_weekday_range_to_seven(self):
        expr = CronExpression("0 9 * * 5-7")
        runs = list(expr.iter_runs(datetime(2024, 5, 9, 12, 0), count=4))
        assert [r.day for r in runs] == [10, 11, 12, 17]

    def test_thirteenth_or_friday(self):
        expr = CronExpression("0 0 13 * 5")
        runs = list(expr.iter_runs(datetime(2024, 9, 1), count=4))
        assert [r.day for r in runs] == [6, 13, 20, 27]

    def test_leap_day(self):
        expr = CronExpression("0 0 29 2 *")
        assert expr.next_run(datetime(2024, 3, 1)) == datetime(2028, 2, 29)

    def test_impossible_date_raises(self):
        with pytest.raises(CronError, match="no run time"):
            CronExpression("0 0 30 2 *").next_run(datetime(2024, 1, 1))

    def test_keeps_tzinfo(self):
        after = datetime(2024, 1, 1, 10, 0, tzinfo=timezone.utc)
        assert CronExpression("@hourly").next_run(after).tzinfo is timezone.utc

    def test_iter_runs_counts(self):
        runs = list(CronExpression("*/20 * * * *").iter_runs(datetime(2024, 1, 1), count=3))
        assert [r.minute for r in runs] == [20, 40, 0]
