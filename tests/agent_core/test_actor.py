"""One Actor, derived views: what a search may read and what a segment records are built from it alone."""

from __future__ import annotations

import pytest

from agent_core.actor import Actor
from agent_core.search import SearchScope
from agent_core.storage.records import Principal


def test_a_person_searches_their_own_conversations_from_where_they_are() -> None:
    scope = SearchScope.for_actor(Actor("ana", conversation_id="c1"))
    assert scope == SearchScope.person("ana", current_conversation_id="c1")


def test_an_admin_searches_every_conversation() -> None:
    scope = SearchScope.for_actor(Actor("root", conversation_id="c2", is_admin=True))
    assert scope == SearchScope.all_conversations(current_conversation_id="c2")


def test_the_principal_of_a_segment_carries_the_actors_identity_and_the_chat() -> None:
    actor = Actor("p_1", platform="telegram", account_id="42", display_name="Ada", label="agent")
    principal = Principal.of(actor, chat_id="g1", chat_type="group", thread_id="t9")
    assert principal == Principal(
        person_id="p_1",
        platform="telegram",
        user_id="42",
        chat_id="g1",
        chat_type="group",
        thread_id="t9",
        display_name="Ada",
    )


def test_a_turn_needs_a_conversation() -> None:
    assert Actor("ana", conversation_id="c1").conversation() == "c1"
    with pytest.raises(ValueError, match="outside any conversation"):
        Actor("ana").conversation()
