import pytest

ORDINARY = """
import pytest

@pytest.fixture
def value():
    return 41

def test_one(value):
    assert value + 1 == 42

@pytest.mark.parametrize("x", [1, 2])
def test_two(x):
    assert x

def test_fails():
    assert 0
"""


def test_plugin_is_registered_and_inert(pytester: pytest.Pytester):
    pytester.makepyfile(ORDINARY)
    # Subprocess runs, as a user's: the plugin is loaded from its entry point.
    loaded = pytester.runpytest_subprocess("--trace-config", "--setup-plan")
    loaded.stdout.fnmatch_lines(["*pytest_toolpolicy/plugin.py*"])
    plan = [line for line in loaded.outlines if "SETUP" in line or "fixtures used" in line]
    assert plan and not [line for line in plan if "toolpolicy" in line]
    with_plugin = pytester.runpytest_subprocess()
    without = pytester.runpytest_subprocess("-p", "no:toolpolicy")
    with_plugin.assert_outcomes(passed=3, failed=1)
    without.assert_outcomes(passed=3, failed=1)
    assert "warning" not in with_plugin.stdout.str().lower()


def test_toolbox_fixture_for_users_tests(pytester: pytest.Pytester):
    pytester.makepyfile(
        """
        def test_user(toolpolicy_toolbox):
            box = toolpolicy_toolbox({"calc.py": "def add(a, b):\\n    return a - b\\n"})
            env = box.call("read_entity", {"selector": "calc.add", "body": True})
            assert env["data"]["body"].endswith("return a - b")
            fixed = box.call("edit_entity", {"selector": "calc.add", "search": "a - b", "replace": "a + b"})
            assert fixed["data"]["committed"]
            assert "+    return a + b" in box.workspace.patch()
        """
    )
    pytester.runpytest().assert_outcomes(passed=1)
