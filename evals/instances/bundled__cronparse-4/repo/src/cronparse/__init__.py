"""cronparse: parse cron expressions, compute run times, describe schedules."""

from cronparse.describe import describe
from cronparse.errors import CronError, CronSyntaxError
from cronparse.expression import MACROS, CronExpression

__all__ = ["MACROS", "CronError", "CronExpression", "CronSyntaxError", "describe"]
__version__ = "0.4.1"
