"""Typed tuning knobs of the state store; defaults are the documented production values."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

TrigramScope = Literal["all", "non_ascii"]


class StateSettings(BaseModel):
    """Configuration of one StateStore; validated once at boot, never read from the environment here."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    db_filename: str = "state.db"
    search_filename: str = "search.db"
    write_attempts: int = Field(default=15, ge=1)
    retry_min_s: float = Field(default=0.020, ge=0.0)
    retry_max_s: float = Field(default=0.150, ge=0.0)
    busy_timeout_ms: int = Field(default=100, ge=0)
    # The sidecar flock makes waiting writers wake the instant the lock frees instead of polling.
    use_write_lock_file: bool = True
    reader_connections: int = Field(default=2, ge=1)
    index_enabled: bool = True
    # "all": substring search over everything (the trigram index is ~3x the ASCII text it covers);
    # "non_ascii": trigrams only for CJK and other non-ASCII runs, English words go through porter only.
    trigram_scope: TrigramScope = "non_ascii"
    index_batch_rows: int = Field(default=2000, ge=1)
    index_batch_ms: float = Field(default=40.0, gt=0.0)
    index_coalesce_s: float = Field(default=0.02, ge=0.0)
    index_poll_s: float = Field(default=0.05, gt=0.0)
    index_takeover_s: float = Field(default=0.25, gt=0.0)
    # The embedder sizes its batches to about this much model time (one sidecar transaction each) and
    # looks for new windows this often when idle.
    semantic_batch_s: float = Field(default=1.0, gt=0.0)
    semantic_poll_s: float = Field(default=0.5, gt=0.0)
    # Appends slow down (a few ms each, only while an indexer is progressing) once this many messages
    # wait to be indexed, or the indexer would need more than index_target_lag_s at its recent pace to
    # catch up, so "searchable within ~2 s" holds even when writers saturate the CPU. 0 rows = off.
    index_max_backlog: int = Field(default=1500, ge=0)
    index_target_lag_s: float = Field(default=0.5, gt=0.0)
    index_backpressure_check_s: float = Field(default=0.02, gt=0.0)
    index_backpressure_max_pause_s: float = Field(default=0.01, ge=0.0)
    # The -wal file is truncated once it passes this many pages (4000 x 4 KiB pages = 16 MiB); a PASSIVE
    # checkpoint runs every checkpoint_interval_s; a truncation waits at most checkpoint_busy_ms for readers.
    checkpoint_wal_pages: int = Field(default=4000, ge=100)
    checkpoint_interval_s: float = Field(default=0.1, gt=0.0)
    checkpoint_busy_ms: int = Field(default=50, ge=0)
    journal_size_limit_bytes: int = Field(default=64 * 1024 * 1024, ge=0)
    # PRAGMA quick_check of state.db when a store opens, stopped after this many seconds (about 1 GB/s
    # from a warm cache, so most homes are checked whole); 0 turns the check off.
    integrity_check_s: float = Field(default=2.0, ge=0.0)
