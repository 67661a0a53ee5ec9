"""Argument types and options more than one command takes: checked by argparse, so a bad value
is its usage line and exit 2 before anything runs."""

from __future__ import annotations

import argparse
import math

from .. import limits


def positive_int(text: str) -> int:
    """An argparse type: ``argument --jobs: must be a positive integer, got 0``."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def positive_number(text: str) -> float:
    """An argparse type: ``argument --timeout: must be a positive number, got -1``."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def limits_text(text: str) -> str:
    """An argparse type for ``--limits NAME=VALUE,...``: checked here, exported by ``main``."""
    try:
        limits.parse_limits(text)
    except limits.LimitsError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_limits(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--limits",
        type=limits_text,
        metavar="NAME=VALUE,...",
        help=f"host-side bounds over {limits.ENV} ({', '.join(limits.NAMES)})",
    )
