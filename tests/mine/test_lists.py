"""Test lists derived from runs (``lists.derive``)."""

from __future__ import annotations

from pytest_toolpolicy.mine.lists import derive

T = "t.py::"


def test_fail_to_pass_and_pass_to_pass() -> None:
    before = {T + "a": "failed", T + "b": "passed", T + "c": "error", T + "d": "skipped"}
    after = {T + "a": "passed", T + "b": "passed", T + "c": "passed", T + "d": "passed"}
    lists = derive([before, before], [after, after])
    assert lists.fail_to_pass == (T + "a", T + "c")
    assert lists.pass_to_pass == (T + "b",)
    assert lists.flaky == ()


def test_a_test_the_patch_makes_collectable_is_fail_to_pass() -> None:
    """Before the patch the test file imports a name that is not there: nothing collects."""
    lists = derive([{}, {}], [{T + "new": "passed"}, {T + "new": "passed"}])
    assert lists.fail_to_pass == (T + "new",)


def test_what_fails_after_or_is_removed_is_in_neither_list() -> None:
    before = {T + "a": "passed", T + "gone": "passed", T + "b": "failed"}
    after = {T + "a": "failed", T + "b": "skipped"}
    lists = derive([before, before], [after, after])
    assert (lists.fail_to_pass, lists.pass_to_pass, lists.flaky) == ((), (), ())


def test_a_test_that_varies_between_runs_of_a_side_is_flaky() -> None:
    first = {T + "a": "failed", T + "b": "passed", T + "c": "passed"}
    second = {T + "a": "passed", T + "b": "passed"}  # a flips; c is not there the second time
    after = {T + "a": "passed", T + "b": "passed", T + "c": "passed"}
    lists = derive([first, second], [after, after])
    assert lists.flaky == (T + "a", T + "c")
    assert (lists.fail_to_pass, lists.pass_to_pass) == ((), (T + "b",))
    flips_after = derive([after, after], [after, {**after, T + "b": "failed"}])
    assert flips_after.flaky == (T + "b",) and T + "b" not in flips_after.pass_to_pass
