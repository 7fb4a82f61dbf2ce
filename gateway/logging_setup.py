"""Structured logging for every mnemogate process: JSON lines off a TTY, readable text on one.

Invariants: message bodies travel only in the ``body`` extra field and are dropped unless
``log.include_bodies`` is set; configured tokens and anything that looks like a credential are redacted
from every rendered line (message, arguments, extras and tracebacks) before it is written; warnings and
errors with the same logger, level and message template are written at most ``_REPEATS_PER_WINDOW``
times per minute, and the next one after the minute says how many were suppressed (a retry loop or a
flood of bad clients cannot fill the disk).
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from agent_core.storage.redaction import redact_secrets
from gateway.config import LogSettings

_HANDLER_NAME = "mnemogate"
_UVICORN_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access")
# uvicorn's ``color_message`` is its message with ANSI colours: noise in a log file.
_STANDARD_FIELDS = frozenset(vars(logging.makeLogRecord({}))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",
}
_REDACTED = "[REDACTED]"
_REPEATS_PER_WINDOW = 5
_REPEAT_WINDOW_S = 60.0
_REPEAT_KEYS = 1024  # distinct templates remembered; the least recently seen is forgotten


class _Redactor:
    """Removes configured secret values and credential-shaped strings from text."""

    def __init__(self, secrets: Sequence[str]) -> None:
        # Longest first, so a token that contains another is removed whole.
        self._secrets = sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, _REDACTED)
        return redact_secrets(text)


def _extras(record: logging.LogRecord, include_bodies: bool) -> dict[str, Any]:
    fields = {k: v for k, v in vars(record).items() if k not in _STANDARD_FIELDS and not k.startswith("_")}
    if not include_bodies:
        fields.pop("body", None)
    return fields


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, message, extras, and the traceback if any."""

    def __init__(self, redactor: _Redactor, include_bodies: bool) -> None:
        super().__init__()
        self._redact = redactor
        self._include_bodies = include_bodies

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update(_extras(record, self._include_bodies))
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return self._redact(json.dumps(entry, default=str, ensure_ascii=False))


class TextFormatter(logging.Formatter):
    """``HH:MM:SS LEVEL logger: message key=value …`` for a person watching a terminal."""

    def __init__(self, redactor: _Redactor, include_bodies: bool) -> None:
        super().__init__()
        self._redact = redactor
        self._include_bodies = include_bodies

    def format(self, record: logging.LogRecord) -> str:
        clock = time.strftime("%H:%M:%S", time.localtime(record.created))
        extras = " ".join(f"{k}={v!r}" for k, v in _extras(record, self._include_bodies).items())
        line = f"{clock} {record.levelname:<7} {record.name}: {record.getMessage()}"
        if extras:
            line += f"  {extras}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return self._redact(line)


@dataclass
class _Window:
    started: float
    written: int = 0
    suppressed: int = 0


class RepeatLimiter:
    """Decides which warnings and errors are written: ``per_window`` per template and ``window_s``."""

    def __init__(
        self,
        *,
        per_window: int = _REPEATS_PER_WINDOW,
        window_s: float = _REPEAT_WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_window = per_window
        self.window_s = window_s
        self._clock = clock
        self._windows: OrderedDict[tuple[str, int, str], _Window] = OrderedDict()
        self._lock = threading.Lock()

    def admit(self, record: logging.LogRecord) -> tuple[bool, int]:
        """(write this record?, how many like it were suppressed in the window that just ended)."""
        if record.levelno < logging.WARNING:
            return True, 0
        key = (record.name, record.levelno, str(record.msg))
        now = self._clock()
        with self._lock:
            window = self._windows.get(key)
            ended = 0
            if window is None or now - window.started >= self.window_s:
                ended = window.suppressed if window is not None else 0
                window = self._windows[key] = _Window(now)
            self._windows.move_to_end(key)
            while len(self._windows) > _REPEAT_KEYS:
                self._windows.popitem(last=False)
            if window.written >= self.per_window:
                window.suppressed += 1
                return False, 0
            window.written += 1
            return True, ended


class _RepeatLimitedHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A stream handler that drops repeats past the limiter's budget and reports how many it dropped."""

    def __init__(self, stream: TextIO, limiter: RepeatLimiter) -> None:
        super().__init__(stream)
        self._limiter = limiter

    def handle(self, record: logging.LogRecord) -> bool:
        write, suppressed = self._limiter.admit(record)
        if suppressed:
            summary = logging.makeLogRecord(
                {
                    "name": record.name,
                    "levelno": record.levelno,
                    "levelname": record.levelname,
                    "msg": "%d similar messages were suppressed (at most %d per %.0f s): %s",
                    "args": (
                        suppressed,
                        self._limiter.per_window,
                        self._limiter.window_s,
                        str(record.msg)[:200],
                    ),
                    "suppressed": suppressed,
                }
            )
            super().handle(summary)
        return bool(super().handle(record)) if write else False


def configure_logging(
    settings: LogSettings,
    *,
    stream: TextIO | None = None,
    secrets: Sequence[str] = (),
    limiter: RepeatLimiter | None = None,
) -> logging.Handler:
    """Install the one root handler (replacing a previous one of ours); returns it.

    ``secrets`` are the configured token values (admin/API tokens, model keys) to redact verbatim;
    ``limiter`` bounds repeated warnings and errors (default: 5 per template per minute).
    """
    target = stream if stream is not None else sys.stderr
    use_json = settings.format == "json" or (settings.format == "auto" and not _is_tty(target))
    redactor = _Redactor(secrets)
    formatter_type = JsonFormatter if use_json else TextFormatter
    handler = _RepeatLimitedHandler(target, limiter or RepeatLimiter())
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(formatter_type(redactor, settings.include_bodies))
    root = logging.getLogger()
    for existing in list(root.handlers):
        if existing.get_name() == _HANDLER_NAME:
            root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(settings.level)
    # uvicorn's own dictConfig (applied by any uvicorn started with its default log_config in this
    # process) gives its loggers a handler and propagate=False, which would bypass redaction and limits.
    for name in _UVICORN_LOGGERS:
        library = logging.getLogger(name)
        library.handlers.clear()
        library.propagate = True
    return handler


def _is_tty(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
