"""The ``toolpolicy`` console script: every command's entrance, and nothing else.

One module per command or command group registers its parser (``add_parser``) and holds its
glue: parse, call the library, print. The logic stays below (``envs/``, ``mine/``, ``rounds/``,
``view/`` ...), which never imports this package: where it fails it raises an error of its own
module and the command translates it into the one ``UsageError`` (``errors.py``). ``main``
turns that, and an ``InputError`` (a file the command cannot do without), into one line on
stderr and exit 2; a ``HarnessFault`` into one line and exit 3. Commands import what they need
when they run: ``toolpolicy --help`` imports none of it.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from .. import jsonsafe, limits
from ..input_files import InputError
from . import (
    call,
    complete,
    demo,
    envs,
    mine,
    primitive,
    retrieval,
    rounds,
    run,
    validate,
    view,
)
from .errors import UsageError
from .inputs import command_of
from .model_options import ModelOptionsError, model_options

DESCRIPTION = "The ``toolpolicy`` console script: thin glue over the library."
# The order `toolpolicy --help` lists the commands in.
COMMANDS = (primitive, call, complete, validate, run, demo, envs, mine, view, retrieval, rounds)
# Exit status of a harness fault: not the model's error (1), not the user's (2).
HARNESS_FAULT_EXIT = 3


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toolpolicy", description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    ns = parser.parse_args(argv)
    try:
        # Checked before anything runs: every command reads the limits somewhere inside.
        bounds = limits.current()
    except limits.LimitsError as exc:
        parser.error(f"environment variable {limits.ENV}: {exc}")
    if getattr(ns, "limits", None):
        # Over the environment's, and exported so that every step and subprocess sees them.
        os.environ[limits.ENV] = limits.parse_limits(ns.limits, bounds).text()
    try:
        with _served(ns):
            return ns.func(ns)
    except UsageError as exc:
        print(jsonsafe.escape(exc.line()), file=sys.stderr)
        return 2
    except InputError as exc:  # a file the command cannot do without: named, with its line
        print(f"toolpolicy {command_of(ns)}: {jsonsafe.escape(str(exc))}", file=sys.stderr)
        return 2
    except Exception as exc:
        # Imported here, not at the top: the primitives cost a twentieth of a second to import,
        # and `toolpolicy --help` needs none of them.
        from ..primitives.envelope import HarnessFault

        if not isinstance(exc, HarnessFault):
            raise
        line = " ".join(jsonsafe.escape(str(exc)).split()) or type(exc).__name__
        print(f"toolpolicy: harness fault: {line}", file=sys.stderr)
        return HARNESS_FAULT_EXIT


@contextmanager
def _served(ns: argparse.Namespace) -> Iterator[None]:
    """A ``local:`` model's server for the command's length (``models/local/session.py``)."""
    model = getattr(ns, "model", None)
    if not isinstance(model, str) or not model.startswith("local:"):
        yield
        return
    from ..models.local.server import ServerError
    from ..models.local.session import served
    from ..models.local.weights import WeightsError

    try:
        options = model_options(ns)
    except ModelOptionsError as exc:
        raise UsageError(str(exc)) from None
    settings = options.generation.local.server_settings()
    with ExitStack() as stack:
        try:
            stack.enter_context(served(model, options.endpoint.base_url, settings))
        except (ServerError, WeightsError) as exc:
            raise UsageError(str(exc)) from None
        yield
