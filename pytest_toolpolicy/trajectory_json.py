"""A trajectory read back from JSON, every field checked where it is built.

``Trajectory.from_dict`` comes here: each reader of ``trajectories.jsonl`` (the labels, the
retrieval rounds, the viewer, the measures) gets a typed record or a ``RecordError`` naming the
first field of the wrong shape (``turns[2].completion.usage.prompt_tokens is not a number but a
string``), never a record that trips it later.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any

from .input_files import RecordError
from .types import Observation, Outcome, Rejection, ToolCall, Trajectory, Turn


def trajectory_from(data: Any) -> Trajectory:
    data = _fields(data, Trajectory, "the record", optional=("patch", "meta"))
    meta = _object(data.get("meta", {}), "meta")
    for key in ("grade", "counterfactual"):
        _optional(meta.get(key), _object, f"meta.{key}")
    _optional(meta.get("trial"), _int, "meta.trial")
    turns = _list(data["turns"], "turns")
    return Trajectory(
        instance_id=_str(data["instance_id"], "instance_id"),
        arm=_str(data["arm"], "arm"),
        variant=_str(data["variant"], "variant"),
        model=_str(data["model"], "model"),
        turns=tuple(_turn(t, f"turns[{n}]") for n, t in enumerate(turns)),
        outcome=_outcome(data["outcome"]),
        patch=_str(data.get("patch", ""), "patch"),
        meta=meta,
    )


def _turn(data: Any, where: str) -> Turn:
    data = _fields(data, Turn, where, optional=("executed", "suppressed", "retrieval"))
    request = data["request"]
    extra = _list(data["extra_selections"], f"{where}.extra_selections")
    return Turn(
        index=_int(data["index"], f"{where}.index"),
        prompt=[
            _object(m, f"{where}.prompt[{n}]")
            for n, m in enumerate(_list(data["prompt"], f"{where}.prompt"))
        ],
        completion=_completion(data["completion"], f"{where}.completion"),
        request=None if request is None else _call(request, f"{where}.request"),
        rejections=tuple(
            _rejection(r, f"{where}.rejections[{n}]")
            for n, r in enumerate(_list(data["rejections"], f"{where}.rejections"))
        ),
        observations=tuple(
            _observation(o, f"{where}.observations[{n}]")
            for n, o in enumerate(_list(data["observations"], f"{where}.observations"))
        ),
        deferred=_calls(data["deferred"], f"{where}.deferred"),
        noop=_optional(data["noop"], _str, f"{where}.noop"),
        extra_selections=tuple(
            _selection(r, f"{where}.extra_selections[{n}]") for n, r in enumerate(extra)
        ),
        executed=_calls(data.get("executed", []), f"{where}.executed"),
        suppressed=_calls(data.get("suppressed", []), f"{where}.suppressed"),
        retrieval=tuple(
            _object(r, f"{where}.retrieval[{n}]")
            for n, r in enumerate(_list(data.get("retrieval", []), f"{where}.retrieval"))
        ),
    )


def _completion(data: Any, where: str) -> dict[str, Any] | None:
    return None if data is None else _selection(data, where)


def _selection(data: Any, where: str) -> dict[str, Any]:
    """A completion record (``Completion.record()``), checked where the measures read it."""
    record = _object(data, where)
    usage = _object(record.get("usage"), f"{where}.usage")
    for key in ("prompt_tokens", "completion_tokens"):
        _number(usage.get(key), f"{where}.usage.{key}")
    _optional(record.get("cost_usd"), _number, f"{where}.cost_usd")
    _optional(record.get("extra"), _object, f"{where}.extra")
    return record


def _outcome(data: Any) -> Outcome:
    data = _fields(data, Outcome, "outcome", optional=("detail",))
    kind = _str(data["outcome"], "outcome.outcome")
    return Outcome(kind, _object(data.get("detail", {}), "outcome.detail"))  # type: ignore[arg-type]


def _call(data: Any, where: str) -> ToolCall:
    data = _fields(data, ToolCall, where, optional=("args",))
    return ToolCall(
        _str(data["tool"], f"{where}.tool"), _object(data.get("args", {}), f"{where}.args")
    )


def _calls(data: Any, where: str) -> tuple[ToolCall, ...]:
    return tuple(_call(c, f"{where}[{n}]") for n, c in enumerate(_list(data, where)))


def _rejection(data: Any, where: str) -> Rejection:
    data = _fields(data, Rejection, where)
    return Rejection(_str(data["tool"], f"{where}.tool"), _str(data["reason"], f"{where}.reason"))


def _observation(data: Any, where: str) -> Observation:
    data = _fields(data, Observation, where, optional=("data", "source", "trust", "caveat"))
    cites = _list(data["cites"], f"{where}.cites")
    return Observation(
        kind=_str(data["kind"], f"{where}.kind"),
        target=_str(data["target"], f"{where}.target"),
        result=data["result"],
        data=data.get("data"),
        source=_str(data.get("source", "model"), f"{where}.source"),
        trust=_str(data.get("trust", "trusted"), f"{where}.trust"),
        caveat=_optional(data.get("caveat"), _str, f"{where}.caveat"),
        cites=tuple(_str(c, f"{where}.cites[{n}]") for n, c in enumerate(cites)),
    )


# The shape checks: each returns its value, or raises RecordError naming where it is wrong.
_KINDS = {dict: "an object", list: "a list", tuple: "a list", str: "a string", bool: "a boolean"}
_KINDS |= {int: "a number", float: "a number", type(None): "null"}


def _wrong(value: Any, where: str, wanted: str) -> RecordError:
    return RecordError(
        f"{where} is not {wanted} but {_KINDS.get(type(value), type(value).__name__)}"
    )


def _fields(data: Any, cls: type, where: str, optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """``data`` as an object holding every field of ``cls`` but ``optional`` and no other."""
    data = _object(data, where)
    names = [f.name for f in fields(cls)]
    unknown = sorted(set(data) - set(names))
    if unknown:
        raise RecordError(f"{where} has an unknown field {unknown[0]!r}")
    missing = [n for n in names if n not in data and n not in optional]
    if missing:
        raise RecordError(f"{where} lacks {missing[0]}")
    return data


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _wrong(value, where, "an object")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, (list, tuple)):  # a tuple: ``to_dict``'s, not yet through JSON
        raise _wrong(value, where, "a list")
    return list(value)


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _wrong(value, where, "a string")
    return value


def _int(value: Any, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _wrong(value, where, "a whole number")
    return value


def _number(value: Any, where: str) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise _wrong(value, where, "a number")
    return value


def _optional(value: Any, check: Callable[[Any, str], Any], where: str) -> Any:
    return None if value is None else check(value, where)
