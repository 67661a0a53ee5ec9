"""The :class:`CronExpression` type: parsing, matching and run-time search."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime, timedelta

from cronparse.errors import CronError, CronSyntaxError
from cronparse.fields import FIELDS, ParsedField, parse_field

MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}

#: How far ahead :meth:`CronExpression.next_run` looks before giving up. Eight years
#: covers every leap-day schedule (``0 0 29 2 *``) whatever the starting point.
SEARCH_YEARS = 8


class CronExpression:
    """A parsed five-field cron expression (or one of the ``@`` macros).

    >>> CronExpression("30 4 * * mon").next_run(datetime(2024, 1, 1))
    datetime.datetime(2024, 1, 1, 4, 30)
    """

    def __init__(self, expression: str) -> None:
        self.expression = expression.strip()
        text = MACROS.get(self.expression.lower(), self.expression)
        parts = text.split()
        if len(parts) != len(FIELDS):
            raise CronSyntaxError(
                f"expected {len(FIELDS)} fields, got {len(parts)} in {self.expression!r}"
            )
        parsed = [parse_field(part, spec) for part, spec in zip(parts, FIELDS, strict=True)]
        self.minute, self.hour, self.day_of_month, self.month, self.day_of_week = parsed

    @property
    def fields(self) -> tuple[ParsedField, ...]:
        """The five parsed fields in cron order."""
        return (self.minute, self.hour, self.day_of_month, self.month, self.day_of_week)

    def __repr__(self) -> str:
        return f"CronExpression({self.expression!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CronExpression):
            return NotImplemented
        return [f.values for f in self.fields] == [f.values for f in other.fields]

    def __hash__(self) -> int:
        return hash(tuple(f.values for f in self.fields))

    def matches(self, moment: datetime) -> bool:
        """Whether the schedule fires at ``moment`` (seconds are ignored)."""
        return (
            moment.minute in self.minute
            and moment.hour in self.hour
            and moment.month in self.month
            and self._day_matches(moment.date())
        )

    def _day_matches(self, day: date) -> bool:
        """Whether ``day`` satisfies the day-of-month and day-of-week fields."""
        in_month = day.day in self.day_of_month
        in_week = cron_weekday(day) in self.day_of_week
        return in_month and in_week

    def next_run(self, after: datetime) -> datetime:
        """The first time strictly after ``after`` at which the schedule fires.

        The result has zero seconds and microseconds and keeps ``after``'s tzinfo.
        Raises :class:`CronError` if nothing matches within :data:`SEARCH_YEARS` years
        (``0 0 30 2 *`` never fires).
        """
        candidate = after.replace(second=0, microsecond=0) + timedelta(minutes=1)
        limit = after.year + SEARCH_YEARS
        while candidate.year <= limit:
            if candidate.month not in self.month:
                candidate = _start_of_next_month(candidate)
            elif not self._day_matches(candidate.date()):
                candidate = _start_of_day(candidate) + timedelta(days=1)
            elif candidate.hour not in self.hour:
                candidate = candidate.replace(minute=0) + timedelta(hours=1)
            elif candidate.minute not in self.minute:
                candidate += timedelta(minutes=1)
            else:
                return candidate
        raise CronError(f"{self.expression!r} has no run time within {SEARCH_YEARS} years")

    def iter_runs(self, after: datetime, count: int | None = None) -> Iterator[datetime]:
        """Successive run times after ``after``; endless unless ``count`` is given."""
        produced = 0
        current = after
        while count is None or produced < count:
            current = self.next_run(current)
            yield current
            produced += 1

    def describe(self) -> str:
        """A plain-English sentence for the schedule (see :func:`cronparse.describe`)."""
        from cronparse.describe import describe

        return describe(self)


def cron_weekday(day: date) -> int:
    """The cron weekday number of ``day``: Sunday is 0, Saturday is 6."""
    return (day.weekday() + 1) % 7


def _start_of_day(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0)


def _start_of_next_month(moment: datetime) -> datetime:
    if moment.month == 12:
        return moment.replace(year=moment.year + 1, month=1, day=1, hour=0, minute=0)
    return moment.replace(month=moment.month + 1, day=1, hour=0, minute=0)
