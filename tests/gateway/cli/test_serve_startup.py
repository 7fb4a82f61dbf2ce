"""What ``mnemogate serve`` says when it starts: which model answers and what HTTP exposes without a token.

Real processes on a fresh home, the way ``make run`` starts one; tokens are never printed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.gateway_process import free_port, start, stop, wait_healthy

TOKEN = "123456:SECRET-bot-token-value"
ADMIN_TOKEN = "admin-SECRET-token-value"


def _serve_output(home: Path) -> str:
    """Everything a gateway printed from its start until it was ready and then stopped."""
    port = free_port()
    process = start(home, "serve", "--port", str(port))
    try:
        wait_healthy(f"http://127.0.0.1:{port}", process)
    finally:
        output = stop(process)
    assert "Traceback" not in output
    return output


def test_a_fresh_home_says_offline_model_and_what_is_closed(home: Path) -> None:
    output = _serve_output(home)
    assert "the offline model" in output
    assert "admin API disabled (no token)" in output
    assert "OpenAI-compatible API" in output and "loopback clients only" in output


def test_with_an_admin_token_both_apis_say_a_token_is_required(home: Path) -> None:
    (home / "config.yaml").write_text(f"http:\n  admin_token: {ADMIN_TOKEN}\n", encoding="utf-8")
    output = _serve_output(home)
    assert "admin API: bearer token required" in output
    assert "OpenAI-compatible API (/v1/chat/completions): bearer token required" in output
    assert ADMIN_TOKEN not in output


def test_a_token_switched_off_by_config_is_a_warning_at_start(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (home / "config.yaml").write_text("adapters:\n  telegram:\n    enabled: false\n", encoding="utf-8")
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)  # the serve process inherits this environment
    output = _serve_output(home)
    assert "TELEGRAM_BOT_TOKEN (or adapters.telegram.token) is set" in output
    assert "telegram stays off" in output
    assert TOKEN not in output
