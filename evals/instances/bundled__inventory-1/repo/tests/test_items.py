from decimal import Decimal

import pytest

from inventory import Catalog, Item, UnknownItem


def test_catalog_lookup(catalog):
    assert catalog.get("NUT-M6").name == "Hex nut M6"
    assert "NUT-M6" in catalog
    assert len(catalog) == 4


def test_unknown_sku_is_a_key_error(catalog):
    with pytest.raises(KeyError) as info:
        catalog.get("NOPE")
    assert isinstance(info.value, UnknownItem)
    assert str(info.value) == "unknown item: NOPE"


def test_catalog_iterates_by_sku(catalog):
    assert [item.sku for item in catalog] == ["BOLT-M6", "NUT-M6", "OIL-5W30", "WASHER"]


def test_duplicate_sku_rejected():
    with pytest.raises(ValueError, match="duplicate SKU"):
        Catalog([Item("A", "first"), Item("A", "second")])


@pytest.mark.parametrize("sku", ["", " A", "A "], ids=["empty", "leading-space", "trailing-space"])
def test_invalid_sku_rejected(sku):
    with pytest.raises(ValueError):
        Item(sku, "thing")


def test_pack_size_must_be_positive():
    with pytest.raises(ValueError, match="pack size"):
        Item("A", "thing", pack_size=Decimal(0))


def test_discrete_units():
    assert Item("A", "bolt").is_discrete
    assert not Item("B", "oil", unit="l").is_discrete
