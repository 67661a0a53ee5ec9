from pytest_toolpolicy.demo import run


def test_demo_walks_the_six_primitives_and_fixes_the_bug():
    lines: list[str] = []
    assert run(lines.append) == 0
    text = "\n".join(lines)
    steps = [line for line in lines if line.startswith("   -> ")]
    assert len(steps) == 8
    assert '"passed": false' in steps[3]  # the failing test, before the fix
    assert '"committed": true' in steps[4]
    assert steps[5].startswith("   -> ok=false error='lint gate refused the edit")
    assert '"passed": true' in steps[6]  # after the fix
    assert "'lo'" in steps[7] and "eth" not in steps[7]  # no network inside the sandbox
    assert "-        if expires is not None and self._clock() > expires:" in text
    assert "+        if expires is not None and self._clock() >= expires:" in text
