from httpkit import encode_query, parse_query


def test_encode_mapping():
    assert encode_query({"q": "café & co", "page": 2}) == "q=caf%C3%A9+%26+co&page=2"


def test_encode_repeats_list_values_and_skips_none():
    assert encode_query({"tag": ["a", "b"], "missing": None}) == "tag=a&tag=b"


def test_encode_pairs_and_booleans():
    assert encode_query([("debug", True), ("cache", False)]) == "debug=true&cache=false"


def test_encode_sorted():
    assert encode_query({"b": 1, "a": 2}, sort=True) == "a=2&b=1"


def test_parse_round_trip():
    params = {"q": ["a b&c"], "tag": ["x", "y"]}
    assert parse_query(encode_query(params)) == params


def test_parse_leading_question_mark_and_blanks():
    assert parse_query("?a=1&b=&c") == {"a": ["1"], "b": [""], "c": [""]}
    assert parse_query("a=1&b=&c", keep_blank=False) == {"a": ["1"]}
