"""Toolformer's label: three contexts of a call that ran scored on the gold fix, the call
useful where its result lowers the loss by tau_f; losses remembered; the scorer's failures
said, not guessed; and the real path: llama.cpp forcing a given text and scoring it."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_toolpolicy.rounds.labels import Split, choose, label_rows, summary
from pytest_toolpolicy.rounds.scorer import GrammarScorer, LocalScorer, forced_loss, gbnf_literal
from pytest_toolpolicy.rounds.toolformer import (
    Labeler,
    Scored,
    ScoreError,
    contexts,
    continuation_of,
)
from pytest_toolpolicy.types import Observation, Outcome, ToolCall, Trajectory, Turn

PATCH = """--- a/m.py
+++ b/m.py
@@ -1,2 +1,2 @@
 def f():
-    return 1
+    return 2
"""
PROMPT = [{"role": "user", "content": "fix f"}]


def call_turn(index: int = 0, result: str = "def f(): return 1") -> Turn:
    reply = {"text": '{"tool": "read_entity"}', "usage": {"prompt_tokens": 1,
             "completion_tokens": 1}, "cost_usd": 0.0, "latency_s": 0.0, "extra": {}}  # fmt: skip
    return Turn(
        index,
        prompt=PROMPT,
        completion=reply,
        executed=(ToolCall("read_entity", {"selector": "m.f"}),),
        observations=(
            Observation("symbol", "f", "1 match", source="trigger"),  # before the call: not its
            Observation("read_entity", "m.f", result),
            Observation("lint", "m.py", "clean", source="trigger"),  # fired by it: part of it
        ),
    )


class FakeScorer:
    """Losses by context: the result lowers the loss where it holds the fix's old line."""

    name = "local:fake"

    def __init__(self) -> None:
        self.asked: list[list[dict[str, str]]] = []

    def loss(self, messages: Sequence[dict[str, str]], continuation: str) -> float:
        self.asked.append(list(messages))
        last = messages[-1]["content"]
        if len(messages) == len(PROMPT):
            return 3.0
        if "return 1" in last:
            return 1.5
        if "boom" in last:
            raise ScoreError("HTTP 500")
        return 2.8


def test_the_gold_continuation_is_the_fix() -> None:
    assert continuation_of(PATCH) == "return 2"
    only_removed = PATCH.replace("+    return 2\n", "")
    assert continuation_of(only_removed) == "return 1"
    assert continuation_of("--- a/x\n+++ b/x\n") is None
    assert continuation_of("+" + "x" * 300, chars=10) == "x" * 10


def test_three_contexts_and_the_result_as_the_ledger_shows_it() -> None:
    shown = contexts(call_turn())
    assert shown is not None
    assert shown["none"] == PROMPT
    assert [m["role"] for m in shown["with"]] == ["user", "assistant", "user"]
    assert shown["with"][-1]["content"] == "read_entity, m.f, def f(): return 1\nlint, m.py, clean"
    assert shown["empty"][-1] == {"role": "user", "content": ""}
    assert shown["with"][1] == shown["empty"][1] == {"role": "assistant",
                                                     "content": '{"tool": "read_entity"}'}  # fmt: skip
    assert contexts(Turn(0, prompt=PROMPT)) is None  # no call ran
    # after a rejection, the call that ran is the re-selection's
    again = dataclasses.replace(call_turn(), extra_selections=({"text": "second"},))
    shown_again = contexts(again)
    assert shown_again is not None and shown_again["with"][1]["content"] == "second"


def test_useful_where_the_result_lowers_the_loss_by_tau_f() -> None:
    assert Scored(3.0, 2.8, 1.5).gain == pytest.approx(1.3)
    assert Scored(3.0, 2.8, 1.5).useful
    assert not Scored(3.0, 2.8, 1.5, tau_f=1.5).useful
    # the call alone (no result) already lowers it: the result must beat that, not the prompt
    assert not Scored(3.0, 1.6, 1.5).useful


def test_labels_carry_toolformers_own_and_it_ranks_below_the_counterfactual(
    tmp_path: Path,
) -> None:
    scorer = FakeScorer()
    labeler = Labeler(scorer, {"i-1": PATCH, "i-2": PATCH}, tmp_path / "tf.jsonl")
    helps = Trajectory("i-1", "policy", "policy", "m", (call_turn(),), Outcome("stop"),
                       meta={"grade": {"resolved": False}})  # fmt: skip
    noise = Trajectory("i-2", "policy", "policy", "m", (call_turn(result="nothing"),),
                       Outcome("stop"), meta={"grade": {"resolved": True}, "counterfactual":
                       {"per_call": [{"ordinal": 0, "necessary": True}]}})  # fmt: skip
    first, second = label_rows([helps, noise], Split(), None, labeler)
    assert (first["necessary"], first["label_source"]) == (True, "toolformer")
    assert first["tf_gain"] == pytest.approx(1.3) and first["tf_loss_with"] == 1.5
    assert (second["label_toolformer"], second["necessary"], second["label_source"]) == (
        False, True, "counterfactual")  # fmt: skip
    import pandas as pd

    frame = pd.DataFrame([first, second])
    own = choose(frame, "toolformer")
    assert list(own["necessary"]) == [True, False]
    assert "2 calls scored, 1 useful" in summary(frame)
    # remembered: a second labeler on the same file asks the scorer nothing
    again = FakeScorer()
    label_rows([helps, noise], Split(), None, Labeler(again, {"i-1": PATCH, "i-2": PATCH},
                                                      tmp_path / "tf.jsonl"))  # fmt: skip
    # (the two runs share a prompt and a fix: their no-call and empty contexts were scored once)
    assert again.asked == [] and len(scorer.asked) == 4


def test_a_scorer_failure_is_said_and_the_point_left_unlabelled(tmp_path: Path) -> None:
    labeler = Labeler(FakeScorer(), {"i-1": PATCH})
    broken = Trajectory("i-1", "policy", "policy", "m", (call_turn(result="boom"),),
                        Outcome("stop"))  # fmt: skip
    (row,) = label_rows([broken], Split(), None, labeler)
    assert row["label_toolformer"] is None and row["tf_gain"] is None
    assert labeler.errors == ["i-1 turn 0 (with): HTTP 500"]
    # an instance without a gold patch is not scored at all
    assert Labeler(FakeScorer(), {}).label("i-9", call_turn()) is None
    # by default only the policy's calls: the loop a learned stage acts in
    assert Labeler(FakeScorer(), {"i-1": PATCH}).label("i-1", call_turn(), "current") is None
    every = Labeler(FakeScorer(), {"i-1": PATCH}, arms=None)
    assert every.label("i-1", call_turn(), "current") is not None


def test_a_torn_cache_line_is_skipped(tmp_path: Path) -> None:
    cache = tmp_path / "tf.jsonl"
    cache.write_text(json.dumps({"key": "k", "loss": 1.0}) + "\n" + '{"key": "z", "lo')
    scorer = FakeScorer()
    labeler = Labeler(scorer, {"i-1": PATCH}, cache)
    assert labeler.skipped.summary().startswith(f"{cache}:2: cut short: not JSON")
    labeler.label("i-1", call_turn())
    assert len(scorer.asked) == 3  # nothing of this turn was remembered; it was all asked
    # the losses asked for were appended each on a line of its own, the torn one left alone
    scorer = FakeScorer()
    again = Labeler(scorer, {"i-1": PATCH}, cache)
    again.label("i-1", call_turn())
    assert scorer.asked == [] and [n for n, _ in again.skipped.lines] == [2]


def test_gbnf_literals_escape_what_the_grammar_would_read() -> None:
    assert gbnf_literal('a "b"\\\n\tc\x01é') == '"a \\"b\\"\\\\\\n\\tc\\x01é"'


def item(token: str, logprob: float, raw: list[int] | None = None) -> SimpleNamespace:
    return SimpleNamespace(token=token, logprob=logprob, bytes=raw)


def reply_of(*items: SimpleNamespace) -> SimpleNamespace:
    return SimpleNamespace(choices=[SimpleNamespace(logprobs=SimpleNamespace(content=list(items)))])


def test_the_forced_loss_is_the_mean_over_the_continuations_tokens() -> None:
    # the end-of-text token the grammar forces after the text is not counted
    reply = reply_of(item("ret", -1.0), item("urn 2", -3.0), item("", -9.0))
    assert forced_loss(reply, "return 2") == pytest.approx(2.0)
    # a character split across tokens is matched by its bytes
    e = "é".encode()
    split = reply_of(item("x", -1.0, [120]), item("\ufffd", -2.0, [e[0]]), item("", -3.0, [e[1]]))
    assert forced_loss(split, "xé") == pytest.approx(2.0)
    with pytest.raises(ScoreError, match="did not force the continuation"):
        forced_loss(reply_of(item("retire", -1.0)), "return 2")


def test_an_endpoints_error_is_a_score_error() -> None:
    class Failing:
        class chat:  # noqa: N801 - the client's shape
            class completions:  # noqa: N801
                @staticmethod
                def create(**_: object) -> None:
                    raise ConnectionError("refused")

    with pytest.raises(ScoreError, match="ConnectionError: refused"):
        GrammarScorer(Failing(), "local:x").loss(PROMPT, "return 2")
    with pytest.raises(ScoreError, match="needs a local: model"):
        LocalScorer("openai:gpt-4o-mini")


@pytest.mark.slow  # the real server and three forced generations: ~15 s
def test_llama_cpp_scores_a_forced_continuation_and_a_hint_lowers_its_loss() -> None:
    pytest.importorskip("xllamacpp")
    scorer = LocalScorer("local:gemma3-270m")
    plain = [{"role": "user", "content": "Say a word."}]
    hinted = [{"role": "user", "content": "Say the word zucchini. Say a word."}]
    cold = scorer.loss(plain, "zucchini")
    warm = scorer.loss(hinted, "zucchini")
    assert warm < cold  # the hint in the context makes the word likelier: the loss can tell
    assert scorer.loss(plain, "zucchini") == pytest.approx(cold)  # deterministic
