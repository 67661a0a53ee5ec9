"""The price table: dollars per million input, cached-input and output tokens, per model.

The defaults ship in ``prices.toml`` beside this file; a user file (``--toolpolicy-prices FILE``
or ``TOOLPOLICY_PRICES``) replaces entries by name and adds new ones. A model without a price,
or a completion without reported usage, costs ``None`` (unknown), never $0, and is warned about
once per model per process.

A rate is at most ``MAX_RATE`` and token counts at most ``usage.MAX_TOKENS``, so every cost is a
finite number of dollars (never ``$inf``); a ``Usage`` with counts beyond that raises
``UsageError`` rather than being priced.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from .base import Usage
from .usage import check_usage

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PRICES_ENV = "TOOLPOLICY_PRICES"
_RATES = ("input", "cached_input", "output")
_NOTES = ("source", "as_of", "note")
# $ per million tokens: a dollar a token, some thousand times any real price; above it is a typo.
MAX_RATE = 1_000_000.0
_warned: set[tuple[str, str]] = set()
_warned_lock = threading.Lock()


class PriceError(ValueError):
    """A price file that cannot be read: names the file and the entry."""


class UnpricedWarning(UserWarning):
    """A cost is unknown: the model has no price, or the provider reported no usage."""


@dataclass(frozen=True)
class Price:
    input: float  # $ per million prompt tokens that missed the provider's cache
    cached_input: float  # $ per million prompt tokens served from it
    output: float  # $ per million completion tokens
    source: str = ""
    as_of: str = ""
    note: str = ""
    origin: str = ""  # the file the entry came from

    def cost(self, usage: Usage) -> float:
        check_usage(usage)
        cached = min(usage.cached_prompt_tokens, usage.prompt_tokens)
        return (
            (usage.prompt_tokens - cached) * self.input
            + cached * self.cached_input
            + usage.completion_tokens * self.output
        ) / 1_000_000


class PriceTable:
    def __init__(self, prices: Mapping[str, Price] | None = None) -> None:
        self.prices: dict[str, Price] = dict(prices or {})

    def __repr__(self) -> str:
        return f"PriceTable({len(self.prices)} models)"

    def overridden(self, path: str | os.PathLike[str]) -> PriceTable:
        """This table with the entries of the TOML file at ``path`` replacing or added to it."""
        return PriceTable({**self.prices, **read_price_file(path)})

    def price(self, model: str) -> Price | None:
        """The price of ``model``; ``provider/model`` also matches an entry named ``model``."""
        found = self.prices.get(model)
        if found is None and "/" in model:
            found = self.prices.get(model.rsplit("/", 1)[1])
        return found

    def cost(self, model: str, usage: Usage) -> float | None:
        """Dollars for ``usage`` of ``model``, or None when unknown (warned once per model)."""
        price = self.price(model)
        if price is None:
            _warn_once(
                "unpriced",
                model,
                f"no price for model {model!r}: its cost is reported as unknown, not $0. Set one"
                f' in a TOML file given by --toolpolicy-prices FILE or {PRICES_ENV}=FILE: [models."{model}"]'
                " with input, cached_input and output in $ per million tokens, or local = true"
                " for a server you run yourself",
            )
            return None
        if usage.missing:
            _warn_once(
                "no-usage",
                model,
                f"model {model!r} reported no token usage: its cost and tokens are unknown",
            )
            return None
        return price.cost(usage)


def load_prices(
    user_file: str | os.PathLike[str] | None = None, *, env: Mapping[str, str] = os.environ
) -> PriceTable:
    """The shipped defaults, overridden by ``user_file`` or else the file ``$TOOLPOLICY_PRICES``."""
    defaults = resources.files(__package__).joinpath("prices.toml")
    table = PriceTable(parse_prices(defaults.read_text(encoding="utf-8"), "prices.toml (defaults)"))
    user_file = user_file or env.get(PRICES_ENV) or None
    return table if user_file is None else table.overridden(user_file)


def read_price_file(path: str | os.PathLike[str]) -> dict[str, Price]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise PriceError(f"cannot read price file {path}: {exc.strerror or exc}") from None
    return parse_prices(text, str(path))


def parse_prices(text: str, origin: str) -> dict[str, Price]:
    """The entries of a price file's text; ``origin`` names it in errors."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PriceError(f"{origin}: not valid TOML: {exc}") from None
    unknown = set(data) - {"models"}
    if unknown:
        raise PriceError(
            f'{origin}: unknown top-level keys {sorted(unknown)}; expected [models."<name>"] tables'
        )
    models = data.get("models", {})
    if not isinstance(models, dict):
        raise PriceError(f'{origin}: "models" must be a table of [models."<name>"] entries')
    return {name: _entry(name, fields, origin) for name, fields in models.items()}


def _entry(name: str, fields: object, origin: str) -> Price:
    where = f'{origin}: [models."{name}"]'
    if not isinstance(fields, dict):
        raise PriceError(f"{where} must be a table")
    unknown = set(fields) - {*_RATES, *_NOTES, "local"}
    if unknown:
        raise PriceError(f"{where}: unknown keys {sorted(unknown)}; expected {list(_RATES)}")
    notes = {key: fields.get(key, "") for key in _NOTES}
    for key, value in notes.items():
        if not isinstance(value, str):
            raise PriceError(f"{where}: {key} must be a string")
    local = fields.get("local", False)
    if not isinstance(local, bool):
        raise PriceError(f"{where}: local must be true or false")
    if local:
        if set(fields) & set(_RATES):
            raise PriceError(f"{where}: local = true prices it at 0; drop {list(_RATES)} or local")
        return Price(0.0, 0.0, 0.0, **notes, origin=origin)
    rates: dict[str, float] = {}
    for key in _RATES:
        value = fields.get(key)
        if value is None:
            raise PriceError(f"{where}: missing {key} ($ per million tokens)")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise PriceError(f"{where}: {key} must be a number, not {value!r}")
        if not 0 <= value <= MAX_RATE or not math.isfinite(value):
            raise PriceError(
                f"{where}: {key} must be a number from 0 to {MAX_RATE:,.0f}"
                f" ($ per million tokens), not {value!r}"
            )
        rates[key] = float(value)
    return Price(rates["input"], rates["cached_input"], rates["output"], **notes, origin=origin)


def _warn_once(kind: str, model: str, message: str) -> None:
    with _warned_lock:
        if (kind, model) in _warned:
            return
        _warned.add((kind, model))
    warnings.warn(message, UnpricedWarning, stacklevel=3)
