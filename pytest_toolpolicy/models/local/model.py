"""The client of a running local server: the OpenAI-compatible model, named ``local:<arg>``,
priced ``local`` (cost 0: it runs on this machine, not an unknown price), no retries (retrying
a loopback timeout only repeats the same generation). The ``local:`` backend
(``models/backends.py``): ``check`` finds the weights without the SDK, ``build`` the client."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..prices import Price, PriceTable
from .weights import WeightsError, resolve

if TYPE_CHECKING:  # the SDK loads with the client, not with a check or the server's address
    from ..backends import BuildOptions
    from ..openai_model import OpenAIModel

URL_ENV = "TOOLPOLICY_LOCAL_URL"  # set by the process that started the server; workers inherit it
KEY_ENV = "TOOLPOLICY_LOCAL_KEY"  # llama.cpp's server needs no key; the client wants one
LOCAL_PRICE = Price(0.0, 0.0, 0.0, source="local", note="served on this machine")


def local_model(
    arg: str, *, base_url: str | None = None, timeout: float = 600, max_retries: int = 0
) -> OpenAIModel:
    url = base_url or os.environ.get(URL_ENV)
    if not url:
        raise ValueError(
            f"local:{arg} has no running server: the pytest session (or toolpolicy run) starts"
            f" it and sets {URL_ENV}; to use a server of your own, pass its base URL"
        )
    from ..openai_model import OpenAIModel

    os.environ.setdefault(KEY_ENV, "local")
    model = OpenAIModel(
        arg,
        base_url=url,
        api_key_env=KEY_ENV,
        timeout=timeout,
        max_retries=max_retries,
        prices=PriceTable({arg: LOCAL_PRICE}),
    )
    model.name = f"local:{arg}"
    return model


def build(arg: str | None, options: BuildOptions) -> OpenAIModel:
    return local_model(
        arg or "", base_url=options.base_url, timeout=options.timeout,
        max_retries=options.max_retries,
    )  # fmt: skip


def check(arg: str | None) -> None:
    """The ``local`` extra is installed and the weights are there and as published."""
    try:
        resolve(arg or "")
    except WeightsError as exc:
        raise ValueError(str(exc)) from None
