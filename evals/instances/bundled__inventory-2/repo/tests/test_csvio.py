import io
from decimal import Decimal

import pytest

from inventory import Catalog, CsvFormatError, Item, Ledger
from inventory.csvio import export_movements, import_movements, read_items, write_items

from .conftest import DAY

HEADER = "date,sku,kind,quantity,reference,note\n"


def test_export_writes_sheet_quantities(ledger):
    ledger.receive("BOLT-M6", Decimal(40), reference="PO-1", on=DAY)
    ledger.issue("BOLT-M6", Decimal(15), reference="SO-1", note="urgent, call first", on=DAY)
    out = io.StringIO()
    assert export_movements(ledger, out) == 2
    assert out.getvalue() == (
        HEADER
        + "2024-03-01,BOLT-M6,receipt,40,PO-1,\n"
        + '2024-03-01,BOLT-M6,issue,15,SO-1,"urgent, call first"\n'
    )


def test_round_trip_receipts_and_issues(catalog, ledger):
    ledger.receive("NUT-M6", Decimal(100), reference="PO-2", on=DAY)
    ledger.issue("NUT-M6", Decimal(30), reference="SO-2", on=DAY)
    ledger.receive("OIL-5W30", Decimal("12.5"), on=DAY)
    out = io.StringIO()
    export_movements(ledger, out)
    copy = Ledger(catalog)
    assert import_movements(copy, io.StringIO(out.getvalue())) == 3
    assert copy.movements() == ledger.movements()


def test_import_positive_adjustment(ledger):
    text = HEADER + "2024-03-01,BOLT-M6,receipt,10,,\n2024-03-02,BOLT-M6,adjustment,2,,found\n"
    import_movements(ledger, io.StringIO(text))
    assert ledger.on_hand("BOLT-M6") == Decimal(12)


def test_import_reports_the_bad_line(ledger):
    text = HEADER + "2024-03-01,BOLT-M6,receipt,10,,\n2024-03-01,BOLT-M6,issue,11,,\n"
    with pytest.raises(CsvFormatError, match="line 3"):
        import_movements(ledger, io.StringIO(text))
    assert ledger.on_hand("BOLT-M6") == Decimal(10)


@pytest.mark.parametrize("row, message", [
    ("2024-03-01,BOLT-M6,theft,1,,", "unknown movement kind"),
    ("01/03/2024,BOLT-M6,receipt,1,,", "bad date"),
    ("2024-03-01,BOLT-M6,receipt,lots,,", "bad quantity"),
    ("2024-03-01,NOPE,receipt,1,,", "unknown item"),
], ids=["kind", "date", "quantity", "sku"])
def test_import_rejects_bad_rows(ledger, row, message):
    with pytest.raises(CsvFormatError, match=message):
        import_movements(ledger, io.StringIO(HEADER + row + "\n"))


def test_import_requires_columns(ledger):
    with pytest.raises(CsvFormatError, match="missing column"):
        import_movements(ledger, io.StringIO("sku,quantity\nBOLT-M6,1\n"))


def test_read_items_defaults():
    items = read_items(io.StringIO("sku,name\nA,Alpha\n"))
    assert items == [Item("A", "Alpha")]


def test_items_round_trip(catalog):
    out = io.StringIO()
    write_items(catalog, out)
    copy = Catalog(read_items(io.StringIO(out.getvalue())))
    assert list(copy) == list(catalog)
