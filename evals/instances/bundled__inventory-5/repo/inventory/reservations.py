"""Reservations: stock promised to customer orders but not yet shipped."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from inventory.errors import InsufficientStock, UnknownReservation
from inventory.ledger import Ledger, Movement


@dataclass(frozen=True)
class Reservation:
    """``quantity`` of ``sku`` held for the order ``order_ref``."""

    id: int
    sku: str
    quantity: Decimal
    order_ref: str


class ReservationBook:
    """Open reservations against one ledger.

    Reserved stock is still on hand but no longer *available*: ``available = on_hand - reserved``.
    Shipping an order (:meth:`fulfil`) turns its reservation into an issue on the ledger.
    """

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self._open: dict[int, Reservation] = {}
        self._ids = itertools.count(1)

    def reserve(self, sku: str, quantity: Decimal, order_ref: str) -> Reservation:
        """Hold stock for an order; fails if less than ``quantity`` is available."""
        if quantity <= 0:
            raise ValueError(f"quantity must be positive, got {quantity}")
        available = self.available(sku)
        if quantity > available:
            raise InsufficientStock(sku, quantity, available)
        reservation = Reservation(next(self._ids), sku, quantity, order_ref)
        self._open[reservation.id] = reservation
        return reservation

    def release(self, reservation_id: int) -> Reservation:
        """Cancel a reservation; the stock becomes available again."""
        return self._take(reservation_id)

    def fulfil(self, reservation_id: int, on: date | None = None) -> Movement:
        """Ship a reserved order: issue its stock and close the reservation."""
        reservation = self._take(reservation_id)
        return self.ledger.issue(reservation.sku, reservation.quantity,
                                 reference=reservation.order_ref, on=on)

    def get(self, reservation_id: int) -> Reservation:
        """The open reservation with this id, or :class:`UnknownReservation`."""
        try:
            return self._open[reservation_id]
        except KeyError:
            raise UnknownReservation(reservation_id) from None

    def reserved(self, sku: str) -> Decimal:
        """The total quantity of ``sku`` held by open reservations."""
        return sum((r.quantity for r in self._open.values() if r.sku == sku), Decimal(0))

    def available(self, sku: str) -> Decimal:
        """What can still be promised: on hand minus reserved."""
        return self.ledger.on_hand(sku) - self.reserved(sku)

    def open_reservations(self, sku: str | None = None) -> list[Reservation]:
        """Open reservations in the order they were made."""
        return [r for r in self._open.values() if sku is None or r.sku == sku]

    def _take(self, reservation_id: int) -> Reservation:
        try:
            return self._open.pop(reservation_id)
        except KeyError:
            raise UnknownReservation(reservation_id) from None
