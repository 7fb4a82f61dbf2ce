"""Existing OpenAI clients (the real ``openai`` SDK) talk to the agent through /v1/chat/completions."""

from __future__ import annotations

import asyncio
from pathlib import Path

import openai
import pytest

from tests.gateway.http.conftest import (
    ADMIN_TOKEN,
    API_TOKEN,
    Gateway,
    accounts_on,
    reads_of,
    stored_messages,
)
from tests.gateway.webchat.served_gateway import ADMIN_TOKEN as SERVED_ADMIN_TOKEN
from tests.gateway.webchat.served_gateway import API_TOKEN as SERVED_API_TOKEN
from tests.gateway.webchat.served_gateway import Served, eventually, idle, served, served_settings


def _client(gateway: Gateway, key: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{gateway.base_url}/v1", api_key=key, max_retries=0, timeout=15)


async def test_completion_answers_the_last_user_message_in_the_users_conversation(gateway: Gateway) -> None:
    async with _client(gateway, API_TOKEN) as client:
        first = await client.chat.completions.create(
            model="mnemogate",
            user="ops-bot",
            messages=[
                {"role": "system", "content": "ignored: the gateway owns the prompt"},
                {"role": "user", "content": "an older message the gateway already has"},
                {"role": "user", "content": "what is the weather"},
            ],
        )
        await client.chat.completions.create(
            model="mnemogate", user="ops-bot", messages=[{"role": "user", "content": "second question"}]
        )
    text = first.choices[0].message.content or ""
    assert text.startswith("[offline model]") and "what is the weather" in text
    assert first.choices[0].finish_reason == "stop"
    assert first.usage is not None
    convs = await reads_of(gateway.runtime).conversations(platform="api")
    assert convs.total == 1
    session_key, conversation_id = convs.rows[0].session_key, convs.rows[0].id
    assert session_key.endswith(".ops%2Dbot:-:-") and API_TOKEN not in session_key
    users = [
        m.content
        for m in await gateway.runtime.storage.agent.conversation_messages(conversation_id)
        if m.role == "user"
    ]
    assert users == ["what is the weather", "second question"]


async def test_streaming_yields_chunks_then_stop(gateway: Gateway) -> None:
    async with _client(gateway, ADMIN_TOKEN) as client:
        stream = await client.chat.completions.create(
            model="mnemogate",
            user="streamer",
            stream=True,
            messages=[{"role": "user", "content": "stream it"}],
        )
        pieces, finish = [], None
        async for chunk in stream:
            pieces.append(chunk.choices[0].delta.content or "")
            finish = chunk.choices[0].finish_reason or finish
    assert "stream it" in "".join(pieces)
    assert finish == "stop"


async def test_wrong_key_is_refused(gateway: Gateway) -> None:
    async with _client(gateway, "not-the-key") as client:
        with pytest.raises(openai.AuthenticationError):
            await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])


async def test_request_without_user_text_is_a_400(gateway: Gateway) -> None:
    async with _client(gateway, API_TOKEN) as client:
        with pytest.raises(openai.BadRequestError):
            await client.chat.completions.create(model="m", messages=[{"role": "system", "content": "only"}])


# --- Overlapping requests, API client identity and rate limits, against the real pipeline and queue ---

BUSY_NOTICE = "Got it"


def _real_client(served: Served, key: str = SERVED_API_TOKEN) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{served.base_url}/v1", api_key=key, max_retries=0, timeout=20)


async def _ask(client: openai.AsyncOpenAI, text: str, user: str | None) -> str:
    answer = await client.chat.completions.create(
        model="mnemogate",
        messages=[{"role": "user", "content": text}],
        user=user if user is not None else openai.omit,
    )
    return answer.choices[0].message.content or ""


async def _overlap(served: Served, texts: list[str], user: str | None) -> list[str]:
    """Send ``texts`` so that every request after the first arrives while the first turn is running."""
    async with _real_client(served) as client:
        served.model.hold()
        first = asyncio.create_task(_ask(client, texts[0], user))
        await eventually(lambda: _true(served.model.calls >= 1), "the first turn to start")
        later = [asyncio.create_task(_ask(client, text, user)) for text in texts[1:]]

        async def all_arrived() -> bool:
            # Today's code hands them straight to the queue; a fixed one may also hold them at the API.
            arrived = await served.arrived("api")
            return arrived >= len(texts) or arrived + served.api.asks_waiting >= len(texts)

        await eventually(all_arrived, "every request to reach the gateway")
        served.model.release()
        return list(await asyncio.gather(first, *later))


async def _true(value: bool) -> bool:
    return value


async def test_overlapping_requests_for_one_user_each_get_their_own_answer(home: Path) -> None:
    async with served(home) as gateway:
        answers = await _overlap(gateway, ["first question", "second question", "third question"], "ops")
    for answer, mine in zip(answers, ["first", "second", "third"], strict=True):
        assert BUSY_NOTICE not in answer
        assert f"{mine} question" in answer
        others = {"first", "second", "third"} - {mine}
        assert not any(f"{other} question" in answer for other in others), answer


async def test_requests_without_user_neither_share_a_person_nor_get_each_others_answers(home: Path) -> None:
    async with served(home) as gateway:
        answers = await _overlap(gateway, ["alpha", "beta"], None)
        accounts = await accounts_on(gateway.runtime, "api")
        conversations = (await reads_of(gateway.runtime).conversations(platform="api")).total
    assert "alpha" in answers[0] and "beta" not in answers[0]
    assert "beta" in answers[1] and "alpha" not in answers[1]
    assert "default" not in accounts
    assert len(set(accounts.values())) == 2 and conversations == 2


async def test_an_api_conversation_belongs_to_the_token_and_user_and_never_shows_the_token(
    home: Path,
) -> None:
    async with served(home) as gateway:
        async with _real_client(gateway) as api, _real_client(gateway, SERVED_ADMIN_TOKEN) as admin:
            await _ask(api, "from the api token", "same-name")
            again = await _ask(api, "again", "same-name")
            other = await _ask(admin, "from the admin token", "same-name")
        accounts = list(await accounts_on(gateway.runtime, "api"))
        conversations = (await reads_of(gateway.runtime).conversations(platform="api")).total
    assert "again" in again and "from the admin token" in other
    assert conversations == 2 and len(accounts) == 2
    assert all(account.endswith("same-name") for account in accounts)
    assert not any(SERVED_API_TOKEN in a or SERVED_ADMIN_TOKEN in a for a in accounts)


async def test_a_rate_limited_completion_is_a_429_with_retry_after_and_is_not_stored(home: Path) -> None:
    settings = served_settings(rate_limit={"capacity": 2, "refill_s": 3600})
    async with served(home, settings) as gateway, _real_client(gateway) as client:
        assert "one" in await _ask(client, "one", "limited")
        assert "two" in await _ask(client, "two", "limited")
        with pytest.raises(openai.RateLimitError) as refused:
            await _ask(client, "three", "limited")
        await idle(gateway)
        stored = [m.content for m in await stored_messages(gateway.runtime, "user")]
    assert int(refused.value.response.headers["retry-after"]) >= 1
    assert stored == ["one", "two"]
