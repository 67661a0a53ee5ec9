"""A user's own test, run by `make wheel-check` from an empty directory against the installed
wheel: the plugin's fixtures work there with nothing from this repository."""


def test_the_toolbox_fixture_gives_the_six_primitives(toolpolicy_toolbox):
    box = toolpolicy_toolbox({"pkg/mod.py": "def double(x):\n    return 2 * x\n"})
    found = box.call("search_symbol", {"query": "double"})
    assert found["ok"] and found["data"]["matches"][0]["selector"] == "pkg.mod.double"
    ran = box.call("execute", {"code": "print(6 * 7)"})
    assert ran["ok"] and ran["data"]["stdout"].strip() == "42"
