"""A dataset as a command's input: loaded as every command loads it, with what cannot be read
named by file and line.

A dataset that cannot be read at all is an ``InputError`` (``<file>:<line>: <why>``, the line
where a parse finds one: ``datasets`` itself names none); its malformed records are said in one
line (``dataset_note``) and left out. Below the shell: ``rounds/retrieval.py`` reads datasets
so too, and the shell (``cli/``) only says what these find.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..input_files import InputError, RecordError, read_jsonl, scan_jsonl
from .load import DatasetError, LoadResult, load_instances

# How bench/load.py names a JSON-lines record whose id it could not read.
_LINE_LABEL = re.compile(r"<line (\d+) of .*>")


def any_object(value: Any) -> dict[str, Any]:
    """A JSON-lines record that only has to be an object."""
    if not isinstance(value, dict):
        raise RecordError("not a JSON object")
    return value


def load_dataset(source: str, **options: Any) -> LoadResult:
    """``load_instances(source, **options)``; a source that cannot be read at all is an
    ``InputError`` naming its line where a parse finds one (``dataset_note`` says, in one
    line, what records it left out)."""
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
