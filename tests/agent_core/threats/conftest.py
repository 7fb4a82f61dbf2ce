"""Prints the scanner's precision and recall over the corpora at the end of every run that measured them."""

from __future__ import annotations

import pytest

SUMMARY_KEY = "scanner_corpus_summary"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    lines = [
        str(value)
        for outcome in ("passed", "failed")
        for report in terminalreporter.stats.get(outcome, [])
        for key, value in getattr(report, "user_properties", [])
        if key == SUMMARY_KEY
    ]
    if lines:
        terminalreporter.section("threat scanner corpus")
        for line in lines:
            terminalreporter.write_line(line)
