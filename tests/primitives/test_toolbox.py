from pytest_toolpolicy.primitives import TOOLS, Toolbox


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


def test_a_harness_fault_is_an_envelope_not_a_crash(box: Toolbox, monkeypatch):
    def boom(*args, **kwargs):
        raise OSError("disk on fire")

    monkeypatch.setattr(box, "read_entity", boom)
    env = box.call("read_entity", {"selector": "shop.cart"})
    assert env == {"ok": False, "error": "read_entity failed: OSError: disk on fire", "data": None}


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
