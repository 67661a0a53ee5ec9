from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_toolpolicy import jsonsafe
from pytest_toolpolicy.types import Outcome, ToolCall, Trajectory, Turn, load_trajectories

CUT = f"[nested deeper than {jsonsafe.MAX_DEPTH} levels; cut]"


def nested(depth: int, kind: str = "dict", leaf: Any = "leaf") -> Any:
    value = leaf
    for level in range(depth):
        mixed = kind == "mixed" and level % 2
        value = [value] if kind == "list" or mixed else {"k": value}
    return value


def depth_of(value: Any) -> int:
    """Container levels above the deepest leaf, without recursion."""
    deepest, todo = 0, [(value, 0)]
    while todo:
        item, level = todo.pop()
        if isinstance(item, dict):
            todo.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            todo.extend((v, level + 1) for v in item)
        deepest = max(deepest, level)
    return deepest


def reads_back(text: str) -> Any:
    text.encode("utf-8")  # strict: raises on a lone surrogate
    return json.loads(text)


CLEAN = [
    {"a": 1, "b": [1.5, None, True, "x"], "ü": "naïve – ☃ 😀"},
    [{"nested": nested(100)}, (1, 2), "tab\tand\nnewline", "\u2028", ""],
    {"nan": math.nan, "inf": math.inf, "-inf": -math.inf},
    {1: "int key", 2.5: "float key", False: "bool key"},
    "just a string",
    12345678901234567890,
]


@pytest.mark.parametrize("value", CLEAN)
@pytest.mark.parametrize(
    "options", [{}, {"indent": 2}, {"sort_keys": True}, {"separators": (",", ":")}]
)
def test_clean_values_come_out_exactly_as_json_dumps_writes_them(value, options) -> None:
    assert jsonsafe.dumps(value, **options) == json.dumps(
        value, ensure_ascii=False, default=str, **options
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("high \ud800 alone", "high \\ud800 alone"),
        ("low \udfff alone", "low \\udfff alone"),
        ("surrogateescape'd byte \udc80", "surrogateescape'd byte \\udc80"),
        ({"key \udbff": "v"}, {"key \\udbff": "v"}),
        ([{"a": ["\ud800\ud800"]}], [{"a": ["\\ud800\\ud800"]}]),
        ("pair split in two \ud83d\ude00", "pair split in two 😀"),
        ({"ok": "é", "bad": "\udc00é"}, {"ok": "é", "bad": "\\udc00é"}),
    ],
)
def test_lone_surrogates_are_escaped_anywhere(value: Any, expected: Any) -> None:
    with pytest.raises(UnicodeEncodeError):  # what json.dumps alone gives
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    assert reads_back(jsonsafe.dumps(value)) == expected


@pytest.mark.parametrize("kind", ["dict", "list", "mixed"])
def test_500_deep_is_written_whole(kind: str) -> None:
    value = nested(500, kind)
    text = jsonsafe.dumps(value)
    assert text == json.dumps(value, ensure_ascii=False)
    assert reads_back(text) == value


@pytest.mark.parametrize("kind", ["dict", "list", "mixed"])
def test_5000_deep_is_cut_at_max_depth_and_says_so(kind: str) -> None:
    value = nested(5000, kind)
    with pytest.raises(RecursionError):
        json.dumps(value)
    loaded = reads_back(jsonsafe.dumps(value))
    assert depth_of(loaded) == jsonsafe.MAX_DEPTH
    assert CUT in jsonsafe.dumps(value)
    assert "leaf" not in jsonsafe.dumps(value)


def test_a_surrogate_deeper_than_max_depth_cuts_nothing() -> None:
    """Only surrogates are wrong here and json.dumps manages the depth: nothing is lost."""
    value = nested(300, "mixed", leaf="x\ud800")
    loaded = reads_back(jsonsafe.dumps(value))
    assert depth_of(loaded) == 300
    assert loaded == nested(300, "mixed", leaf="x\\ud800")


def test_deep_and_surrogates_together() -> None:
    value = {"deep": nested(5000), "bad \ud800": ["\udfff"], "fine": "ok"}
    loaded = reads_back(jsonsafe.dumps(value))
    assert loaded["bad \\ud800"] == ["\\udfff"] and loaded["fine"] == "ok"
    assert depth_of(loaded) == jsonsafe.MAX_DEPTH


def test_nan_and_infinity_follow_allow_nan_as_json_dumps_does() -> None:
    value = {"nan": math.nan, "inf": math.inf, "bad": "\ud800"}
    loaded = reads_back(jsonsafe.dumps(value))
    assert math.isnan(loaded["nan"]) and loaded["inf"] == math.inf
    for strict in ({"nan": math.nan}, value):  # the fast path and the escaping path alike
        with pytest.raises(ValueError, match="Out of range float"):
            jsonsafe.dumps(strict, allow_nan=False)


class Odd:
    def __str__(self) -> str:
        return "odd \ud800 object"


@dataclass
class Point:
    x: int
    label: str


def test_other_objects_go_through_default() -> None:
    path = Path("/tmp/x")
    assert jsonsafe.dumps({"p": path, "s": {3}}) == json.dumps({"p": "/tmp/x", "s": "{3}"})
    assert reads_back(jsonsafe.dumps([Odd()])) == ["odd \\ud800 object"]
    # A caller's own default is used on the escaping path too, not replaced by str.
    as_dict = {"default": lambda o: {"x": o.x, "label": o.label}}
    assert reads_back(jsonsafe.dumps([Point(1, "\ud800")], **as_dict)) == [
        {"x": 1, "label": "\\ud800"}
    ]
    with pytest.raises(TypeError, match="not JSON serializable"):
        jsonsafe.dumps({"bad": "\ud800", "o": Odd()}, default=None)


def test_cycles_and_keys_json_cannot_write_are_written_anyway() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    shared = {"a": 1}
    table = {"self": None, "twice": [shared, shared]}
    table["self"] = table
    assert reads_back(jsonsafe.dumps(loop)) == [1, "[a container inside itself; cut]"]
    assert reads_back(jsonsafe.dumps(table)) == {
        "self": "[a container inside itself; cut]",
        "twice": [{"a": 1}, {"a": 1}],  # shared, not circular: written twice, as json does
    }
    assert reads_back(jsonsafe.dumps({(1, 2): "tuple key", 3: "int", None: "null"})) == {
        "(1, 2)": "tuple key",
        "3": "int",
        "null": "null",
    }


def test_exact_reads_back_equal_and_is_json_dumps_where_it_encodes() -> None:
    value = {"text": "x\ud800y", "ü": "é"}
    text = jsonsafe.exact(value, sort_keys=True)
    assert reads_back(text) == value  # the lone surrogate itself, not an escape of it
    assert text.isascii()
    clean = {"ü": "é", "n": [1, 2]}
    assert jsonsafe.exact(clean, sort_keys=True) == json.dumps(
        clean, sort_keys=True, ensure_ascii=False
    )


def test_clean_never_recurses_and_escape_leaves_clean_text_alone() -> None:
    copied = jsonsafe.clean(nested(20_000, "mixed"), max_depth=None)
    assert depth_of(copied) == 20_000
    # depth counts levels already used: two more fit under MAX_DEPTH, the third is cut.
    assert jsonsafe.clean(nested(10), depth=jsonsafe.MAX_DEPTH - 2) == nested(2, leaf=CUT)
    text = "plain ☃ text"
    assert jsonsafe.escape(text) is text


def random_value(rng: random.Random, depth: int = 0) -> Any:
    pick = rng.random()
    if depth > 8 or pick < 0.4:
        chars = [rng.choice(["a", "é", "😀", "\ud800", "\udfff", "\\", '"', "\n"]) for _ in "xyz"]
        return rng.choice(["".join(chars), rng.random(), rng.randint(-9, 9), None, math.nan])
    if pick < 0.6:
        return nested(rng.choice([3, 700, 3000]), rng.choice(["dict", "list", "mixed"]))
    if pick < 0.8:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {random_value(rng, 9): random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def test_random_mixtures_always_encode_and_read_back() -> None:
    rng = random.Random(11)
    for n in range(300):
        value = random_value(rng)
        key = value if isinstance(value, str) else "k"
        reads_back(jsonsafe.dumps({key: value}))
        if n % 20 == 0:  # json's Python encoder (indent) takes 70 ms to overflow its stack
            reads_back(jsonsafe.dumps([value], indent=1))


def test_a_trajectory_with_surrogates_and_500_deep_arguments_saves_and_loads(
    tmp_path: Path,
) -> None:
    args = {"query": "x\ud800", "deep": nested(500, "mixed"), "ok": "é"}
    turn = Turn(0, request=ToolCall("search_symbol", args))
    traj = Trajectory("i-1", "policy", "policy", "m", (turn,), Outcome("stop", {"r": "\udc80"}))
    record = traj.to_dict()
    assert record["turns"][0]["request"]["args"]["deep"] == args["deep"]
    assert record["turns"][0]["request"]["args"] is not args  # a copy, as asdict makes
    path = tmp_path / "t.jsonl"
    traj.save(path)
    (loaded,) = load_trajectories(path)
    assert loaded.turns[0].request == ToolCall("search_symbol", {**args, "query": "x\\ud800"})
    assert loaded.outcome == Outcome("stop", {"r": "\\udc80"})


# --- loads: the nesting bound, measured before decoding -----------------------------------


def containers(value: Any) -> int:
    """How many containers deep ``value`` is (an empty one counts), without recursion."""
    deepest, todo = 0, [(value, 0)]
    while todo:
        item, level = todo.pop()
        if isinstance(item, (dict, list)):
            level += 1
            todo.extend((v, level) for v in (item.values() if isinstance(item, dict) else item))
        deepest = max(deepest, level)
    return deepest


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", 0),
        ("[]", 1),
        ("{}", 1),
        ('"[[[{{{"', 0),
        ('["[", {"a": "]]]{"}]', 2),
        (r'["\"[", []]', 2),
        (r'["\\", [[]]]', 3),
        ('"an unterminated string [[[[', 0),  # a string runs to the end when it never closes
        ('[["\\', 2),  # a lone backslash at the very end
        ("[1]]]][[[", 1),  # a decoder stops at the first stray "]"
        ("[\ud800, [\udfff]]", 2),  # lone surrogates are counted past, not refused
    ],
)
def test_depth_counts_containers_not_the_brackets_of_strings(text: str, expected: int) -> None:
    assert jsonsafe.depth(text) == expected
    assert jsonsafe.depth(text.encode("utf-8", "surrogatepass")) == expected


def random_json(rng: random.Random, depth: int = 0) -> Any:
    pick = rng.random()
    if depth > 100 or pick < 0.3:
        chars = ["a", "é", "😀", "[", "]", "{", "}", '"', "\\", "\\u", "\n", "\u225b", "\u5b22"]
        return rng.choice(["".join(rng.choice(chars) for _ in range(4)), 1.5, -3, None, True])
    if pick < 0.65:
        return [random_json(rng, depth + 1) for _ in range(rng.choice([0, 1, 1, 1, 2]))]
    return {
        random_json(rng, 101): random_json(rng, depth + 1) for _ in range(rng.choice([0, 1, 2]))
    }


def test_depth_is_the_nesting_of_any_json_in_every_encoding() -> None:
    rng = random.Random(5)
    for _ in range(400):
        value = random_json(rng)
        for text in (json.dumps(value), json.dumps(value, ensure_ascii=False)):
            want = containers(value)
            assert jsonsafe.depth(text) == want, text
            assert jsonsafe.depth(text.encode()) == want
            # json.loads reads UTF-16 and -32 bytes too, whose bytes can look like '"' or '['
            # ("\u225b" is 5b 22 in UTF-16-LE): they are measured as the characters they encode.
            for encoding in ("utf-16-le", "utf-16-be", "utf-32"):
                assert jsonsafe.depth(text.encode(encoding)) == want, (encoding, text)


def test_loads_never_returns_deeper_than_its_bound_whatever_the_text() -> None:
    # Broken JSON too: the bound must hold for whatever json.loads would accept.
    rng = random.Random(8)
    pieces = ["[", "]", "{", "}", '"', "\\", ",", ":", "1", '"a"', " ", "[[[[", "]]]]"]
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 30)))
        try:
            value = jsonsafe.loads(text, max_depth=3)
        except jsonsafe.TooDeep:
            continue
        except ValueError:
            continue
        assert containers(value) <= 3, text


def test_the_bound_lets_exactly_max_depth_levels_through() -> None:
    at_bound = "[" * jsonsafe.MAX_DEPTH + "]" * jsonsafe.MAX_DEPTH
    assert containers(jsonsafe.loads(at_bound)) == jsonsafe.MAX_DEPTH
    with pytest.raises(jsonsafe.TooDeep, match=f"^nested deeper than {jsonsafe.MAX_DEPTH} levels$"):
        jsonsafe.loads("[" + at_bound + "]")
    with pytest.raises(jsonsafe.TooDeep, match="^nested deeper than 2 levels$"):
        jsonsafe.check_depth(b'{"a": [[1]]}', max_depth=2)
    jsonsafe.check_depth(b'{"a": ["[[[[", 1]}', max_depth=2)


@pytest.mark.parametrize("kind", [str, bytes])
def test_200000_levels_are_refused_without_recursion(kind: type) -> None:
    deep = "[" * 200_000 + "]" * 200_000
    text = deep if kind is str else deep.encode()
    with pytest.raises(jsonsafe.TooDeep):
        jsonsafe.loads(text)
    with pytest.raises(RecursionError):
        json.loads(text)  # what loads() keeps it from
    # The same brackets inside a string are text, and read as such.
    assert jsonsafe.loads(json.dumps({"text": deep})) == {"text": deep}


def test_a_refusal_of_loads_is_a_value_error_like_json_s_own() -> None:
    for text in ("[" * 100, "{", "9" * 5000):
        with pytest.raises(ValueError):
            jsonsafe.loads(text)
