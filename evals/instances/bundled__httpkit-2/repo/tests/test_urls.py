import pytest

from httpkit import build_url, join_path, normalize_url
from httpkit.urls import remove_dot_segments


def test_build_url_appends_segments():
    assert (
        build_url("https://api.example.com/v1/", "users", 42)
        == "https://api.example.com/v1/users/42"
    )


def test_build_url_escapes_each_segment():
    assert build_url("https://h", "a/b c") == "https://h/a%2Fb%20c"


def test_build_url_with_query_and_fragment():
    url = build_url("https://h/search", query={"q": "a b", "tag": ["x", "y"]}, fragment="top")
    assert url == "https://h/search?q=a+b&tag=x&tag=y#top"


def test_build_url_keeps_base_query_when_none_given():
    assert build_url("https://h/list?page=2", "more") == "https://h/list/more?page=2"


def test_join_path_root():
    assert join_path("") == "/"
    assert join_path("/", "a") == "/a"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("HTTP://Example.COM:80/a", "http://example.com/a"),
        ("https://example.com:443", "https://example.com/"),
        ("https://example.com:8443/x", "https://example.com:8443/x"),
        ("http://example.com/a/./b/../c", "http://example.com/a/c"),
        ("http://example.com/%7euser", "http://example.com/%7Euser"),
        ("http://user:pw@Example.com/", "http://user:pw@example.com/"),
        ("http://[::1]:80/", "http://[::1]/"),
        ("http://example.com/a?b=1#Frag", "http://example.com/a?b=1#Frag"),
    ],
    ids=[
        "case-and-port",
        "empty-path",
        "other-port",
        "dots",
        "escapes",
        "userinfo",
        "ipv6",
        "query",
    ],
)
def test_normalize_url(url, expected):
    assert normalize_url(url) == expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [("/a/b/../c", "/a/c"), ("/a/./b/.", "/a/b/"), ("/../a", "/a"), ("/a/b/..", "/a/")],
    ids=["parent", "current", "above-root", "trailing-parent"],
)
def test_remove_dot_segments(path, expected):
    assert remove_dot_segments(path) == expected
