"""Exceptions raised by cronparse."""


class CronError(Exception):
    """Base class for every error cronparse raises."""


class CronSyntaxError(CronError, ValueError):
    """An expression (or one of its fields) is not valid cron syntax.

    ``field`` names the offending field (``"minute"``, ``"day of week"``...) when known.
    """

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field
