"""The five fields of a cron expression and the parser for a single field.

A field is a comma-separated list of *terms*. Each term is one of::

    *          every allowed value
    5          a single value (or a name such as ``jan`` / ``mon``)
    1-5        an inclusive range
    */15       every 15th value of the whole range
    10-40/10   every 10th value of a range

:func:`parse_field` turns one field's text into a :class:`ParsedField`, the set of
values it allows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from cronparse.errors import CronSyntaxError

MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


@dataclass(frozen=True)
class FieldSpec:
    """The allowed range of one cron field.

    ``wrap_at`` folds values back into range after parsing (day of week accepts
    ``7`` as a second spelling of Sunday, ``0``).
    """

    name: str
    minimum: int
    maximum: int
    aliases: Mapping[str, int] = field(default_factory=dict)
    wrap_at: int | None = None

    def all_values(self) -> frozenset[int]:
        """Every value the field can take, after wrapping."""
        return frozenset(self.fold(v) for v in range(self.minimum, self.maximum + 1))

    def fold(self, value: int) -> int:
        """Map an in-range value to its canonical form."""
        return value % self.wrap_at if self.wrap_at else value


MINUTE = FieldSpec("minute", 0, 59)
HOUR = FieldSpec("hour", 0, 23)
DAY_OF_MONTH = FieldSpec("day of month", 1, 31)
MONTH = FieldSpec("month", 1, 12, {name: i for i, name in enumerate(MONTH_NAMES, start=1)})
DAY_OF_WEEK = FieldSpec(
    "day of week", 0, 7, {name: i for i, name in enumerate(DAY_NAMES)}, wrap_at=7
)

FIELDS = (MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK)


@dataclass(frozen=True)
class ParsedField:
    """One parsed field: the source text and the values it allows."""

    spec: FieldSpec
    source: str
    values: frozenset[int]

    @property
    def is_star(self) -> bool:
        """Whether the field was written starting with ``*`` (``*`` or ``*/n``).

        Cron treats such a day field as "not restricted" when it combines the day of
        month with the day of week.
        """
        return self.source.startswith("*")

    @property
    def is_every(self) -> bool:
        """Whether the field allows every value of its range."""
        return self.values == self.spec.all_values()

    def __contains__(self, value: int) -> bool:
        return value in self.values


def parse_field(text: str, spec: FieldSpec) -> ParsedField:
    """Parse the text of one field against ``spec``.

    Raises :class:`CronSyntaxError` naming the field on any malformed term or
    out-of-range value.
    """
    source = text.strip().lower()
    if not source:
        raise CronSyntaxError(f"empty {spec.name} field", spec.name)
    values: set[int] = set()
    for term in source.split(","):
        values.update(_parse_term(term, spec))
    return ParsedField(spec, source, frozenset(spec.fold(v) for v in values))


def _parse_term(term: str, spec: FieldSpec) -> range:
    """The values of one comma-separated term, as a range."""
    if not term:
        raise CronSyntaxError(f"empty list item in {spec.name} field", spec.name)
    base, _, step_text = term.partition("/")
    step = _parse_step(step_text, spec) if step_text or term.endswith("/") else 1
    if base == "*":
        start, stop = spec.minimum, spec.maximum
    elif "-" in base:
        low, _, high = base.partition("-")
        start, stop = _parse_value(low, spec), _parse_value(high, spec)
        if start > stop:
            raise CronSyntaxError(f"{spec.name} range {base!r} runs backwards", spec.name)
    else:
        start = _parse_value(base, spec)
        # "5/10" means "from 5 to the end, every 10th", as in Vixie cron.
        stop = spec.maximum if step_text else start
    return range(start, stop + 1, step)


def _parse_step(text: str, spec: FieldSpec) -> int:
    if not text.isdigit() or int(text) == 0:
        raise CronSyntaxError(f"invalid step {text!r} in {spec.name} field", spec.name)
    return int(text)


def _parse_value(text: str, spec: FieldSpec) -> int:
    """A single number or name, checked against the field's range."""
    if text in spec.aliases:
        return spec.aliases[text]
    if not text.isdigit():
        raise CronSyntaxError(f"invalid {spec.name} value {text!r}", spec.name)
    value = int(text)
    if not spec.minimum <= value <= spec.maximum:
        raise CronSyntaxError(
            f"{spec.name} value {value} out of range {spec.minimum}-{spec.maximum}", spec.name
        )
    return value
