"""What one erasure removed: counts only (never content), as the CLI, the API and the audit record say it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


class UnknownPersonError(LookupError):
    """No person with this id is stored (nothing was erased)."""

    def __init__(self, person_id: str) -> None:
        super().__init__(f"no person {person_id!r} is known here (see `mnemogate sessions` or the console)")
        self.person_id = person_id


class ProviderNotClearedError(RuntimeError):
    """The configured memory provider could not delete the person's data; nothing else was erased."""

    def __init__(self, provider: str, reason: str) -> None:
        super().__init__(
            f"the memory provider {provider} could not erase this person ({reason}); nothing was erased — "
            "erase again once it is reachable, or skip the provider (its data about the person then stays)"
        )
        self.provider = provider
        self.reason = reason


@dataclass(frozen=True, slots=True)
class ErasureReport:
    """Counts of what went for one person; ``provider`` names the external memory provider that was cleared
    (``provider_skipped``: it was configured but the caller chose to leave its data)."""

    person_id: str
    erased_by: str
    at: float
    conversations: int = 0
    segments: int = 0
    messages: int = 0
    shared_messages: int = 0
    """Messages of the person's turns in conversations of others (a shared thread)."""
    usage_rows_unlinked: int = 0
    outbox_rows: int = 0
    held_messages: int = 0
    turn_jobs: int = 0
    schedules: int = 0
    memory_documents: int = 0
    facts: int = 0
    audit_texts_blanked: int = 0
    accounts: int = 0
    link_codes: int = 0
    pairing_requests: int = 0
    checkpoints: int = 0
    provider: str | None = None
    provider_skipped: bool = False

    @property
    def complete(self) -> bool:
        return not self.provider_skipped

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "complete": self.complete}

    def summary(self) -> str:
        """One line of counts: what the audit record and the CLI say (no content, no names)."""
        parts = [
            f"{self.conversations} conversations",
            f"{self.messages} messages",
            f"{self.shared_messages} messages in shared conversations",
            f"{self.memory_documents} memory documents",
            f"{self.facts} facts",
            f"{self.schedules} schedules",
            f"{self.outbox_rows} outbox rows",
            f"{self.accounts} accounts",
        ]
        provider = "" if self.provider is None else f"; memory provider {self.provider} "
        if self.provider is not None:
            provider += "skipped (its data stays)" if self.provider_skipped else "cleared"
        return "erased " + ", ".join(parts) + provider
