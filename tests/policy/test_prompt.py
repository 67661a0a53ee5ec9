"""The selection prompt (spec §5): exact section order, bounded size, affordances gate."""

from __future__ import annotations

import json

from pytest_toolpolicy.policy.config import PolicyConfig
from pytest_toolpolicy.policy.ledger import Ledger
from pytest_toolpolicy.policy.prompt import (
    MAX_LINE_CHARS,
    MAX_VERBATIM_CHARS,
    build_prompt,
    ledger_line,
    preamble,
    verbatim,
)
from pytest_toolpolicy.policy.registry import RESERVED_LINES, candidate_line
from pytest_toolpolicy.policy.retrieve import Candidates, retrieve
from pytest_toolpolicy.types import Observation

CONFIG = PolicyConfig()
ISSUE = """Cart.total ignores the discount.

Steps: `Cart().total(discount=5)` returns the undiscounted sum.
  Indented line, trailing spaces   
"""  # noqa: W291
TOOLS = Candidates(tools=("read_entity", "search_symbol", "edit_entity", "run_test", "execute"))


def _obs(i: int) -> Observation:
    if i % 2:
        return Observation(
            "read_entity",
            f"shop.cart.Cart.m{i}",
            "ok: 12 lines",
            data={"entity": {"selector": f"shop.cart.Cart.m{i}"}, "body": "x" * 300},
        )
    return Observation(
        "run_test",
        "tests/test_cart.py",
        "failed (exit 1)",
        data={"passed": False, "exit_code": 1, "output": "E assert 10 == 5\n" * 40},
    )


def _ledger(n: int) -> Ledger:
    return Ledger().append(*(_obs(i) for i in range(n)))


def test_two_messages_and_the_exact_section_order():
    system, user = build_prompt(TOOLS, _ledger(3), ISSUE, CONFIG)
    assert system == {"role": "system", "content": preamble()}
    assert user["role"] == "user"
    text = user["content"]
    heads = [
        "## Candidate tools",
        "## Current state",
        "### Ledger",
        "### Latest observation",
        "## Issue",
    ]
    positions = [text.index(h) for h in heads]
    assert positions == sorted(positions) and positions[0] == 0
    assert text.endswith("## Issue\n" + ISSUE)  # verbatim, whitespace included


def test_preamble_is_agentless_first_with_the_exact_schema():
    text = preamble()
    for phrase in (
        "act rarely, act correctly, verify what you're told",
        "One action per turn",
        "ask_user and stop are valid and encouraged when you lack enough to act",
        "Prefer the minimal action",
        "no prose, no list",
    ):
        assert phrase in text
    assert '{"tool": "<name|ask_user|stop>", "args": {"<arg>": "<value>", ...}}' in text
    assert '{"tool": "ask_user", "args": {"question": "..."}}' in text
    assert '{"tool": "stop", "args": {"reason": "..."}}' in text


def test_candidate_lines_then_the_two_reserved_lines():
    text = build_prompt(TOOLS, Ledger(), ISSUE, CONFIG)[1]["content"]
    block = text.split("## Candidate tools\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert block == [
        *(candidate_line(t) for t in TOOLS.tools),
        RESERVED_LINES["ask_user"],
        RESERVED_LINES["stop"],
    ]
    assert len(block) <= 5 + 2


def test_without_affordances_the_reserved_lines_and_names_are_gone():
    system, user = build_prompt(TOOLS, Ledger(), ISSUE, CONFIG, affordances=False)
    assert "ask_user" not in system["content"] + user["content"]
    assert "stop —" not in user["content"]
    assert '{"tool": "<name>", "args"' in system["content"]


def test_last_20_ledger_entries_one_line_each():
    ledger = _ledger(50)
    text = build_prompt(TOOLS, ledger, ISSUE, CONFIG)[1]["content"]
    section = text.split("### Ledger (last 20 of 50 entries)\n", 1)[1].split("\n\n", 1)[0]
    assert section.splitlines() == [e.line() for e in ledger.entries[-20:]]
    narrow = PolicyConfig(ledger_window=3)
    assert "(last 3 of 50 entries)" in build_prompt(TOOLS, ledger, ISSUE, narrow)[1]["content"]


def test_empty_ledger_and_no_latest():
    text = build_prompt(TOOLS, Ledger(), ISSUE, CONFIG)[1]["content"]
    assert "### Ledger (last 0 of 0 entries)\n(empty)" in text
    assert "### Latest observation\n(none)" in text


def test_latest_observation_verbatim_as_json():
    ledger = _ledger(4)
    text = build_prompt(TOOLS, ledger, ISSUE, CONFIG)[1]["content"]
    shown = text.split("### Latest observation\n", 1)[1].split("\n\n## Issue", 1)[0]
    record = json.loads(shown)
    assert record["data"] == ledger.latest.data and record["kind"] == "read_entity"
    other = _obs(0)
    text = build_prompt(TOOLS, ledger, ISSUE, CONFIG, latest=other)[1]["content"]
    assert verbatim(other) in text


def test_a_huge_observation_is_capped_with_a_marker():
    huge = Observation("execute", "print", "ok", data={"stdout": "y" * 100_000})
    text = verbatim(huge)
    assert MAX_VERBATIM_CHARS == 4000 and len(text) < MAX_VERBATIM_CHARS + 60
    assert text.endswith(" chars shown]") and "… [truncated: 4000 of 100" in text


def test_the_prompt_does_not_grow_with_the_run():
    def size(n: int) -> int:
        ledger = _ledger(n)
        candidates = retrieve(ISSUE, ledger.latest.line(), CONFIG)
        return sum(len(m["content"]) for m in build_prompt(candidates, ledger, ISSUE, CONFIG))

    assert size(50) <= 1.2 * size(5)
    assert size(500) <= 1.01 * size(50)  # bounded by the window, not by the run


def test_a_long_target_is_cut_in_the_middle_so_the_result_stays_on_its_line():
    ids = " ".join(
        f"tests/test_utils.py::test_prepend[http://user:pass@host/p{i}?q]" for i in range(5)
    )
    entry = Observation("run_test", ids, {"passed": True, "exit_code": 0})
    line = ledger_line(entry, MAX_LINE_CHARS)
    assert len(entry.line()) > MAX_LINE_CHARS >= len(line)
    assert line.startswith("run_test, tests/test_utils.py::test_prepend[http://")
    assert line.endswith('p4?q], {"passed": true, "exit_code": 0}') and "…" in line
    short = Observation("run_test", "tests/t.py", {"passed": True, "exit_code": 0})
    assert ledger_line(short, MAX_LINE_CHARS) == short.line()
    # A line that is long for its result alone keeps the plain cut and its marker.
    wordy = Observation("lint", "m.f", "E" * 500)
    assert ledger_line(wordy, MAX_LINE_CHARS).endswith("[truncated: 240 of 511 chars shown]")
