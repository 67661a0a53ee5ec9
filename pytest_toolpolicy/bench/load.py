"""Load benchmark instances from the bundled benchmark, a local file or a `datasets` hub id."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import jsonsafe
from ..paths import cache_dir, write_atomic
from .bundled_repos import StreamError, stream_commits, stream_path
from .instance import Instance, InstanceError, instance_from_row
from .sampling import Strata, describe, draw
from .since import Since

# Package data: the benchmark ships inside the wheel, so `bundled` works wherever it is installed.
BUNDLED_DIR = Path(__file__).resolve().parent / "bundled" / "instances"
LOCAL_BUILDERS = {".jsonl": "json", ".json": "json", ".parquet": "parquet"}
DEFAULT_SPLIT = "test"
USAGE = (
    "'bundled', 'bundled:<dir>', a local .jsonl/.json/.parquet file, "
    "or a hub id like princeton-nlp/SWE-bench_Verified[:split]"
)

_BOM = b"\xef\xbb\xbf"
_ID_IN_LINE = re.compile(rb'"instance_id"\s*:\s*"([A-Za-z0-9][\w.\-]*)"')
# A \uD800-\uDFFF escape: json.loads reads a lone one, datasets refuses the file for it.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_JSON_KINDS = {list: "an array", str: "a string", int: "a number", float: "a number"}
_JSON_KINDS |= {bool: "a boolean", type(None): "null"}
_COMMIT = re.compile(r"[0-9a-fA-F]{7,40}")

# (label for errors when the id is unusable, raw row, bundled instance dir); or an error.
Row = tuple[str, dict[str, Any], Path | None]


class DatasetError(Exception):
    """A whole source cannot be read (as opposed to one broken instance in it)."""


class DatasetUnavailable(DatasetError):
    """A hub dataset cannot be fetched from here."""


@dataclass(frozen=True)
class LoadResult:
    instances: tuple[Instance, ...]
    errors: tuple[InstanceError, ...]
    notes: tuple[str, ...] = ()


def load_instances(
    source: str,
    *,
    ids: Sequence[str] | None = None,
    sample: int | None = None,
    seed: int = 0,
    require_tests: bool = True,
    exclude: Callable[[Instance], str | None] | None = None,
    strata: Strata = "repo",
    since: Since | None = None,
) -> LoadResult:
    """Every valid instance of ``source``, sorted by id; each broken one is an error instead.
    ``exclude`` gives the reason an instance cannot run here (no mirror of its repository, no
    environment spec), or None: those are left out before the sample is drawn, each named in
    the notes, so a seeded sample holds only instances that can run. The sample is stratified
    by repository unless ``strata`` is "none" (``sampling.py``); a note says what it holds.
    ``since`` keeps only instances created on or after its date, also before the sample."""
    if sample is not None and sample < 1:
        raise ValueError(f"sample must be a positive number of instances, not {sample}")
    kind = "bundled" if source == "bundled" or source.startswith("bundled:") else source
    loaded: dict[str, Instance] = {}
    errors: list[InstanceError] = []
    for item in _rows(source):
        if isinstance(item, InstanceError):
            errors.append(item)
            continue
        label, row, path = item
        try:
            instance = instance_from_row(
                row, kind, require_tests=require_tests, label=label, path=path
            )
        except InstanceError as error:
            errors.append(error)
            continue
        if instance.instance_id in loaded:
            duplicate = InstanceError(instance.instance_id, "instance_id", f"duplicate at {label}")
            errors.append(duplicate)
            continue
        loaded[instance.instance_id] = instance

    notes: list[str] = []
    chosen = sorted(loaded)
    if ids is not None:
        wanted = {ids} if isinstance(ids, str) else set(ids)
        errors = [error for error in errors if error.instance_id in wanted]
        failed = {error.instance_id for error in errors}
        for unknown in sorted(wanted - loaded.keys() - failed):
            errors.append(InstanceError(unknown, "instance_id", f"no such instance in {source}"))
        chosen = [name for name in chosen if name in wanted]
    if exclude is not None:
        reasons = {name: exclude(loaded[name]) for name in chosen}
        notes += [f"excluded {name}: {why}" for name, why in reasons.items() if why]
        chosen = [name for name in chosen if not reasons[name]]
    if since is not None:
        before = [loaded[name] for name in chosen]
        chosen = [i.instance_id for i in before if since.keeps(i)]
        notes.append(since.note(len(chosen), before))
    if sample is not None:
        repo_of = {name: loaded[name].repo for name in chosen}
        if sample >= len(chosen):
            notes.append(f"sample of {sample} asked, {len(chosen)} available: using all")
        else:
            chosen = draw(repo_of, sample, seed, strata)
            how = "stratified by repository" if strata == "repo" else "simple random"
            notes.append(f"sample of {sample} of {len(repo_of)}, seed {seed}, {how}")
        notes.append(f"sample: {describe(repo_of, chosen)}")
    return LoadResult(tuple(loaded[name] for name in chosen), tuple(errors), tuple(notes))


def _rows(source: str) -> Iterator[Row | InstanceError]:
    if source == "bundled" or source.startswith("bundled:"):
        yield from _bundled_rows(Path(source.partition(":")[2] or BUNDLED_DIR))
        return
    suffix = Path(source).suffix.lower()
    if suffix == ".jsonl":
        yield from _jsonl_rows(Path(source), source)
        return
    if suffix in LOCAL_BUILDERS:
        rows = _local_rows(Path(source), LOCAL_BUILDERS[suffix])
    elif source.count("/") == 1 and not source.startswith(("/", ".")):
        rows = _hub_rows(*source.partition(":")[::2])
    else:
        raise DatasetError(f"unknown dataset source {source!r}: expected {USAGE}")
    for number, row in enumerate(rows, 1):
        yield f"<row {number} of {source}>", row, None


def _bundled_rows(root: Path) -> Iterator[Row | InstanceError]:
    if not root.is_dir():
        raise DatasetError(f"bundled benchmark directory {root} does not exist")
    streams: dict[Path, frozenset[str] | str] = {}  # each project's commits, or why none
    for directory in sorted(root.iterdir()):
        if not directory.is_dir() or directory.name.startswith((".", "_")):
            continue
        name, spec = directory.name, directory / "instance.json"
        try:
            row = json.loads(spec.read_text(encoding="utf-8"))
        except FileNotFoundError:
            yield InstanceError(name, "instance.json", f"missing in {directory}")
            continue
        except (OSError, ValueError) as error:
            yield InstanceError(name, "instance.json", f"unreadable JSON in {spec}: {error}")
            continue
        if not isinstance(row, dict):
            yield InstanceError(name, "instance.json", f"not a JSON object in {spec}")
        elif isinstance(row.get("instance_id"), str) and row["instance_id"] != name:
            found = row["instance_id"]
            yield InstanceError(name, "instance_id", f"{found!r} differs from its directory name")
        elif problem := _not_in_stream(row, directory, streams):
            yield InstanceError(name, *problem)
        else:
            yield name, row, directory


def _not_in_stream(
    row: dict[str, Any], directory: Path, streams: dict[Path, frozenset[str] | str]
) -> tuple[str, str] | None:
    """(field, problem) when the instance's base commit is not in its project's stream
    (``bundled_repos``); a field of the wrong type is left to ``instance_from_row`` to name."""
    repo, base = row.get("repo"), row.get("base_commit")
    if not isinstance(repo, str) or not isinstance(base, str) or not _COMMIT.fullmatch(base):
        return None
    stream = stream_path(directory, repo)
    if stream not in streams:
        try:
            streams[stream] = stream_commits(stream.read_bytes(), stream)
        except FileNotFoundError:
            streams[stream] = f"no repository stream {stream} for {repo}"
        except (OSError, StreamError) as error:
            streams[stream] = f"cannot read the repository stream: {error}"
    commits = streams[stream]
    if isinstance(commits, str):
        return "repo", commits
    if not any(commit.startswith(base.lower()) for commit in commits):
        return "base_commit", f"{base} is not a commit of {stream}"
    return None


def _jsonl_rows(path: Path, source: str) -> Iterator[Row | InstanceError]:
    """The rows of a JSON-lines file, still read by ``datasets``; a line that is not a JSON
    object is an error naming its line, in line order with the rows, and ``datasets`` is handed
    a copy without it (``datasets`` fails the whole file for one bad line)."""
    if not path.is_file():
        raise DatasetError(f"dataset file {path} does not exist")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise DatasetError(f"cannot read {path}: {error}") from error
    good, bad = _scan_jsonl(data, source)
    if not good:
        if not bad:
            raise DatasetError(f"dataset file {path} is empty")
        shown = "; ".join(str(e) for _, e in bad[:3]) + ("; ..." if len(bad) > 3 else "")
        raise DatasetError(f"dataset file {path} has no readable row ({len(bad)} bad): {shown}")
    if bad or data.startswith(_BOM):
        rows = _local_rows(_cleaned_copy(data, [line for _, line in good]), "json", shown=path)
    else:
        rows = _local_rows(path, "json")
    numbers = [number for number, _ in good]
    if len(rows) != len(numbers):  # never seen; then rows are named by position, as for .json
        numbers = list(range(1, len(rows) + 1))
    labelled: list[tuple[int, Row | InstanceError]] = [
        (number, (f"<line {number} of {source}>", row, None))
        for number, row in zip(numbers, rows, strict=True)
    ]
    for _, item in sorted([*labelled, *bad], key=lambda pair: pair[0]):
        yield item


def _scan_jsonl(
    data: bytes, source: str
) -> tuple[list[tuple[int, bytes]], list[tuple[int, InstanceError]]]:
    """The lines holding a JSON object (BOM dropped) and an error for each other non-blank
    line, each with its number. Split on "\n" only, as ``datasets`` does: a U+2028 inside a
    string is no line break."""
    good: list[tuple[int, bytes]] = []
    bad: list[tuple[int, InstanceError]] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if number == 1 and raw.startswith(_BOM):
            raw = raw[len(_BOM) :]
        if not raw.strip():
            continue
        field, problem = _line_problem(raw)
        if not problem:
            good.append((number, raw))
            continue
        # The id, when the broken line still shows one, lets --ids and `toolpolicy run
        # --instance` report this line instead of "no such instance".
        found = _ID_IN_LINE.search(raw)
        if found:
            name, problem = found.group(1).decode(), f"line {number} of {source}: {problem}"
        else:
            name = f"<line {number} of {source}>"
        bad.append((number, InstanceError(name, field, problem)))
    return good, bad


def _line_problem(raw: bytes) -> tuple[str, str]:
    """``(field, problem)``; the problem is empty for a good line."""
    try:
        row = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        return "row", f"not UTF-8 text (byte {error.start + 1})"
    except json.JSONDecodeError as error:
        return "row", f"not valid JSON ({error.msg} at column {error.colno})"
    except RecursionError:
        return "row", "not readable: nested too deep"
    if not isinstance(row, dict):
        return "row", f"not a JSON object but {_JSON_KINDS.get(type(row), type(row).__name__)}"
    if _SURROGATE_ESCAPE.search(raw):  # cheap test first: most lines have no such escape
        for key, value in row.items():
            try:
                json.dumps([key, value], ensure_ascii=False).encode("utf-8")
            except UnicodeEncodeError:
                return jsonsafe.escape(key), "a lone surrogate escape: not valid Unicode text"
            except RecursionError:
                return "row", "not readable: nested too deep"
    return "row", ""


def _cleaned_copy(data: bytes, lines: list[bytes]) -> Path:
    """The good lines as a file of their own, named by the original's content: loading the same
    file again finds it, and ``datasets`` its cached table, instead of writing both anew."""
    path = Path(_cache_dir()) / "cleaned" / f"{hashlib.sha256(data).hexdigest()[:32]}.jsonl"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, lambda tmp: tmp.write_bytes(b"\n".join(lines) + b"\n"))
    return path


def _local_rows(path: Path, builder: str, *, shown: Path | None = None) -> list[dict[str, Any]]:
    shown = shown or path
    if not path.is_file():
        raise DatasetError(f"dataset file {shown} does not exist")
    import datasets  # deferred: importing it costs about a second

    # Converting a local file draws a progress bar into the run's output, a line of noise
    # before every validation or mining summary: off for this load, as the caller had it after.
    quiet = datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        data = datasets.load_dataset(
            builder, data_files=str(path), split="train", cache_dir=_cache_dir()
        )
    # datasets surfaces a malformed file as many exception types (even StopIteration).
    except Exception as error:
        raise DatasetError(f"cannot read {shown}: {type(error).__name__}: {error}") from error
    finally:
        if not quiet:
            datasets.enable_progress_bars()
    return data.to_list()


def _hub_rows(dataset_id: str, split: str) -> list[dict[str, Any]]:
    import datasets

    try:
        data = datasets.load_dataset(
            dataset_id, split=split or DEFAULT_SPLIT, cache_dir=_cache_dir()
        )
    # Offline, huggingface_hub retries about 20 s and raises ConnectionError/OSError subclasses.
    except OSError as error:
        raise DatasetUnavailable(
            f"dataset {dataset_id!r} cannot be fetched from the hub ({error}); "
            "use --toolpolicy-dataset bundled or a local .jsonl/.json/.parquet file"
        ) from error
    return data.to_list()


def _cache_dir() -> str:
    return str(cache_dir() / "datasets")
