"""What one erasure removed: counts only (never content), as the CLI, the API and the audit record say it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


class UnknownPersonError(LookupError):
    """No person with this id is stored (nothing was erased)."""

    def __init__(self, person_id: str) -> None:
        super().__init__(f"no person {person_id!r} is known here (see `mnemogate sessions` or the console)")
        self.person_id = person_id


@dataclass(frozen=True, slots=True)
class ErasureReport:
    """Counts of what went for one person; ``provider_error`` says why the memory provider could not be
    cleared (everything else was erased regardless)."""

    person_id: str
    erased_by: str
    at: float
    conversations: int = 0
    segments: int = 0
    messages: int = 0
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
    provider_error: str | None = None

    @property
    def complete(self) -> bool:
        return self.provider_error is None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "complete": self.complete}

    def summary(self) -> str:
        """One line of counts: what the audit record and the CLI say (no content, no names)."""
        parts = [
            f"{self.conversations} conversations",
            f"{self.messages} messages",
            f"{self.memory_documents} memory documents",
            f"{self.facts} facts",
            f"{self.schedules} schedules",
            f"{self.outbox_rows} outbox rows",
            f"{self.accounts} accounts",
        ]
        provider = "" if self.provider is None else f"; provider {self.provider}: "
        if self.provider is not None:
            provider += "cleared" if self.provider_error is None else "NOT cleared"
        return "erased " + ", ".join(parts) + provider
