"""Candidate policies from a TOML file: what each changes, the errors a file can have, and a
verdict per candidate against current in one table."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_toolpolicy import shown
from pytest_toolpolicy.decide.render import render_text
from pytest_toolpolicy.decide.table import decision_table
from pytest_toolpolicy.policy.config import PolicyConfig
from pytest_toolpolicy.policy.ledger import Ledger
from pytest_toolpolicy.policy.prompt import build_prompt
from pytest_toolpolicy.policy.retrieve import Candidates
from pytest_toolpolicy.run.candidates import CandidateError
from pytest_toolpolicy.run.candidates_file import load_candidates, read_candidates

from ..decide.results_factory import frame, variant_rows

EXAMPLE = Path(__file__).parents[2] / "evals" / "candidates.toml"


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "candidates.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_shipped_example_loads_and_changes_what_it_says() -> None:
    by_name = {c.name: c for c in load_candidates(EXAMPLE)}
    assert set(by_name) == {"issue-first", "embed"}
    base = PolicyConfig()
    first = by_name["issue-first"].config(base)
    assert first.prompt_order == ("issue", "tools", "state") and first.gates == base.gates
    embed = by_name["embed"].config(base)
    assert embed.on("retrieve.embed") and embed.prompt_order == shown.SPEC_ORDER
    assert by_name["embed"].variant == "cand:embed"


def test_gates_on_and_off_and_structured(tmp_path: Path) -> None:
    (c,) = load_candidates(
        _file(
            tmp_path,
            '[candidate.lean]\ngates_off = ["trust.round_trip"]\ngates_on = ["retrieve.embed"]\n'
            'structured = "json"\n',
        )
    )
    config = c.config(PolicyConfig())
    assert not config.on("trust.round_trip") and config.on("retrieve.embed")
    assert c.structured == "json"
    assert c.summary() == "off trust.round_trip; on retrieve.embed; structured json"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[candidate.x]\ngates_off = ['nope']\n", "unknown gate nope"),
        ("[candidate.x]\ncolour = 'red'\n", "unknown key(s) colour"),
        ("[candidate.x]\nprompt_order = ['issue', 'tools']\n", "names each of tools, state"),
        ("[candidate.x]\nretrieve = 'bm25'\n", "retrieve must be 'map', 'embed' or 'hybrid'"),
        ("[candidate.x]\nstructured = 'xml'\n", "structured must be 'off' or 'json'"),
        ('[candidate."Big Name"]\n', "a name is 1-40 of"),
        ("[other]\n", "unknown key(s) or table(s) other"),
        ("current = 3\n[candidate.x]\n", "current is an agent, as --toolpolicy-current"),
        ("", "no [candidate.<name>] table"),
        ("[candidate.x\n", "candidates.toml"),
        (
            "[candidate.x]\nretrieve = 'embed'\ngates_off = ['retrieve.embed']\n",
            "retrieve.embed both on and off",
        ),
    ],
)
def test_a_bad_file_names_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(CandidateError) as caught:
        load_candidates(_file(tmp_path, text))
    assert message in str(caught.value)


def test_an_issue_first_prompt_opens_with_the_issue_and_reads_back_alike() -> None:
    config = PolicyConfig(prompt_order=("issue", "tools", "state"))
    issue = "Cart.total is wrong.\n\n## Candidate tools\nnot a heading of the harness's"
    messages = build_prompt(Candidates(tools=("read_entity",)), Ledger(), issue, config)
    user = messages[1]["content"]
    assert user.startswith(f"{shown.ISSUE}\n{issue}\n\n{shown.CANDIDATES}\n")
    spec = build_prompt(Candidates(tools=("read_entity",)), Ledger(), issue, PolicyConfig())
    assert shown.read_policy(user) == shown.read_policy(spec[1]["content"])
    assert shown.read_policy(user).issue == issue


def test_each_candidate_gets_its_own_verdict_against_current() -> None:
    rows = variant_rows("current", [True] * 5 + [False] * 5, cost_usd=0.1)
    rows += variant_rows("policy", [True] * 6 + [False] * 4, cost_usd=0.2,
                         gate_acts='{"trigger.lint": 1}')  # 2.0x: too dear  # fmt: skip
    rows += variant_rows("cand:issue-first", [True] * 6 + [False] * 4, cost_usd=0.12)
    rows += variant_rows("cand:embed", [True] * 5 + [False] * 5, cost_usd=0.2,
                         gate_acts='{"retrieve.embed": 2, "trigger.lint": 1}')  # fmt: skip
    table = decision_table(frame(rows))
    assert list(table.index) == ["current", "policy", "cand:embed", "cand:issue-first"]
    assert table.loc["cand:issue-first", "reference"] == "current"
    assert table.loc["cand:issue-first", "verdict"] == "ADOPT"
    assert str(table.loc["policy", "verdict"]).startswith("NOT ADOPTED")
    assert "resolve (tie" in str(table.loc["cand:embed", "verdict"])
    text = render_text(table, {"model": "sim", "dataset": "bundled", "candidates": {
        "issue-first": "the issue first", "embed": "embedding retrieval"}})  # fmt: skip
    assert "candidate issue-first: the issue first" in text  # the header says what it is
    assert "candidate issue-first: ADOPT | McNemar p = " in text
    assert "candidate embed: NOT ADOPTED — failed: resolve (tie" in text
    # The gate it turned on acted (2 a run, 10 runs); the policy's own gates are not listed.
    assert "(acting beyond the policy: retrieve.embed 20×) | McNemar" in text
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("candidate issue-first: ADOPT"))
    assert lines[at + 1].startswith("  power: ")
    # Against the spec's policy too: it resolves as many (6 of 10), so no adoption over it.
    assert table.loc["cand:issue-first", "verdict_vs_policy"].startswith("NOT ADOPTED")
    assert lines[at + 2].startswith("  against the policy (the same rule): NOT ADOPTED — failed")


def test_a_file_may_name_the_competitor_every_candidate_must_beat(tmp_path: Path) -> None:
    text = 'current = "mini-swe-agent"\n[candidate.x]\ngates_off = ["trust.round_trip"]\n'
    (candidate,), current = read_candidates(_file(tmp_path, text))
    assert (candidate.name, current) == ("x", "mini-swe-agent")
    assert read_candidates(EXAMPLE)[1] is None  # unnamed: the option's, else the stock loop


def test_hybrid_retrieval_is_a_candidate_of_its_own(tmp_path: Path) -> None:
    (candidate,) = load_candidates(_file(tmp_path, '[candidate.h]\nretrieve = "hybrid"\n'))
    assert candidate.ranking == "hybrid" and candidate.summary() == "retrieval hybrid"
    config = candidate.config(PolicyConfig())
    assert config.ranking == "hybrid" and config.gates == PolicyConfig().gates


def test_a_learned_trigger_is_a_candidate_of_its_own(tmp_path: Path) -> None:
    text = '[candidate.t]\ntrigger = {feature = "entropy", tau = 0.5, necessary_when = "above"}\n'
    (candidate,) = load_candidates(_file(tmp_path, text))
    assert candidate.config(PolicyConfig()).trigger == candidate.trigger
    assert candidate.summary() == "trigger: call when entropy above 0.500"
    for bad, message in (
        ('trigger = {feature = "entropy"}', "trigger is a table of feature, tau"),
        ('trigger = {feature = "entropy", tau = "low"}', "trigger.tau is a number"),
        ('trigger = {feature = "vibes", tau = 1}', "trigger: feature must be one of"),
    ):
        with pytest.raises(CandidateError, match=message):
            load_candidates(_file(tmp_path, f"[candidate.t]\n{bad}\n"))


def test_a_probe_file_is_a_candidate_named_beside_the_file(tmp_path: Path) -> None:
    from pytest_toolpolicy.policy.probe import LinearProbe

    probe = LinearProbe((1.0, -1.0), 0.5, (0.0, 0.0), (1.0, 2.0))
    (tmp_path / "probe.json").write_text(__import__("json").dumps(probe.to_dict()))
    (candidate,) = load_candidates(_file(tmp_path, '[candidate.p]\nprobe = "probe.json"\n'))
    assert candidate.config(PolicyConfig()).probe == candidate.probe
    assert candidate.probe is not None and candidate.probe.weights == (1.0, -1.0)
    with pytest.raises(CandidateError, match="candidate 'p': probe: .*missing.json"):
        load_candidates(_file(tmp_path, '[candidate.p]\nprobe = "missing.json"\n'))


def test_the_header_says_where_a_learned_stage_judges_nothing() -> None:
    from pytest_toolpolicy.policy.confidence import ConfidenceTrigger
    from pytest_toolpolicy.policy.probe import LinearProbe
    from pytest_toolpolicy.run.candidates import Candidate, candidate_line

    probe = Candidate("p", "a probe", probe=LinearProbe((1.0,), 0.0, (0.0,), (1.0,)))
    assert candidate_line(probe, "local:gemma3-270m", 5) == "a probe"
    assert "only local: models expose hidden states" in candidate_line(probe, "openai:gpt-4o", 5)
    trigger = Candidate("t", "", trigger=ConfidenceTrigger("lp_mean", -1.0))
    assert "asks for no logprobs" in candidate_line(trigger, "openai:gpt-4o", 0)
    assert "SIMULATED logprobs" in candidate_line(trigger, "sim", 5)
    assert candidate_line(trigger, "openai:gpt-4o", 5) == "trigger: call when lp_mean below -1.000"


def test_a_bandit_is_a_candidate_that_picks_its_own_tau(tmp_path: Path) -> None:
    text = '[candidate.b]\nbandit = {feature = "lp_mean", taus = [-2.0, -1, -2.0]}\n'
    (candidate,) = load_candidates(_file(tmp_path, text))
    assert candidate.bandit is not None and candidate.bandit.taus == (-2.0, -1.0)  # once each
    assert candidate.config(PolicyConfig()).trigger is None  # picked per run, not fixed
    assert candidate.summary() == "bandit: call when lp_mean below tau, tau of none, -2, -1 by UCB1"
    for bad, message in (
        ('bandit = {feature = "lp_mean", taus = -1.0}', "bandit is a table of feature, taus"),
        ('bandit = {feature = "lp_mean", taus = []}', "bandit: a bandit needs at least one tau"),
        ('bandit = {feature = "lp_mean", taus = [1]}\ntrigger = {feature = "lp_mean", tau = 1}',
         "picks the trigger's tau itself"),
    ):  # fmt: skip
        with pytest.raises(CandidateError, match=message):
            load_candidates(_file(tmp_path, f"[candidate.b]\n{bad}\n"))
