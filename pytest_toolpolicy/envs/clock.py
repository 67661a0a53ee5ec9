"""The clock an instance's tests read, where its spec sets one (``EnvSpec.clock``).

Some environments carry data that expires: astropy refreshes its leap-second table when the one
its pinned pyerfa ships is past its expiry date, cannot (the sandbox has no network), and warns;
its configuration turns warnings into errors, so tests that convert time scales fail a few
months after the pins were made, whatever the patch. The pins are of a date; the tests run as
on that date, through libfaketime (Debian's ``faketime``), preloaded into the test process and
its children. Monotonic clocks are left real: timeouts and durations stay true.
"""

from __future__ import annotations

import functools
import glob
from collections.abc import Sequence

from .spec import EnvironmentSetupError

# Where Debian (any architecture), and a source install, put the library.
SEARCH = (
    "/usr/lib/*/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
    "/usr/local/lib/faketime/libfaketime.so.1",
)


class ClockUnavailable(EnvironmentSetupError):
    """The spec sets a clock and libfaketime is not installed; the message says how to get it."""


@functools.lru_cache(maxsize=4)
def library(patterns: Sequence[str] = SEARCH) -> str | None:
    for pattern in patterns:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return None


def clock_env(date: str, patterns: Sequence[str] = SEARCH) -> dict[str, str]:
    """The variables that make a process's wall clock start at ``date`` (midnight UTC) and run
    on from there."""
    lib = library(tuple(patterns))
    if lib is None:
        raise ClockUnavailable(
            f"the tests run with the clock at {date} (the spec's clock), which needs "
            "libfaketime, not installed here; install it: apt-get install faketime (as root)"
        )
    return {
        "LD_PRELOAD": lib,
        "FAKETIME": f"@{date} 00:00:00",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
        "TZ": "UTC",
    }
