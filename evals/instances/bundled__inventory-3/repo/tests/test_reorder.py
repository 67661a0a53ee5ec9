from decimal import Decimal

from inventory import Item, order_quantity, suggest_reorders

from .conftest import DAY


def test_items_above_reorder_point_are_not_suggested(catalog, ledger, book):
    ledger.receive("BOLT-M6", Decimal(40), on=DAY)
    ledger.receive("NUT-M6", Decimal(60), on=DAY)
    ledger.receive("OIL-5W30", Decimal(11), on=DAY)
    assert suggest_reorders(catalog, book) == []


def test_item_at_reorder_point_is_suggested(catalog, ledger, book):
    ledger.receive("BOLT-M6", Decimal(20), on=DAY)
    ledger.receive("NUT-M6", Decimal(60), on=DAY)
    ledger.receive("OIL-5W30", Decimal(11), on=DAY)
    [line] = suggest_reorders(catalog, book)
    assert (line.sku, line.available, line.quantity) == ("BOLT-M6", Decimal(20), Decimal(100))


def test_reservations_count_against_reorder_point(catalog, ledger, book):
    ledger.receive("BOLT-M6", Decimal(40), on=DAY)
    ledger.receive("NUT-M6", Decimal(60), on=DAY)
    ledger.receive("OIL-5W30", Decimal(11), on=DAY)
    book.reserve("BOLT-M6", Decimal(25), order_ref="SO-7")
    [line] = suggest_reorders(catalog, book)
    assert line.sku == "BOLT-M6"
    assert line.available == Decimal(15)


def test_items_without_reorder_point_are_never_suggested(catalog, book):
    skus = [line.sku for line in suggest_reorders(catalog, book)]
    assert "WASHER" not in skus
    assert skus == ["BOLT-M6", "NUT-M6", "OIL-5W30"]


def test_order_quantity_is_at_least_reorder_qty():
    item = Item("A", "thing", reorder_point=Decimal(20), reorder_qty=Decimal(100))
    assert order_quantity(item, Decimal(15)) == Decimal(100)


def test_order_quantity_covers_the_shortfall():
    item = Item("A", "thing", reorder_point=Decimal(20))
    assert order_quantity(item, Decimal(15)) == Decimal(6)
