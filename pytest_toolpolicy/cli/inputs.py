"""What a command says of the files it is given: one line each, on stderr.

Records a command can do without (a torn last line, a record of the wrong shape) are skipped,
said once per file: ``toolpolicy <command>: <file>:<line>: <why> (N malformed lines skipped:
...)``. A file it cannot do without is an ``InputError``, which ``cli.main`` turns into exit 2
and ``toolpolicy <command>: <file>:<line>: <what is wrong>``. The readers themselves are
``input_files.py``'s (and, for datasets, ``bench/dataset_input.py``'s); here is only how a
command says what they found.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .. import jsonsafe
from ..input_files import InputError, Skipped, read_toml


def command_of(ns: argparse.Namespace) -> str:
    """The command as typed: ``labels``, ``envs build``."""
    sub = getattr(ns, "envs_command", None)
    return f"{ns.command} {sub}" if sub else str(ns.command)


def say(command: str, line: str) -> None:
    """One line on stderr, in the command's name."""
    if line:
        print(f"toolpolicy {command}: {jsonsafe.escape(line)}", file=sys.stderr, flush=True)


def say_skipped(command: str, skipped: Skipped) -> None:
    say(command, skipped.summary())


def check_env_specs() -> None:
    """The spec file ``TOOLPOLICY_ENV_SPECS`` names, read and checked as the builds read it:
    an ``InputError`` before anything runs, rather than every environment failing for it."""
    from ..envs.spec import SPECS_ENV, EnvSpecError, listed_versions

    named = os.environ.get(SPECS_ENV)
    if not named:
        return
    path = Path(named).expanduser()
    read_toml(path)  # a syntax error, with its line
    try:
        listed_versions("")  # loads every layer, the user's file with its checks among them
    except EnvSpecError as exc:
        message = str(exc)
        for prefix in (f"environment spec file {path}: ", f"environment spec file {named}: "):
            message = message.removeprefix(prefix)
        raise InputError(path, message) from None
