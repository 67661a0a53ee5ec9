"""Where a session's model is reached and on what terms: the endpoint options
(``--toolpolicy-base-url``, ``-api-key-env``, ``-prices``, ``-timeout``, ``-retries``, each also
an ini key), checked before anything runs."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T", int, float)

OPTIONS: tuple[tuple[str, str], ...] = (
    (
        "--toolpolicy-base-url",
        "the model endpoint's base URL (default: the SDK's, or OPENAI_BASE_URL)",
    ),
    ("--toolpolicy-api-key-env", "the environment variable holding the API key (OPENAI_API_KEY)"),
    ("--toolpolicy-prices", "a TOML price file over the shipped prices (TOOLPOLICY_PRICES)"),
    ("--toolpolicy-timeout", "seconds a model call may take, retries included (60; local: 600)"),
    ("--toolpolicy-retries", "retries of a failed model call (4; local: 0, a retry repeats it)"),
)


class EndpointError(ValueError):
    pass


@dataclass(frozen=True)
class Endpoint:
    base_url: str | None = None
    api_key_env: str | None = None
    prices: Path | None = None
    timeout: float | None = None  # None: the model kind's default
    retries: int | None = None

    def timeout_for(self, model: str) -> float:
        if self.timeout is not None:
            return self.timeout
        return 600.0 if model.startswith("local:") else 60.0

    def retries_for(self, model: str) -> int:
        if self.retries is not None:
            return self.retries
        return 0 if model.startswith("local:") else 4


def endpoint_from(get: Callable[[str], Any]) -> Endpoint:
    prices = get("toolpolicy_prices")
    if prices and not Path(prices).is_file():
        raise EndpointError(f"--toolpolicy-prices: no such file: {prices}")
    return Endpoint(
        base_url=get("toolpolicy_base_url") or None,
        api_key_env=get("toolpolicy_api_key_env") or None,
        prices=Path(prices) if prices else None,
        timeout=_seconds(get("toolpolicy_timeout")),
        retries=_count(get("toolpolicy_retries")),
    )


def _seconds(value: Any) -> float | None:
    return _parsed(value, float, lambda v: 0 < v < math.inf, "--toolpolicy-timeout",
                   "a positive number of seconds")  # fmt: skip


def _count(value: Any) -> int | None:
    return _parsed(value, int, lambda v: v >= 0, "--toolpolicy-retries", "a whole number ≥ 0")


def _parsed(
    value: Any, kind: Callable[[Any], T], ok: Callable[[T], bool], name: str, wants: str
) -> T | None:
    """``value`` as ``kind`` when given and ``ok``; None when not given; else a usage error."""
    if value in (None, ""):
        return None
    try:
        number = kind(value)
    except (TypeError, ValueError):
        raise EndpointError(f"{name} must be {wants}, got {value!r}") from None
    if not ok(number):
        raise EndpointError(f"{name} must be {wants}, got {value!r}")
    return number
