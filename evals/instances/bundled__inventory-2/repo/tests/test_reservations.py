from decimal import Decimal

import pytest

from inventory import InsufficientStock, UnknownReservation

from .conftest import DAY


def test_reservation_reduces_available_not_on_hand(ledger, book):
    ledger.receive("BOLT-M6", Decimal(40), on=DAY)
    book.reserve("BOLT-M6", Decimal(25), order_ref="SO-7")
    assert ledger.on_hand("BOLT-M6") == Decimal(40)
    assert book.reserved("BOLT-M6") == Decimal(25)
    assert book.available("BOLT-M6") == Decimal(15)


def test_cannot_reserve_more_than_available(ledger, book):
    ledger.receive("BOLT-M6", Decimal(10), on=DAY)
    book.reserve("BOLT-M6", Decimal(8), order_ref="SO-1")
    with pytest.raises(InsufficientStock):
        book.reserve("BOLT-M6", Decimal(3), order_ref="SO-2")


def test_release_makes_stock_available_again(ledger, book):
    ledger.receive("BOLT-M6", Decimal(10), on=DAY)
    reservation = book.reserve("BOLT-M6", Decimal(8), order_ref="SO-1")
    book.release(reservation.id)
    assert book.available("BOLT-M6") == Decimal(10)
    assert book.open_reservations() == []


def test_fulfil_issues_the_reserved_stock(ledger, book):
    ledger.receive("NUT-M6", Decimal(30), on=DAY)
    reservation = book.reserve("NUT-M6", Decimal(12), order_ref="SO-3")
    movement = book.fulfil(reservation.id, on=DAY)
    assert movement.reference == "SO-3"
    assert movement.quantity == Decimal(-12)
    assert ledger.on_hand("NUT-M6") == Decimal(18)


def test_unknown_reservation(book):
    with pytest.raises(UnknownReservation):
        book.release(99)
    with pytest.raises(KeyError):
        book.get(99)


def test_open_reservations_by_sku(ledger, book):
    ledger.receive("NUT-M6", Decimal(30), on=DAY)
    ledger.receive("BOLT-M6", Decimal(30), on=DAY)
    book.reserve("NUT-M6", Decimal(1), order_ref="SO-1")
    book.reserve("BOLT-M6", Decimal(2), order_ref="SO-2")
    assert [r.order_ref for r in book.open_reservations("BOLT-M6")] == ["SO-2"]
