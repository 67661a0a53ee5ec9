from decimal import Decimal

import pytest

from inventory import InsufficientStock, MovementKind, UnknownItem

from .conftest import DAY


def test_receive_and_issue(ledger):
    ledger.receive("BOLT-M6", Decimal(40), reference="PO-1", on=DAY)
    ledger.issue("BOLT-M6", Decimal(15), reference="SO-1", on=DAY)
    assert ledger.on_hand("BOLT-M6") == Decimal(25)


def test_issue_is_stored_negative(ledger):
    ledger.receive("NUT-M6", Decimal(10), on=DAY)
    movement = ledger.issue("NUT-M6", Decimal(4), on=DAY)
    assert movement.kind is MovementKind.ISSUE
    assert movement.quantity == Decimal(-4)


def test_cannot_issue_more_than_on_hand(ledger):
    ledger.receive("BOLT-M6", Decimal(5), on=DAY)
    with pytest.raises(InsufficientStock) as info:
        ledger.issue("BOLT-M6", Decimal(6), on=DAY)
    assert info.value.available == Decimal(5)
    assert ledger.on_hand("BOLT-M6") == Decimal(5)
    assert len(ledger.movements()) == 1


def test_fractional_quantities(ledger):
    ledger.receive("OIL-5W30", Decimal("20.5"), on=DAY)
    ledger.issue("OIL-5W30", Decimal("0.75"), on=DAY)
    assert ledger.on_hand("OIL-5W30") == Decimal("19.75")


@pytest.mark.parametrize("quantity", [Decimal(0), Decimal(-3)], ids=["zero", "negative"])
def test_quantities_must_be_positive(ledger, quantity):
    with pytest.raises(ValueError):
        ledger.receive("BOLT-M6", quantity, on=DAY)


def test_unknown_item_rejected(ledger):
    with pytest.raises(UnknownItem):
        ledger.receive("NOPE", Decimal(1), on=DAY)


def test_adjust_records_the_difference(ledger):
    ledger.receive("NUT-M6", Decimal(100), on=DAY)
    movement = ledger.adjust("NUT-M6", Decimal(97), note="stock-take", on=DAY)
    assert movement.kind is MovementKind.ADJUSTMENT
    assert movement.quantity == Decimal(-3)
    assert ledger.on_hand("NUT-M6") == Decimal(97)


def test_adjust_without_change_records_nothing(ledger):
    ledger.receive("NUT-M6", Decimal(100), on=DAY)
    assert ledger.adjust("NUT-M6", Decimal(100), on=DAY) is None
    assert len(ledger.movements()) == 1


def test_movements_filtered_by_sku(ledger):
    ledger.receive("NUT-M6", Decimal(1), on=DAY)
    ledger.receive("BOLT-M6", Decimal(2), on=DAY)
    assert [m.sku for m in ledger.movements("BOLT-M6")] == ["BOLT-M6"]
    assert len(ledger.movements()) == 2
