"""Event-driven deterministic triggers (spec §3.1): post-edit lint, post-patch test, symbol token.

Each is a pure function of what it is given (``run`` is the primitive caller, e.g.
``Toolbox.call``) returning ``(new_ledger, observations)``; the observations are already in the
new ledger. Each fires at most once per condition key (``Ledger.fired``) and does nothing when
its gate is off. Condition keys:

- ``symbol:<token>`` — once per token for the whole run.
- ``lint:<selector>:<sha256 of the committed file>`` — per selector *and* file content: the same
  unchanged state is never re-linted, but a later edit of the same selector is.
- ``test:<patch_key>`` — once per patch (the loop passes the workspace's patch/tree hash), for
  whichever target the loop names; the same patch is never re-tested.

Observation shapes: ``data`` holds the spec's exact record (``{"kind": "symbol", "query",
"matches"}``, ``{"kind": "lint", "target", "result"}``, ``{"kind": "test", "target", "result":
{"passed", "exit_code"}}``); the test record also carries the full ``run_test`` envelope under
``"envelope"`` (output, timing, sandbox) so nothing captured is lost. ``result`` is the short form
the one-line ledger shows — for ``test`` exactly the spec's ``{"passed", "exit_code"}``.
"""

from __future__ import annotations

import hashlib
import os
import re
from bisect import bisect_right
from collections.abc import Iterable
from pathlib import Path

from ..primitives.codeindex import read_text
from ..primitives.envelope import Dispatch, Envelope
from ..primitives.lint import lint_text
from ..primitives.symbols import symbol_spans
from ..types import Observation
from .config import PolicyConfig
from .ledger import Ledger

Run = Dispatch
Fired = tuple[Ledger, list[Observation]]

CAMEL_RE = re.compile(r"\b[A-Z][a-zA-Z0-9_]+\b")  # the weaker signal, only with SYMBOL_CAMEL=1
_SHOWN = 3  # selectors named in a symbol observation's short result


def symbol_tokens(text: str, camel: bool = False) -> list[str]:
    """Symbol-like tokens in order of appearance, each once. A CamelCase word inside a dotted
    token (``MemStore`` in ``memstore.MemStore.remember``) is part of that token, not another."""
    spans = symbol_spans(text)
    found = [(lo, text[lo:hi]) for lo, hi in spans]
    if camel:
        # The dotted tokens do not overlap and come in order: only the last one starting at or
        # before a CamelCase word can hold it (a search per word, not a pass over all of them).
        starts = [lo for lo, _ in spans]
        for m in CAMEL_RE.finditer(text):
            i = bisect_right(starts, m.start()) - 1
            if i < 0 or m.end() > spans[i][1]:
                found.append((m.start(), m.group(0)))
    return list(dict.fromkeys(token for _, token in sorted(found)))


def symbol_trigger(texts: Iterable[str], ledger: Ledger, run: Run, config: PolicyConfig) -> Fired:
    """``search_symbol`` for the first ``config.symbol_k`` new symbol-like tokens in ``texts``
    (the issue text, observation strings)."""
    if not config.on("trigger.symbol"):
        return ledger, []
    tokens: list[str] = []
    for text in texts:
        if isinstance(text, str):
            tokens += symbol_tokens(text, config.symbol_camel)
    fresh = [t for t in dict.fromkeys(tokens) if f"symbol:{t}" not in ledger.fired]
    observations = []
    for token in fresh[: config.symbol_k]:
        ledger = ledger.mark_fired(f"symbol:{token}")
        observation = _symbol_observation(token, run("search_symbol", {"query": token}))
        ledger = ledger.append(observation)
        observations.append(observation)
    return ledger, observations


def _symbol_observation(token: str, envelope: Envelope) -> Observation:
    data = envelope.get("data") if envelope.get("ok") else None
    raw = data.get("matches") if isinstance(data, dict) else None
    matches = [m for m in raw or [] if isinstance(m, dict)]
    selectors = tuple(str(m["selector"]) for m in matches if "selector" in m)
    if not envelope.get("ok"):
        result = f"search_symbol failed: {envelope.get('error')}"
    elif not matches:
        result = "no matches"
    else:
        more = ", …" if len(selectors) > _SHOWN else ""
        noun = "match" if len(matches) == 1 else "matches"
        result = f"{len(matches)} {noun}: {', '.join(selectors[:_SHOWN])}{more}"
    return Observation(
        kind="symbol",
        target=token,
        result=result,
        data={"kind": "symbol", "query": token, "matches": matches},
        source="trigger",
        cites=selectors,
    )


def lint_trigger(
    selector: str, file_rel: str, root: str | os.PathLike[str], ledger: Ledger, config: PolicyConfig
) -> Fired:
    """``py_compile`` + ``ruff --select E9,F`` on the file an ``edit_entity`` just committed."""
    if not config.on("trigger.lint"):
        return ledger, []
    text = read_text(Path(root) / file_rel)
    digest = hashlib.sha256((text if text is not None else "").encode()).hexdigest()
    key = f"lint:{selector}:{digest}"
    if key in ledger.fired:
        return ledger, []
    if text is None:
        result = f"py_compile: cannot read {file_rel} (missing or not UTF-8 text)"
    else:
        errors = lint_text(text, file_rel)  # ruff missing is a harness fault: it raises
        result = "; ".join(str(e) for e in errors) if errors else "clean"
    observation = Observation(
        kind="lint",
        target=selector,
        result=result,
        data={"kind": "lint", "target": selector, "result": result},
        source="trigger",
    )
    return ledger.mark_fired(key).append(observation), [observation]


def test_trigger(
    patch_key: str, target: str, ledger: Ledger, run: Run, config: PolicyConfig
) -> Fired:
    """``run_test(target)`` once per fully formed patch (the loop decides when it is formed).
    ``passed`` comes from the exit code alone; an envelope without one counts as exit code -1."""
    key = f"test:{patch_key}"
    if not config.on("trigger.test") or key in ledger.fired:
        return ledger, []
    envelope = run("run_test", {"target": target})
    data = envelope.get("data")
    code = data.get("exit_code") if isinstance(data, dict) else None
    exit_code = code if isinstance(code, int) and not isinstance(code, bool) else -1
    result = {"passed": exit_code == 0, "exit_code": exit_code}
    observation = Observation(
        kind="test",
        target=target,
        result=result,
        data={"kind": "test", "target": target, "result": result, "envelope": envelope},
        source="trigger",
    )
    return ledger.mark_fired(key).append(observation), [observation]


test_trigger.__test__ = False  # type: ignore[attr-defined]  # not a pytest test when imported
