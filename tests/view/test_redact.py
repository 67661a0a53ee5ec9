"""Keys never reach a page: the shapes providers give them, and secret-named variables' values."""

from pytest_toolpolicy.view.redact import REDACTED, Redactor


def test_provider_key_shapes_are_replaced() -> None:
    clean = Redactor({})
    for key in (
        "sk-proj-" + "a1B2" * 8,
        "sk-ant-api03-" + "x" * 30,
        "ghp_" + "A" * 36,
        "hf_" + "b" * 34,
        "AKIA" + "ABCDEFGHIJKLMNOP",
        "AIza" + "c" * 35,
    ):
        assert clean(f"header {key} trailer") == f"header {REDACTED} trailer"


def test_a_bearer_header_is_replaced_whatever_its_case() -> None:
    clean = Redactor({})
    assert clean("Authorization: bearer abcdefghijklmnopqrstu") == f"Authorization: {REDACTED}"


def test_secret_named_variables_values_are_replaced_and_others_kept() -> None:
    env = {"MY_SERVICE_API_KEY": "zz-not-a-known-shape-123", "HOME": "/root", "SHORT_TOKEN": "abc"}
    clean = Redactor(env)
    assert clean("env: zz-not-a-known-shape-123 /root abc") == f"env: {REDACTED} /root abc"


def test_ordinary_text_is_returned_unchanged() -> None:
    text = "def sk(): return risk-free  # a skeleton key in a comment, not a secret"
    assert Redactor({}).__call__(text) == text
