import pytest

from pytest_toolpolicy.primitives import TOOLS, Toolbox
from pytest_toolpolicy.primitives.envelope import Envelope, HarnessFault, fail, ok
from pytest_toolpolicy.primitives.safefs import UnsafePath


def test_unknown_tool_and_bad_args_are_envelopes(box: Toolbox):
    assert box.call("bash", {"cmd": "ls"}) == {
        "ok": False,
        "error": "unknown tool: bash",
        "data": None,
    }
    assert (
        box.call("read_entity", ["x"])["error"]
        == "invalid args for read_entity: expected an object, got list"
    )
    assert box.call("read_entity", {})["error"] == "missing required arg: selector"
    assert box.call("search_code", {"query": ""})["error"] == "empty query"


def test_a_harness_exception_is_a_harness_fault_not_an_envelope(box: Toolbox, monkeypatch):
    def boom(*args, **kwargs):
        raise OSError("disk on fire")

    monkeypatch.setattr(box, "read_entity", boom)
    with pytest.raises(HarnessFault, match=r"^read_entity failed: OSError: disk on fire$") as info:
        box.call("read_entity", {"selector": "shop.cart"})
    assert isinstance(info.value.__cause__, OSError)


def test_a_primitive_error_inside_a_tool_stays_an_envelope(box: Toolbox, monkeypatch):
    def refuse(*args, **kwargs):
        raise UnsafePath("refusing src/shop/cart.py: it is a symbolic link")

    monkeypatch.setattr(box, "search_symbol", refuse)
    assert box.call("search_symbol", {"query": "Cart"}) == {
        "ok": False,
        "error": "refusing src/shop/cart.py: it is a symbolic link",
        "data": None,
    }


def test_every_tool_is_dispatched(box: Toolbox):
    assert TOOLS == (
        "read_entity",
        "search_symbol",
        "search_code",
        "edit_entity",
        "run_test",
        "execute",
    )
    for tool in TOOLS:
        assert callable(getattr(box, tool))


@pytest.mark.parametrize(
    ("tool", "args", "succeeded"),
    [
        ("read_entity", {"selector": "shop.cart.Cart"}, True),
        ("search_symbol", {"query": "Cart"}, True),
        ("read_entity", {"selector": "shop.nothere"}, False),
        ("search_code", {"query": ""}, False),
        ("read_entity", {}, False),
        ("bash", {"cmd": "ls"}, False),
    ],
)
def test_every_envelope_has_exactly_the_typed_keys(
    box: Toolbox, tool: str, args: dict, succeeded: bool
):
    envelope = box.call(tool, args)
    assert set(envelope) == Envelope.__required_keys__ == {"ok", "error", "data"}
    assert envelope["ok"] is succeeded
    if succeeded:
        assert envelope["error"] is None and isinstance(envelope["data"], dict)
    else:
        assert isinstance(envelope["error"], str) and envelope["error"]


def test_ok_and_fail_build_the_envelope_shape():
    assert ok({"n": 1}) == {"ok": True, "error": None, "data": {"n": 1}}
    assert fail("why") == {"ok": False, "error": "why", "data": None}
    assert fail("why", {"partial": True})["data"] == {"partial": True}
