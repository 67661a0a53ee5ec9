"""Turn a :class:`~cronparse.expression.CronExpression` into a plain-English sentence.

The sentence is built from independent phrases, one per aspect of the schedule::

    >>> describe(CronExpression("*/15 9-17 * * mon-fri"))
    'Every 15 minutes, between 9:00 AM and 5:59 PM, on Monday through Friday'
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from cronparse.fields import ParsedField

if TYPE_CHECKING:
    from cronparse.expression import CronExpression

WEEKDAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip


def describe(expression: CronExpression) -> str:
    """A sentence describing when ``expression`` fires."""
    phrases = [_time_phrase(expression.minute, expression.hour)]
    phrases.append(_day_phrase(expression.day_of_month, expression.day_of_week))
    phrases.append(_month_phrase(expression.month))
    return ", ".join(p for p in phrases if p)


def _time_phrase(minute: ParsedField, hour: ParsedField) -> str:
    minutes, hours = sorted(minute.values), sorted(hour.values)
    if len(minutes) == 1 and not hour.is_every and len(hours) <= 4:
        return "At " + _join(_format_time(h, minutes[0]) for h in hours)
    if minute.is_every:
        head = "Every minute"
    elif _step_of(minute):
        head = f"Every {_step_of(minute)} minutes"
    else:
        head = "At " + _plural("minute", minutes) + " past the hour"
    return _with_hours(head, hour)


def _with_hours(head: str, hour: ParsedField) -> str:
    hours = sorted(hour.values)
    if hour.is_every:
        return head
    if _step_of(hour):
        return f"{head}, every {_step_of(hour)} hours"
    if _is_contiguous(hours) and len(hours) > 1:
        return f"{head}, between {_format_time(hours[0], 0)} and {_format_time(hours[-1], 59)}"
    return (
        f"{head}, during the "
        + _join(_format_hour(h) for h in hours)
        + " hour"
        + ("s" if len(hours) > 1 else "")
    )


def _day_phrase(day_of_month: ParsedField, day_of_week: ParsedField) -> str:
    phrases = []
    if not day_of_month.is_star:
        phrases.append("on " + _plural("day", sorted(day_of_month.values)) + " of the month")
    if not day_of_week.is_star:
        phrases.append("on " + _names(sorted(day_of_week.values), WEEKDAYS, first=0))
    return " or ".join(phrases) if phrases else ""


def _month_phrase(month: ParsedField) -> str:
    if month.is_every:
        return ""
    return "in " + _names(sorted(month.values), MONTHS, first=1)


def _names(values: list[int], names: tuple[str, ...], first: int) -> str:
    """Name a set of weekdays or months, collapsing a run into "A through B"."""
    if len(values) > 2 and _is_contiguous(values):
        return f"{names[values[0] - first]} through {names[values[-1] - first]}"
    return _join(names[v - first] for v in values)


def _format_time(hour: int, minute: int) -> str:
    """``13, 5`` -> ``'1:05 PM'`` (12-hour clock)."""
    suffix = "AM" if hour < 12 else "PM"
    return f"{hour % 12 or 12}:{minute:02d} {suffix}"


def _format_hour(hour: int) -> str:
    """``13`` -> ``'1 PM'``."""
    return _format_time(hour, 0).replace(":00", "")


def _plural(noun: str, values: list[int]) -> str:
    if len(values) > 2 and _is_contiguous(values):
        return f"{noun}s {values[0]} through {values[-1]}"
    label = noun if len(values) == 1 else noun + "s"
    return f"{label} " + _join(str(v) for v in values)


def _step_of(parsed: ParsedField) -> int | None:
    """The step ``n`` of a field written exactly as ``*/n``, else ``None``."""
    head, _, step = parsed.source.partition("/")
    return int(step) if head == "*" and step.isdigit() else None


def _is_contiguous(values: list[int]) -> bool:
    return values == list(range(values[0], values[-1] + 1))


def _join(items: Iterable[str]) -> str:
    """``['a', 'b', 'c']`` -> ``'a, b and c'``."""
    words = list(items)
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]
