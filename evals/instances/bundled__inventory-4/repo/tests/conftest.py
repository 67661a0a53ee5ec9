from datetime import date
from decimal import Decimal

import pytest

from inventory import Catalog, Item, Ledger, ReservationBook

DAY = date(2024, 3, 1)


@pytest.fixture
def catalog():
    return Catalog([
        Item("BOLT-M6", "Hex bolt M6", reorder_point=Decimal(20), reorder_qty=Decimal(100)),
        Item("NUT-M6", "Hex nut M6", reorder_point=Decimal(50), reorder_qty=Decimal(200)),
        Item("OIL-5W30", "Engine oil 5W-30", unit="l", reorder_point=Decimal("10.5")),
        Item("WASHER", "Flat washer", reorder_qty=Decimal(500)),
    ])


@pytest.fixture
def ledger(catalog):
    return Ledger(catalog)


@pytest.fixture
def book(ledger):
    return ReservationBook(ledger)
