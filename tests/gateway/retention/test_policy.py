"""The retention policy: days become the storage's cut-offs (0: kept forever), and what serve and
check-config say about it, with a warning for a ledger shorter than platforms' re-delivery."""

from __future__ import annotations

from gateway.config import Settings
from gateway.retention import RetentionSettings, cutoffs
from gateway.startup_notes import startup_notes


def test_days_become_seconds_and_zero_keeps_forever() -> None:
    limits = cutoffs(RetentionSettings(conversations_days=0, ledger_days=2, tool_outputs_days=0.5))
    assert limits.conversation_idle_s is None and limits.tool_outputs_s == 43_200.0
    assert limits.ledger_s == 172_800.0 and limits.conversation_grace_s == 30 * 86_400.0


def test_check_config_says_what_retention_keeps_and_warns_about_a_short_ledger() -> None:
    default = [n for n in startup_notes(Settings()) if n.text.startswith("retention")]
    assert [n.warning for n in default] == [False]
    assert "conversations idle 365 d end, deleted 30 d later" in default[0].text
    short = Settings(retention=RetentionSettings(ledger_days=0.5, conversations_days=0))
    notes = {n.text: n.warning for n in startup_notes(short) if "retention" in n.text}
    assert any("conversations kept" in text for text in notes)
    assert [text for text, warning in notes.items() if warning] == [
        "retention.ledger_days is below one day: a platform event re-delivered after that is answered again"
    ]
    off = [n.text for n in startup_notes(Settings(retention=RetentionSettings(enabled=False)))]
    assert any(text.startswith("retention: off in serve") for text in off)
