"""Exceptions raised by the inventory package."""

from __future__ import annotations


class InventoryError(Exception):
    """Base class for every error the package raises on purpose."""


class UnknownItem(InventoryError, KeyError):
    """A SKU that is not in the catalog."""

    def __init__(self, sku: str) -> None:
        super().__init__(sku)
        self.sku = sku

    def __str__(self) -> str:
        return f"unknown item: {self.sku}"


class InsufficientStock(InventoryError):
    """An issue or reservation asked for more than is available."""

    def __init__(self, sku: str, requested, available) -> None:
        super().__init__(sku, requested, available)
        self.sku = sku
        self.requested = requested
        self.available = available

    def __str__(self) -> str:
        return f"cannot take {self.requested} of {self.sku}: only {self.available} available"


class UnknownReservation(InventoryError, KeyError):
    """A reservation id that is not (or no longer) open."""

    def __str__(self) -> str:
        return f"no open reservation {self.args[0]}"


class CsvFormatError(InventoryError, ValueError):
    """A CSV file that cannot be imported; the message names the line."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
