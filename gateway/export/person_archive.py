"""``PersonExporter``: everything stored about one person, read page by page through the storage port and
written into one archive (``archive.py``) laid out as ``layout.py`` says.

Invariants: only the person's own rows are read — conversations they own (with every message), their own
user messages in conversations others own, their memory audit, the usage logged in their conversations, their
schedules, accounts, link codes and pairing requests, their memory documents and provider facts — never a
whole table; messages, usage and the audit are paged (at most ``MAX_PAGE`` rows held at once), so memory stays
bounded however long the history; a person is known when a person row or a conversation names them, and an
unknown one is refused before anything is written; the archive appears under its name only when complete.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

from agent_core.memory import MemoryLayout, MemoryStoreError, Target, serialise_entries
from gateway.config import Settings
from gateway.storage import MAX_PAGE, Storage

from . import layout
from .archive import ArchiveWriter
from .errors import UnknownPersonError

T = TypeVar("T")
_SCHEDULE_PAGE = 100


@dataclass(frozen=True, slots=True)
class ExportSummary:
    """What one export wrote: the archive, its size, and how many of each thing it holds."""

    path: Path
    person_id: str
    bytes: int
    counts: Mapping[str, int]


def plain(record: Any) -> Any:
    """A frozen record (or a tuple of them) as JSON-ready data."""
    if dataclasses.is_dataclass(record) and not isinstance(record, type):
        return dataclasses.asdict(record)
    if isinstance(record, tuple | list):
        return [plain(item) for item in record]
    return record


class PersonExporter:
    """Writes one person's archive from an opened ``Storage`` (the CLI's, or the running gateway's)."""

    def __init__(
        self, storage: Storage, memory: MemoryLayout, *, include_facts: bool = False, backend: str = ""
    ) -> None:
        """``memory``: where the person's documents are (their keys); ``include_facts``: the ``local`` memory
        provider is configured, so its facts are exported too; ``backend``: named in the manifest."""
        self._storage = storage
        self._sources = _Sources(storage, memory, include_facts, backend)

    @classmethod
    def configured(cls, storage: Storage, home: Path, settings: Settings) -> PersonExporter:
        """The exporter of a deployment: its memory layout, its provider's facts when that is ``local``."""
        return cls(
            storage,
            MemoryLayout(home, settings.memory),
            include_facts=settings.memory.provider.name == "local",
            backend=settings.storage.backend,
        )

    async def export(self, person_id: str, out: Path, *, force: bool = False) -> ExportSummary:
        """Write the archive of ``person_id`` to ``out`` (replacing an existing file only with ``force``).

        Raises UnknownPersonError, ExportTargetError (exists, a directory, not writable) or ExportError.
        """
        await self._known(person_id)
        writer = await asyncio.to_thread(ArchiveWriter, out, force=force)
        with writer:
            counts = await _Run(self._sources, person_id, writer).write_all()
            size = await asyncio.to_thread(writer.finish)
        return ExportSummary(out, person_id, size, MappingProxyType(dict(counts)))

    async def _known(self, person_id: str) -> None:
        if await self._storage.admin.person(person_id) is not None:
            return
        if (await self._storage.admin.conversations(person_id=person_id, limit=1)).total > 0:
            return
        raise UnknownPersonError(f"no person {person_id!r}")


@dataclass(frozen=True, slots=True)
class _Sources:
    storage: Storage
    memory: MemoryLayout
    include_facts: bool
    backend: str


class _Run:
    """One export in progress: the sections in archive order, and their counts."""

    def __init__(self, sources: _Sources, person_id: str, writer: ArchiveWriter) -> None:
        self.storage = sources.storage
        self.sources = sources
        self.person_id = person_id
        self.writer = writer
        self.counts: dict[str, int] = {}

    async def write_all(self) -> dict[str, int]:
        started = time.time()
        await self._write(self.writer.add_text, layout.README, layout.readme_text(self.person_id))
        await self._person()
        await self._links()
        await self._conversations()
        await self._joined()
        await self._memory()
        await self._audit()
        await self._usage()
        await self._schedules()
        if self.sources.include_facts:
            await self._facts()
        manifest = {
            "format": layout.FORMAT_NAME,
            "version": layout.FORMAT_VERSION,
            "person_id": self.person_id,
            "exported_at": started,
            "backend": self.sources.backend,
            "memory_isolation": self.sources.memory.isolation,
            "counts": self.counts,
            "files": [*self.writer.names, layout.MANIFEST],
        }
        await self._write(self.writer.add_json, layout.MANIFEST, manifest)
        return self.counts

    async def _write(self, add: Callable[[str, T], None], name: str, value: T) -> None:
        await asyncio.to_thread(add, name, value)

    async def _person(self) -> None:
        storage, pid = self.storage, self.person_id
        row = await storage.admin.person(pid)
        accounts = await storage.identity.accounts_of(pid)
        self.counts["accounts"] = len(accounts)
        person = {
            "id": pid,
            "display_name": None if row is None else row.display_name,
            "created_at": None if row is None else row.created_at,
            "timezone": await storage.schedules.timezone_of(pid),
            "accounts": plain(accounts),
        }
        await self._write(self.writer.add_json, layout.PERSON, person)

    async def _links(self) -> None:
        storage = self.storage
        accounts = {(a.platform, a.account_id) for a in await storage.identity.accounts_of(self.person_id)}
        requests = [
            r for r in await storage.pairing.list_requests() if (r.platform, r.account_id) in accounts
        ]
        links = {
            "link_codes": plain(await storage.console.link_history(self.person_id)),
            "pairing_requests": [{k: v for k, v in r.to_dict().items() if k != "code"} for r in requests],
        }
        await self._write(self.writer.add_json, layout.LINKS, links)

    async def _conversations(self) -> None:
        admin, seen, index = self.storage.admin, set[str](), list[dict[str, Any]]()
        offset, messages = 0, 0
        while True:
            page = await admin.conversations(person_id=self.person_id, limit=MAX_PAGE, offset=offset)
            for row in page.rows:
                if row.id in seen:
                    continue  # a conversation started meanwhile shifted the page by one
                seen.add(row.id)
                segments = await self.storage.agent.segments(row.id)
                record = {"conversation": plain(row), "segments": plain(segments)}
                await self._write(self.writer.add_json, layout.conversation_file(row.id), record)
                transcript = functools.partial(self.storage.console.transcript, row.id, limit=MAX_PAGE)
                count = await self._lines(layout.messages_file(row.id), transcript)
                messages += count
                index.append({**plain(row), "messages": count, "file": layout.messages_file(row.id)})
            offset += len(page.rows)
            if not page.rows or offset >= page.total:
                break
        self.counts["conversations"], self.counts["messages"] = len(index), messages
        await self._write(self.writer.add_json, layout.CONVERSATIONS, index)

    async def _joined(self) -> None:
        reads, total = self.storage.person_data, 0
        joined = await reads.joined_conversations(self.person_id)
        for cid in joined:
            authored = functools.partial(reads.authored_messages, cid, self.person_id, limit=MAX_PAGE)
            total += await self._lines(layout.joined_messages_file(cid), authored)
        self.counts["joined_conversations"], self.counts["joined_messages"] = len(joined), total

    async def _memory(self) -> None:
        documents, written = self.storage.documents, 0
        for target in (Target.MEMORY, Target.USER):
            try:
                location = self.sources.memory.location(self.person_id, target)
            except MemoryStoreError:
                break  # a person id that can name no file has no memory documents
            contents = await asyncio.to_thread(documents.read, location.key)
            if contents.entries:
                text = serialise_entries(contents.entries)
                await self._write(self.writer.add_text, layout.memory_file(location.path.name), text)
                written += 1
        self.counts["memory_documents"] = written

    async def _audit(self) -> None:
        console, pid, seen = self.storage.console, self.person_id, set[int]()

        async def pages() -> int:
            offset, count = 0, 0
            while True:
                page = await console.audit_log(person_id=pid, limit=MAX_PAGE, offset=offset)
                fresh = [r for r in page.rows if r.id not in seen]
                seen.update(r.id for r in fresh)
                await asyncio.to_thread(self.writer.write_lines, plain(fresh))
                count += len(fresh)
                offset += len(page.rows)
                if not page.rows or offset >= page.total:
                    return count

        await asyncio.to_thread(self.writer.open_lines, layout.MEMORY_AUDIT)
        self.counts["memory_audit"] = await pages()
        await asyncio.to_thread(self.writer.close_lines)

    async def _usage(self) -> None:
        reads = self.storage.person_data
        usage = functools.partial(reads.usage, self.person_id, limit=MAX_PAGE)
        self.counts["usage"] = await self._lines(layout.USAGE, usage)

    async def _schedules(self) -> None:
        book = self.storage.schedules
        await asyncio.to_thread(self.writer.open_lines, layout.SCHEDULES)
        offset, seen = 0, set[int]()
        while page := await book.find(person_id=self.person_id, limit=_SCHEDULE_PAGE, offset=offset):
            for schedule in page:
                if schedule.id in seen:
                    continue
                seen.add(schedule.id)
                runs_of = functools.partial(book.runs, schedule_id=schedule.id, limit=_SCHEDULE_PAGE)
                runs = await _all_pages(runs_of)
                line = {**plain(schedule), "run_history": plain(runs)}
                await asyncio.to_thread(self.writer.write_lines, [line])
            offset += len(page)
        found = len(seen)
        await asyncio.to_thread(self.writer.close_lines)
        self.counts["schedules"] = found

    async def _facts(self) -> None:
        facts = self.storage.facts
        held = await facts.top(self.person_id, "", await facts.count(self.person_id))
        self.counts["facts"] = len(held)
        await self._write(self.writer.add_json, layout.FACTS, plain(held))

    async def _lines(self, name: str, page: Callable[..., Awaitable[Sequence[Any]]]) -> int:
        """Write the rows ``page(after_id=…)`` returns, page after page, as one JSON Lines entry."""
        await asyncio.to_thread(self.writer.open_lines, name)
        after, count = 0, 0
        while rows := await page(after_id=after):
            await asyncio.to_thread(self.writer.write_lines, plain(rows))
            after, count = rows[-1].id, count + len(rows)
        await asyncio.to_thread(self.writer.close_lines)
        return count


async def _all_pages(page: Callable[..., Awaitable[Sequence[T]]]) -> list[T]:
    """Every row ``page(offset=…)`` returns, page after page."""
    found: list[T] = []
    while rows := await page(offset=len(found)):
        found.extend(rows)
    return found
