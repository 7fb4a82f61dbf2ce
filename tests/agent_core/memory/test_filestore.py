"""Durable file handling: drift guard on every mutation, non-UTF-8 files, backups, modes, temp files."""

from __future__ import annotations

import stat
import threading
from pathlib import Path

import pytest

from agent_core.memory import MAX_BACKUPS, BatchOperation, MemorySettings, SyncMemoryStore, WriteOutcome
from agent_core.memory.filestore import MemoryFile

P = "alice"


@pytest.fixture
def store(tmp_path: Path) -> SyncMemoryStore:
    return SyncMemoryStore(tmp_path, MemorySettings())


@pytest.fixture
def memory_md(tmp_path: Path) -> Path:
    return tmp_path / "memories" / "people" / P / "MEMORY.md"


MUTATIONS = {
    "add": lambda s: s.add(person_id=P, target="memory", content="new fact", is_admin=False),
    "replace": lambda s: s.replace(
        person_id=P, target="memory", old_text="tea", content="coffee", is_admin=False
    ),
    "remove": lambda s: s.remove(person_id=P, target="memory", old_text="tea", is_admin=False),
    "batch": lambda s: s.batch(
        person_id=P, target="memory", operations=[BatchOperation("add", content="x")], is_admin=False
    ),
}


def no_temp_files(directory: Path) -> bool:
    return not [p for p in directory.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("action", sorted(MUTATIONS))
def test_appended_text_is_backed_up_and_never_silently_overwritten(
    store: SyncMemoryStore, memory_md: Path, action: str
) -> None:
    store.add(person_id=P, target="memory", content="Likes tea", is_admin=False)
    with memory_md.open("a", encoding="utf-8") as shell:  # what `echo "and cake" >> MEMORY.md` does
        shell.write("and cake\n")
    before = memory_md.read_bytes()

    outcome: WriteOutcome = MUTATIONS[action](store)

    assert not outcome.result.success and outcome.changes == ()
    backup = Path(outcome.result.drift_backup or "")
    assert backup.parent == memory_md.parent and backup.name.startswith("MEMORY.md.bak.")
    assert str(backup) in (outcome.result.error or "")
    assert "round-trip" in (outcome.result.error or "")
    assert backup.read_bytes() == before == memory_md.read_bytes()
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert no_temp_files(memory_md.parent)


def test_non_utf8_file_is_backed_up_refused_and_still_readable(
    store: SyncMemoryStore, memory_md: Path
) -> None:
    memory_md.parent.mkdir(parents=True)
    memory_md.write_bytes(b"Caf\xe9 owner\n\xa7\nLikes tea")  # latin-1 written by some editor
    outcome = store.add(person_id=P, target="memory", content="x", is_admin=False)
    assert outcome.result.error is not None and "not valid UTF-8" in outcome.result.error
    assert Path(outcome.result.drift_backup or "").read_bytes() == memory_md.read_bytes()

    view = store.view(person_id=P, target="memory")
    assert view.usage.problem == "is not valid UTF-8"
    snap = store.snapshot(person_id=P, is_admin=False)
    assert "Caf\ufffd owner" in snap.text
    assert any("not valid UTF-8" in p for p in snap.problems)


def test_repeated_refusals_reuse_the_backup_and_at_most_five_are_kept(
    store: SyncMemoryStore, memory_md: Path
) -> None:
    store.add(person_id=P, target="memory", content="Likes tea", is_admin=False)
    base = memory_md.read_bytes()
    backups: list[Path] = []
    for edit in range(8):
        memory_md.write_bytes(base + f"\nhand edit {edit}\n".encode())
        for _ in range(2):  # the second refusal of the same content must not add a backup
            result = store.add(person_id=P, target="memory", content="y", is_admin=False).result
            assert result.drift_backup is not None
        backups = MemoryFile(memory_md).backups()
        assert len(backups) == min(edit + 1, MAX_BACKUPS)
    assert [b.read_bytes() for b in backups] == [base + f"\nhand edit {e}\n".encode() for e in range(3, 8)]


def test_repair_canonicalises_after_a_backup(store: SyncMemoryStore, memory_md: Path) -> None:
    store.add(person_id=P, target="memory", content="Likes tea", is_admin=False)
    with memory_md.open("a", encoding="utf-8") as shell:
        shell.write("\n§ \nLikes cake\n")
    report = store.repair(person_id=P, target="memory")
    assert report.entries == ("Likes tea", "Likes cake")
    assert report.backup is not None and report.backup.exists()
    assert memory_md.read_text(encoding="utf-8") == "Likes tea\n§\nLikes cake"
    assert store.add(person_id=P, target="memory", content="Likes pie", is_admin=False).result.success
    assert store.repair(person_id=P, target="memory").backup is None


def test_files_are_private_and_no_temp_files_remain(store: SyncMemoryStore, memory_md: Path) -> None:
    for n in range(5):
        store.add(person_id=P, target="memory", content=f"fact {n}", is_admin=False)
    store.remove(person_id=P, target="memory", old_text="fact 2", is_admin=False)
    assert stat.S_IMODE(memory_md.stat().st_mode) == 0o600
    assert no_temp_files(memory_md.parent)


def test_temp_file_orphaned_by_a_crashed_writer_is_removed_by_the_next_write(
    store: SyncMemoryStore, memory_md: Path
) -> None:
    store.add(person_id=P, target="memory", content="first", is_admin=False)
    orphan = memory_md.parent / ".MEMORY.md.k3j4h5.tmp"
    orphan.write_text("half-written", encoding="utf-8")
    store.add(person_id=P, target="memory", content="second", is_admin=False)
    assert not orphan.exists()
    assert store.view(person_id=P, target="memory").entries == ("first", "second")


def test_threads_of_one_process_never_lose_an_update(tmp_path: Path) -> None:
    store = SyncMemoryStore(tmp_path, MemorySettings(memory_char_limit=100_000))
    errors: list[str] = []

    def writer(n: int) -> None:
        for i in range(25):
            result = store.add(person_id=P, target="memory", content=f"t{n}-{i}", is_admin=False).result
            if not result.success:
                errors.append(result.error or "?")

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(t.is_alive() for t in threads) and errors == []
    assert sorted(store.view(person_id=P, target="memory").entries) == sorted(
        f"t{n}-{i}" for n in range(8) for i in range(25)
    )
