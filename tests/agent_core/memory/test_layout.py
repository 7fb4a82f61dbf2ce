"""Layout: which file holds which store, person-id safety, the admin rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.memory import InvalidPersonIdError, MemoryLayout, MemorySettings, SyncMemoryStore, Target


def test_person_isolation_layout(tmp_path: Path) -> None:
    layout = MemoryLayout(tmp_path, MemorySettings())
    memories = tmp_path / "memories"
    assert layout.location("alice", Target.MEMORY).path == memories / "people" / "alice" / "MEMORY.md"
    assert layout.location("alice", Target.USER).path == memories / "people" / "alice" / "USER.md"
    assert layout.location("alice", Target.GLOBAL).path == memories / "global" / "MEMORY.md"
    assert [loc.char_limit for loc in layout.locations("alice")] == [2200, 2200, 1375]


def test_shared_isolation_is_the_single_owner_layout(tmp_path: Path) -> None:
    layout = MemoryLayout(tmp_path, MemorySettings(isolation="shared"))
    memories = tmp_path / "memories"
    assert layout.location("alice", Target.MEMORY).path == memories / "MEMORY.md"
    assert layout.location("bob", Target.USER).path == memories / "USER.md"
    assert layout.location(None, Target.GLOBAL).path == memories / "global" / "MEMORY.md"


@pytest.mark.parametrize(
    "bad", ["", "../x", "..", ".", "/", "a/b", "a\x00b", ".hidden", "a\\b", "x" * 129, None]
)
def test_unsafe_person_ids_are_rejected_before_touching_disk(tmp_path: Path, bad: str | None) -> None:
    store = SyncMemoryStore(tmp_path, MemorySettings())
    with pytest.raises(InvalidPersonIdError):
        store.add(person_id=bad, target="memory", content="x", is_admin=False)
    assert not (tmp_path / "memories").exists()


@pytest.mark.parametrize(
    "good", ["alice", "p_123", "tg:42".replace(":", "-"), "u.s.e.r@example.org", "A" * 128]
)
def test_reasonable_person_ids_are_accepted(tmp_path: Path, good: str) -> None:
    store = SyncMemoryStore(tmp_path, MemorySettings())
    assert store.add(person_id=good, target="memory", content="x", is_admin=False).result.success


def test_global_is_written_only_by_admins_and_read_by_everyone(tmp_path: Path) -> None:
    store = SyncMemoryStore(tmp_path, MemorySettings())
    refused = store.add(person_id="bob", target="global", content="Office closes at 6", is_admin=False)
    assert not refused.result.success
    assert "admin" in (refused.result.error or "")
    assert store.add(
        person_id="alice", target="global", content="Office closes at 6", is_admin=True
    ).result.success
    assert store.view(person_id="bob", target="global").entries == ("Office closes at 6",)


def test_people_never_see_each_others_memory(tmp_path: Path) -> None:
    store = SyncMemoryStore(tmp_path, MemorySettings())
    store.add(person_id="alice", target="user", content="Alice is allergic to nuts", is_admin=False)
    assert store.view(person_id="bob", target="user").entries == ()
    assert "nuts" not in store.snapshot(person_id="bob", is_admin=False).text
    assert "nuts" in store.snapshot(person_id="alice", is_admin=False).text


def test_invalid_target_is_a_model_facing_error(tmp_path: Path) -> None:
    store = SyncMemoryStore(tmp_path, MemorySettings())
    result = store.add(person_id="alice", target="notes", content="x", is_admin=False).result
    assert result.to_dict() == {
        "success": False,
        "error": "Invalid target 'notes'. Use 'memory', 'user' or 'global'.",
    }


def test_shared_isolation_gives_every_person_the_same_notes(tmp_path: Path) -> None:
    store = SyncMemoryStore(tmp_path, MemorySettings(isolation="shared"))
    store.add(person_id="alice", target="user", content="Owner: Sam", is_admin=False)
    assert store.view(person_id="bob", target="user").entries == ("Owner: Sam",)
    assert (tmp_path / "memories" / "USER.md").read_text(encoding="utf-8") == "Owner: Sam"
    assert not (tmp_path / "memories" / "people").exists()
