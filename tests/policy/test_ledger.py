from pytest_toolpolicy.policy.ledger import Ledger, noop_observation
from pytest_toolpolicy.policy.validate import rejection_observation
from pytest_toolpolicy.types import Observation, Rejection


def test_append_is_pure_and_collects_evidence_from_trusted_records_only():
    empty = Ledger()
    read = Observation("read_entity", "a.b", "function def b():", cites=("a.b",))
    doubtful = Observation(
        "search_symbol",
        "c",
        "1 matches: x.c",
        trust="unverified",
        caveat="round_trip",
        cites=("x.c",),
    )
    ledger = empty.append(read, doubtful)
    assert empty.entries == () and empty.evidence == frozenset()
    assert ledger.evidence == {"a.b"}  # an unverified search is not evidence
    assert ledger.latest is doubtful


def test_collapsed_is_the_last_window_one_line_each():
    ledger = Ledger()
    for i in range(30):
        ledger = ledger.append(Observation("run_test", f"t{i}", {"passed": False, "exit_code": 1}))
    lines = ledger.collapsed(20)
    assert len(lines) == 20 and lines[0] == 'run_test, t10, {"passed": false, "exit_code": 1}'
    assert all("\n" not in line for line in lines)


def test_round_trip():
    ledger = (
        Ledger()
        .append(Observation("read_entity", "a.b", "ok", {"x": 1}, cites=("a.b",)))
        .mark_fired("symbol:a.b")
    )
    assert Ledger.from_dict(ledger.to_dict()) == ledger


def test_a_rejection_and_a_no_op_are_ledger_lines_with_their_exact_reasons():
    """``kind, target, result``: the rejected tool and the spec's reason; ``reply`` and the
    parser's reason. Neither is evidence for anything."""
    rejected = rejection_observation(Rejection("python.c", "unknown tool: python.c"))
    noop = noop_observation("reply is not JSON: Expecting value (char 0)")
    ledger = Ledger().append(rejected, noop)
    assert ledger.collapsed() == [
        "rejected, python.c, unknown tool: python.c",
        "noop, reply, reply is not JSON: Expecting value (char 0)",
    ]
    assert noop.data == {"noop": True, "reason": "reply is not JSON: Expecting value (char 0)"}
    assert (rejected.source, noop.source) == ("harness", "harness")
    assert ledger.evidence == frozenset() and ledger.latest is noop
    assert Ledger.from_dict(ledger.to_dict()) == ledger
