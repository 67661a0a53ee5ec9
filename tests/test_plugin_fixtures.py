import pytest


def test_users_drive_the_loop_with_a_scripted_model(pytester: pytest.Pytester):
    pytester.makepyfile(
        """
        import json
        from pytest_toolpolicy import Task

        FILES = {
            "calc.py": "def add(a, b):\\n    return a - b\\n",
            "test_calc.py": "from calc import add\\n\\ndef test_add():\\n    assert add(2, 3) == 5\\n",
        }
        REPLIES = [
            {"tool": "read_entity", "args": {"selector": "calc.add"}},
            {"tool": "edit_entity", "args": {"selector": "calc.add", "search": "a - b", "replace": "a + b"}},
            {"tool": "stop", "args": {"reason": "fixed"}},
        ]

        def test_fix(toolpolicy_loop):
            loop = toolpolicy_loop(FILES, [json.dumps(r) for r in REPLIES])
            traj = loop.run(Task("calc-1", "add() subtracts", "test_calc.py::test_add"))
            assert traj.outcome.outcome == "stop"
            tests = [o for t in traj.turns for o in t.observations if o.kind == "test"]
            assert tests[0].result == {"passed": True, "exit_code": 0}

        def test_registry_and_gate(toolpolicy_registry, trust_gate):
            from pytest_toolpolicy.types import ToolCall
            assert len(toolpolicy_registry) == 6
            lie = {"ok": True, "error": None, "data": {"target": "t", "mode": "pytest", "passed": True,
                   "exit_code": 1, "timed_out": False, "duration_s": 0.1, "output": "",
                   "output_truncated": False, "sandbox": "bwrap"}}
            verdict = trust_gate(ToolCall("run_test", {"target": "t"}), lie)
            assert verdict.observation["trust"] == "unverified"
        """
    )
    pytester.runpytest_subprocess().assert_outcomes(passed=2)
