import pytest

from httpkit import (
    Headers,
    parse_content_disposition,
    parse_content_type,
    parse_cookie_header,
    parse_set_cookie,
)


class TestHeaders:
    def test_item_access_ignores_case(self):
        headers = Headers({"Content-Type": "text/plain"})
        assert headers["content-type"] == "text/plain"
        assert headers.get("CONTENT-TYPE") == "text/plain"

    def test_setitem_replaces_every_spelling(self):
        headers = Headers([("X-Tag", "a"), ("x-tag", "b")])
        headers["X-TAG"] = "c"
        assert headers.raw_items() == [("X-TAG", "c")]

    def test_delitem(self):
        headers = Headers({"Accept": "*/*"})
        del headers["accept"]
        assert len(headers) == 0
        with pytest.raises(KeyError):
            del headers["accept"]

    def test_add_keeps_repeats(self):
        headers = Headers()
        headers.add("Set-Cookie", "a=1")
        headers.add("Set-Cookie", "b=2")
        assert headers.get_all("Set-Cookie") == ["a=1", "b=2"]
        assert len(headers) == 1

    def test_iteration_keeps_first_spelling_and_order(self):
        headers = Headers([("Host", "h"), ("Accept", "*/*"), ("host", "h2")])
        assert list(headers) == ["Host", "Accept"]

    def test_get_all_is_case_insensitive(self):
        headers = Headers([("Set-Cookie", "a=1"), ("set-cookie", "b=2")])
        assert headers.get_all("SET-COOKIE") == ["a=1", "b=2"]

    def test_contains_is_case_insensitive(self):
        headers = Headers({"Content-Length": "10"})
        assert "content-length" in headers
        assert "Content-Length" in headers
        assert "Content-Type" not in headers
        assert 42 not in headers


class TestContentType:
    def test_plain(self):
        assert parse_content_type("application/json").mime_type == "application/json"

    def test_charset_and_case(self):
        ctype = parse_content_type("Text/HTML; Charset=UTF-8")
        assert ctype.mime_type == "text/html"
        assert ctype.charset == "UTF-8"

    def test_params_without_space(self):
        assert parse_content_type("text/html;charset=utf-8").charset == "utf-8"

    def test_quoted_boundary(self):
        ctype = parse_content_type('multipart/form-data; boundary="simple boundary"')
        assert ctype.boundary == "simple boundary"

    def test_quoted_escapes(self):
        ctype = parse_content_type(r'text/plain; title="say \"hi\""')
        assert ctype.params["title"] == 'say "hi"'

    def test_structured_json_suffix(self):
        assert parse_content_type("application/problem+json").is_json


class TestContentDisposition:
    def test_attachment_filename(self):
        disposition = parse_content_disposition('attachment; filename="report.pdf"')
        assert disposition.kind == "attachment"
        assert disposition.filename == "report.pdf"


class TestCookies:
    def test_cookie_header(self):
        assert parse_cookie_header("a=1; b=two; c=") == {"a": "1", "b": "two", "c": ""}

    def test_cookie_header_first_value_wins(self):
        assert parse_cookie_header("id=specific; id=general") == {"id": "specific"}

    def test_set_cookie_attributes(self):
        cookie = parse_set_cookie(
            "sid=abc123; Path=/; Domain=.Example.com; Max-Age=3600; Secure; HttpOnly"
        )
        assert (cookie.name, cookie.value) == ("sid", "abc123")
        assert cookie.path == "/"
        assert cookie.domain == "example.com"
        assert cookie.max_age == 3600
        assert cookie.secure and cookie.http_only

    def test_set_cookie_expires_keeps_its_comma(self):
        cookie = parse_set_cookie("a=b; Expires=Wed, 21 Oct 2015 07:28:00 GMT")
        assert cookie.attributes["expires"] == "Wed, 21 Oct 2015 07:28:00 GMT"
        assert cookie.max_age is None

    def test_set_cookie_without_pair(self):
        with pytest.raises(ValueError):
            parse_set_cookie("Secure; HttpOnly")
