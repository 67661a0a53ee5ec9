"""The report header's count of instances, and the load errors it lists, off hand-built facts."""

from __future__ import annotations

import pytest

from pytest_toolpolicy.decide.header import header_lines

BASE = {"model": "sim", "dataset": "bundled", "seed": 0, "tests_visible": True}


@pytest.mark.parametrize(
    ("counts", "line"),
    [
        ((25, 5, 25, 25), "25 instances (5 under-specified), seed 0;"),
        ((1, 0, 1, 25), "1 instance (0 under-specified) of 25 loaded, seed 0;"),
        ((23, 5, 25, 25), "23 instances (5 under-specified) measured of 25 run, seed 0;"),
        ((1, 0, 2, 25), "1 instance (0 under-specified) measured of 2 run, of 25 loaded, seed 0;"),
        ((0, 0, 2, 2), "0 instances (0 under-specified) measured of 2 run, seed 0;"),
        ((20, 2, None, None), "20 instances (2 under-specified), seed 0;"),  # a report from before
    ],
)
def test_the_header_counts_what_was_measured_then_what_ran_and_was_loaded(
    counts: tuple[int, int, int | None, int | None], line: str
) -> None:
    n, under, run, loaded = counts
    meta = {**BASE, "n_instances": n, "n_underspecified": under}
    meta |= {"n_instances_run": run, "n_instances_loaded": loaded}
    assert header_lines(meta)[1].startswith(line)


def test_the_header_lists_the_load_errors_naming_instance_and_field() -> None:
    errors = [f"instance x-{n}: field test_patch: line 1 names '/etc/passwd'" for n in range(7)]
    lines = header_lines({**BASE, "n_instances": 1, "n_underspecified": 0, "load_errors": errors})
    at = lines.index("instances that could not be loaded: 7 (not run)")
    assert lines[at + 1 : at + 7] == [f"  {e}" for e in errors[:5]] + ["  ... and 2 more"]


def test_the_header_names_the_repositories_and_groups_exclusions_by_reason() -> None:
    excluded = [
        f"django__django-{n}: no mirror of django/django at m/django__django" for n in range(231)
    ]
    excluded += ["sympy__sympy-1: no environment spec for sympy/sympy 0.7", "x__y-1: odd"]
    meta = {**BASE, "n_instances": 20, "n_underspecified": 0, "excluded": excluded}
    meta |= {
        "repositories": "4 repositories: a/a 5, b/b 5, c/c 5, d/d 5",
        "sampling": ["sample of 20 of 88, seed 0, stratified by repository", "sample: 4 repo..."],
    }
    lines = header_lines(meta)
    assert (
        "measured: 4 repositories: a/a 5, b/b 5, c/c 5, d/d 5 "
        "(sample of 20 of 88, seed 0, stratified by repository)"
    ) in lines
    assert (
        "excluded (cannot run here): 233: no mirror of django/django at m/django__django ×231; "
        "no environment spec for sympy/sympy 0.7 ×1; odd ×1"
    ) in lines


def test_the_header_says_in_words_when_the_runs_saw_the_host() -> None:
    meta = {**BASE, "n_instances": 1, "n_underspecified": 0, "sandbox": "degraded"}
    chosen = header_lines({**meta, "sandbox_opt_in": "TOOLPOLICY_SANDBOX=degraded"})
    assert (
        "sandbox: DEGRADED \u2014 runs saw the host's files and network"
        " (TOOLPOLICY_SANDBOX=degraded)"
    ) in chosen
    fallen_back = header_lines(meta)  # sim where bubblewrap cannot run: as before
    assert "sandbox: DEGRADED (no bubblewrap): tests and commands ran unconfined" in fallen_back
    assert not any("DEGRADED" in line for line in header_lines({**meta, "sandbox": "bwrap"}))
