from __future__ import annotations

import warnings

import pytest
from openai.types import CompletionUsage

from pytest_toolpolicy.models import Usage, usage_from
from pytest_toolpolicy.models.usage import MAX_TOKENS, UsageError


def test_openai_usage_reads_cached_tokens_from_prompt_details() -> None:
    reported = {
        "prompt_tokens": 1200,
        "completion_tokens": 40,
        "total_tokens": 1240,
        "prompt_tokens_details": {"cached_tokens": 1024},
    }
    assert usage_from(reported) == Usage(1200, 40, 1024)


def test_the_sdk_usage_object_reads_like_its_dict() -> None:
    sdk = CompletionUsage.model_validate(
        {
            "prompt_tokens": 300,
            "completion_tokens": 7,
            "total_tokens": 307,
            "prompt_tokens_details": {"cached_tokens": 256},
        }
    )
    assert usage_from(sdk) == Usage(300, 7, 256)


def test_deepseek_cache_hits_are_the_cached_prompt_tokens() -> None:
    reported = {
        "prompt_tokens": 5000,
        "completion_tokens": 90,
        "prompt_cache_hit_tokens": 4800,
        "prompt_cache_miss_tokens": 200,
    }
    assert usage_from(reported) == Usage(5000, 90, 4800)


def test_deepseek_fields_survive_the_sdk_object_as_extras() -> None:
    sdk = CompletionUsage.model_validate(
        {
            "prompt_tokens": 64,
            "completion_tokens": 3,
            "total_tokens": 67,
            "prompt_cache_hit_tokens": 60,
            "prompt_cache_miss_tokens": 4,
        }
    )
    assert usage_from(sdk) == Usage(64, 3, 60)


def test_hit_plus_miss_stands_in_for_a_missing_prompt_count() -> None:
    reported = {
        "completion_tokens": 5,
        "prompt_cache_hit_tokens": 30,
        "prompt_cache_miss_tokens": 12,
    }
    assert usage_from(reported) == Usage(42, 5, 30)


def test_no_usage_is_flagged_missing_not_zero_tokens() -> None:
    for reported in (None, {}, {"total_tokens": None}):
        usage = usage_from(reported)
        assert usage.missing, reported
        assert (usage.prompt_tokens, usage.completion_tokens) == (0, 0)
    assert not usage_from({"prompt_tokens": 0, "completion_tokens": 0}).missing


def test_null_counts_are_not_reported() -> None:
    reported = {"prompt_tokens": 10, "completion_tokens": None, "prompt_tokens_details": None}
    assert usage_from(reported) == Usage(10, 0, 0)
    assert usage_from({"prompt_tokens": 12.0, "completion_tokens": 3}) == Usage(12, 3, 0)


@pytest.mark.parametrize(
    ("field", "value", "shown"),
    [
        ("prompt_tokens", -5, "-5"),
        ("completion_tokens", float("nan"), "nan"),
        ("completion_tokens", float("inf"), "inf"),
        ("prompt_tokens", 1e300, "1e+300"),
        ("prompt_tokens", 12.5, "12.5"),
        ("prompt_tokens", "7", "'7'"),
        ("completion_tokens", True, "True"),
        ("prompt_tokens", MAX_TOKENS + 1, str(MAX_TOKENS + 1)),
        ("prompt_tokens", 10**5000, "an integer of 16610 bits"),
        ("prompt_cache_hit_tokens", -3, "-3"),
    ],
    ids=["negative", "nan", "inf", "1e300", "fraction", "string", "bool", "over", "huge", "hit"],
)
def test_a_count_that_is_no_token_count_is_a_usage_error_naming_it(
    field: str, value: object, shown: str
) -> None:
    reported = {"prompt_tokens": 10, "completion_tokens": 2, field: value}
    with pytest.raises(UsageError) as raised:
        usage_from(reported)
    assert str(raised.value) == (
        f"usage.{field} is {shown}, not a token count (an integer from 0 to 1,000,000,000)"
    )


def test_a_nested_cached_count_is_checked_and_named_by_its_path() -> None:
    reported = {"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": -1}}
    with pytest.raises(UsageError, match=r"^usage.prompt_tokens_details.cached_tokens is -1"):
        usage_from(reported)


def test_the_sdk_object_with_an_absurd_count_is_refused_without_a_warning() -> None:
    from openai._models import construct_type

    # The SDK builds its usage object without validating it; dumping it would only warn.
    sdk = construct_type(
        type_=CompletionUsage,
        value={"prompt_tokens": float("nan"), "completion_tokens": 1, "total_tokens": 1},
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UsageError, match="usage.prompt_tokens is nan"):
            usage_from(sdk)


def test_a_cached_count_above_the_prompt_is_capped_at_the_prompt() -> None:
    reported = {
        "prompt_tokens": 10,
        "completion_tokens": 1,
        "prompt_tokens_details": {"cached_tokens": 50},
    }
    assert usage_from(reported).cached_prompt_tokens == 10
