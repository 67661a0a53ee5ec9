"""What a command says of the files it is given: one line each, on stderr.

Records a command can do without (a torn last line, a record of the wrong shape) are skipped,
said once per file: ``toolpolicy <command>: <file>:<line>: <why> (N malformed lines skipped:
...)``. A file it cannot do without is an ``InputError``, which ``cli.main`` turns into exit 2
and ``toolpolicy <command>: <file>:<line>: <what is wrong>``. The readers themselves are
``input_files.py``'s (and, for datasets, ``bench/load.py``'s); here is only how a command
says what they found.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import jsonsafe
from .input_files import InputError, RecordError, Skipped, read_jsonl, read_toml, scan_jsonl

if TYPE_CHECKING:
    from .bench.load import LoadResult

# How bench/load.py names a JSON-lines record whose id it could not read.
_LINE_LABEL = re.compile(r"<line (\d+) of .*>")


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


def any_object(value: Any) -> dict[str, Any]:
    """A JSON-lines record that only has to be an object."""
    if not isinstance(value, dict):
        raise RecordError("not a JSON object")
    return value


def load_dataset(source: str, **options: Any) -> LoadResult:
    """``load_instances(source, **options)``; a source that cannot be read at all is an
    ``InputError`` naming its line where a parse finds one (``dataset_note`` says, in one
    line, what records it left out)."""
    from .bench.load import DatasetError, load_instances

    try:
        return load_instances(source, **options)
    except DatasetError as exc:
        raise dataset_error(source, exc) from None


def dataset_note(source: str, errors: Iterable[Exception]) -> str:
    """One line for a dataset's malformed records, the first named by its line where the
    dataset is a JSON-lines file (an id asked for and not there is no malformed record, and
    not counted)."""
    bad = [e for e in errors if not str(getattr(e, "message", "")).startswith("no such instance")]
    if not bad:
        return ""
    noun = "record" if len(bad) == 1 else "records"
    return f"{dataset_problem(source, bad[:1])} ({len(bad)} malformed {noun} skipped)"


def dataset_problem(source: str, errors: list[Exception]) -> InputError:
    """The first of a dataset's malformed records (``InstanceError``s), at its line."""
    error, line = errors[0], None
    name = str(getattr(error, "instance_id", ""))
    numbered = _LINE_LABEL.fullmatch(name)
    if numbered:
        line = int(numbered.group(1))
    elif Path(source).suffix.lower() == ".jsonl" and Path(source).is_file():
        ids = scan_jsonl(Path(source), lambda row: str(any_object(row).get("instance_id")))
        line = next((entry.line for entry in ids if entry.record == name), None)
    return InputError(source, "; ".join(str(e) for e in errors), line)


def dataset_error(source: str, exc: Exception) -> InputError:
    """Why a dataset cannot be read, at its first bad line where the file is JSON or JSON
    lines (``datasets`` itself names none)."""
    path = Path(source)
    message = " ".join(str(exc).split())
    if path.suffix.lower() == ".jsonl" and path.is_file():
        _, skipped = read_jsonl(path, any_object)
        if skipped:
            return skipped.error()
    elif path.suffix.lower() == ".json" and path.is_file():
        try:
            json.loads(path.read_bytes())
        except json.JSONDecodeError as error:
            return InputError(path, f"not JSON: {error.msg} (column {error.colno})", error.lineno)
        except (OSError, ValueError, RecursionError):
            pass
    return InputError(source, message.removeprefix(f"cannot read {source}: "))


def check_env_specs() -> None:
    """The spec file ``TOOLPOLICY_ENV_SPECS`` names, read and checked as the builds read it:
    an ``InputError`` before anything runs, rather than every environment failing for it."""
    from .envs.spec import SPECS_ENV, EnvSpecError, listed_versions

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
