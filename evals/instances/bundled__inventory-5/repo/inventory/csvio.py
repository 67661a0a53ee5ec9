"""CSV import and export of movements and of the item catalog.

Movement files have the columns of :data:`MOVEMENT_FIELDS`. Quantities are written the way a
person reads a stock sheet: receipts and issues as positive amounts (the ``kind`` column says
which way the stock moved), stock-take adjustments with their sign.
"""

from __future__ import annotations

import csv
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Iterable, TextIO

from inventory.errors import CsvFormatError, InventoryError
from inventory.items import Item
from inventory.ledger import Ledger, Movement, MovementKind

MOVEMENT_FIELDS = ("date", "sku", "kind", "quantity", "reference", "note")
ITEM_FIELDS = ("sku", "name", "unit", "reorder_point", "reorder_qty", "pack_size")


def export_movements(ledger: Ledger, stream: TextIO) -> int:
    """Write every movement of ``ledger`` to ``stream``; returns the number of rows."""
    writer = csv.DictWriter(stream, fieldnames=MOVEMENT_FIELDS, lineterminator="\n")
    writer.writeheader()
    movements = ledger.movements()
    for movement in movements:
        writer.writerow({
            "date": movement.on.isoformat(),
            "sku": movement.sku,
            "kind": movement.kind.value,
            "quantity": str(_sheet_quantity(movement)),
            "reference": movement.reference,
            "note": movement.note,
        })
    return len(movements)


def import_movements(ledger: Ledger, stream: TextIO) -> int:
    """Post every row of a movement file to ``ledger``; returns the number of rows.

    Rows are checked and posted in order; the first bad row stops the import with a
    :class:`CsvFormatError` naming its line.
    """
    reader = csv.DictReader(stream)
    _require_columns(reader.fieldnames, MOVEMENT_FIELDS)
    count = 0
    for row in reader:
        line = reader.line_num
        movement = _parse_movement(row, line)
        try:
            ledger.post(movement)
        except (InventoryError, ValueError) as exc:
            raise CsvFormatError(line, str(exc)) from exc
        count += 1
    return count


def write_items(items: Iterable[Item], stream: TextIO) -> None:
    """Write a catalog file."""
    writer = csv.DictWriter(stream, fieldnames=ITEM_FIELDS, lineterminator="\n")
    writer.writeheader()
    for item in items:
        writer.writerow({name: str(getattr(item, name)) for name in ITEM_FIELDS})


def read_items(stream: TextIO) -> list[Item]:
    """Read a catalog file; only ``sku`` and ``name`` are required columns."""
    reader = csv.DictReader(stream)
    _require_columns(reader.fieldnames, ("sku", "name"))
    items = []
    for row in reader:
        line = reader.line_num
        items.append(Item(
            sku=row["sku"].strip(),
            name=row["name"].strip(),
            unit=(row.get("unit") or "each").strip(),
            reorder_point=_optional_decimal(row, "reorder_point", Decimal(0), line),
            reorder_qty=_optional_decimal(row, "reorder_qty", Decimal(0), line),
            pack_size=_optional_decimal(row, "pack_size", Decimal(1), line),
        ))
    return items


def _sheet_quantity(movement: Movement) -> Decimal:
    """The quantity as written on a sheet: unsigned for receipts and issues."""
    if movement.kind is MovementKind.ADJUSTMENT:
        return movement.quantity
    return abs(movement.quantity)


def _signed_quantity(kind: MovementKind, quantity: Decimal) -> Decimal:
    """The ledger's signed quantity for a sheet quantity of this kind."""
    if kind is MovementKind.ISSUE:
        return -abs(quantity)
    if kind is MovementKind.RECEIPT:
        return abs(quantity)
    return quantity


def _parse_movement(row: dict[str, str], line: int) -> Movement:
    try:
        kind = MovementKind(row["kind"].strip().lower())
    except ValueError:
        raise CsvFormatError(line, f"unknown movement kind {row['kind']!r}") from None
    try:
        on = date.fromisoformat(row["date"].strip())
    except ValueError:
        raise CsvFormatError(line, f"bad date {row['date']!r} (expected YYYY-MM-DD)") from None
    quantity = _decimal(row["quantity"], "quantity", line)
    return Movement(
        sku=row["sku"].strip(),
        kind=kind,
        quantity=_signed_quantity(kind, quantity),
        on=on,
        reference=row.get("reference") or "",
        note=row.get("note") or "",
    )


def _decimal(text: str | None, column: str, line: int) -> Decimal:
    try:
        return Decimal((text or "").strip())
    except InvalidOperation:
        raise CsvFormatError(line, f"bad {column} {text!r}") from None


def _optional_decimal(row: dict[str, str], column: str, default: Decimal, line: int) -> Decimal:
    text = row.get(column)
    if text is None or not text.strip():
        return default
    return _decimal(text, column, line)


def _require_columns(found: Iterable[str] | None, required: Iterable[str]) -> None:
    missing = [name for name in required if name not in (found or ())]
    if missing:
        raise CsvFormatError(1, f"missing column(s): {', '.join(missing)}")
