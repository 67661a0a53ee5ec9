"""Scoring a given continuation on llama.cpp's server: a grammar that admits only that text
forces it as the reply, and the logprobs the server returns are the model's own, taken before
the grammar constrains the choice (its top alternatives are the unconstrained ones), so their
sum is the text's log-likelihood along the tokenization the forced greedy path took.

That path is the same for every context the continuation is scored in, not the marginal over
all tokenizations; Toolformer's filter compares losses, so the comparison is like for like.
OpenAI's API has no way to score a given text, so only ``local:`` models label this way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .toolformer import ScoreError

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def gbnf_literal(text: str) -> str:
    """``text`` as a GBNF string literal (control characters as ``\\xHH``)."""
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20:
            out.append(f"\\x{ord(char):02X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


class GrammarScorer:
    """A ``Scorer`` over an OpenAI client of a llama.cpp server."""

    def __init__(self, client: Any, name: str) -> None:
        self.client, self.name = client, name

    def loss(self, messages: Sequence[dict[str, str]], continuation: str) -> float:
        if not continuation:
            raise ScoreError("an empty continuation has no loss")
        try:
            reply = self.client.chat.completions.create(
                model=self.name,
                messages=list(messages),
                temperature=0.0,
                max_tokens=len(continuation.encode()) + 8,  # a token is at least one byte
                logprobs=True,
                top_logprobs=1,
                extra_body={"grammar": "root ::= " + gbnf_literal(continuation)},
            )
        except Exception as exc:  # the endpoint's own error, said as it said it
            raise ScoreError(f"{type(exc).__name__}: {exc}") from None
        return forced_loss(reply, continuation)


def forced_loss(reply: Any, continuation: str) -> float:
    """The mean negative logprob of the tokens that spell ``continuation`` (the end-of-text
    token the grammar forces after it is not part of it). Tokens are matched by their bytes
    where the server sends them: a token may hold part of a character."""
    items = getattr(getattr(reply.choices[0], "logprobs", None), "content", None) or []
    want = continuation.encode()
    got, logprobs = b"", []
    for item in items:
        if len(got) >= len(want):
            break
        raw = getattr(item, "bytes", None)
        got += bytes(raw) if raw else str(item.token).encode()
        logprobs.append(float(item.logprob))
    if got != want:
        shown = got[:40].decode(errors="replace")
        raise ScoreError(
            f"the server did not force the continuation (got {shown!r}; does it take a"
            " grammar and return logprobs?)"
        )
    return -sum(logprobs) / len(logprobs)


class LocalScorer(GrammarScorer):
    """A ``GrammarScorer`` on a ``local:`` model whose server starts the first time a loss is
    asked for (a build whose losses are all remembered starts none) and stops with the
    process."""

    def __init__(self, model: str) -> None:
        if not model.startswith("local:"):
            raise ScoreError(
                f"{model} cannot score a given text: Toolformer's label needs a local: model"
                " (llama.cpp forces the continuation by a grammar and returns its logprobs)"
            )
        super().__init__(None, model)
        self._server: Any = None
        self._failed = ""  # why the server did not start: said once per loss, not retried

    def loss(self, messages: Sequence[dict[str, str]], continuation: str) -> float:
        if self._failed:
            raise ScoreError(self._failed)
        if self.client is None:
            try:
                self.client = self._start()
            except ScoreError as exc:
                self._failed = str(exc)
                raise
        return super().loss(messages, continuation)

    def _start(self) -> Any:
        import atexit

        import openai

        from ..models.local.server import LocalServer, ServerError
        from ..models.local.weights import WeightsError, resolve

        try:
            self._server = LocalServer(resolve(self.name.partition(":")[2])).start()
        except (ServerError, WeightsError) as exc:
            raise ScoreError(f"the scorer {self.name} did not start: {exc}") from None
        atexit.register(self._server.stop)
        return openai.OpenAI(base_url=self._server.base_url, api_key="local", max_retries=0)
