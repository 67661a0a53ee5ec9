import random
from datetime import datetime, timezone

import pytest

from httpkit import RetryPolicy, parse_retry_after


def test_exponential_delays():
    policy = RetryPolicy(base_delay=0.5, multiplier=2)
    assert [policy.delay_for(n) for n in range(1, 5)] == [0.5, 1.0, 2.0, 4.0]


def test_delay_is_capped():
    policy = RetryPolicy(base_delay=1, max_delay=10)
    assert policy.delay_for(8) == 10


def test_jitter_stays_within_bounds():
    policy = RetryPolicy(base_delay=4, multiplier=1, jitter=0.25)
    rng = random.Random(7)
    delays = [policy.delay_for(1, rng) for _ in range(200)]
    assert all(3.0 <= d <= 4.0 for d in delays)
    assert len(set(delays)) > 1


def test_delays_stop_at_max_attempts():
    assert list(RetryPolicy(max_attempts=3, base_delay=1).delays()) == [1, 2]


def test_should_retry_by_status_and_attempt():
    policy = RetryPolicy(max_attempts=3)
    assert policy.should_retry(1, 503)
    assert policy.should_retry(1, None)
    assert not policy.should_retry(1, 404)
    assert not policy.should_retry(3, 503)


def test_unlimited_attempts():
    assert RetryPolicy(max_attempts=None).should_retry(10_000, 500)


def test_retry_forever_does_not_overflow():
    policy = RetryPolicy(max_attempts=None, base_delay=0.5, max_delay=30)
    assert policy.delay_for(1100) == 30
    assert policy.delay_for(10**6) == 30


def test_huge_retry_number_with_int_multiplier():
    policy = RetryPolicy(max_attempts=None, base_delay=0.25, multiplier=3, max_delay=60, jitter=0.5)
    assert 30 <= policy.delay_for(5000, random.Random(1)) <= 60


@pytest.mark.parametrize(
    "kwargs",
    [{"max_attempts": 0}, {"base_delay": -1}, {"multiplier": 0.5}, {"jitter": 1.5}],
    ids=["no-attempts", "negative-delay", "shrinking", "jitter"],
)
def test_invalid_policies(kwargs):
    with pytest.raises(ValueError):
        RetryPolicy(**kwargs)


def test_retry_numbers_start_at_one():
    with pytest.raises(ValueError):
        RetryPolicy().delay_for(0)


def test_retry_after_seconds():
    assert parse_retry_after(" 120 ") == 120.0


def test_retry_after_http_date():
    now = datetime(2015, 10, 21, 7, 27, 0, tzinfo=timezone.utc)
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=now) == 60.0


def test_retry_after_in_the_past_and_garbage():
    now = datetime(2030, 1, 1, tzinfo=timezone.utc)
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=now) == 0.0
    assert parse_retry_after("soon") is None
