"""``toolpolicy complete --model SPEC PROMPT``: one prompt to a model; the completion, its usage
and its cost as JSON."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .. import jsonsafe
from .errors import UsageError
from .model_options import MODEL_HELP, add_model_options, built_model, model_options
from .options import positive_int


def add_parser(sub: Any) -> None:
    comp = sub.add_parser(
        "complete", help="send one prompt to a model and print the completion, usage and cost"
    )
    comp.add_argument("--model", required=True, help=MODEL_HELP)
    add_model_options(comp)
    comp.add_argument("--cache", help="record/replay cache file (SQLite)")
    comp.add_argument("--cache-mode", choices=("off", "record", "replay"), default="off")
    comp.add_argument("--max-tokens", type=positive_int, default=256, help="max_completion_tokens")
    comp.add_argument(
        "--arm",
        choices=("policy", "current"),
        default="policy",
        help="whose call format --structured=json holds the reply to (default policy)",
    )
    comp.add_argument("prompt", help="the user message")
    comp.set_defaults(func=_complete)


def _complete(ns: argparse.Namespace) -> int:
    from dataclasses import replace

    from ..models import CacheError, ModelError, ModelRequest, PriceError

    try:
        model = built_model(ns, cache_path=ns.cache, cache_mode=ns.cache_mode)
    except (ValueError, NotImplementedError, PriceError, CacheError, OSError) as exc:
        raise UsageError(str(exc)) from None
    messages = ({"role": "user", "content": ns.prompt},)
    request = ModelRequest(messages, max_completion_tokens=ns.max_tokens, item="cli")
    options = model_options(ns).generation.options_for(ns.arm)
    request = replace(options, max_completion_tokens=None).apply(request)
    try:
        completion = model.complete(request)
    except ModelError as exc:
        print(f"toolpolicy: model_error: {jsonsafe.escape(str(exc))}", file=sys.stderr)
        return 1
    print(jsonsafe.dumps(completion.record(), indent=2))
    return 0
