from pathlib import Path

import pandas as pd
import pytest

from pytest_toolpolicy.decide.failures import failure_lines
from pytest_toolpolicy.decide.header import SIM_DISCLAIMER
from pytest_toolpolicy.decide.meta import meta_from
from pytest_toolpolicy.decide.power import pairs_needed
from pytest_toolpolicy.decide.render import render_markdown, render_text
from pytest_toolpolicy.decide.report_files import write_report
from pytest_toolpolicy.decide.results import results_frame
from pytest_toolpolicy.decide.table import decision_table
from pytest_toolpolicy.session.report import gate_failure

from .results_factory import endpoint_error_rows, failed_rows, frame, item, variant_rows

META = {
    "model": "sim:flaky",
    "dataset": "evals/instances",
    "n_instances": 20,
    "n_underspecified": 2,
    "tests_visible": True,
    "seed": 0,
    "is_sim": True,
    "sim_profile": "flaky",
    "report_dir": None,
}


def results() -> pd.DataFrame:
    rows = variant_rows("current", [True] * 11 + [False] * 9, cost_usd=0.2)
    rows += variant_rows("policy", [True] * 15 + [False] * 5, cost_usd=0.1)
    rows += variant_rows("policy-no:trigger.test", [True] * 15 + [False] * 5, cost_usd=0.1)
    rows += variant_rows("policy-no:trust.round_trip", [True] * 12 + [False] * 8, cost_usd=0.1,
                         tokens=1120)  # fmt: skip
    rows += variant_rows("policy-no:retrieve.embed", [True] * 15 + [False] * 5, cost_usd=0.1)
    rows.append(item(instance_id="i-0", variant="current", seed=1, status="error", error="boom"))
    return frame(rows)


def test_rows_verdicts_and_paired_statistics() -> None:
    t = decision_table(results(), META)
    assert list(t.index) == [
        "current",
        "policy",
        "policy-no:retrieve.embed",
        "policy-no:trust.round_trip",
        "policy-no:trigger.test",
    ]
    p = t.loc["policy"]
    assert p["verdict"] == "ADOPT" and p["reference"] == "current"
    assert all(p[f"pass_{m}"] is True for m in ("resolve", "cost", "tokens"))
    assert (p["mcnemar_b"], p["mcnemar_c"], p["mcnemar_p"]) == (0, 4, 0.125)
    assert p["d_resolve"] == pytest.approx(0.2) and p["cost_ratio"] == 0.5
    assert p["cost_ci_low"] == pytest.approx(-0.1) and p["cost_ci_high"] == pytest.approx(-0.1)
    assert t.loc["policy-no:retrieve.embed", "verdict"] == "delete"
    trust = t.loc["policy-no:trust.round_trip"]
    assert trust["verdict"] == "keep (resolve −0.15, tokens +12%)"
    assert trust["same_resolve"] is False and trust["same_cost"] is True
    assert trust["tokens_ci_low"] == pytest.approx(120.0)
    assert pd.isna(t.loc["current", "verdict"])
    assert t.loc["current", "n_errors"] == 1


def test_render_text_states_the_setting_and_the_verdicts() -> None:
    text = render_text(decision_table(results()), META)
    assert "model sim:flaky" in text and "dataset evals/instances" in text
    assert "FAIL_TO_PASS tests were visible to the agent" in text
    assert SIM_DISCLAIMER in text
    assert "verdict: ADOPT | McNemar p = 0.125 (b=0, c=4); cost 0.50×, tokens 1.00×" in text
    assert "gate trust.round_trip: keep (resolve −0.15, tokens +12%)" in text
    assert "unmeasured items (harness fault or infra error): 1;" in text
    header = text.splitlines()[4].split()
    assert header == [
        "arm/variant",
        "resolve",
        "$/inst",
        "tok/inst",
        "call-prec",
        "sel-acc",
        "abstain",
        "false-abst",
    ]


def test_no_sim_disclaimer_for_a_language_model() -> None:
    meta = {**META, "model": "openai:deepseek-v4-pro", "is_sim": False, "tests_visible": False}
    text = render_text(decision_table(results()), meta)
    assert SIM_DISCLAIMER not in text
    assert "FAIL_TO_PASS tests were NOT visible to the agent" in text


@pytest.mark.parametrize(("ran", "missing"), [("policy", "current"), ("current", "policy")])
def test_one_arm_only_gives_no_decision(ran: str, missing: str) -> None:
    t = decision_table(frame(variant_rows(ran, [True, False])))
    assert list(t.index) == [ran]
    text = render_text(t, META)
    assert f"no decision: the {missing} arm was not run" in text
    assert "verdict:" not in text


def test_ablations_without_the_full_policy_get_no_verdict() -> None:
    rows = variant_rows("current", [True]) + variant_rows("policy-no:trigger.test", [True])
    t = decision_table(frame(rows))
    assert t.loc["policy-no:trigger.test", "verdict"] == "no decision: the policy arm was not run"


def test_markdown_has_the_header_table_and_criteria() -> None:
    md = render_markdown(decision_table(results()), META)
    assert md.startswith("# A/B decision")
    assert SIM_DISCLAIMER in md
    assert "| policy | 0.750 (15/20) |" in md
    assert "resolve 0.75 vs 0.55 (+0.20); cost 0.50× (≤ 1.5×)" in md


def test_write_report_writes_four_files_atomically_and_round_trips(tmp_path: Path) -> None:
    frame_in = results()
    paths = write_report(frame_in, META, tmp_path / "run")
    assert set(paths) == {"decision.md", "decision.csv", "decision.html", "results.parquet"}
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == sorted(paths)
    html = paths["decision.html"].read_text(encoding="utf-8")
    assert SIM_DISCLAIMER in html and "<table" in html
    assert "ADOPT" in paths["decision.csv"].read_text(encoding="utf-8")
    back = pd.read_parquet(paths["results.parquet"])
    pd.testing.assert_frame_equal(back, frame_in, check_dtype=False)
    assert meta_from(back)["report_dir"] == str(tmp_path / "run")
    assert meta_from(back)["sim_profile"] == "flaky"
    assert decision_table(back).loc["policy", "verdict"] == "ADOPT"


def test_meta_from_reads_the_rows_when_nothing_was_recorded() -> None:
    meta = meta_from(results())
    assert (meta["model"], meta["is_sim"], meta["sim_profile"]) == ("sim", True, None)
    assert meta["n_instances"] == 20 and meta["tests_visible"] is True


def test_meta_and_table_tolerate_sparse_error_rows() -> None:
    rows = variant_rows("policy", [True, False])
    sparse = {"instance_id": "i-9", "arm": "current", "variant": "current", "status": "error",
              "error": "workspace did not materialize"}  # fmt: skip
    df = pd.concat([pd.DataFrame([sparse]), frame(rows)], ignore_index=True)
    meta = meta_from(df)
    assert (meta["seed"], meta["tests_visible"], meta["model"]) == (0, True, "sim")
    t = decision_table(df)
    assert t.loc["current", "n"] == 0 and t.loc["current", "n_errors"] == 1
    assert "unmeasured items (harness fault or infra error): 1;" in render_text(t, meta)


def _sparse_errors(variants: tuple[str, ...], n: int = 2, error: str = "boom") -> list[dict]:
    """Error rows as a session records them: their identity and the reason, nothing measured."""
    return [
        {
            "instance_id": f"i-{i}",
            "arm": "current" if v == "current" else "policy",
            "variant": v,
            "seed": 0,
            "status": "error",
            "error": f"harness fault: {error} {i}",
        }
        for i in range(n)
        for v in variants
    ]


def test_a_session_that_measured_nothing_still_gets_a_table_and_a_report(tmp_path: Path) -> None:
    sparse = pd.DataFrame(_sparse_errors(("current", "policy")))  # no "resolved" column at all
    assert "resolved" not in sparse
    assert decision_table(sparse, META)["n"].sum() == 0
    df = results_frame(_sparse_errors(("current", "policy"), error="boom \ud800"))
    t = decision_table(df, META)
    assert list(t.index) == ["current", "policy"] and t["n"].sum() == 0
    assert t.loc["policy", "verdict"] == "no decision: no item was measured"
    text = render_text(t, META)
    assert "\nno decision: no item was measured\n" in text and "verdict:" not in text
    assert (gate_failure(t, all_failed=True) or "").startswith("no item was measured")
    paths = write_report(df, META, tmp_path)
    back = pd.read_parquet(paths["results.parquet"])  # pyarrow refuses a lone surrogate
    assert back["error"].tolist()[0] == "harness fault: boom \\ud800 0"
    assert "no item was measured" in paths["decision.md"].read_text(encoding="utf-8")


def test_one_arm_failing_on_every_item_shows_both_and_decides_nothing() -> None:
    df = pd.concat(
        [frame(variant_rows("policy", [True, False])), results_frame(_sparse_errors(("current",)))],
        ignore_index=True,
    )
    t = decision_table(df, META)
    assert list(t.index) == ["current", "policy"]
    assert (t.loc["current", "n_errors"], t.loc["policy", "n_errors"]) == (2, 0)
    assert t.loc["policy", "verdict"] == (
        "no paired verdict: every current item failed (2 harness faults);"
        " policy measured 2 items on its own"
    )
    assert "in both arms" in (gate_failure(t) or "")
    lines = failure_lines(df)
    assert lines[0] == "not measured: 2 of 4 items"
    assert lines[1].split() == ["item", "status", "error"]
    assert lines[2].split()[:2] == ["i-0-current", "error"]


def test_failure_lines_are_capped_and_one_line_each() -> None:
    rows = _sparse_errors(("current",), n=30)
    rows[0]["error"] = "first line\nsecond line"
    lines = failure_lines(results_frame(rows), limit=5)
    assert len(lines) == 1 + 1 + 5 + 1 and lines[-1].startswith("... and 25 more")
    assert lines[2].endswith("first line")
    assert failure_lines(frame(variant_rows("policy", [True]))) == []


def test_a_gate_over_measured_items_reports_the_verdict() -> None:
    t = decision_table(results(), META)
    assert gate_failure(t) is None


LOCAL = {**META, "model": "local:gemma3-270m", "is_sim": False, "sim_profile": None}


def _one_arm_failed(failed: str, measured: str) -> pd.DataFrame:
    """Every item of one arm a harness fault, the other measured."""
    rows = failed_rows(failed, 3, model="local:gemma3-270m", cost_usd=0.0)
    rows += variant_rows(measured, [True, False, True], model="local:gemma3-270m", cost_usd=0.0)
    return frame(rows)


@pytest.mark.parametrize(("failed", "measured"), [("current", "policy"), ("policy", "current")])
def test_an_arm_of_harness_faults_leaves_the_other_arms_own_measures(
    failed: str, measured: str
) -> None:
    t = decision_table(_one_arm_failed(failed, measured), LOCAL)
    own = t.loc[measured]
    assert (own["sample"], own["n"], own["resolved"], own["n_errors"]) == ("own", 3, 2, 0)
    assert own["resolve"] == pytest.approx(2 / 3) and own["cost"] == 0.0
    assert own["tokens"] == 1000 and own["call_precision"] == 0.5
    assert (t.loc[failed, "sample"], t.loc[failed, "n"], t.loc[failed, "n_errors"]) == (
        "none",
        0,
        3,
    )
    p = t.loc["policy"]
    assert p["verdict"] == (
        f"no paired verdict: every {failed} item failed (3 harness faults);"
        f" {measured} measured 3 items on its own"
    )
    # No delta, criterion or pass flag compares the two unlike samples.
    assert all(pd.isna(p[c]) for c in ("d_resolve", "cost_ratio", "pass_resolve", "details"))
    assert p["n_pairs"] == 0
    assert "in both arms" in (gate_failure(t) or "")


def test_an_unpaired_row_is_labelled_in_text_and_markdown() -> None:
    t = decision_table(_one_arm_failed("current", "policy"), LOCAL)
    reason = (
        "no paired verdict: every current item failed (3 harness faults);"
        " policy measured 3 items on its own"
    )
    text = render_text(t, LOCAL)
    lines = text.splitlines()
    rows = [line.split() for line in lines if line.startswith(("current", "policy"))]
    assert rows[0][:5] == ["current", "(none", "measured)", "n/a", "(0/0)"]
    assert rows[1][:6] == ["policy", "(own", "items,", "unpaired)", "0.667", "(2/3)"]
    assert reason in lines and "McNemar" not in text
    assert not any(line.startswith("verdict:") for line in lines)
    assert "a row marked unpaired shows its own measured items" in text
    assert "share one sample" not in text
    md = render_markdown(t, LOCAL)
    assert "| current (none measured) | n/a (0/0) |" in md
    assert "| policy (own items, unpaired) | 0.667 (2/3) | 0.0000 | 1000 |" in md
    assert f"- {reason}" in md.splitlines() and "## Criteria" not in md


def test_both_arms_unmeasured_name_each_arms_cause() -> None:
    rows = failed_rows("current", 2) + failed_rows("policy", 2, start=2)
    rows += failed_rows("policy", 1, error="infra error: pip install failed")
    t = decision_table(frame(rows), LOCAL)
    assert list(t["sample"]) == ["none", "none"]
    causes = (
        "every current item failed (2 harness faults);"
        " every policy item failed (2 harness faults, 1 infra error)"
    )
    assert (t.loc["policy", "verdict"], t.loc["policy", "details"]) == (
        "no decision: no item was measured",
        causes,
    )
    lines = render_text(t, LOCAL).splitlines()
    assert lines[lines.index("no decision: no item was measured") + 1] == causes
    assert f"- {causes}" in render_markdown(t, LOCAL).splitlines()


def test_arms_measured_on_disjoint_instances_say_none_is_in_common() -> None:
    rows = variant_rows("current", [True, False]) + failed_rows("current", 2, start=2)
    rows += failed_rows("policy", 2, error="harness fault: boom") + variant_rows(
        "policy", [True, True], start=2
    )
    t = decision_table(frame(rows), META)
    assert list(t["sample"]) == ["own", "own"]
    assert (t.loc["current", "resolved"], t.loc["policy", "resolved"]) == (1, 2)
    verdict = (
        "no paired verdict: no instance was measured in both arms;"
        " current measured 2 items on its own, 2 failed (2 harness faults);"
        " policy measured 2 items on its own, 2 failed (2 harness faults)"
    )
    assert t.loc["policy", "verdict"] == verdict
    assert pd.isna(t.loc["policy", "d_resolve"])
    assert gate_failure(t) == verdict  # the gate fails, and says why
    text = render_text(t, META)
    assert verdict in text.splitlines() and "\nverdict:" not in text
    assert "| current (own items, unpaired) | 0.500 (1/2) |" in render_markdown(t, META)


def test_an_ablation_that_failed_everywhere_is_named_and_not_repeated() -> None:
    rows = variant_rows("current", [True, False]) + variant_rows("policy", [True, True])
    rows += failed_rows("policy-no:trigger.test", 2)
    t = decision_table(frame(rows), META)
    assert list(t["sample"]) == ["own", "own", "none"]
    assert t.loc["policy", "verdict"] == (
        "no paired verdict: every policy-no:trigger.test item failed (2 harness faults);"
        " current measured 2 items on its own; policy measured 2 items on its own"
    )
    assert t.loc["policy-no:trigger.test", "verdict"] == t.loc["policy", "verdict"]
    lines = render_text(t, META).splitlines()
    assert "gate trigger.test: no verdict (as above)" in lines


def test_power_and_the_resolve_interval_sit_beside_every_verdict() -> None:
    t = decision_table(results(), META)
    p = t.loc["policy"]
    # 4 discordant pairs, all won by the policy.
    assert (p["mcnemar_b"], p["mcnemar_c"]) == (0, 4)
    assert p["pairs_needed"] == pytest.approx(pairs_needed(4 / p["n_pairs"], 4 / p["n_pairs"]))
    assert p["resolve_ci_low"] <= p["d_resolve"] <= p["resolve_ci_high"]
    assert p["ci_clustered_by"] is None  # one repository, one trial: pairs resampled
    assert str(p["power_note"]).startswith("power: ")
    for gate in ("policy-no:trust.round_trip", "policy-no:trigger.test"):
        assert str(t.loc[gate, "power_note"]).startswith("power: ")
    text = render_text(t, META)
    lines = text.splitlines()
    verdict = next(i for i, line in enumerate(lines) if line.startswith("verdict: "))
    assert (
        lines[verdict + 1].startswith("  power: ")
        and "resolve difference 95% CI [" in (lines[verdict + 1])
    )


def test_intervals_are_clustered_by_repository_when_instances_come_from_several() -> None:
    rows = variant_rows("current", [False] * 6, repo="a/one")
    rows += variant_rows("current", [False] * 6, start=6, repo="b/two")
    rows += variant_rows("policy", [True] * 6, repo="a/one")
    rows += variant_rows("policy", [False] * 6, start=6, repo="b/two")
    p = decision_table(frame(rows)).loc["policy"]
    assert p["ci_clustered_by"] == "repo"
    # Resampling the two repositories, not the twelve instances: 0 to 1.
    assert (p["resolve_ci_low"], p["resolve_ci_high"]) == (0.0, 1.0)


def test_the_share_of_prompt_tokens_a_prefix_cache_served_is_shown_per_variant() -> None:
    rows = variant_rows("current", [True, False], prompt_tokens=1000, cached_tokens=600)
    rows += variant_rows("policy", [True, False], prompt_tokens=1000, cached_tokens=100)
    table = decision_table(frame(rows))
    assert (
        table.loc["current", "cached_share"] == 0.6 and table.loc["policy", "cached_tokens"] == 200
    )
    text = render_text(table, META)
    assert "prompt tokens served from the prefix cache: current 60%, policy 10%" in text


def unlabelled_results(derived: int = 0) -> pd.DataFrame:
    """20 real-SWE-bench-like instances: the first ``derived`` have a label derived from their
    gold patch, the rest none (their items score no selection)."""
    rows = []
    for variant, resolved, cost in (
        ("current", 11, 0.2), ("policy", 15, 0.1), ("policy-no:retrieve.embed", 15, 0.1)
    ):  # fmt: skip
        for i in range(20):
            labelled = i < derived
            rows.append(
                item(
                    instance_id=f"i-{i}", variant=variant, resolved=i < resolved, cost_usd=cost,
                    gold_source="derived" if labelled else "none",
                    selection_correct=2 if labelled else 0, selection_attempted=3 if labelled else 0,
                )
            )  # fmt: skip
    return frame(rows)


def test_without_gold_labels_the_table_says_which_criteria_were_judged() -> None:
    t = decision_table(unlabelled_results(), META)
    p = t.loc["policy"]
    note = "selection_accuracy not judged: no gold labels for any of these instances"
    assert p["verdict"] == f"ADOPT (4 of 5 criteria judged; {note})"
    assert p["judged"] == 4 and p["not_judged"] == f"4 of 5 criteria judged; {note}"
    assert p["pass_selection_accuracy"] is None and p["pass_resolve"] is True
    gate = t.loc["policy-no:retrieve.embed"]
    assert gate["verdict"] == f"delete ({note})" and gate["judged"] == 4
    assert gate["same_selection_accuracy"] is None
    text = render_text(t, META)
    assert f"verdict: ADOPT (4 of 5 criteria judged; {note}) | McNemar" in text
    assert "n/a (no labels)" in text
    assert (
        "gold labels: 0 instances scored on labels derived from the gold patch"
        " (gold_labels/FORMAT.md), 0 on hand-written ones, 20 without a label (left out of"
        " selection accuracy)" in text
    )


def test_the_table_says_how_many_instances_were_scored_on_derived_labels() -> None:
    t = decision_table(unlabelled_results(derived=12), META)
    p = t.loc["policy"]
    assert p["verdict"] == "ADOPT" and p["judged"] == 5 and pd.isna(p["not_judged"])
    assert (p["labelled_derived"], p["labelled_hand"], p["unlabelled"]) == (12, 0, 8)
    assert (p["sel_correct"], p["sel_attempted"]) == (24, 36)
    text = render_text(t, META)
    assert (
        "gold labels: 12 instances scored on labels derived from the gold patch"
        " (gold_labels/FORMAT.md), 0 on hand-written ones, 8 without a label (left out of"
        " selection accuracy)" in text
    )


def test_an_instance_unlabelled_in_one_variant_is_left_out_of_all() -> None:
    """Both arms are scored on the same labelled instances: a variant whose runs recorded no
    label for them takes them out of every variant's selection accuracy."""
    results = unlabelled_results(derived=12)
    embed = results["variant"] == "policy-no:retrieve.embed"
    results.loc[embed, ["gold_source", "selection_correct", "selection_attempted"]] = ["none", 0, 0]
    t = decision_table(results, META)
    assert t.loc["policy", "unlabelled"] == 20
    assert t.loc["policy", "verdict"].startswith("ADOPT (4 of 5 criteria judged;")


def test_hand_labels_alone_add_no_label_line() -> None:
    text = render_text(decision_table(results()), META)
    assert "gold labels:" not in text
    assert decision_table(results()).loc["policy", "judged"] == 5


def test_label_counts_that_differ_by_variant_are_listed_per_variant() -> None:
    """Unpaired rows (current failed on every item) measure different instances."""
    from pytest_toolpolicy.decide.notes import label_lines

    rows = failed_rows("current", 20) + variant_rows("policy", [True] * 20, gold_source="derived")
    lines = label_lines(decision_table(frame(rows), META))
    assert lines[0] == "gold labels:"
    assert lines[1].startswith("  current: 0 instances scored on labels derived")
    assert lines[2].startswith("  policy: 20 instances scored on labels derived")


def endpoint_errors(current_resolved: list[bool]) -> pd.DataFrame:
    """Four instances; the endpoint ended current's run on i-3, which policy did not resolve."""
    rows = variant_rows("current", current_resolved) + endpoint_error_rows("current", 1, start=3)
    rows += variant_rows("policy", [True, True, True, False])
    return frame(rows)


def test_an_endpoint_error_keeps_its_instance_and_undecides_a_verdict_it_could_change() -> None:
    # As measured, 3/4 vs 2/4: ADOPT. Had i-3 resolved for current: 3/4 vs 3/4, a tie.
    t = decision_table(endpoint_errors([True, True, False]), META)
    assert list(t["n"]) == [4, 4] and list(t["model_errors"]) == [1, 0]
    assert list(t["n_errors"]) == [0, 0] and t.loc["policy", "n_pairs"] == 4
    p = t.loc["policy"]
    verdict = (
        "no verdict: endpoint errors on 1 instance (current 1, policy 0) could change it:"
        " counted resolved in policy, ADOPT; in current, NOT ADOPTED \u2014 failed: resolve"
        " (tie 0.75 = 0.75)"
    )
    assert p["verdict"] == verdict and p["pass_resolve"] is True  # as measured
    assert str(p["details"]).startswith("as measured (endpoint errors not resolved): resolve 0.75")
    assert gate_failure(t) == verdict
    text = render_text(t, META)
    lines = text.splitlines()
    assert verdict in lines and not any(line.startswith("verdict:") for line in lines)
    assert text.splitlines()[4].split()[-1] == "endpoint-err"
    assert [line.split()[-1] for line in lines[5:7]] == ["1/4", "0/4"]
    assert (
        "endpoint errors (the endpoint, not the arm, ended the run): current 1, policy 0;"
        " each measured as not resolved" in text
    )
    assert "unmeasured items" not in text
    md = render_markdown(t, META)
    assert f"- {verdict}" in md.splitlines() and "| endpoint-err |" in md
    assert failure_lines(endpoint_errors([True, True, False]))[0] == (
        "not measured: 0 of 8 items; ended by the endpoint (measured as not resolved): 1"
    )


def test_an_endpoint_error_that_cannot_change_the_verdict_leaves_it() -> None:
    # 3/4 vs 1/4 as measured, and 3/4 vs 2/4 had i-3 resolved for current: ADOPT either way.
    t = decision_table(endpoint_errors([True, False, False]), META)
    assert t.loc["policy", "verdict"] == "ADOPT" and list(t["model_errors"]) == [1, 0]
    assert "verdict: ADOPT | McNemar" in render_text(t, META)
