"""The erasure port: what the gateway's storage holds about one person, and deleting it.

Invariants every backend keeps: ``footprint`` only reads; ``forget_conversation_rows`` deletes every row
of the gateway that belongs to the named conversations (turn jobs, leases, outbox rows and their chunk
progress, held messages, schedules and their runs) and unlinks the inbound ledger's rows from them (the
ledger keeps platform event ids, which hold no content, so a redelivered event is still refused);
``erase_person_rows`` deletes the person's own rows (schedules, time zone, link codes, pairing requests
and access notices of their accounts, adapter checkpoints keyed by their accounts or direct chats, their
accounts and the person) — afterwards the person does not exist and a new message from one of their
accounts starts a new person. Both are idempotent, and leave no deleted text in the backend's files
(SQLite: zeroed pages and an emptied WAL). The agent's rows are ``agent_core.storage.forgetting``'s.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class PersonFootprint:
    """Where a person appears: ``exists`` when the person or any conversation of theirs is stored."""

    person_id: str
    exists: bool
    conversation_ids: tuple[str, ...] = ()
    accounts: tuple[tuple[str, str], ...] = ()
    direct_chats: tuple[tuple[str, str], ...] = ()
    """``(platform, chat id)`` of the person's direct-message conversations."""


@dataclass(frozen=True, slots=True)
class ConversationRowsForgotten:
    """How many gateway rows of forgotten conversations went (ledger rows: unlinked, not deleted)."""

    jobs: int = 0
    outbox: int = 0
    held_messages: int = 0
    schedules: int = 0
    ledger_unlinked: int = 0


@dataclass(frozen=True, slots=True)
class PersonRowsErased:
    """How many of the person's own gateway rows went."""

    accounts: int = 0
    link_codes: int = 0
    pairing_requests: int = 0
    schedules: int = 0
    checkpoints: int = 0
    person: bool = False


class ErasureRepository(Protocol):
    """Reading a person's footprint and deleting the gateway's rows about them."""

    async def footprint(self, person_id: str) -> PersonFootprint:
        """The person's conversations (those they own), accounts and direct chats."""
        ...

    async def forget_conversation_rows(self, conversation_ids: Collection[str]) -> ConversationRowsForgotten:
        """Delete the gateway's rows of these conversations (see the module's invariants)."""
        ...

    async def erase_person_rows(self, footprint: PersonFootprint) -> PersonRowsErased:
        """Delete the person's own rows, the person and their accounts last."""
        ...
