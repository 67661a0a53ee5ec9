"""One item's run as HTML: its turns as the harness recorded them, the final diff and the grade.

Pure: a trajectory record (``Trajectory.to_dict()``) and the instance's test lists in, markup
out.
"""

from __future__ import annotations

import html
from typing import Any

from .markup import Clean, badge, details, pre, text
from .values import truth

Record = dict[str, Any]


def render_item(
    item: str, record: Record | None, row: Record, instance: Record | None, clean: Clean
) -> str:
    """``record`` is None when the item left no trajectory (a harness fault before the loop ran)."""
    parts = [f"<h3>{html.escape(item)}</h3>", _summary(row, record)]
    if row.get("error"):
        parts.append(f'<p class="bad">error: {text(row["error"], clean)}</p>')
    if record is None:
        parts.append('<p class="note">no trajectory was recorded for this item</p>')
        return "".join(parts)
    necessity = _necessity(record)
    previous: list[Any] = []
    ordinal = 0
    for turn in record.get("turns") or []:
        html_turn, ordinal = _turn(turn, previous, necessity, ordinal, clean)
        parts.append(html_turn)
        previous = turn.get("prompt") or []
    outcome = record.get("outcome") or {}
    parts.append(f'<p><span class="label">outcome</span> {text(outcome, clean)}</p>')
    parts.append("<h4>final diff</h4>" + _diff(record.get("patch") or "", clean))
    parts.append(_grade((record.get("meta") or {}).get("grade"), instance, clean))
    return "".join(parts)


def _summary(row: Record, record: Record | None) -> str:
    resolved = row.get("resolved")
    badges = [
        badge(str(row.get("status")), "" if row.get("status") == "ok" else "bad"),
        badge(str(row.get("outcome"))),
        badge("resolved", "ok") if truth(resolved) else badge("not resolved"),
    ]
    model = (record or {}).get("model") or row.get("model")
    facts = (
        f"{_int(row.get('turns'))} turns · {_int(row.get('tokens'))} tokens · "
        f"cost {_money(row.get('cost_usd'))} · {_num(row.get('duration_s'), '.1f')} s · "
        f"model {html.escape(str(model))}"
    )
    return f'<p>{"".join(badges)}</p><p class="meta">{facts}</p>'


def _turn(
    turn: Record, previous: list[Any], necessity: dict[int, bool], ordinal: int, clean: Clean
) -> tuple[str, int]:
    parts = [f"<h4>turn {_int(turn.get('index'))}</h4>"]
    parts.append(_shown(turn.get("prompt") or [], previous, clean))
    for n, selection in enumerate(turn.get("retrieval") or []):
        tools = ", ".join(str(t) for t in selection.get("tools") or [])
        fallback = selection.get("fallback")
        how = f" (fallback: {fallback})" if fallback else ""
        which = "retrieval" if n == 0 else "retrieval (re-selection)"
        parts.append(f'<p><span class="label">{which}</span> {text(tools + how, clean)}</p>')
    completion = turn.get("completion")
    if completion:
        parts.append(_reply("reply", completion, clean))
    for extra in turn.get("extra_selections") or []:
        parts.append(_reply("re-selection after a rejection", extra, clean))
    request = turn.get("request")
    if request:
        parts.append(
            '<div><span class="label">parsed call</span> ' + _call(request, clean) + "</div>"
        )
    if turn.get("noop"):
        parts.append(f'<p><span class="label">no-op</span> {text(turn["noop"], clean)}</p>')
    # A rejection is in the ledger as a "rejected" observation (shown below); a trajectory
    # saved before the first one was recorded there shows it from the turn's rejections.
    logged = [
        (o.get("data") or {}).get("reason")
        for o in turn.get("observations") or []
        if isinstance(o, dict) and o.get("kind") == "rejected"
    ]
    for rejection in turn.get("rejections") or []:
        if rejection.get("reason") in logged:
            logged.remove(rejection.get("reason"))
            continue
        parts.append(
            f"<p>{badge('rejected', 'bad')}{text(rejection.get('tool'), clean)}: "
            f"{text(rejection.get('reason'), clean)}</p>"
        )
    for observation in turn.get("observations") or []:
        parts.append(_observation(observation, clean))
    for call in turn.get("deferred") or []:
        parts.append(f"<div>{badge('deferred', 'warn')}{_call(call, clean)}</div>")
    for call in turn.get("executed") or []:
        verdict = necessity.get(ordinal)
        tone, label = (
            ("", "necessity not measured")
            if verdict is None
            else ("ok", "necessary")
            if verdict
            else ("bad", "not necessary")
        )
        # The call the model asked for is shown above; a different one (a list's later call) whole.
        shown = (
            f"<code>{text(call.get('tool'), clean)}</code>"
            if call == request
            else _call(call, clean)
        )
        parts.append(f"<div>{badge('executed')}{badge(label, tone)}{shown}</div>")
        ordinal += 1
    for call in turn.get("suppressed") or []:
        parts.append(
            f"<div>{badge('suppressed (counterfactual)', 'warn')}{_call(call, clean)}</div>"
        )
    return f'<div class="turn">{"".join(parts)}</div>', ordinal


def _shown(prompt: list[Any], previous: list[Any], clean: Clean) -> str:
    """What the model was shown, collapsed. A prompt that repeats the previous turn's messages
    (a growing history) shows only what is new, so a long run's page does not grow as its square."""
    same = len(previous) if previous and prompt[: len(previous)] == previous else 0
    new = prompt[same:]
    chars = sum(len(str(m.get("content", ""))) for m in prompt if isinstance(m, dict))
    note = f"; the first {same} as in the previous turn" if same else ""
    body = "".join(
        f'<p class="label">{text(m.get("role", "?"), clean)}</p>' + pre(m.get("content", ""), clean)
        for m in new
        if isinstance(m, dict)
    )
    summary = f"shown: {len(prompt)} messages, {chars:,} characters{note}"
    return details(html.escape(summary), body)


def _reply(label: str, completion: Record, clean: Clean) -> str:
    usage = completion.get("usage") or {}
    facts = (
        f"{_int(usage.get('prompt_tokens'))} prompt + {_int(usage.get('completion_tokens'))}"
        f" completion tokens"
        + (
            f", {_int(usage.get('cached_prompt_tokens'))} cached"
            if usage.get("cached_prompt_tokens")
            else ""
        )
        + (" (estimated)" if usage.get("estimated") else "")
        + f" · {_money(completion.get('cost_usd'))}"
        + (" · replayed" if completion.get("replayed") else "")
    )
    return (
        f'<div><span class="label">{html.escape(label)}</span> '
        f'<span class="meta">{facts}</span>{pre(completion.get("text", ""), clean)}</div>'
    )


def _call(call: Record, clean: Clean) -> str:
    """A call's tool and arguments; a text argument (a file's content, an edit's old and new
    text, a command) as the text itself, newlines and all, not as a JSON string."""
    args = call.get("args")
    if not isinstance(args, dict) or not args:
        return f"<code>{text(call.get('tool'), clean)}</code>" + (pre(args, clean) if args else "")
    rows = "".join(
        f'<tr><td class="label">{text(name, clean)}</td><td>'
        + (pre(value, clean) if isinstance(value, str) and "\n" in value else text(value, clean))
        + "</td></tr>"
        for name, value in args.items()
    )
    return f'<code>{text(call.get("tool"), clean)}</code><table class="args">{rows}</table>'


def _observation(observation: Record, clean: Clean) -> str:
    source = str(observation.get("source", "model"))
    trust = str(observation.get("trust", "trusted"))
    kind = str(observation.get("kind", "?"))
    label = f"trigger: {kind}" if source == "trigger" else kind
    tone = "bad" if kind == "rejected" else ("warn" if trust != "trusted" else "")
    head = (
        badge(label, "warn" if source == "trigger" else "")
        + badge(trust, "ok" if trust == "trusted" else "warn")
        + f"{text(observation.get('target', ''), clean)} → {text(observation.get('result'), clean)}"
    )
    caveat = observation.get("caveat")
    if caveat:
        head += f' <span class="{tone or "warn"}">caveat: {text(caveat, clean)}</span>'
    data = observation.get("data")
    body = details("captured output", pre(data, clean)) if data not in (None, "", {}) else ""
    return f"<div>{head}{body}</div>"


def _necessity(record: Record) -> dict[int, bool]:
    """Counterfactual necessity of each executed call, by its ordinal in the run."""
    counterfactual = (record.get("meta") or {}).get("counterfactual") or {}
    return {
        int(c["ordinal"]): bool(c["necessary"])
        for c in counterfactual.get("per_call") or []
        if isinstance(c, dict) and "ordinal" in c and "necessary" in c
    }


def _diff(patch: str, clean: Clean) -> str:
    if not patch.strip():
        return '<p class="note">no change</p>'
    lines = []
    for line in text(patch, clean).split("\n"):
        css = (
            "hunk"
            if line.startswith("@@")
            else "add"
            if line.startswith("+") and not line.startswith("+++")
            else "del"
            if line.startswith("-") and not line.startswith("---")
            else ""
        )
        lines.append(f'<span class="{css}">{line}</span>' if css else line)
    return f'<pre class="diff">{chr(10).join(lines)}</pre>'


def _grade(grade: Record | None, instance: Record | None, clean: Clean) -> str:
    if not grade:
        return '<p class="note">not graded (under-specified, or no grade recorded)</p>'
    status = str(grade.get("status"))
    head = f"<h4>grade: {badge(status, 'ok' if status == 'resolved' else 'bad')}</h4>"
    if status == "infra_error":  # the environment failed, not the patch: apart from test results
        head += f'<p class="bad">infra error: {text(grade.get("reason") or "", clean)}</p>'
    elif grade.get("reason"):
        head += f"<p>{text(grade['reason'], clean)}</p>"
    for key, label in (
        ("reverted", "the agent's changes put back before the tests ran (no part in grading)"),
        ("flagged", "product code the run executed that grading cannot vouch for (kept)"),
        ("tampering", "not counted: what makes the run's word untrustworthy"),
    ):
        entries = [str(e) for e in grade.get(key) or []]
        if entries:
            listing = "".join(f"<li>{text(e, clean)}</li>" for e in entries)
            head += details(html.escape(f"{label}: {len(entries)}"), f"<ul>{listing}</ul>", True)
    tests: dict[str, Any] = grade.get("tests") or {}
    ignored = set(grade.get("ignored") or [])
    groups: list[tuple[str, list[str]]] = []
    if instance:
        f2p = [str(t) for t in instance.get("FAIL_TO_PASS") or []]
        p2p = [str(t) for t in instance.get("PASS_TO_PASS") or []]
        listed = set(f2p) | set(p2p)  # built once: one per test cost the square of their count
        rest = [t for t in tests if t not in listed]
        groups = [("FAIL_TO_PASS", f2p), ("PASS_TO_PASS", p2p), ("other", rest)]
    else:
        groups = [("tests (this report has no instances.jsonl to split them)", list(tests))]
    body = []
    for name, ids in groups:
        if not ids:
            continue
        rows = []
        failing = 0
        for test_id in ids:
            outcome = (
                "left out of the verdict"
                if test_id in ignored
                else str(tests.get(test_id, "missing"))
            )
            good = outcome == "passed" or test_id in ignored
            failing += not good
            rows.append(
                f"<tr><td>{text(test_id, clean)}</td>"
                f'<td class="{"ok" if good else "bad"}">{html.escape(outcome)}</td></tr>'
            )
        summary = f"{name}: {len(ids) - failing} of {len(ids)} passed"
        body.append(
            details(html.escape(summary), f"<table>{''.join(rows)}</table>", open_=failing > 0)
        )
    return head + "".join(body)


def _int(value: Any) -> str:
    try:
        return f"{int(value):,}"
    except (TypeError, ValueError):
        return "n/a"


def _num(value: Any, spec: str) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "n/a"
    return "n/a" if number != number else format(number, spec)


def _money(value: Any) -> str:
    shown = _num(value, ".5f")
    return "unpriced" if shown == "n/a" else f"${shown}"
