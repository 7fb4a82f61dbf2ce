"""Context compression into continuation segments, with a memory flush first (DESIGN §7).

Public surface: ``Compressor`` (and its ``CompressionJob``), ``CompressionSettings``, the outcome records,
the trigger and prompt gauge, the one token estimator, the provider ``CompressionHooks`` seam, the pure
planning functions (for tests and tools), and the summary's banner and end marker.
"""

from .compressor import FALLBACK_NOTICE, PERMANENT_FAILURE_NOTICE, CompressionJob, Compressor
from .cooldown import cooldown_blocks
from .errors import CompressionError, SummaryUnavailableError
from .estimate import message_tokens, messages_tokens, request_tokens, text_tokens, tools_tokens
from .fallback import fallback_summary
from .flush import FLUSH_ACTOR, FLUSH_INSTRUCTION, MemoryFlush
from .hooks import CompressionHooks
from .outcome import CompressionOutcome, CompressionStatus, FlushReport, SummarySource
from .plan import CompressionPlan, plan_compression
from .prepass import DUPLICATE_OUTPUT, collapse_duplicates, long_output_note, shorten_long_outputs
from .rows import Row
from .selection import Selection, repair_pairs, select
from .settings import CompressionSettings
from .summary import BANNER, END_MARKER, SECTIONS, SUMMARY_AUTHOR, is_summary, unwrap, wrap
from .trigger import CompressionTrigger, PromptGauge

__all__ = [
    "BANNER",
    "DUPLICATE_OUTPUT",
    "END_MARKER",
    "FALLBACK_NOTICE",
    "FLUSH_ACTOR",
    "FLUSH_INSTRUCTION",
    "PERMANENT_FAILURE_NOTICE",
    "SECTIONS",
    "SUMMARY_AUTHOR",
    "CompressionError",
    "CompressionHooks",
    "CompressionJob",
    "CompressionOutcome",
    "CompressionPlan",
    "CompressionSettings",
    "CompressionStatus",
    "CompressionTrigger",
    "Compressor",
    "FlushReport",
    "MemoryFlush",
    "PromptGauge",
    "Row",
    "Selection",
    "SummarySource",
    "SummaryUnavailableError",
    "collapse_duplicates",
    "cooldown_blocks",
    "fallback_summary",
    "is_summary",
    "long_output_note",
    "message_tokens",
    "messages_tokens",
    "plan_compression",
    "repair_pairs",
    "request_tokens",
    "select",
    "shorten_long_outputs",
    "text_tokens",
    "tools_tokens",
    "unwrap",
    "wrap",
]
