"""The SearchIndex port on every backend: scoped, lineage-aware full-text search from a planned query.

Everything here goes through the port (``search_messages``, ``message_windows``, the index position)
with plans from the backend-neutral planner, so a backend passes by answering the same questions; no
test names a query dialect.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_core.search import SearchSettings, SessionSearch, plan_query
from agent_core.search.tool import SESSION_SEARCH_TOOL_NAME
from agent_core.storage import AgentStorage, NewMessage, NewSegment, Principal
from agent_core.storage.search_index import (
    UNSEARCHED_TOOLS,
    SearchBudget,
    SearchIndex,
    SearchRequest,
    SearchScope,
    SearchSnapshot,
)

if TYPE_CHECKING:
    from gateway.storage import Storage

ADMIN = SearchScope.all_conversations()


def agent(storage: Storage) -> AgentStorage:
    return storage.agent


def index(storage: Storage) -> SearchIndex:
    return storage.search


async def say(
    store: AgentStorage, key: str, person: str, *texts: str, role: str = "user"
) -> tuple[str, list[int]]:
    """Messages in the live conversation of ``key`` (created for ``person`` if needed), authored by them."""
    conversation = await store.ensure_conversation(key, Principal(person_id=person))
    author = person if role == "user" else None
    ids = await store.append_messages(
        conversation.tip_session_id, [NewMessage(role, text, author=author) for text in texts]
    )
    return conversation.id, ids


async def find(search: SearchIndex, text: str, scope: SearchScope, want: int = 10) -> SearchSnapshot:
    assert await search.wait_indexed(10)
    return await search.search_messages(SearchRequest(plan_query(text), scope, want))


def conversations_of(snapshot: SearchSnapshot) -> list[str]:
    return list(dict.fromkeys(hit.message.conversation_id for hit in snapshot.hits))


def message_ids(snapshot: SearchSnapshot) -> set[int]:
    return {hit.message.id for hit in snapshot.hits}


async def test_a_person_sees_only_conversations_they_own_or_wrote_in(storage: Storage) -> None:
    store, search = agent(storage), index(storage)
    ana, _ = await say(store, "dm:ana", "ana", "my kubernetes password rotation plan")
    bob, _ = await say(store, "dm:bob", "bob", "kubernetes cluster upgrade on friday")
    thread, _ = await say(store, "thread:1", "ana", "kubernetes offsite budget")
    await say(store, "thread:1", "bob", "the offsite venue is booked")
    as_ana = await find(search, "kubernetes", SearchScope.person("ana"))
    as_bob = await find(search, "kubernetes password rotation", SearchScope.person("bob"))
    as_carol = await find(search, "kubernetes", SearchScope.person("carol"))
    as_admin = await find(search, "kubernetes", ADMIN)
    assert set(conversations_of(as_ana)) == {ana, thread}
    assert set(conversations_of(as_bob)) == {bob, thread}  # the shared thread, never ana's DM
    assert as_carol.hits == ()
    assert set(conversations_of(as_admin)) == {ana, bob, thread}
    assert set(as_bob.conversations) == {bob, thread}
    assert as_bob.conversations[bob].person_id == "bob"


async def test_hits_in_archived_and_live_segments_resolve_to_their_conversation(
    storage: Storage,
) -> None:
    store, search = agent(storage), index(storage)
    conversation, archived = await say(
        store, "k", "ana", "we picked postgres for billing", "postgres needs a nightly backup"
    )
    record = await store.get_conversation(conversation)
    assert record is not None
    await store.compress(record.tip_session_id, NewSegment(), [NewMessage("user", "summary: choices made")])
    _, live = await say(store, "k", "ana", "remind me about postgres")
    await store.end_conversation(conversation, "idle")
    outside = await find(search, "postgres", SearchScope.person("ana"))
    assert conversations_of(outside) == [conversation]
    assert message_ids(outside) == {*archived, *live}
    segments = {hit.message.segment_id for hit in outside.hits}
    assert len(segments) == 2 and outside.conversations[conversation].id == conversation


async def test_the_live_tip_of_the_current_conversation_is_skipped_but_its_archive_is_searched(
    storage: Storage,
) -> None:
    store, search = agent(storage), index(storage)
    conversation, archived = await say(store, "k", "ana", "the orchid needs repotting")
    record = await store.get_conversation(conversation)
    assert record is not None
    await store.compress(record.tip_session_id, NewSegment(), [NewMessage("user", "summary")])
    _, live = await say(store, "k", "ana", "what about the orchid")
    scope = SearchScope.person("ana", current_conversation_id=conversation)
    inside = await find(search, "orchid", scope)
    assert message_ids(inside) == set(archived)
    assert message_ids(await find(search, "orchid", ADMIN)) == {*archived, *live}


async def test_phrases_stemming_and_exclusions(storage: Storage) -> None:
    store, search = agent(storage), index(storage)
    _, ids = await say(
        store,
        "k",
        "ana",
        "A blue whale surfaced near the boat.",
        "The whale was blue and enormous.",
        "She runs every morning before work.",
        "Deploying to production went fine.",
        "Deploying to staging broke the login page.",
    )
    assert message_ids(await find(search, '"blue whale"', ADMIN)) == {ids[0]}
    assert message_ids(await find(search, "blue whale", ADMIN)) == {ids[0], ids[1]}
    assert message_ids(await find(search, "running", ADMIN)) == {ids[2]}
    assert message_ids(await find(search, "deploying NOT staging", ADMIN)) == {ids[3]}
    assert message_ids(await find(search, "deplo*", ADMIN)) == {ids[3], ids[4]}


async def test_one_and_two_character_cjk_words_are_found_inside_longer_runs(storage: Storage) -> None:
    store, search = agent(storage), index(storage)
    _, ids = await say(
        store,
        "k",
        "ana",
        "我们明天去北京开会",
        "我爱苹果",
        "我们讨论了人工智能的发展方向",
        "나는 사과를 좋아해요",
        "明日東京に行きます",
        "天气不错",
    )
    assert message_ids(await find(search, "北京", ADMIN)) == {ids[0]}
    assert message_ids(await find(search, "苹果", ADMIN)) == {ids[1]}  # ends the text inside a run
    assert message_ids(await find(search, "人工智能", ADMIN)) == {ids[2]}
    assert message_ids(await find(search, "사과", ADMIN)) == {ids[3]}
    assert message_ids(await find(search, "東京", ADMIN)) == {ids[4]}
    assert ids[2] in message_ids(await find(search, "有没有关于人工智能发展的消息", ADMIN))


async def test_raw_natural_language_and_syntax_never_raise(storage: Storage) -> None:
    store, search = agent(storage), index(storage)
    _, ids = await say(store, "k", "ana", "deploy the gateway tomorrow at noon", "数据库 chat-send P2.2")
    nasty = [
        'deploy AND (gateway OR "unbalanced ^ col:value NOT* NEAR(a b) -',
        "What did we decide about deploying the gateway?",
        '" “ ” * ^ : ( ) { } + - NOT AND OR NEAR/3 body: \\',
        "\x00\x01\ud800\udfff",
        "chat-send P2.2 数据库",
        "的",
        "",
        "x" * 5000,
    ]
    for text in nasty:
        snapshot = await find(search, text, SearchScope.person("ana"))
        assert {hit.message.id for hit in snapshot.hits} <= set(ids), text
    assert ids[0] in message_ids(await find(search, nasty[0], ADMIN))
    assert (await find(search, "NOT deploy", ADMIN)).hits == ()


async def test_only_conversation_text_is_searched(storage: Storage) -> None:
    store, search = agent(storage), index(storage)
    conversation = await store.ensure_conversation("k", Principal(person_id="ana"))
    segment = conversation.tip_session_id
    ids = await store.append_messages(
        segment,
        [
            NewMessage("system", "lighthouse instructions"),
            NewMessage("user", "tell me about the lighthouse", author="ana"),
            NewMessage("tool", "lighthouse page text", tool_name="web"),
            NewMessage("tool", "lighthouse earlier hits", tool_name=SESSION_SEARCH_TOOL_NAME),
        ],
    )
    snapshot = await find(search, "lighthouse", ADMIN)
    assert SESSION_SEARCH_TOOL_NAME in UNSEARCHED_TOOLS
    assert message_ids(snapshot) == {ids[1], ids[2]}
    assert {hit.message.role for hit in snapshot.hits} == {"user", "tool"}
    tool_hit = next(hit.message for hit in snapshot.hits if hit.message.role == "tool")
    assert tool_hit.tool_name == "web" and tool_hit.content == "lighthouse page text"


async def test_hits_are_best_first_and_limited_to_what_is_wanted(storage: Storage) -> None:
    store, search = agent(storage), index(storage)
    for n in range(6):
        await say(store, f"k{n}", "ana", "orchid " * (n + 1) + "care notes")
    snapshot = await find(search, "orchid", SearchScope.person("ana"), want=3)
    scores = [hit.score for hit in snapshot.hits]
    assert scores == sorted(scores) and len(conversations_of(snapshot)) >= 3
    # More occurrences rank better: the conversation saying it six times comes first.
    best = snapshot.hits[0].message.content or ""
    assert best.count("orchid") == 6


async def test_results_carry_snippets_and_message_windows_through_the_port(storage: Storage) -> None:
    store, search = agent(storage), index(storage)
    long_text = "filler words " * 60 + "the launch codename is bluefalcon this quarter " + "more filler " * 60
    conversation, ids = await say(store, "k", "ana", "first", long_text, "third", "fourth")
    assert await search.wait_indexed(10)
    results = await SessionSearch(search).search("bluefalcon", SearchScope.person("ana"))
    (result,) = results.conversations
    (snippet,) = result.snippets
    assert result.conversation_id == conversation and snippet.message_id == ids[1]
    assert "bluefalcon" in snippet.text and snippet.text.startswith("…") and snippet.text.endswith("…")
    assert len(snippet.text) <= SearchSettings().snippet_chars + 2
    windows = await search.message_windows({conversation: [ids[1]]}, around=1)
    assert [m.id for m in windows[conversation]] == ids[:3]


async def test_committed_messages_are_searchable_once_the_index_caught_up(storage: Storage) -> None:
    store, search = agent(storage), index(storage)
    _, ids = await say(store, "k", "ana", *(f"backlog entry number{n}" for n in range(40)))
    assert await search.wait_indexed(10)
    assert await search.index_lag() == 0
    assert await search.index_position() >= max(ids)
    assert (await search.search_health()).state == "ok"
    found = await search.search_messages(SearchRequest(plan_query("number39"), ADMIN, 3))
    assert message_ids(found) == {ids[39]}


async def test_a_raw_question_finds_what_it_is_about_best_first(storage: Storage) -> None:
    store, search = agent(storage), index(storage)
    _, ids = await say(
        store,
        "k",
        "ana",
        "We decided the trip goes to Lisbon in May.",
        "The budget meeting moved to Friday.",
        "Trip photos are in the shared folder.",
    )
    snapshot = await find(search, "what did we decide about the trip?", ADMIN)
    assert message_ids(snapshot) == {ids[0], ids[2]}
    assert snapshot.hits[0].message.id == ids[0]  # it matches both content words


async def test_rarer_words_weigh_more(storage: Storage) -> None:
    store, search = agent(storage), index(storage)
    _, common = await say(store, "k", "ana", *(f"deploy notes for service {n}" for n in range(6)))
    _, (both, rare) = await say(store, "k", "ana", "deploy and rollback plan", "rollback plan for service 9")
    ranked = [hit.message.id for hit in (await find(search, "deploy rollback", ADMIN)).hits]
    assert ranked[:2] == [both, rare] and set(ranked[2:]) == set(common)


async def test_accents_and_case_are_folded(storage: Storage) -> None:
    store, search = agent(storage), index(storage)
    _, ids = await say(store, "k", "ana", "Meet me at Café Müller at noon", "the canteen is closed")
    assert message_ids(await find(search, "cafe muller", ADMIN)) == {ids[0]}
    assert message_ids(await find(search, "CAFÉ", ADMIN)) == {ids[0]}


async def test_one_character_cjk_terms_are_found_anywhere_in_a_run(storage: Storage) -> None:
    store, search = agent(storage), index(storage)
    _, ids = await say(store, "k", "ana", "我爱苹果汁", "明天见面", "天气不错")
    assert message_ids(await find(search, "果", ADMIN)) == {ids[0]}
    assert message_ids(await find(search, "见", ADMIN)) == {ids[1]}
    assert message_ids(await find(search, "天", ADMIN)) == {ids[1], ids[2]}  # inside and at the start


async def test_identifiers_inside_paths_and_tool_names_are_found(storage: Storage) -> None:
    store, search = agent(storage), index(storage)
    conversation = await store.ensure_conversation("k", Principal(person_id="ana"))
    ids = await store.append_messages(
        conversation.tip_session_id,
        [
            NewMessage("user", "the bug is in src/chat-send.py near ERR_AUTH_12", author="ana"),
            NewMessage("tool", "sunny, 24 degrees", tool_name="weather"),
            NewMessage("assistant", "chat and send are two words here"),
        ],
    )
    assert message_ids(await find(search, "chat-send", ADMIN)) == {ids[0]}
    assert message_ids(await find(search, "ERR_AUTH_12", ADMIN)) == {ids[0]}
    assert message_ids(await find(search, "weather", ADMIN)) == {ids[1]}


async def test_a_cjk_term_ranks_the_whole_term_above_its_parts_and_finds_each_part(storage: Storage) -> None:
    store, search = agent(storage), index(storage)
    _, ids = await say(
        store, "k", "ana", "服务器重启了", "服务器部署完成了", "部署脚本在这里", "今天天气不错"
    )
    snapshot = await find(search, "服务器部署", ADMIN)
    assert snapshot.hits[0].message.id == ids[1]
    assert message_ids(snapshot) == {ids[0], ids[1], ids[2]}


async def test_a_rare_word_is_not_crowded_out_of_the_rank_window_by_a_common_one(storage: Storage) -> None:
    store, search = agent(storage), index(storage)
    _, (old,) = await say(store, "old", "ana", "deploy the kubernetes operator")
    for n in range(120):
        await say(store, f"k{n}", "ana", f"deploy note number {n}")
    assert await search.wait_indexed(10)
    budget = SearchBudget(rank_window=50)
    for scope in (ADMIN, SearchScope.person("ana")):
        snapshot = await search.search_messages(
            SearchRequest(plan_query("deploy kubernetes"), scope, 5, budget)
        )
        assert snapshot.hits[0].message.id == old


async def test_a_group_whose_words_together_overflow_the_rank_window_keeps_every_word(
    storage: Storage,
) -> None:
    store, search = agent(storage), index(storage)
    for n in range(40):
        await say(store, f"r{n}", "ana", f"rollout step {n}")
        await say(store, f"c{n}", "ana", f"checklist item {n}")
    _, (both,) = await say(store, "both", "ana", "the rollout checklist for friday")
    assert await search.wait_indexed(10)
    request = SearchRequest(plan_query("rollout checklist"), ADMIN, 100, SearchBudget(rank_window=50))
    snapshot = await search.search_messages(request)
    # Neither word alone fills the window, so neither is dropped: the newest 50 matches of either are
    # ranked, and the one message with both comes first.
    assert snapshot.hits[0].message.id == both
    assert len(snapshot.hits) == 50
    assert {hit.message.content.split()[0] for hit in snapshot.hits[1:]} == {"rollout", "checklist"}
