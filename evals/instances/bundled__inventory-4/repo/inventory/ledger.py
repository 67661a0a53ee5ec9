"""The stock ledger: an append-only list of movements and the balances they imply."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from inventory.errors import InsufficientStock
from inventory.items import Catalog


class MovementKind(str, enum.Enum):
    """Why stock moved."""

    RECEIPT = "receipt"
    ISSUE = "issue"
    ADJUSTMENT = "adjustment"


@dataclass(frozen=True)
class Movement:
    """One change of stock. ``quantity`` is signed: receipts add, issues take away."""

    sku: str
    kind: MovementKind
    quantity: Decimal
    on: date
    reference: str = ""
    note: str = ""


@dataclass
class Ledger:
    """Movements for the items of one catalog, with running balances per SKU."""

    catalog: Catalog
    _movements: list[Movement] = field(default_factory=list, init=False, repr=False)
    _balances: dict[str, Decimal] = field(default_factory=dict, init=False, repr=False)

    def receive(self, sku: str, quantity: Decimal, *, reference: str = "", note: str = "",
                on: date | None = None) -> Movement:
        """Book goods in: ``quantity`` must be positive."""
        _require_positive(quantity)
        return self.post(Movement(sku, MovementKind.RECEIPT, quantity, on or date.today(),
                                  reference, note))

    def issue(self, sku: str, quantity: Decimal, *, reference: str = "", note: str = "",
              on: date | None = None) -> Movement:
        """Book goods out: ``quantity`` must be positive and at most what is on hand."""
        _require_positive(quantity)
        return self.post(Movement(sku, MovementKind.ISSUE, -quantity, on or date.today(),
                                  reference, note))

    def adjust(self, sku: str, counted: Decimal, *, note: str = "",
               on: date | None = None) -> Movement | None:
        """Record a stock-take: set the balance to ``counted``. Returns None if nothing changed."""
        if counted < 0:
            raise ValueError(f"a stock count cannot be negative, got {counted}")
        delta = counted - self.on_hand(sku)
        if delta == 0:
            return None
        return self.post(Movement(sku, MovementKind.ADJUSTMENT, delta, on or date.today(),
                                  note=note))

    def post(self, movement: Movement) -> Movement:
        """Append a movement after checking it; the single way stock changes."""
        self.catalog.get(movement.sku)
        if movement.quantity == 0:
            raise ValueError("a movement must change stock")
        balance = self.on_hand(movement.sku) + movement.quantity
        if balance < 0:
            raise InsufficientStock(movement.sku, -movement.quantity, self.on_hand(movement.sku))
        self._movements.append(movement)
        self._balances[movement.sku] = balance
        return movement

    def on_hand(self, sku: str) -> Decimal:
        """The physical quantity in stock."""
        self.catalog.get(sku)
        return self._balances.get(sku, Decimal(0))

    def movements(self, sku: str | None = None) -> list[Movement]:
        """Movements in posting order, optionally for one SKU only."""
        if sku is None:
            return list(self._movements)
        return [movement for movement in self._movements if movement.sku == sku]


def _require_positive(quantity: Decimal) -> None:
    if quantity <= 0:
        raise ValueError(f"quantity must be positive, got {quantity}")
