"""Structured logging for every mnemogate process: JSON lines off a TTY, readable text on one.

Invariants: message bodies travel only in the ``body`` extra field and are dropped unless
``log.include_bodies`` is set; configured tokens and anything that looks like a credential are redacted
from every rendered line (message, arguments, extras and tracebacks) before it is written.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from agent_core.state.redaction import redact_secrets
from gateway.config import LogSettings

_HANDLER_NAME = "mnemogate"
_STANDARD_FIELDS = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}
_REDACTED = "[REDACTED]"


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


def configure_logging(
    settings: LogSettings, *, stream: TextIO | None = None, secrets: Sequence[str] = ()
) -> logging.Handler:
    """Install the one root handler (replacing a previous one of ours); returns it.

    ``secrets`` are the configured token values (admin/API tokens, model keys) to redact verbatim.
    """
    target = stream if stream is not None else sys.stderr
    use_json = settings.format == "json" or (settings.format == "auto" and not _is_tty(target))
    redactor = _Redactor(secrets)
    formatter_type = JsonFormatter if use_json else TextFormatter
    handler = logging.StreamHandler(target)
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(formatter_type(redactor, settings.include_bodies))
    root = logging.getLogger()
    for existing in list(root.handlers):
        if existing.get_name() == _HANDLER_NAME:
            root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(settings.level)
    return handler


def _is_tty(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
