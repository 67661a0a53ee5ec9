"""Reorder suggestions: which items have fallen to their reorder point, and how much to buy."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal

from inventory.items import Catalog, Item
from inventory.reservations import ReservationBook


@dataclass(frozen=True)
class ReorderLine:
    """One suggested purchase."""

    sku: str
    available: Decimal
    reorder_point: Decimal
    quantity: Decimal


def order_quantity(item: Item, available: Decimal) -> Decimal:
    """How much to order so that stock gets back above the reorder point.

    At least ``item.reorder_qty``, and at least enough to lift ``available`` one unit above the
    reorder point, rounded up to whole supplier packs.
    """
    shortfall = item.reorder_point - available + 1
    wanted = max(item.reorder_qty, shortfall)
    packs = (wanted / item.pack_size).to_integral_value(rounding=ROUND_CEILING)
    return packs * item.pack_size


def needs_reorder(item: Item, available: Decimal) -> bool:
    """Whether an item at this availability should be reordered."""
    return item.reorder_point > 0 and available <= item.reorder_point


def suggest_reorders(catalog: Catalog, book: ReservationBook) -> list[ReorderLine]:
    """Reorder lines for every catalog item at or below its reorder point, by SKU."""
    lines = []
    for item in catalog:
        available = book.available(item.sku)
        if needs_reorder(item, available):
            lines.append(ReorderLine(item.sku, available, item.reorder_point,
                                     order_quantity(item, available)))
    return lines
