"""The offline model's "search for …" runs the real session_search in the runtime serve and chat use.

A person says something in one conversation, starts another and asks the offline model to search: the
answer quotes what they said (not "no search tool", and not an offline "summary" of the excerpts).
"""

from __future__ import annotations

from pathlib import Path

from agent_core.actor import Actor
from agent_core.agent import TurnFailed, TurnFinished
from agent_core.llm import OFFLINE_LABEL
from agent_core.storage import NewMessage, Principal
from gateway.config import Home, Settings
from gateway.runtime import Runtime, open_runtime

PERSON = "ana"
KEY = "web:-:dm:ana-browser:-:-"
PRINCIPAL = Principal(person_id=PERSON, platform="web", user_id="ana-browser", chat_id="ana-browser")


async def _say(runtime: Runtime, conversation_id: str, text: str) -> str:
    tip = await runtime.storage.agent.resolve_tip(conversation_id)
    await runtime.storage.agent.append_message(tip.id, NewMessage(role="user", content=text, author=PERSON))
    scope = Actor(PERSON, conversation_id=conversation_id, platform="web")
    replies = [
        event.text async for event in runtime.agent.run(scope) if isinstance(event, TurnFinished | TurnFailed)
    ]
    return replies[-1]


async def test_search_for_quotes_an_earlier_conversation(home: Path) -> None:
    async with open_runtime(Home(home), Settings()) as runtime:
        first = await runtime.storage.agent.start_new_conversation(KEY, PRINCIPAL)
        await _say(runtime, first.id, "The release train moves to Thursday because of the audit.")
        assert await runtime.storage.search.wait_indexed(10.0)
        second = await runtime.storage.agent.start_new_conversation(KEY, PRINCIPAL)
        reply = await _say(runtime, second.id, "search for the release train")

    assert reply.startswith(OFFLINE_LABEL)
    assert "no search tool" not in reply
    assert "The release train moves to Thursday because of the audit." in reply


async def test_a_search_with_no_match_says_so(home: Path) -> None:
    async with open_runtime(Home(home), Settings()) as runtime:
        conversation = await runtime.storage.agent.start_new_conversation(KEY, PRINCIPAL)
        reply = await _say(runtime, conversation.id, "did we talk about quantum gardening")
    assert reply.startswith(OFFLINE_LABEL) and "no search tool" not in reply
    assert "nothing found" in reply.lower()
