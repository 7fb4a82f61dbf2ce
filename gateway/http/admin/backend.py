"""What the admin surface reads and changes, handed in by the composition root (``AdminBackend``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent_core.actor import Actor
from agent_core.memory import MemoryStores
from agent_core.search import SessionSearch
from agent_core.skills import SkillStore
from agent_core.storage import AgentStorage
from gateway.config import AdminSettings
from gateway.erasure import PersonEraser
from gateway.export import PersonExporter
from gateway.schedules import ScheduleBook
from gateway.storage.adapter_leases import AdapterLeaseRepository
from gateway.storage.admin_reads import AdminReads
from gateway.storage.budgets import BudgetLedger
from gateway.storage.console_reads import ConsoleReads
from gateway.storage.usage_reads import UsageReads


class PairingBook(Protocol):
    """``gateway.identity.Pairing``: DM pairing requests (``list_requests``: every state, oldest first);
    approve/deny raise PairingError for an unknown code."""

    async def list_pending(self) -> Sequence[Any]: ...
    async def list_requests(self) -> Sequence[Any]: ...
    async def approve(self, code: str) -> Any: ...
    async def deny(self, code: str) -> Any: ...


@dataclass(frozen=True)
class AdminBackend:
    """What the admin API and console read and change.

    ``console`` (full transcripts, activity, usage, the audit log), ``skills`` and ``leases`` (who runs each
    polling adapter) feed the console's pages; without them those pages answer 503 saying what is missing.
    ``schedules`` adds the schedules API (``schedules_api.py``); ``usage`` the usage API (``usage_api.py``)
    and the console's cost figures, with days counted in ``usage_timezone`` (None: ``settings.timezone``);
    ``budgets`` shows who is over budget until when (overview and person pages); ``eraser`` the erasure
    of a person; ``export`` the person download (``export_routes.py``).
    """

    reads: AdminReads
    agent: AgentStorage
    memory: MemoryStores
    search: SessionSearch
    pairing: PairingBook | None = None
    console: ConsoleReads | None = None
    skills: SkillStore | None = None
    leases: AdapterLeaseRepository | None = None
    schedules: ScheduleBook | None = None
    budgets: BudgetLedger | None = None
    export: PersonExporter | None = None
    settings: AdminSettings = field(default_factory=AdminSettings)
    usage: UsageReads | None = None
    usage_timezone: str | None = None

    @property
    def usage_zone(self) -> str:
        """The zone usage days and months are counted in."""
        return self.usage_timezone or self.settings.timezone

    eraser: PersonEraser | None = None
    """Erasure of one person (``erase_api.py``, ``pages_erase.py``); None: not offered here."""


def operator(person_id: str, label: str) -> Actor:
    """The operator acting on ``person_id``'s memory (global stores too), audited as ``label``.

    The same ``MemoryStores`` writes as a tool call: threat-scanned, locked, and recorded in the audit.
    """
    return Actor(person_id, is_admin=True, platform="admin", label=label)
