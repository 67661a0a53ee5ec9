"""``--toolpolicy-since DATE``: only instances created on or after a date, such as a model's
training cutoff, since an instance older than it may be in what the model was trained on.

The filter reads ``created_at`` (SWE-bench's field; a mined row's is the date its change
landed), normalized to UTC by the loader. An instance without one cannot be placed after the
cutoff and is left out with the rest; one note counts both kinds, so a long history does not
print a line per old instance.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from dataclasses import dataclass

from .instance import Instance


@dataclass(frozen=True)
class Since:
    when: datetime.datetime  # UTC, naive
    text: str  # as the user wrote it

    def keeps(self, instance: Instance) -> bool:
        created = instance.created_at
        return created is not None and datetime.datetime.fromisoformat(created) >= self.when

    def note(self, kept: int, instances: Iterable[Instance]) -> str:
        items = list(instances)
        undated = sum(1 for i in items if i.created_at is None)
        older = len(items) - kept - undated
        text = f"since {self.text}: {kept} of {len(items)} instances created on or after it"
        parts = [f"{older} older"] if older else []
        parts += [f"{undated} without created_at"] if undated else []
        return text + (f" ({', '.join(parts)} left out)" if parts else "")


def parse_since(text: str) -> Since:
    """``YYYY-MM-DD`` or an ISO timestamp (a zone converts to UTC; none is UTC)."""
    try:
        when = datetime.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"not a date: {text!r} (write YYYY-MM-DD or an ISO timestamp)") from None
    if when.tzinfo is not None:
        when = when.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return Since(when, text.strip())
