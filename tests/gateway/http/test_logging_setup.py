"""Structured logs: JSON off a TTY, text on one; no message bodies by default; tokens never written."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from gateway.config import LogSettings
from gateway.logging_setup import configure_logging

TOKEN = "s3cr3t-admin-token-value"


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def _restore_root() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def _log(settings: LogSettings, stream: io.StringIO) -> str:
    configure_logging(settings, stream=stream, secrets=[TOKEN])
    log = logging.getLogger("mnemogate.test")
    log.info("accepted message from %s", "web:abc", extra={"body": "my bank pin is 1234", "chat": "abc"})
    log.warning("client sent Authorization: Bearer %s", TOKEN)
    log.debug("not shown at INFO")
    return stream.getvalue()


def test_json_lines_without_bodies_or_tokens_when_not_a_tty() -> None:
    out = _log(LogSettings(), io.StringIO())
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["level"] for line in lines] == ["INFO", "WARNING"]
    assert lines[0]["message"] == "accepted message from web:abc"
    assert lines[0]["chat"] == "abc" and "body" not in lines[0]
    assert "1234" not in out
    assert TOKEN not in out


def test_bodies_only_when_configured() -> None:
    out = _log(LogSettings(include_bodies=True), io.StringIO())
    assert json.loads(out.splitlines()[0])["body"] == "my bank pin is 1234"
    assert TOKEN not in out


def test_readable_text_on_a_terminal_and_level_from_settings() -> None:
    out = _log(LogSettings(level="DEBUG"), _Tty())
    first = out.splitlines()[0]
    assert "INFO" in first and "mnemogate.test: accepted message from web:abc" in first
    assert not first.startswith("{")
    assert "not shown at INFO" in out
    assert TOKEN not in out and "1234" not in out


def test_reconfiguring_replaces_our_handler() -> None:
    stream = io.StringIO()
    configure_logging(LogSettings(), stream=io.StringIO())
    configure_logging(LogSettings(), stream=stream)
    logging.getLogger("mnemogate.x").info("once")
    assert len(stream.getvalue().splitlines()) == 1
