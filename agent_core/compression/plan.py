"""A compression plan for one segment — pre-pass, selection, and the child segment's rows — as pure functions.

Invariants (DESIGN §12.4): the child's rows are head + ONE summary + tail; every kept row is verbatim
except pre-passed tool outputs (and, for damaged history only, stripped orphan calls); no tool call lacks
its result and no result lacks its call; the newest user message comes after the summary, so the summary
is never the newest user turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_core.storage import MessageRecord, NewMessage

from .estimate import text_tokens
from .prepass import collapse_duplicates, retire_carried_duplicates, shorten_long_outputs
from .rows import Row
from .selection import Selection, active_start, repair_pairs, select, split_summaries
from .settings import CompressionSettings
from .summary import SUMMARY_AUTHOR, wrap


@dataclass(frozen=True, slots=True)
class CompressionPlan:
    """What a compression of one segment would keep and what it would summarise."""

    selection: Selection
    duplicate_min_chars: int
    messages_before: int

    @property
    def middle(self) -> tuple[Row, ...]:
        """The rows to summarise, with repeated tool outputs collapsed (the summariser's input)."""
        rows = collapse_duplicates(self.selection.middle, protected=(), min_chars=self.duplicate_min_chars)
        return tuple(rows)

    @property
    def previous_summary(self) -> str | None:
        return self.selection.previous_summary

    def replaced_tokens(self) -> int:
        """Estimated tokens the summary replaces: the middle plus the summary it updates."""
        previous = text_tokens(wrap(self.previous_summary)) if self.previous_summary else 0
        return previous + sum(row.tokens() for row in self.selection.middle)

    def messages(self, summary_body: str) -> list[NewMessage]:
        """The child segment's rows: head, the summary, tail."""
        selection = self.selection
        head_ids = {row.record.id for row in selection.head}
        # Repair first: a result it drops must not be the copy a back-reference points at.
        kept = repair_pairs([*selection.head, *selection.tail])
        kept = collapse_duplicates(kept, protected=selection.active, min_chars=self.duplicate_min_chars)
        head = [row for row in kept if row.record.id in head_ids]
        tail = [row for row in kept if row.record.id not in head_ids]
        # After a user message the handoff reads as the assistant's recap; otherwise it opens the turn
        # as user-role reference text (Anthropic needs a leading user message). Either way the newest
        # user message follows it, in the tail.
        # With no user message after it (a transcript of assistant notes only) it must not be user-role.
        leads_turn = not (head and head[-1].role == "user") and any(row.role == "user" for row in tail)
        role = "user" if leads_turn else "assistant"
        summary = NewMessage(
            role=role,
            content=wrap(summary_body),
            author=SUMMARY_AUTHOR,
            created_at=selection.middle[-1].record.created_at,
        )
        return [*(row.to_new_message() for row in head), summary, *(row.to_new_message() for row in tail)]


def plan_compression(
    records: Sequence[MessageRecord],
    *,
    settings: CompressionSettings,
    context_window: int,
    minimal_tail: bool = False,
) -> CompressionPlan | None:
    """Plan the compression of a segment's rows; None when there is nothing between head and tail.

    ``minimal_tail`` (``/compress``) keeps only the required tail — the minimum count and the newest
    exchange — instead of filling the token budget, so a short conversation can still be compacted.
    """
    rest, previous = split_summaries([Row.of(record) for record in records])
    protected = {row.record.id for row in rest[active_start(rest) :]}
    rest = shorten_long_outputs(rest, protected=protected, limit=settings.long_tool_output_chars)
    rest = retire_carried_duplicates(rest, protected=protected)
    selection = select(
        rest,
        previous_summary=previous,
        protect_first_n=settings.protect_first_n,
        tail_budget=0 if minimal_tail else settings.tail_budget_tokens(context_window),
        min_tail=settings.min_tail_messages,
    )
    if selection is None:
        return None
    return CompressionPlan(selection, settings.duplicate_min_chars, len(records))
