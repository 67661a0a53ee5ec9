"""A small stock ledger: items, movements, reservations, CSV import/export, reorder points."""

from inventory.errors import (
    CsvFormatError,
    InsufficientStock,
    InventoryError,
    UnknownItem,
    UnknownReservation,
)
from inventory.items import Catalog, Item
from inventory.ledger import Ledger, Movement, MovementKind
from inventory.reorder import ReorderLine, order_quantity, suggest_reorders
from inventory.reservations import Reservation, ReservationBook

__version__ = "0.4.0"

__all__ = [
    "Catalog",
    "CsvFormatError",
    "InsufficientStock",
    "InventoryError",
    "Item",
    "Ledger",
    "Movement",
    "MovementKind",
    "ReorderLine",
    "Reservation",
    "ReservationBook",
    "UnknownItem",
    "UnknownReservation",
    "order_quantity",
    "suggest_reorders",
]
