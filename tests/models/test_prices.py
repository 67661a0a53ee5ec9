from __future__ import annotations

import math
import uuid
import warnings
from pathlib import Path

import pytest

from pytest_toolpolicy.models import (
    Budget,
    Completion,
    Price,
    PriceError,
    PriceTable,
    UnpricedWarning,
    Usage,
    load_prices,
)
from pytest_toolpolicy.models.prices import MAX_RATE
from pytest_toolpolicy.models.usage import MAX_TOKENS, UsageError

README_MODELS = {
    "gpt-4o-mini": (0.15, 0.075, 0.60),
    "gpt-4o": (2.50, 1.25, 10.00),
    "gpt-4.1": (2.00, 0.50, 8.00),
    "gpt-4.1-mini": (0.40, 0.10, 1.60),
    "deepseek-chat": (0.27, 0.07, 1.10),
    "deepseek-v4-pro": (0.435, 0.003625, 0.87),
}


def unpriced_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, UnpricedWarning)]


def test_defaults_price_the_readme_models_and_say_where_from() -> None:
    table = load_prices(env={})
    for model, rates in README_MODELS.items():
        price = table.price(model)
        assert price is not None, model
        assert (price.input, price.cached_input, price.output) == rates
        assert price.source and price.as_of, model
    assert "2026-08-16" in table.prices["deepseek-v4-pro"].note


def test_cost_prices_cached_tokens_at_the_cached_rate() -> None:
    table = load_prices(env={})
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=100_000, cached_prompt_tokens=800_000)
    # 200k misses at 0.435, 800k hits at 0.003625, 100k out at 0.87
    assert table.cost("deepseek-v4-pro", usage) == pytest.approx(0.087 + 0.0029 + 0.087)
    assert table.cost("gpt-4o", Usage(2000, 500)) == pytest.approx(0.005 + 0.005)


def test_a_provider_prefix_finds_the_bare_name() -> None:
    table = load_prices(env={})
    assert table.price("deepseek/deepseek-v4-pro") == table.price("deepseek-v4-pro")
    assert table.price("openai/gpt-4o-mini") == table.price("gpt-4o-mini")


def test_an_unpriced_model_costs_none_with_one_warning_per_model() -> None:
    model = f"unpriced-{uuid.uuid4().hex[:8]}"
    table = PriceTable()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        costs = [table.cost(model, Usage(10, 10)) for _ in range(3)]
        load_prices(env={}).cost(model, Usage(1, 1))
    assert costs == [None, None, None]
    [message] = unpriced_warnings(caught)
    assert repr(model) in message and "not $0" in message
    assert "--toolpolicy-prices" in message and "TOOLPOLICY_PRICES" in message


def test_usage_not_reported_makes_the_cost_unknown_not_zero() -> None:
    model = f"priced-{uuid.uuid4().hex[:8]}"
    table = PriceTable({model: Price(1.0, 0.5, 2.0)})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert table.cost(model, Usage(missing=True)) is None
    [message] = unpriced_warnings(caught)
    assert "no token usage" in message


def test_a_user_file_replaces_and_adds_entries(tmp_path: Path) -> None:
    user = tmp_path / "prices.toml"
    user.write_text(
        '[models."deepseek-v4-pro"]\ninput = 0.5\ncached_input = 0.01\noutput = 1.0\n'
        'source = "our contract"\n\n'
        '[models."qwen2.5-coder:7b"]\nlocal = true\n'
    )
    for table in (load_prices(user, env={}), load_prices(env={"TOOLPOLICY_PRICES": str(user)})):
        assert table.price("deepseek-v4-pro") == Price(
            0.5, 0.01, 1.0, "our contract", origin=str(user)
        )
        assert table.cost("qwen2.5-coder:7b", Usage(5000, 300, 1000)) == 0.0
        assert table.price("gpt-4o") is not None


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ('[models."x"\ninput = 1', "not valid TOML"),
        ('[models."x"]\ninput = 1\noutput = 2\n', 'models."x"]: missing cached_input'),
        (
            '[models."x"]\ninput = -1\ncached_input = 0\noutput = 2\n',
            "input must be a number from 0 to 1,000,000 ($ per million tokens), not -1",
        ),
        ('[models."x"]\ninput = 1\ncached_input = 0\noutput = inf\n', "not inf"),
        ('[models."x"]\ninput = 1\ncached_input = nan\noutput = 2\n', "not nan"),
        ('[models."x"]\ninput = 1e300\ncached_input = 0\noutput = 2\n', "not 1e+300"),
        ('[models."x"]\ninput = "1"\ncached_input = 0\noutput = 2\n', "input must be a number"),
        ('[models."x"]\ninput = 1\ncached_input = 0\nouptut = 2\n', "unknown keys ['ouptut']"),
        ('[models."x"]\nlocal = true\noutput = 2\n', "local = true prices it at 0"),
        ('[model."x"]\nlocal = true\n', "unknown top-level keys ['model']"),
    ],
)
def test_a_bad_price_file_is_an_error_naming_file_and_entry(
    tmp_path: Path, text: str, complaint: str
) -> None:
    bad = tmp_path / "bad-prices.toml"
    bad.write_text(text)
    with pytest.raises(PriceError) as raised:
        load_prices(bad, env={})
    assert str(bad) in str(raised.value) and complaint in str(raised.value)


def test_a_missing_price_file_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(PriceError, match="cannot read price file .*nowhere.toml"):
        load_prices(env={"TOOLPOLICY_PRICES": str(tmp_path / "nowhere.toml")})


def test_the_largest_allowed_usage_at_the_largest_rate_costs_a_finite_amount() -> None:
    price = Price(MAX_RATE, MAX_RATE, MAX_RATE)
    cost = price.cost(Usage(MAX_TOKENS, MAX_TOKENS, MAX_TOKENS // 2))
    assert math.isfinite(cost) and cost == 2 * MAX_TOKENS * MAX_RATE / 1e6


@pytest.mark.parametrize(
    "usage",
    [Usage(10**400, 1), Usage(1, MAX_TOKENS + 1), Usage(-1, 1), Usage(1, 1, -5)],
    ids=["huge", "over the bound", "negative", "negative cached"],
)
def test_a_usage_that_is_no_token_count_is_refused_not_priced(usage: Usage) -> None:
    # A Usage built elsewhere (a script, a cache) than usage_from is checked here too: an
    # overflowing count would otherwise be $inf or an OverflowError.
    with pytest.raises(UsageError, match="not a token count"):
        Price(1.0, 0.5, 2.0).cost(usage)


@pytest.mark.parametrize(
    "cost", [math.inf, -math.inf, math.nan, -0.01, 1e308], ids=["inf", "-inf", "nan", "neg", "big"]
)
def test_a_cost_that_is_no_amount_is_charged_as_unknown_never_as_inf(cost: float) -> None:
    # A script or a cache can carry any float; the budget's sum stays finite whatever it sees.
    budget = Budget(max_usd=1.0).charge(Completion("ok", Usage(1, 1), 1e308, 0.0))
    budget = budget.charge(Completion("ok", Usage(1, 1), cost, 0.0))
    assert math.isfinite(budget.known_usd) and budget.known_usd == 1e308
    assert budget.unpriced == 1 and budget.spent_usd is None and budget.turns == 2
