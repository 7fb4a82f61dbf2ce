"""What a request's ``messages`` add to its conversation: system messages are this reply's instructions,
earlier turns the conversation lacks are context, and neither is stored as said nor touches the frozen
system prompt (invariants 1 and 2), with the real ``openai`` SDK against ``/v1`` served for real."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai

from agent_core.search import SearchScope
from tests.gateway.api.served_api import ServedApi, eventually, served_api
from tests.gateway.http.conftest import reads_of


async def _complete(client: openai.AsyncOpenAI, messages: list[dict[str, Any]], user: str | None) -> str:
    answer = await client.chat.completions.create(
        model="mnemogate",
        messages=messages,
        user=user if user is not None else openai.omit,
    )
    return answer.choices[0].message.content or ""


async def _only_conversation(served: ServedApi) -> str:
    (conversation,) = (await reads_of(served.runtime).conversations(platform="api")).rows
    return conversation.id


async def test_system_messages_are_this_replys_instructions_and_never_change_the_frozen_prompt(
    home: Path,
) -> None:
    async with served_api(home) as served, served.client() as client:
        first = await _complete(
            client,
            [{"role": "system", "content": "Answer like a pirate."}, {"role": "user", "content": "hello"}],
            "ada",
        )
        second = await _complete(
            client,
            [
                {"role": "developer", "content": "Answer in haiku."},
                {"role": "user", "content": "hello"},
                {"role": "assistant", "content": first},
                {"role": "user", "content": "and now?"},
            ],
            "ada",
        )
        tip = await served.runtime.storage.agent.resolve_tip(await _only_conversation(served))
    sent = served.model.requests
    assert "Answer like a pirate." in first and "Answer in haiku." in second  # the model was given them
    assert sent[0].system == sent[1].system == tip.system_prompt  # invariant 1: byte for byte
    assert "pirate" not in tip.system_prompt and "haiku" not in tip.system_prompt
    assert "<client-context>" in sent[1].messages[-1].content and "haiku" in sent[1].messages[-1].content
    assert sent[1].messages[0].content == sent[0].messages[-1].content  # turn 1's exact bytes replayed


async def test_only_what_the_user_said_is_stored_searched_and_shown(home: Path) -> None:
    async with served_api(home) as served, served.client() as client:
        await _complete(
            client,
            [
                {"role": "system", "content": "Mention the zeppelin codeword."},
                {"role": "user", "content": "an older turn about marmalade"},
                {"role": "assistant", "content": "marmalade noted"},
                {"role": "user", "content": "any news of the lighthouse?"},
            ],
            None,
        )
        conversation = await _only_conversation(served)
        stored = await served.runtime.storage.agent.conversation_messages(conversation)
        shown = await reads_of(served.runtime).messages(conversation)
        everything = SearchScope(person_id=None, everything=True)

        async def indexed() -> bool:  # the reply, so the user message before it too (indexed in order)
            return bool((await served.runtime.search.search("codeword", everything)).conversations)

        await eventually(indexed, "the conversation to be searchable")
        leaked = [await served.runtime.search.search(w, everything) for w in ("zeppelin", "marmalade")]
    said = [m for m in stored if m.role == "user"]
    assert [m.content for m in said] == ["any news of the lighthouse?"]  # invariant 2
    assert said[0].api_content is not None and "zeppelin" in said[0].api_content
    assert [m.content for m in shown if m.role == "user"] == ["any news of the lighthouse?"]
    # Only the echo model's reply (what it said) holds those words; no user message does.
    snippets = [s for found in leaked for c in found.conversations for s in c.snippets]
    assert snippets and {s.role for s in snippets} == {"assistant"}


async def test_a_stateless_request_gives_its_earlier_turns_to_the_model(home: Path) -> None:
    async with served_api(home) as served, served.client() as client:
        answer = await _complete(
            client,
            [
                {"role": "user", "content": "my name is Zed"},
                {"role": "assistant", "content": "Hello, Zed."},
                {"role": "user", "content": "what is my name?"},
            ],
            None,
        )
    (request,) = served.model.requests
    assert len(request.messages) == 1
    assert answer.startswith("echo: what is my name?\n\n<client-context>")
    assert "[user] my name is Zed\n[assistant] Hello, Zed." in answer


async def test_with_user_the_stored_conversation_is_the_history_and_is_not_repeated(home: Path) -> None:
    async with served_api(home) as served, served.client() as client:
        first = await _complete(client, [{"role": "user", "content": "my name is Zed"}], "zed")
        history = [
            {"role": "user", "content": "my name is Zed"},
            {"role": "assistant", "content": first},
            {"role": "user", "content": "what is my name?"},
        ]
        second = await _complete(client, history, "zed")
    request = served.model.requests[1]
    assert [(m.role, m.content) for m in request.messages] == [
        ("user", "my name is Zed"),
        ("assistant", first),
        ("user", "what is my name?"),
    ]
    assert second == "echo: what is my name?"


async def test_turns_the_conversation_lacks_are_given_as_context_once(home: Path) -> None:
    async with served_api(home) as served, served.client() as client:
        first = await _complete(client, [{"role": "user", "content": "yes"}], "kai")
        history = [
            {"role": "user", "content": "yes"},
            {"role": "assistant", "content": first},
            {"role": "user", "content": "from another app: I like kites"},
            {"role": "assistant", "content": "Kites are great."},
            {"role": "user", "content": "yes"},
            {"role": "assistant", "content": "Noted twice."},
            {"role": "user", "content": "what do I like?"},
        ]
        answer = await _complete(client, history, "kai")
    context = answer.split("<client-context>", 1)[1]
    assert "[user] from another app: I like kites\n[assistant] Kites are great." in context
    assert "[user] yes\n[assistant] Noted twice." in context  # a second "yes" the gateway never got
    assert first not in context
    assert served.model.requests[1].messages[0].content == "yes"


async def test_a_history_that_began_before_the_conversation_is_given_once(home: Path) -> None:
    older = [
        {"role": "user", "content": "on my phone: I like kites"},
        {"role": "assistant", "content": "Kites!"},
    ]
    async with served_api(home) as served, served.client() as client:
        first = await _complete(client, [*older, {"role": "user", "content": "hi"}], "lee")
        history = [*older, {"role": "user", "content": "hi"}, {"role": "assistant", "content": first}]
        await _complete(client, [*history, {"role": "user", "content": "what do I like?"}], "lee")
    second = served.model.requests[1].messages
    assert [m.content.count("I like kites") for m in second] == [1, first.count("I like kites"), 0]
    assert second[-1].content == "what do I like?"
