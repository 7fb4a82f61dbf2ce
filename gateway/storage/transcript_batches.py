"""Transcript import in batches, for every backend: lines are parsed in a thread while a batch is written.

Invariants: lines are numbered from 1; undecodable, unparseable or unstorable lines become ``LineError``s and
never stop the import; a batch holds at least one conversation and closes once it holds ``batch_messages``
messages; the next batch is parsed (and prepared by the backend: redaction, its own checks) while the
current one is written, and no reader thread outlives the call, even when a write fails.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from .imports import ImportReport, LineError
from .transcripts import ImportedConversation, TranscriptLineError, parse_transcript_line

P = TypeVar("P")


@dataclass(frozen=True, slots=True)
class BatchOutcome:
    """What one write transaction added and skipped."""

    conversations: int
    messages: int
    skipped: tuple[str, ...]


@dataclass(slots=True)
class _Batch(Generic[P]):
    items: list[P]
    errors: list[LineError]
    exhausted: bool


async def import_in_batches(
    lines: Iterable[bytes | str],
    *,
    batch_messages: int,
    prepare: Callable[[ImportedConversation], P],
    write: Callable[[list[P]], Awaitable[BatchOutcome]],
) -> ImportReport:
    """Import ``lines``: ``prepare`` each parsed conversation (``TranscriptLineError`` refuses its line) and
    ``write`` each batch in one transaction of the backend's."""
    numbered = enumerate(lines, start=1)
    conversations = messages = 0
    skipped: list[str] = []
    errors: list[LineError] = []

    def read_next() -> asyncio.Future[_Batch[P]]:
        return asyncio.ensure_future(asyncio.to_thread(_read_batch, numbered, batch_messages, prepare))

    pending = read_next()
    try:
        while True:
            batch = await pending
            errors.extend(batch.errors)
            if not batch.exhausted:
                pending = asyncio.ensure_future(
                    asyncio.to_thread(_read_batch, numbered, batch_messages, prepare)
                )
            if batch.items:
                outcome = await write(batch.items)
                conversations += outcome.conversations
                messages += outcome.messages
                skipped.extend(outcome.skipped)
            if batch.exhausted:
                return ImportReport(conversations, messages, tuple(skipped), tuple(errors))
    finally:
        # A failed write must not leave a reader thread on a file the caller is about to close.
        if not pending.done():
            await asyncio.wait([pending])


def _read_batch(
    numbered: Iterator[tuple[int, bytes | str]],
    batch_messages: int,
    prepare: Callable[[ImportedConversation], P],
) -> _Batch[P]:
    items: list[P] = []
    errors: list[LineError] = []
    size = 0
    for number, raw in numbered:
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        except UnicodeDecodeError as exc:
            errors.append(LineError(number, f"not valid UTF-8 ({exc.reason})"))
            continue
        if not text.strip():
            continue
        try:
            conversation = parse_transcript_line(text)
            items.append(prepare(conversation))
        except TranscriptLineError as exc:
            errors.append(LineError(number, exc.reason))
            continue
        size += max(1, len(conversation.messages))
        if size >= batch_messages:
            return _Batch(items, errors, exhausted=False)
    return _Batch(items, errors, exhausted=True)
