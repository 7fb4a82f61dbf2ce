"""Structured logs: JSON off a TTY, text on one; no message bodies by default; tokens never written."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from gateway.config import LogSettings
from gateway.logging_setup import RepeatLimiter, configure_logging

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
    log.info(
        "accepted message from %s", "web:abc", extra={"body": "my favourite colour is teal", "chat": "abc"}
    )
    log.warning("client sent Authorization: Bearer %s", TOKEN)
    log.debug("not shown at INFO")
    return stream.getvalue()


def test_json_lines_without_bodies_or_tokens_when_not_a_tty() -> None:
    out = _log(LogSettings(), io.StringIO())
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["level"] for line in lines] == ["INFO", "WARNING"]
    assert lines[0]["message"] == "accepted message from web:abc"
    assert lines[0]["chat"] == "abc" and "body" not in lines[0]
    assert "teal" not in out
    assert TOKEN not in out


def test_bodies_only_when_configured() -> None:
    out = _log(LogSettings(include_bodies=True), io.StringIO())
    assert json.loads(out.splitlines()[0])["body"] == "my favourite colour is teal"
    assert TOKEN not in out


def test_readable_text_on_a_terminal_and_level_from_settings() -> None:
    out = _log(LogSettings(level="DEBUG"), _Tty())
    first = out.splitlines()[0]
    assert "INFO" in first and "mnemogate.test: accepted message from web:abc" in first
    assert not first.startswith("{")
    assert "not shown at INFO" in out
    assert TOKEN not in out and "teal" not in out


def test_reconfiguring_replaces_our_handler() -> None:
    stream = io.StringIO()
    configure_logging(LogSettings(), stream=io.StringIO())
    configure_logging(LogSettings(), stream=stream)
    logging.getLogger("mnemogate.x").info("once")
    assert len(stream.getvalue().splitlines()) == 1


def test_by_default_a_thousand_identical_errors_write_a_handful_of_lines() -> None:
    stream = io.StringIO()
    configure_logging(LogSettings(), stream=stream)
    for fd in range(1000):
        logging.getLogger("asyncio").error("socket.accept() out of system resource (fd %d)", fd)
    assert len(stream.getvalue().splitlines()) <= 5


def test_a_flood_of_identical_errors_is_written_at_a_bounded_rate_with_a_count() -> None:
    now = [1000.0]
    stream = io.StringIO()
    limiter = RepeatLimiter(per_window=3, window_s=60, clock=lambda: now[0])
    configure_logging(LogSettings(), stream=stream, limiter=limiter)
    log = logging.getLogger("mnemogate.test")
    for fd in range(10_000):
        log.error("socket.accept() out of system resource (fd %d)", fd)
    log.warning("a different warning")
    log.info("info lines are never limited")
    log.info("info lines are never limited")
    assert len(stream.getvalue().splitlines()) == 3 + 1 + 2
    now[0] += 61
    log.error("socket.accept() out of system resource (fd %d)", 1)
    summary, again = [json.loads(line) for line in stream.getvalue().splitlines()[-2:]]
    assert summary["message"].startswith("9997 similar messages were suppressed (at most 3 per 60 s)")
    assert summary["level"] == "ERROR" and summary["suppressed"] == 9997
    assert again["message"] == "socket.accept() out of system resource (fd 1)"


def test_uvicorn_color_message_is_not_written() -> None:
    stream = io.StringIO()
    configure_logging(LogSettings(), stream=stream)
    logging.getLogger("uvicorn.error").warning(
        "Started server process [%d]",
        7,
        extra={"color_message": "Started server process [\x1b[36m%d\x1b[0m]"},
    )
    line = json.loads(stream.getvalue())
    assert line["message"] == "Started server process [7]" and "color_message" not in line


def test_uvicorn_lines_reach_our_handler_even_after_uvicorn_configured_its_own_logging() -> None:
    """A uvicorn started with its default log config takes its loggers off the root handler; ours wins."""
    import logging.config

    from uvicorn.config import LOGGING_CONFIG

    logging.config.dictConfig(LOGGING_CONFIG)
    stream = io.StringIO()
    configure_logging(LogSettings(format="json"), stream=stream, secrets=["s3cr3t-token-value"])
    logging.getLogger("uvicorn.error").warning("token s3cr3t-token-value in a uvicorn line")
    line = json.loads(stream.getvalue())
    assert "s3cr3t-token-value" not in line["message"] and "[REDACTED]" in line["message"]
