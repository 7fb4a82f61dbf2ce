"""Over budget through ``/v1`` (the real ``openai`` SDK): the caller waits for each request's answer, so every
refused request is answered at once — a 429 ``insufficient_quota``, as OpenAI answers a spent quota — with
the notice, and no model call is made."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest

from tests.gateway.api.served_api import api_settings, served_api

_HELLO: list[dict[str, str]] = [{"role": "user", "content": "hello there"}]


async def test_every_request_over_budget_is_a_429_with_the_notice_and_no_model_call(home: Path) -> None:
    settings = api_settings(budgets={"person": {"day_tokens": 1}})
    async with served_api(home, settings) as served, served.client() as client:
        first = await client.chat.completions.create(model="mnemogate", messages=_HELLO, user="ada")
        assert first.choices[0].message.content == "echo: hello there"
        for _ in range(2):
            with pytest.raises(openai.RateLimitError) as refused:
                await client.chat.completions.create(model="mnemogate", messages=_HELLO, user="ada")
            assert refused.value.code == "insufficient_quota"
            assert "You have reached your daily budget (1 token)" in refused.value.message
        assert len(served.model.requests) == 1
