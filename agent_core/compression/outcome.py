"""What came of a compression: the frozen records crossing the package boundary (who asked is an ``Actor``).

``CompressionOutcome`` is also the event the turn loop yields when it compressed (or tried to); its
``notice`` is the one line a gateway should show the person, or None when there is nothing to say.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from agent_core.storage import TokenUsage


class CompressionStatus(StrEnum):
    COMPRESSED = "compressed"
    """The segment ended and a child with head + summary + tail is the new tip."""
    SKIPPED = "skipped"
    """Nothing happened: below the threshold, cooling down, disabled, or nothing to summarise."""
    ABORTED = "aborted"
    """Tried and gave up with the messages unchanged (summariser auth/quota failure, ineffective summary)."""
    LOST_RACE = "lost_race"
    """Another process compressed this segment first; its child is the tip to continue on."""


class SummarySource(StrEnum):
    MODEL = "model"
    FALLBACK = "fallback"


@dataclass(frozen=True, slots=True)
class FlushReport:
    """What the pre-compression memory flush did."""

    tool_calls: int = 0
    saved: int = 0
    error: str | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)


@dataclass(frozen=True, slots=True)
class CompressionOutcome:
    """The result of one compression attempt; ``segment_id`` is the tip to continue on."""

    status: CompressionStatus
    conversation_id: str
    segment_id: str
    parent_segment_id: str
    reason: str = ""
    notice: str | None = None
    tokens_before: int = 0
    tokens_after: int = 0
    messages_before: int = 0
    messages_after: int = 0
    summary_source: SummarySource | None = None
    flush: FlushReport | None = None

    @property
    def switched(self) -> bool:
        """True when the conversation's tip moved (by us or by the process that won the race)."""
        return self.status in (CompressionStatus.COMPRESSED, CompressionStatus.LOST_RACE)

    def describe(self) -> str:
        """One line for the person, e.g. as the reply to ``/compress``."""
        if self.status is CompressionStatus.COMPRESSED:
            line = (
                f"Compacted the conversation: {self.messages_before} → {self.messages_after} messages, "
                f"about {self.tokens_before:,} → {self.tokens_after:,} tokens."
            )
            return f"{line} {self.notice}" if self.notice else line
        if self.status is CompressionStatus.LOST_RACE:
            return "The conversation was just compacted."
        if self.notice:
            return self.notice
        if self.status is CompressionStatus.ABORTED:
            return f"Compaction did not help ({self.reason}); the conversation continues unchanged."
        return f"Nothing was compacted ({self.reason})."
