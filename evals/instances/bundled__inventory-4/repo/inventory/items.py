"""Items and the catalog that holds them."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Iterable, Iterator

from inventory.errors import UnknownItem

DISCRETE_UNITS = frozenset({"each", "box", "pair"})


@dataclass(frozen=True)
class Item:
    """A stocked item.

    ``reorder_point`` is the available quantity at or below which the item should be reordered,
    ``reorder_qty`` the quantity a reorder brings in at least, and ``pack_size`` the supplier's
    pack: orders are placed in whole packs.
    """

    sku: str
    name: str
    unit: str = "each"
    reorder_point: Decimal = Decimal(0)
    reorder_qty: Decimal = Decimal(0)
    pack_size: Decimal = Decimal(1)

    def __post_init__(self) -> None:
        if not self.sku or self.sku != self.sku.strip():
            raise ValueError(f"invalid SKU: {self.sku!r}")
        if self.pack_size <= 0:
            raise ValueError(f"{self.sku}: pack size must be positive, got {self.pack_size}")

    @property
    def is_discrete(self) -> bool:
        """Whether the item is counted in whole units (as opposed to weighed or measured)."""
        return self.unit in DISCRETE_UNITS


class Catalog:
    """The set of known items, keyed by SKU."""

    def __init__(self, items: Iterable[Item] = ()) -> None:
        self._items: dict[str, Item] = {}
        for item in items:
            self.add(item)

    def add(self, item: Item) -> None:
        """Add an item; a SKU can only be added once."""
        if item.sku in self._items:
            raise ValueError(f"duplicate SKU: {item.sku}")
        self._items[item.sku] = item

    def get(self, sku: str) -> Item:
        """The item with this SKU, or :class:`UnknownItem`."""
        try:
            return self._items[sku]
        except KeyError:
            raise UnknownItem(sku) from None

    def __contains__(self, sku: object) -> bool:
        return sku in self._items

    def __iter__(self) -> Iterator[Item]:
        return iter(sorted(self._items.values(), key=lambda item: item.sku))

    def __len__(self) -> int:
        return len(self._items)
