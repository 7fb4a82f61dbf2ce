"""Existing OpenAI clients (the real ``openai`` SDK) talk to the agent through ``/v1``, served for real."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import openai
import pytest

from tests.gateway.api.served_api import (
    ADMIN_TOKEN,
    API_TOKEN,
    EchoModel,
    ServedApi,
    api_settings,
    eventually,
    served_api,
)
from tests.gateway.http.conftest import accounts_on, reads_of, stored_messages

_HELLO = [{"role": "user", "content": "hello there"}]


async def _ask(client: openai.AsyncOpenAI, text: str, user: str | None = None) -> str:
    answer = await client.chat.completions.create(
        model="mnemogate",
        messages=[{"role": "user", "content": text}],
        user=user if user is not None else openai.omit,
    )
    return answer.choices[0].message.content or ""


async def _streamed(client: openai.AsyncOpenAI, text: str, user: str | None = None) -> str:
    stream = await client.chat.completions.create(
        model="mnemogate",
        messages=[{"role": "user", "content": text}],
        user=user if user is not None else openai.omit,
        stream=True,
    )
    return "".join([chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices])


async def test_models_lists_the_model_that_answers_and_every_response_names_it(home: Path) -> None:
    async with served_api(home) as served, served.client() as client:
        listed = [model.id async for model in client.models.list()]
        assert listed == ["echo-1"]
        assert (await client.models.retrieve("echo-1")).owned_by == "tests"
        with pytest.raises(openai.NotFoundError):
            await client.models.retrieve("gpt-4o")
        answer = await client.chat.completions.create(model="gpt-4o", messages=_HELLO)
        stream = await client.chat.completions.create(model="gpt-4o", messages=_HELLO, stream=True)
        chunk_models = {chunk.model async for chunk in stream}
    assert answer.model == "echo-1" and chunk_models == {"echo-1"}


async def test_a_stream_shows_the_reply_while_the_model_is_still_writing_it(home: Path) -> None:
    model = EchoModel(parts=4)
    async with served_api(home, model=model) as served, served.client() as client:
        model.pause_after_first()
        stream = await client.chat.completions.create(
            model="mnemogate",
            user="reader",
            messages=[{"role": "user", "content": "tell me a story"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = aiter(stream)
        opening = await anext(chunks)
        first = await anext(chunks)  # arrives while the model waits to write the rest
        begun = first.choices[0].delta.content or ""
        assert opening.choices[0].delta.role == "assistant"
        assert begun and "echo: tell me a story".startswith(begun) and begun != "echo: tell me a story"
        model.resume()
        rest = [chunk async for chunk in chunks]
        stored = [m.content for m in await stored_messages(served.runtime, "assistant")]
    deltas = [c.choices[0].delta.content or "" for c in rest if c.choices]
    text = begun + "".join(deltas)
    assert text == "echo: tell me a story" and stored == [text]
    assert len([d for d in deltas if d]) >= 2, "the rest arrived in pieces too"
    finish = [c.choices[0].finish_reason for c in rest if c.choices and c.choices[0].finish_reason]
    assert finish == ["stop"]
    usage = rest[-1]
    assert usage.choices == [] and usage.usage is not None and usage.usage.total_tokens > 0


async def test_a_plain_completion_carries_the_reply_and_its_usage(home: Path) -> None:
    async with served_api(home) as served, served.client(ADMIN_TOKEN) as client:
        answer = await client.chat.completions.create(model="mnemogate", messages=_HELLO, user="ada")
    assert answer.choices[0].message.content == "echo: hello there"
    assert answer.choices[0].finish_reason == "stop"
    assert answer.usage is not None and answer.usage.prompt_tokens > 0 and answer.usage.completion_tokens > 0


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ("{not json", None),
        ({}, "messages"),
        ({"messages": []}, "messages"),
        ({"messages": [{"role": "wizard", "content": "hi"}]}, "messages.0.role"),
        ({"messages": [{"role": "user", "content": 42}]}, "messages.0.content.str"),
        ({"messages": [{"role": "system", "content": "only instructions"}]}, "messages"),
        (
            {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "x"}]},
            "messages",
        ),
        ({"messages": [{"role": "user", "content": "   "}]}, "messages"),
    ],
)
async def test_a_malformed_request_is_a_400_in_openai_shape_and_stores_nothing(
    home: Path, body: dict[str, object] | str, param: str | None
) -> None:
    content = body if isinstance(body, str) else json.dumps(body)
    headers = {"Authorization": f"Bearer {API_TOKEN}", "Content-Type": "application/json"}
    async with served_api(home) as served:
        async with httpx.AsyncClient(base_url=served.base_url) as raw:
            answer = await raw.post("/v1/chat/completions", content=content, headers=headers)
        stored = await stored_messages(served.runtime)
    error = answer.json()["error"]
    assert answer.status_code == 400 and error["type"] == "invalid_request_error"
    assert set(error) == {"message", "type", "param", "code"} and error["param"] == param
    assert error["message"] and len(answer.content) < 600
    assert stored == []


async def test_the_sdk_raises_its_own_errors_for_400_and_401(home: Path) -> None:
    async with served_api(home) as served:
        async with served.client() as client:
            with pytest.raises(openai.BadRequestError) as bad:
                await client.chat.completions.create(
                    model="m", messages=[{"role": "system", "content": "only instructions"}]
                )
        async with served.client("not-the-key") as client:
            with pytest.raises(openai.AuthenticationError) as refused:
                await client.chat.completions.create(model="m", messages=_HELLO)
            with pytest.raises(openai.AuthenticationError):
                await client.models.list()
    assert "user message" in bad.value.message
    assert refused.value.code == "invalid_api_key" and refused.value.type == "invalid_request_error"
    assert refused.value.response.headers["www-authenticate"] == "Bearer"


async def test_a_rate_limited_completion_is_a_429_with_retry_after_and_is_not_stored(home: Path) -> None:
    settings = api_settings(rate_limit={"capacity": 2, "refill_s": 3600})
    async with served_api(home, settings) as served, served.client() as client:
        assert await _ask(client, "one", "limited") == "echo: one"
        assert await _streamed(client, "two", "limited") == "echo: two"
        with pytest.raises(openai.RateLimitError) as refused:
            await _ask(client, "three", "limited")
        with pytest.raises(openai.RateLimitError):
            await _streamed(client, "four", "limited")
        stored = [m.content for m in await stored_messages(served.runtime, "user")]
    assert int(refused.value.response.headers["retry-after"]) >= 1
    assert refused.value.code == "rate_limit_exceeded"
    assert stored == ["one", "two"]


async def _overlap(served: ServedApi, asks: list[tuple[str, str | None, bool]]) -> list[str]:
    """Send every (text, user, stream) ask from a client of its own while the model is held, then let go."""
    clients = [served.client() for _ in asks]
    try:
        served.model.hold()
        calls = [
            asyncio.create_task((_streamed if stream else _ask)(client, text, user))
            for client, (text, user, stream) in zip(clients, asks, strict=True)
        ]

        async def all_arrived() -> bool:
            return await served.arrived() + served.api.asks_waiting >= len(asks)

        await eventually(all_arrived, "every request to reach the gateway")
        served.model.release()
        return list(await asyncio.gather(*calls))
    finally:
        for client in clients:
            await client.close()


async def test_concurrent_clients_each_get_their_own_answer(home: Path) -> None:
    asks = [
        ("alpha", "ann", False),
        ("bravo", "bob", True),
        ("charlie", None, False),
        ("delta", None, True),
        ("echo", "eve", True),
        ("foxtrot", "fay", False),
    ]
    async with served_api(home) as served:
        answers = await _overlap(served, asks)
    assert answers == [f"echo: {text}" for text, _, _ in asks]


async def test_overlapping_requests_of_one_user_take_turns_and_each_gets_its_own_answer(home: Path) -> None:
    asks = [("first question", "ops", False), ("second question", "ops", True), ("third", "ops", False)]
    async with served_api(home) as served:
        answers = await _overlap(served, asks)
        conversations = (await reads_of(served.runtime).conversations(platform="api")).total
    assert answers == ["echo: first question", "echo: second question", "echo: third"]
    assert conversations == 1


async def test_requests_without_user_share_neither_a_person_nor_a_conversation(home: Path) -> None:
    async with served_api(home) as served:
        await _overlap(served, [("alpha", None, False), ("beta", None, False)])
        accounts = await accounts_on(served.runtime, "api")
        conversations = (await reads_of(served.runtime).conversations(platform="api")).total
    assert len(set(accounts.values())) == 2 and conversations == 2


async def test_an_api_conversation_belongs_to_the_token_and_user_and_never_shows_the_token(
    home: Path,
) -> None:
    async with served_api(home) as served:
        async with served.client() as api, served.client(ADMIN_TOKEN) as admin:
            await _ask(api, "from the api token", "same-name")
            await _ask(api, "again", "same-name")
            await _ask(admin, "from the admin token", "same-name")
        accounts = list(await accounts_on(served.runtime, "api"))
        conversations = (await reads_of(served.runtime).conversations(platform="api")).rows
    assert len(conversations) == 2 and len(accounts) == 2
    assert all(account.endswith("same-name") for account in accounts)
    assert not any(API_TOKEN in a or ADMIN_TOKEN in a for a in accounts)
    assert not any(API_TOKEN in c.session_key or ADMIN_TOKEN in c.session_key for c in conversations)
